"""Columns and rows of a data file from Python as on the command line (`--data x=FILE:COLUMNS@ROWS`):
read_data, data paths given to Model.fit, select_rows for a seeded train/test split of arrays, and
the lag windows of `occam nn fit --lags` (fit_series / predict_series), equal to the CLI's."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import occam
from occam.nn import BayesianMLP, lag_windows
from conftest import ROOT

MODEL = ("plates N, D from data x\nmu[D] ~ Gaussian(0, 1e-4)\ntau[D] ~ Gamma(1e-3, 1e-3)\n"
         "x[N, D] ~ Gaussian(mu, tau)\n")


@pytest.fixture
def faithful(tmp_path):
    rows = [(r, 1.5 + (r % 7) * 0.5, 50 + (r * 13) % 40) for r in range(1, 31)]
    path = tmp_path / "faithful.csv"
    path.write_text("rownames,eruptions,waiting\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    return path, np.array(rows, dtype=float)


def test_columns_and_rows_count_from_zero_like_numpy(faithful):
    path, table = faithful
    assert np.array_equal(occam.read_data(path), table)
    named, cols = occam.read_data(f"{path}:eruptions,waiting", return_columns=True)
    assert cols == ["eruptions", "waiting"]
    assert np.array_equal(named, table[:, 1:])
    assert np.array_equal(occam.read_data(path, columns="1.."), table[:, 1:])
    assert np.array_equal(occam.read_data(path, columns=[2, 0]), table[:, [2, 0]])
    assert np.array_equal(occam.read_data(path, rows="..20"), table[:20])
    assert np.array_equal(occam.read_data(f"{path}:waiting@20.."), table[20:, 2:])


def test_a_seeded_split_is_the_same_for_files_and_arrays(faithful):
    path, table = faithful
    train = occam.select_rows(30, "..80%,shuffle=5")
    test = occam.select_rows(30, "80%..,shuffle=5")
    assert len(train) == 24 and len(test) == 6
    assert sorted(np.concatenate([train, test])) == list(range(30))
    assert np.array_equal(train, occam.select_rows(30, "..80%,shuffle=5"))
    assert np.array_equal(occam.read_data(path, rows="..80%,shuffle=5"), table[train])
    with pytest.raises(occam.UsageError, match="counted from 0"):
        occam.select_rows(30, "1-20")


def test_fit_reads_a_path_with_a_selection_as_the_command_line_does(faithful):
    path, table = faithful
    m = occam.Model.from_string(MODEL)
    from_file = m.fit(data={"x": f"{path}:1..@..20"})
    from_array = m.fit(data={"x": table[:20, 1:]})
    assert from_file.bound == from_array.bound
    assert m.fit(data={"x": pathlib.Path(path)}).bound == m.fit(data={"x": table}).bound
    with pytest.raises(occam.UsageError, match=r"no column `wait` in `.*did you mean `waiting`\?"):
        m.fit(data={"x": f"{path}:wait"})


def test_lag_windows_and_a_series_network_equal_the_command_line(tmp_path):
    y = 50 + 40 * np.sin(0.6 * np.arange(60))
    x, t = lag_windows(y, 3)
    assert x.shape == (57, 3)
    assert np.array_equal(x[0], [y[2], y[1], y[0]]) and t[0] == y[3]
    spec = dict(hidden=2, restarts=1, pretrain_iters=10, cycles=2, iters_per_cycle=50)
    net = BayesianMLP(**spec).fit_series(y[:40], lags=3)
    rows, mean = net.predict_series(y)
    assert np.array_equal(rows, np.arange(3, 60))
    # The CLI trains on rows ..40 of the same series and predicts rows 40..: the same numbers.
    binary = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    assert binary.is_file(), f"{binary} is missing: run `cargo build -p occam-cli` first"
    data = tmp_path / "s.csv"
    data.write_text("year,value\n" + "".join(f"{1900 + i},{float(v)!r}\n" for i, v in enumerate(y)))
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "net.json"
    subprocess.run([str(binary), "nn", "fit", f"{data}@..40", "--target", "value", "--lags", "3",
                    "--spec", str(tmp_path / "spec.json"), "--out", str(out)],
                   check=True, capture_output=True)
    pred = subprocess.run([str(binary), "nn", "predict", str(out), f"{data}@40.."], check=True,
                          capture_output=True, text=True).stdout
    cli = np.loadtxt(pred.splitlines(), delimiter=",", skiprows=1)
    assert np.array_equal(cli[:, 0], np.arange(43, 60))
    np.testing.assert_allclose(cli[:, 1], mean[40:], rtol=1e-12)
    with pytest.raises(occam.UsageError, match="fit_series"):
        BayesianMLP(**spec).fit(x, t).predict_series(y)
    # A series network keeps its lag order through JSON, both ways between Python and the CLI.
    back = BayesianMLP.from_json(net.to_json())
    back_rows, back_mean = back.predict_series(y)
    assert np.array_equal(back_rows, rows)
    np.testing.assert_array_equal(back_mean, mean)
    cli_net = BayesianMLP.from_json(out.read_text())
    assert cli_net.lags_ == 3
    np.testing.assert_allclose(cli_net.predict_series(y)[1][40:], mean[40:], rtol=1e-12)
    headerless = tmp_path / "series.npy"  # an array's columns are `column 1`, ...
    np.save(headerless, y[:, None])
    saved = tmp_path / "py_net.json"
    saved.write_text(net.to_json())
    pred = subprocess.run([str(binary), "nn", "predict", str(saved), str(headerless)], check=True,
                          capture_output=True, text=True).stdout
    from_py = np.loadtxt(pred.splitlines(), delimiter=",", skiprows=1)
    np.testing.assert_allclose(from_py[:, 1], mean, rtol=1e-12)


def test_from_json_refuses_another_format():
    with pytest.raises(occam.DataError, match="not a saved network: format 'other/1'"):
        BayesianMLP.from_json(json.dumps({"format": "other/1", "net": {}}))
