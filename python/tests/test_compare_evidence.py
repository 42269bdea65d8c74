"""occam.compare with methods= and plate=: the evidence estimators of `occam compare --method`
and the plate sweep, the same numbers as the command line."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import occam

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "docs" / "guide" / "examples" / "mixture_k.occam"
X = np.array([-3.1, -2.9, -3.3, 0.2, -0.1, 0.1, 3.2, 2.9, 3.0])


def test_plate_sweep_and_methods_match_the_exact_choice():
    rows = occam.compare([MODEL], data={"x": X}, plate="K=1..3",
                         methods=["vb", "exact", "is"], restarts=5)
    assert [r.model for r in rows] == [f"{MODEL}[K={k}]" for k in (1, 2, 3)]
    exact = [r.evidence["exact"]["log_evidence"] for r in rows]
    vb = [r.evidence["vb"]["log_evidence"] for r in rows]
    est = [r.evidence["is"] for r in rows]
    for v, e, i in zip(vb, exact, est):
        assert v <= e + 1e-9
        assert abs(i["log_evidence"] - e) < 3 * i["se"]
        assert i["kind"] == "estimate" and i["ess"] > 100
    # The bound picks K = 2, the exact evidence and importance sampling K = 3 (the guide's table).
    assert int(np.argmax(vb)) == 1
    assert int(np.argmax(exact)) == 2
    assert int(np.argmax([i["log_evidence"] for i in est])) == 2
    assert sum(r.evidence["exact"]["probability"] for r in rows) == pytest.approx(1.0)
    # The rows' bound, difference and probability are those of compare without methods.
    assert rows.best.model.endswith("[K=2]")


def test_margins_name_the_runner_up_and_say_when_the_win_is_weak():
    rows = occam.compare([MODEL], data={"x": X}, plate="K=1..3",
                         methods=["vb", "exact", "is"], restarts=5)
    exact = [r.evidence["exact"]["log_evidence"] for r in rows]
    g = rows.margins["exact"]
    assert (g["best"], g["runner_up"]) == (f"{MODEL}[K=3]", f"{MODEL}[K=2]")
    assert g["nats"] == exact[2] - exact[1] and g["se"] is None
    # 0.86 nats: a Bayes factor of 2.36, under e (Kass & Raftery: a bare mention).
    assert g["weak"].startswith("Bayes factor 2.36 < e")
    assert rows.margins["vb"]["best"] == f"{MODEL}[K=2]" and rows.margins["vb"]["weak"]
    s = rows.margins["is"]
    assert s["se"] > 0 and s["best"] == f"{MODEL}[K=3]"
    # Without methods= there are no margins.
    assert occam.compare([MODEL], data={"x": X}).margins == {}


def test_same_numbers_as_the_command_line():
    binary = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    if not binary.is_file():
        pytest.skip(f"{binary} is missing")
    csv = ROOT / "docs" / "guide" / "examples" / "three_clusters.csv"
    out = subprocess.run([str(binary), "compare", str(MODEL), "--data", f"x={csv}", "--plate",
                          "K=1..3", "--method", "exact,is", "--json"], capture_output=True,
                         text=True, check=True, cwd=ROOT)
    cli = json.loads(out.stdout)["models"]
    rows = occam.compare([MODEL], data={"x": X}, plate={"K": [1, 2, 3]}, methods="exact,is")
    for r, c in zip(rows, cli):
        for e in c["evidence"]:
            assert r.evidence[e["method"]]["log_evidence"] == pytest.approx(e["log_evidence"],
                                                                            abs=1e-12)


def test_not_applicable_and_usage_errors():
    rows = occam.compare([ROOT / "examples" / "vibes_tutorial" / "single.occam"],
                         data={"x": np.ones((5, 2)) + np.arange(10).reshape(5, 2)},
                         methods=["vb", "exact"])
    reason = rows[0].evidence["exact"]["not_applicable"]
    assert "independent priors" in reason
    with pytest.raises(occam.UsageError, match="unknown `harmonic`"):
        occam.compare([MODEL], data={"x": X}, methods=["harmonic"])
    with pytest.raises(occam.UsageError, match="plate"):
        occam.compare([MODEL], data={"x": X}, plate="K")
    with pytest.raises(occam.UsageError, match="takes its size from data"):
        occam.compare([MODEL], data={"x": X}, plate="N=1..2")


def test_ais_from_python_matches_exact_and_the_command_line_options():
    rows = occam.compare([MODEL], data={"x": X}, plate="K=1..3", methods=["exact", "ais"],
                         chains=32, temperatures=300, seed=2)
    for r in rows:
        a, e = r.evidence["ais"], r.evidence["exact"]["log_evidence"]
        assert a["kind"] == "estimate" and a["se"] > 0
        assert abs(a["log_evidence"] - e) < 3 * a["se"], (a, e)
        assert "32 chains × 300 temperatures" in a["note"]
    with pytest.raises(occam.UsageError, match="chains"):
        occam.compare([MODEL], data={"x": X}, methods=["ais"], chains=1)


def test_laplace_and_cross_validation_from_python_match_the_command_line():
    binary = pathlib.Path(os.environ.get("OCCAM_BIN", ROOT / "target" / "debug" / "occam"))
    rows = occam.compare([MODEL], data={"x": X}, plate="K=1..3",
                         methods=["exact", "laplace", "cv"], folds=3, restarts=5)
    for r in rows:
        lap, e = r.evidence["laplace"], r.evidence["exact"]["log_evidence"]
        assert lap["kind"] == "asymptotic O(1/N)"
        assert abs(lap["log_evidence"] - e) < 1.0, (lap, e)
        assert r.evidence["cv"]["kind"] == "held-out, not ln p"
        assert "3 folds" in r.evidence["cv"]["note"]
    assert int(np.argmax([r.evidence["cv"]["log_evidence"] for r in rows])) == 2
    with pytest.raises(occam.UsageError, match="folds"):
        occam.compare([MODEL], data={"x": X}, methods=["cv"], folds=1)
    if not binary.is_file():
        pytest.skip(f"{binary} is missing")
    csv = ROOT / "docs" / "guide" / "examples" / "three_clusters.csv"
    out = subprocess.run([str(binary), "compare", str(MODEL), "--data", f"x={csv}", "--plate",
                          "K=1..3", "--method", "laplace,cv", "--folds", "3", "--restarts", "5",
                          "--json"], capture_output=True, text=True, check=True, cwd=ROOT)
    for r, c in zip(rows, json.loads(out.stdout)["models"]):
        for e in c["evidence"]:
            assert r.evidence[e["method"]]["log_evidence"] == pytest.approx(e["log_evidence"],
                                                                            abs=1e-9)


def test_mixed_bound_kinds_are_refused_unless_asked():
    """An exact Gaussian bound beside an importance-sampled Student-t one (approximate): both
    compare paths refuse without mixed_bounds=True, as `occam compare --mixed-bounds`."""
    y = np.array([1.2, 2.9, 2.1, 1.7, 8.0, 2.4, -4.0, 2.2])
    gauss = occam.Model.from_string(
        "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ Gaussian(mu, 0.25)\nobserve y\n")
    t = occam.Model.from_string("plates N from data y\nmu ~ Gaussian(0, 0.01)\n"
                    "y[N] ~ StudentT(nu = 3, scale = 1, mean = mu)\nobserve y\n")
    for methods in (None, ["vb", "bic"], ["bic"]):
        with pytest.raises(occam.UsageError, match="different kinds"):
            occam.compare([gauss, t], data={"y": y}, methods=methods)
    rows = occam.compare([gauss, t], data={"y": y}, methods=["vb", "bic"], mixed_bounds=True)
    assert [r.evidence["vb"]["kind"] for r in rows] == ["lower bound", "approximate (IS)"]
    assert len(occam.compare([gauss, t], data={"y": y}, mixed_bounds=True)) == 2
