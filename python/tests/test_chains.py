"""Chains (MarkovChain, GaussianMarkovChain) from Python: per-step marginals, the Viterbi path
and smoothed means as NumPy arrays, equal to the exact forward-backward / the CLI's report."""

import itertools

import numpy as np
import pytest

import occam
from conftest import ROOT, load_csv

KNOWN = ROOT / "examples" / "bayespy" / "hmm_known"


def exact_hmm(p0, a, p, y):
    """ln p(y), the marginals q(z_t) and the most probable path by enumerating every path."""
    k, n = len(p0), len(y)
    probs = {}
    for path in itertools.product(range(k), repeat=n):
        pr = p0[path[0]] * p[path[0], y[0]]
        for t in range(1, n):
            pr *= a[path[t - 1], path[t]] * p[path[t], y[t]]
        probs[path] = pr
    total = sum(probs.values())
    marg = np.zeros((n, k))
    for path, pr in probs.items():
        marg[np.arange(n), list(path)] += pr / total
    best = max(probs, key=probs.get)
    return np.log(total), marg, np.array(best)


def test_known_hmm_marginals_and_viterbi_are_exact():
    y = load_csv(KNOWN / "y.csv")[:, 0][:10]
    p0, a, p = (load_csv(KNOWN / f) for f in ("p0.csv", "A.csv", "P.csv"))
    model = occam.Model.from_string(
        (KNOWN / "hmm_known.occam").read_text(), name="hmm_known.occam"
    )
    r = model.fit(data={"y": y, "p0": p0, "A": a, "P": p})
    log_z, marg, best = exact_hmm(p0[0], a, p, y.astype(int))
    assert r.bound == pytest.approx(log_z, rel=1e-12, abs=0)
    ch = r.chain("z")
    assert ch["family"] == "MarkovChain"
    assert ch["marginals"].shape == (10, 2)
    np.testing.assert_allclose(ch["marginals"], marg, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ch["viterbi"], best)
    np.testing.assert_array_equal(ch["lengths"], [10])


def test_ragged_sequences_are_padded_and_match_the_report():
    y = np.genfromtxt(ROOT / "examples" / "models" / "hmm_chain" / "y.csv", delimiter=",",
                      skip_header=1)  # empty cells (after each sequence's end) read as NaN
    lengths = load_csv(ROOT / "examples" / "models" / "hmm_chain" / "L.csv")
    model = occam.Model(ROOT / "examples" / "models" / "hmm_chain.occam")
    r = model.fit(data={"y": y, "L": lengths}, restarts=2)
    ch = r.chain("z")
    assert ch["marginals"].shape == (3, 60, 3)
    assert ch["viterbi"].shape == (3, 60)
    np.testing.assert_array_equal(ch["lengths"], [60, 35, 12])
    report = r.report()["chains"]["z"]
    for s, n in enumerate([60, 35, 12]):
        np.testing.assert_allclose(ch["marginals"][s, :n].sum(axis=1), 1.0, atol=1e-12)
        assert np.isnan(ch["marginals"][s, n:]).all()
        assert (ch["viterbi"][s, n:] == -1).all()
        np.testing.assert_array_equal(ch["viterbi"][s, :n], report["viterbi"][s])
        np.testing.assert_allclose(ch["marginals"][s, :n], report["marginals"][s], rtol=0, atol=0)


def test_lds_smoothed_means_and_sds():
    y = load_csv(ROOT / "examples" / "models" / "lds" / "y.csv")
    r = occam.Model(ROOT / "examples" / "models" / "lds.occam").fit(data={"y": y}, max_iter=30)
    ch = r.chain("x")
    assert ch["family"] == "GaussianMarkovChain"
    assert ch["means"].shape == (80, 2) and ch["sds"].shape == (80, 2)
    assert (ch["sds"] > 0).all()
    np.testing.assert_allclose(ch["means"], r.report()["chains"]["x"]["means"][0], rtol=0, atol=0)
    with pytest.raises(occam.UsageError, match="not a chain"):
        r.chain("A")
