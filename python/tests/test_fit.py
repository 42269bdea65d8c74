"""Fitting through Python gives the CLI's results; posteriors come back as arrays shaped by the
plates; callbacks, stopping and Ctrl-C."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import occam
from conftest import TUTORIAL, golden_json, load_csv, blobs

TUTORIAL_MODELS = ["mixture", "separable", "shared_gamma", "shared_pi_gamma", "single"]


@pytest.mark.parametrize("name", TUTORIAL_MODELS)
def test_tutorial_bounds_equal_the_cli(name, tutorial_x):
    # crates/occam-cli/tests/golden/fit_tutorial_<name>.stdout is `occam fit --json` with the
    # default settings; the golden tests of `cargo test` keep the CLI on these values.
    cli = golden_json(f"fit_tutorial_{name}")
    r = occam.Model(TUTORIAL / f"{name}.occam").fit(data={"x": tutorial_x})
    assert abs(r.bound - cli["bound"]) <= 1e-12 * abs(cli["bound"])
    assert r.iterations == cli["iterations"]
    assert r.converged == cli["converged"]
    np.testing.assert_allclose(r.bound_trace, cli["bound_trace"], rtol=1e-12, atol=0)
    # The whole report matches too (posterior parameters of every variable).
    rep = r.report()
    assert set(rep["variables"]) == set(cli["variables"])
    for name, want in cli["variables"].items():
        got = rep["variables"][name]
        for p, vals in want["parameters"].items():
            a = np.array(got["parameters"][p], dtype=float)
            b = np.array(vals, dtype=float)
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300)


def test_data_next_to_the_model_file_is_used_without_data(tutorial_x):
    cli = golden_json("fit_tutorial_single")
    assert occam.Model(TUTORIAL / "single.occam").fit().bound == pytest.approx(cli["bound"], rel=1e-12)


def test_compare_equals_the_cli(tutorial_x):
    cli = golden_json("compare_tutorial_json")
    rows = occam.compare([TUTORIAL / "single.occam", TUTORIAL / "mixture.occam"], data={"x": tutorial_x})
    for row, want in zip(rows, cli["models"]):
        assert abs(row.result.bound - want["bound"]) <= 1e-12 * abs(want["bound"])
        assert row.difference == pytest.approx(want["difference"], rel=1e-9, abs=1e-9)
        assert row.probability == pytest.approx(want["probability"], rel=1e-9, abs=1e-300)
    assert rows.best.model == str(TUTORIAL / "mixture.occam")


def test_posteriors_are_shaped_by_plates(tutorial_x):
    r = occam.Model(TUTORIAL / "mixture.occam").fit(data={"x": tutorial_x})
    n = tutorial_x.shape[0]
    mu = r.posterior("mu")
    assert mu.plates == [("K", 20), ("D", 2)]
    assert mu["mean"].shape == (20, 2) and mu["variance"].shape == (20, 2)
    gamma = r.posterior("gamma")
    assert gamma["shape"].shape == (20, 2) and np.all(gamma["rate"] > 0)
    pi = r.posterior("pi")
    assert pi["concentration"].shape == (20,)
    assert pi["mean"].sum() == pytest.approx(1.0, abs=1e-12)
    lam = r.posterior("lambda")
    assert lam["probabilities"].shape == (n, 20)
    np.testing.assert_allclose(lam["probabilities"].sum(axis=1), 1.0, atol=1e-12)
    assert set(r.posteriors) == set(r.variables)
    # The same numbers as the JSON report.
    rep = r.report()["variables"]
    np.testing.assert_array_equal(mu["mean"], np.array(rep["mu"]["parameters"]["mean"]).reshape(20, 2))
    assert "mixture" in r.summary() or "lambda" in r.summary()


def test_full_covariance_posteriors():
    r = occam.Model(TUTORIAL.parent / "bayespy" / "gmm" / "gmm.occam").fit()
    assert abs(r.bound - golden_json("fit_gmm")["bound"]) <= 1e-12 * abs(r.bound)
    lam = r.posterior("Lambda")
    assert lam["rate"].shape == (10, 2, 2) and lam["dof"].shape == (10,)
    assert r.posterior("mu")["covariance"].shape == (10, 2, 2)


def test_same_seed_same_bits(tutorial_x):
    m = occam.Model(TUTORIAL / "mixture.occam")
    a = m.fit(data={"x": tutorial_x}, seed=3, restarts=2)
    b = m.fit(data={"x": tutorial_x}, seed=3, restarts=2)
    assert a.bound == b.bound and np.array_equal(a.bound_trace, b.bound_trace)
    assert len(a.restart_bounds) == 2 and a.bound == max(a.restart_bounds)


def test_callback_sees_a_non_decreasing_bound(tutorial_x):
    seen = []
    r = occam.Model(TUTORIAL / "mixture.occam").fit(
        data={"x": tutorial_x}, prune=False, callback=lambda i, b, t: seen.append((i, b, t)))
    its, bounds, times = map(np.array, zip(*seen))
    assert list(its) == list(range(1, len(seen) + 1))
    np.testing.assert_array_equal(bounds, r.bound_trace)
    # Non-decreasing up to rounding (the library's own check: 1e-9 relative).
    assert np.all(np.diff(bounds) >= -1e-9 * np.abs(bounds[:-1]))
    assert bounds[-1] > bounds[0] + 100
    assert np.all(np.diff(times) >= 0)


def test_callback_returning_false_stops_the_fit_and_keeps_its_state(tutorial_x):
    calls = []

    def cb(i, b, t):
        calls.append((i, b))
        return i < 3

    with pytest.raises(occam.Interrupted, match="callback stopped") as stopped:
        occam.Model(TUTORIAL / "mixture.occam").fit(data={"x": tutorial_x}, callback=cb)
    assert [i for i, _ in calls] == [1, 2, 3]
    # The state the fit stopped in comes with the exception: its bound is the one the callback
    # saw after sweep 3 (recomputed from that q), its trace the three sweeps, not converged.
    r = stopped.value.result
    assert isinstance(r, occam.Result)
    assert not r.converged and r.iterations == 3
    np.testing.assert_allclose(r.bound_trace, [b for _, b in calls], rtol=0, atol=0)
    assert abs(r.bound - calls[-1][1]) <= 1e-12 * abs(r.bound)
    assert r.posterior("mu")["mean"].shape == (20, 2)
    assert r.report()["stop"]["reason"] == "interrupted"


def test_callback_exception_propagates(tutorial_x):
    def cb(i, b, t):
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        occam.Model(TUTORIAL / "mixture.occam").fit(data={"x": tutorial_x}, callback=cb)


GMM_LONG = """plate K = 10
plates N, D from data y
alpha ~ Dirichlet(1e-5) over K
z[N] ~ Categorical(alpha)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-5)
Lambda[K] over D ~ Wishart(dof = 2, rate = identity * 1e-5)
y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
"""


def test_gil_is_released_while_fitting():
    y = blobs(20000, 2, 10, seed=1)
    m = occam.Model.from_string(GMM_LONG)
    done = threading.Event()
    out = {}

    def work():
        out["r"] = m.fit(data={"y": y}, max_iter=200, tol=0.0, prune=False)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert out["r"].iterations > 50
    # The main thread kept running while the engine worked.
    assert ticks > 10


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_ctrl_c_stops_a_fit(threads):
    # With `threads`, the fit runs on a pool of its own, driven from another thread: the main
    # thread still sees Ctrl-C.
    y = blobs(20000, 2, 10, seed=2)
    m = occam.Model.from_string(GMM_LONG)
    # A process started in the background (`nohup ... &`) begins with SIGINT ignored, and then
    # no KeyboardInterrupt is raised: install the handler this test relies on, and restore it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            m.fit(data={"y": y}, max_iter=10_000_000, tol=0.0, prune=False, threads=threads)
        timer.join()
        assert time.monotonic() - start < 30
    finally:
        signal.signal(signal.SIGINT, previous)


def test_the_thread_count_does_not_change_the_fit():
    y = blobs(3000, 2, 10, seed=4)
    m = occam.Model.from_string(GMM_LONG)
    fits = [m.fit(data={"y": y}, max_iter=30, prune=False, threads=t) for t in (None, 1, 2, 3)]
    for f in fits[1:]:
        assert f.bound == fits[0].bound
        assert np.array_equal(f.bound_trace, fits[0].bound_trace)
        assert np.array_equal(f.posterior("mu")["mean"], fits[0].posterior("mu")["mean"])
    seen = []
    m.fit(data={"y": y}, max_iter=5, prune=False, threads=1,
          callback=lambda i, b, t: seen.append(b))
    assert seen == list(fits[0].bound_trace[:5])
    for bad in (0, -1, 1.5):
        with pytest.raises((occam.UsageError, TypeError)):
            m.fit(data={"y": y}, threads=bad)


def test_missing_values_from_nan_and_masked_arrays(tutorial_x):
    x = tutorial_x.copy()
    x[[3, 10], [0, 1]] = np.nan
    m = occam.Model(TUTORIAL / "single.occam")
    a = m.fit(data={"x": x})
    masked = np.ma.masked_array(tutorial_x, mask=np.isnan(x))
    b = m.fit(data={"x": masked})
    assert a.bound == b.bound
    full = m.fit(data={"x": tutorial_x})
    assert a.bound != full.bound
    # The report marks x as partly observed.
    assert a.posterior("x").role == "partly observed"
    # The same as a CSV with empty cells through the file reader.
    assert np.isfinite(a.bound)


def test_sample_and_graph():
    m = occam.Model(TUTORIAL / "generator" / "generate.occam")
    d = m.sample(plates={"N": 20, "D": 2}, seed=3)
    want = load_csv(TUTORIAL.parents[1] / "crates" / "occam-cli" / "tests" / "golden" / "sample_generator.out.csv")
    (name, arr), = d.items()
    np.testing.assert_array_equal(arr.reshape(want.shape), want)
    assert np.array_equal(m.sample(plates={"N": 20, "D": 2}, seed=3)[name], arr)
    g = occam.Model(TUTORIAL / "shared_pi_gamma.occam").graph()
    assert g._repr_svg_().startswith("<svg") or "<svg" in g[:200]
    text = occam.Model.from_string(GMM_LONG, name="g.occam")
    assert "<svg" in text.graph() and "digraph" in text.graph_dot()
    s = text.sample(plates={"N": 7, "D": 2}, seed=1)
    assert s["y"].shape == (7, 2)


def test_candidate_starts_can_be_switched_off():
    # The CLI's --single-start: the k-means start alone (scikit-learn's n_init=1). On these
    # five blobs the 20-component k-means start ends 146 nats below the best of the three
    # candidate starts (measured, release and debug builds alike).
    m = occam.Model(TUTORIAL / "mixture.occam")
    x = blobs(200, 2, 5, 0)
    single = m.fit(data={"x": x}, prune=False, candidate_starts=False)
    best = m.fit(data={"x": x}, prune=False)
    assert abs(single.bound - -1130.617724954501) <= 1e-9 * 1130.6
    assert abs(best.bound - -984.366628626598) <= 1e-9 * 984.4


def test_bound_quality_names_what_the_bound_is_as_the_json_report_does():
    """``Result.bound_quality`` and ``node_qualities``: exact for a conjugate model, a lower bound
    for Jaakkola–Jordan's ``sigmoid_jj``, approximate for an importance-sampled Student-t; the
    same names as the ``occam fit --json`` report's ``bound_quality`` and ``node_qualities``
    (written there only for bounds that are not exact), and they survive a save and load."""
    y = np.array([1.2, 2.9, 2.1, 1.7, 8.0, 2.4, -4.0, 2.2])
    gauss = occam.Model.from_string(
        "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ Gaussian(mu, 0.25)\nobserve y\n"
    ).fit(data={"y": y})
    assert gauss.bound_quality == "exact"
    assert set(gauss.node_qualities.values()) == {"exact"}
    assert "bound_quality" not in gauss.report()
    b = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    jj = occam.Model.from_string(
        "plates N from data y\nt ~ Gaussian(0, 1)\ny[N] ~ Bernoulli(sigmoid_jj(t))\nobserve y\n"
    ).fit(data={"y": b})
    t = occam.Model.from_string(
        "plates N from data y\nmu ~ Gaussian(0, 0.01)\n"
        "y[N] ~ StudentT(nu = 3, scale = 1, mean = mu)\nobserve y\n").fit(data={"y": y})
    assert jj.node_qualities["y"] == "lower_bound" and jj.node_qualities["t"] == "exact"
    for r, kind in ((jj, "lower_bound"), (t, "approximate")):
        assert r.bound_quality == kind
        rep = r.report()
        assert rep["bound_quality"] == kind
        assert r.node_qualities == rep["node_qualities"]
        # The total is the worst of the nodes' kinds.
        assert kind in r.node_qualities.values()
        assert set(r.node_qualities.values()) <= {"exact", kind}
        back = occam._from_json(r._fitted.to_json())
        assert back.bound_quality == kind
        assert back.node_qualities == r.node_qualities
