"""occam.compare(..., average=) and Comparison.plot(): the Bayesian model average of new rows'
predictions (checked by hand against each model's own predictive and against `occam compare
--average`) and the evidence-against-complexity SVG (byte for byte `occam compare --plot`)."""

import csv
import os
import pathlib
import subprocess

import numpy as np
import pytest

import occam

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARD = ROOT / "examples" / "ard_regression"
MIXTURE = ROOT / "docs" / "guide" / "examples" / "mixture_k.occam"
NINE = ROOT / "docs" / "guide" / "examples" / "three_clusters.csv"
# Two regressions that differ in the prior of the weights' precisions (as the CLI's test).
A = ("plates N, C from data X\ndata X[N] over C\nalpha[C] ~ Gamma(1e-3, 1e-3)\n"
     "w over C ~ GaussianARD(0, alpha)\ntau ~ Gamma(1e-3, 1e-3)\n"
     "y[N] ~ Gaussian(dot(X[N], w), tau)\nobserve y\n")
B = A.replace("alpha[C] ~ Gamma(1e-3, 1e-3)", "alpha[C] ~ Gamma(1, 1)")
# Prior odds that offset the bounds' difference (about 24 nats), so that both models count.
PRIORS = [3e10, 1.0]


def _binary():
    b = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    if not b.is_file():
        pytest.skip(f"{b} is missing")
    return b


@pytest.fixture
def models(tmp_path):
    paths = []
    for name, text in (("a.occam", A), ("b.occam", B)):
        p = tmp_path / name
        p.write_text(text)
        paths.append(p)
    return paths


def _data():
    X = np.loadtxt(ARD / "X.csv", delimiter=",", skiprows=1)
    y = np.loadtxt(ARD / "y.csv", skiprows=1)
    return X, y


def test_the_average_is_the_weighted_mixture_of_each_models_predictive(models):
    X, y = _data()
    rows = occam.compare(models, data={"X": X, "y": y}, methods=["vb"], priors=PRIORS,
                         average="vb", predict={"X": X[:4]})
    avg = rows.average
    assert avg["method"] == "vb"
    w = avg["weights"]
    assert w == [r.evidence["vb"]["probability"] for r in rows]
    assert all(p > 1e-6 for p in w) and sum(w) == pytest.approx(1.0)
    own = [r.result.predict(data={"X": X[:4]}, seed=0)["y"] for r in rows]
    p = avg["predictions"]["y"]
    mean = w[0] * own[0]["mean"] + w[1] * own[1]["mean"]
    second = sum(wi * (o["sd"] ** 2 + o["mean"] ** 2) for wi, o in zip(w, own))
    np.testing.assert_allclose(p["mean"], mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(p["sd"], np.sqrt(second - mean**2), rtol=0, atol=1e-9)
    # Every draw is one model's draw (the same draw index), chosen with the weights.
    s = p["samples"]
    assert s.shape == (1000, 4, 1)
    from_a = np.all(s == own[0]["samples"], axis=(1, 2))
    from_b = np.all(s == own[1]["samples"], axis=(1, 2))
    assert np.all(from_a | from_b)
    assert abs(from_a.mean() - w[0]) < 5 * np.sqrt(w[0] * (1 - w[0]) / 1000)


def test_the_average_is_the_command_lines(models, tmp_path):
    binary = _binary()
    X, y = _data()
    rows = occam.compare(models, data={"X": X, "y": y}, methods=["vb", "bic"], priors=PRIORS,
                         average="vb", predict={"X": X[:4]}, seed=3)
    out = tmp_path / "avg.csv"
    x_csv, y_csv = ARD / "X.csv", ARD / "y.csv"
    subprocess.run([str(binary), "compare", *map(str, models), "--data", f"X={x_csv}",
                    "--data", f"y={y_csv}", "--method", "vb,bic", "--priors", "3e10,1",
                    "--average", "vb", "--predict", f"X={x_csv}@..4", "--predict-out", str(out),
                    "--seed", "3"], check=True, capture_output=True, cwd=ROOT)
    with open(out) as f:
        table = list(csv.DictReader(f))
    p = rows.average["predictions"]["y"]
    assert len(table) == 4
    for r, line in enumerate(table):
        assert float(line["y_mean"]) == pytest.approx(p["mean"][r, 0], rel=1e-15, abs=1e-15)
        assert float(line["y_sd"]) == pytest.approx(p["sd"][r, 0], rel=1e-15, abs=1e-15)
        for q in (0.025, 0.5, 0.975):
            assert float(line[f"y_q{q}"]) == pytest.approx(p["quantiles"][q][r, 0], rel=1e-15,
                                                           abs=1e-15)


def test_the_plot_is_the_command_lines(tmp_path):
    binary = _binary()
    x = np.loadtxt(NINE, skiprows=1)
    rows = occam.compare([MIXTURE], data={"x": x}, plate="K=1..3", methods=["vb", "exact"])
    svg = rows.plot(tmp_path / "py.svg")
    assert isinstance(svg, occam.EvidencePlot) and svg._repr_svg_() == str(svg)
    assert (tmp_path / "py.svg").read_text() == str(svg)
    assert svg.count('<polyline class="series"') == 2
    assert 'data-label="exact"' in svg and "free parameters d" in svg
    subprocess.run([str(binary), "compare", str(MIXTURE), "--data", f"x={NINE}", "--plate",
                    "K=1..3", "--method", "vb,exact", "--plot", str(tmp_path / "cli.svg")],
                   check=True, capture_output=True, cwd=ROOT)
    assert (tmp_path / "cli.svg").read_text() == str(svg)
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]


def test_usage_errors(models):
    X, y = _data()
    data = {"X": X, "y": y}
    with pytest.raises(occam.UsageError, match="give it in the methods too"):
        occam.compare(models, data=data, methods=["vb"], average="bic", predict={"X": X[:2]})
    with pytest.raises(occam.UsageError, match="give the new rows"):
        occam.compare(models, data=data, average="vb")
    with pytest.raises(occam.UsageError, match="give average= too"):
        occam.compare(models, data=data, methods=["vb"], predict={"X": X[:2]})
    with pytest.raises(occam.UsageError, match="compare with methods="):
        occam.compare(models, data=data).plot()
    # A held-out score gets no posterior model probability, and averages nothing, as on the
    # command line.
    x = np.loadtxt(NINE, skiprows=1)
    with pytest.raises(occam.UsageError, match="held-out score is not ln p"):
        occam.compare([MIXTURE], data={"x": x}, plate="K=1..2", methods=["cv"], folds=3,
                      average="cv", predict={"x": x})
    rows = occam.compare([MIXTURE], data={"x": x}, plate="K=1..2", methods=["vb", "cv"],
                         folds=3)
    assert all(r.evidence["cv"]["probability"] is None for r in rows)
    assert all(r.evidence["vb"]["probability"] is not None for r in rows)
    assert rows.average is None
