"""occam.nn: Lawrence's Bayesian MLPs from Python give the command line's networks, predict in the
targets' units, round-trip through JSON, and reject bad settings and shapes with occam's errors."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import occam
from occam.nn import BayesianMLP
from conftest import ROOT

QUICK = dict(hidden=3, restarts=2, pretrain_iters=10, cycles=2, iters_per_cycle=60)


def sine(n=24):
    x = np.arange(n) / n
    return x[:, None], np.sin(2 * np.pi * x)


def test_fit_predict_and_uncertainty():
    x, t = sine()
    net = BayesianMLP(**QUICK).fit(x, t)
    mean, sd = net.predict(x, return_std=True)
    assert mean.shape == sd.shape == (24,)
    assert net.train_rmse < 0.2
    assert np.sqrt(np.mean((mean - t) ** 2)) == pytest.approx(net.train_rmse, rel=1e-12)
    _, sd_f = net.predict(x, return_std=True, noise=False)
    assert np.all(sd > sd_f) and np.all(sd_f >= 0)
    assert net.bound is not None and np.isfinite(net.bound)


def test_json_round_trip_gives_the_same_bits():
    x, t = sine(20)
    net = BayesianMLP(components=2, **QUICK).fit(x, t)
    back = BayesianMLP.from_json(net.to_json())
    assert back.spec["components"] == 2
    np.testing.assert_array_equal(back.predict(x), net.predict(x))


def test_python_equals_the_command_line(tmp_path):
    # The CLI reads the same numbers from CSV (written with round-trip precision) and must save a
    # network whose predictions equal Python's bit for bit.
    binary = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    assert binary.is_file(), f"{binary} is missing: run `cargo build -p occam-cli` first"
    x, t = sine(20)
    data = tmp_path / "d.csv"
    data.write_text("x,y\n" + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in zip(x[:, 0], t)))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(QUICK))
    out = tmp_path / "net.json"
    subprocess.run([str(binary), "nn", "fit", str(data), "--spec", str(spec), "--out", str(out)],
                   check=True, capture_output=True)
    pred = subprocess.run([str(binary), "nn", "predict", str(out), str(data)], check=True,
                          capture_output=True, text=True).stdout
    cli = np.loadtxt(pred.splitlines(), delimiter=",", skiprows=1)
    py = BayesianMLP(**QUICK).fit(x, t)
    mean, sd = py.predict(x, return_std=True)
    # Columns: row (the data row each prediction is for), mean, sd_function, sd_total.
    np.testing.assert_array_equal(cli[:, 0], np.arange(len(t)))
    np.testing.assert_array_equal(cli[:, 1], mean)
    np.testing.assert_array_equal(cli[:, 3], sd)


def test_methods_without_variances_say_so():
    x, t = sine(20)
    net = BayesianMLP(method="evidence", **QUICK).fit(x, t)
    assert net.predict(x).shape == (20,)
    assert net.bound is None
    with pytest.raises(occam.UsageError, match="no predictive variance"):
        net.predict(x, return_std=True)


def test_bad_settings_and_shapes():
    x, t = sine(10)
    with pytest.raises(occam.UsageError, match="hiden"):
        BayesianMLP(hiden=3)
    with pytest.raises(occam.UsageError, match="hidden"):
        BayesianMLP(hidden=0).fit(x, t)
    with pytest.raises(occam.UsageError, match="bogus"):
        BayesianMLP(prior="bogus").fit(x, t)
    with pytest.raises(occam.DataShapeError, match="10 rows but t has 9"):
        BayesianMLP(**QUICK).fit(x, t[:9])
    net = BayesianMLP(**QUICK).fit(x, t)
    with pytest.raises(occam.UsageError, match="input columns"):
        net.predict(np.zeros((3, 2)))
    with pytest.raises(occam.UsageError, match="fit the network first"):
        BayesianMLP().predict(x)
