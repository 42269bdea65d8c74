"""Result.predict against the closed form of Bayesian linear regression; save/load and pickling
give the same posteriors and predictions, bit for bit; a damaged file is a clear error."""

import pickle

import numpy as np
import pytest

import occam

REGRESSION = """plates N, C from data X
data X[N] over C
w over C ~ MvGaussian(mean = 0, precision = identity * 2)
y[N] ~ Gaussian(mean = dot(X[N], w), precision = 4)
observe y
"""
X = np.array([[1.0, 0.5], [1.0, -1.0], [1.0, 2.0], [1.0, 0.0], [1.0, 1.5], [1.0, -0.3]])
Y = np.array([1.2, -0.7, 2.9, 0.4, 2.1, 0.1])
X_NEW = np.array([[1.0, 3.0], [1.0, -2.0], [0.0, 1.0]])


def fit(y=Y):
    return occam.Model.from_string(REGRESSION, "reg.occam").fit(data={"X": X, "y": y})


def closed_form(x, xs, ys):
    # Bishop (3.53)-(3.54), (3.58)-(3.59): Σ = (αI + β XᵀX)⁻¹, μ = β Σ Xᵀy; N(xᵀμ, 1/β + xᵀΣx).
    alpha, beta = 2.0, 4.0
    s = np.linalg.inv(alpha * np.eye(2) + beta * xs.T @ xs)
    mu = beta * s @ xs.T @ ys
    return x @ mu, 1.0 / beta + np.einsum("ni,ij,nj->n", x, s, x)


def test_predict_is_the_closed_form():
    r = fit()
    p = r.predict(data={"X": X_NEW}, draws=20000, seed=1)["y"]
    m, v = closed_form(X_NEW, X, Y)
    assert p["mean"].shape == (3, 1) and p["samples"].shape == (20000, 3, 1)
    assert p["exact"]
    np.testing.assert_allclose(p["mean"][:, 0], m, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(p["sd"][:, 0] ** 2, v, rtol=1e-10)
    se = np.sqrt(v / 20000)
    assert np.all(np.abs(p["samples"][:, :, 0].mean(axis=0) - m) < 5 * se)
    assert sorted(p["quantiles"]) == [0.025, 0.5, 0.975]


def test_missing_entries():
    y = Y.copy()
    y[2] = np.nan
    p = fit(y).predict(missing=True)["y"]
    keep = ~np.isnan(y)
    m, v = closed_form(X[2:3], X[keep], y[keep])
    assert p["missing"] == [False, False, True, False, False, False]
    np.testing.assert_allclose(p["mean"][2, 0], m[0], rtol=1e-10)
    np.testing.assert_allclose(p["sd"][2, 0] ** 2, v[0], rtol=1e-10)


def test_pickle_and_save_round_trip_bit_for_bit(tmp_path):
    r = fit()
    for back in (pickle.loads(pickle.dumps(r)), None):
        if back is None:
            r.save(tmp_path / "fit.json")
            back = occam.load(tmp_path)
        assert back.bound == r.bound and back.iterations == r.iterations
        for name in r.variables:
            a, b = r.posterior(name), back.posterior(name)
            for k in a.keys():
                np.testing.assert_array_equal(a[k], b[k])
        pa = r.predict(data={"X": X_NEW})["y"]
        pb = back.predict(data={"X": X_NEW})["y"]
        for k in ("mean", "sd", "samples"):
            assert np.array_equal(pa[k], pb[k])


def test_a_damaged_file_is_a_clear_error(tmp_path):
    fit().save(tmp_path / "fit.json")
    text = (tmp_path / "fit.json").read_text()
    (tmp_path / "old.json").write_text(text.replace('"version":1', '"version":9', 1))
    with pytest.raises(occam.DataError, match=r"old\.json.*version 9.*version 1"):
        occam.load(tmp_path / "old.json")
    (tmp_path / "cut.json").write_text(text[: len(text) // 2])
    with pytest.raises(occam.DataError, match="truncated or damaged"):
        occam.load(tmp_path / "cut.json")


def test_a_model_pickles_and_fits_the_same_bits(tmp_path):
    text_model = occam.Model.from_string(REGRESSION, "reg.occam")
    (tmp_path / "reg.occam").write_text(REGRESSION)
    file_model = occam.Model(tmp_path / "reg.occam")
    data = {"X": X, "y": Y}
    for m in (text_model, file_model):
        back = pickle.loads(pickle.dumps(m))
        assert isinstance(back, occam.Model) and back.name == m.name
        a, b = m.fit(data=data), back.fit(data=data)
        assert a.bound == b.bound and a.iterations == b.iterations
        np.testing.assert_array_equal(a.posterior("w")["mean"], b.posterior("w")["mean"])
        # The Result of the unpickled model pickles bit for bit too.
        c = pickle.loads(pickle.dumps(b))
        assert c.bound == b.bound
        for k in b.posterior("w").keys():
            np.testing.assert_array_equal(c.posterior("w")[k], b.posterior("w")[k])
    # A file model whose file is gone (or changed) comes back as its text, named by the path.
    blob = pickle.dumps(file_model)
    (tmp_path / "reg.occam").write_text(REGRESSION.replace("identity * 2", "identity * 3"))
    back = pickle.loads(blob)
    assert back.name == file_model.name
    assert back.fit(data=data).bound == text_model.fit(data=data).bound
    (tmp_path / "reg.occam").unlink()
    assert pickle.loads(blob).fit(data=data).bound == text_model.fit(data=data).bound


HMM = """plate K = 2
plates S, T from data y
data L[S]
data p0 over K
data A[K] over K
data mu[K]
z[S] over T ~ MarkovChain(initial = p0, transition = A, lengths = L)
y[S, T] ~ Gaussian(mean = mu[z], precision = 2)
"""


def test_predict_ahead_is_the_forward_algorithm():
    p0, a, mu = np.array([0.7, 0.3]), np.array([[0.9, 0.1], [0.25, 0.75]]), np.array([-1.0, 1.5])
    y = np.array([[-1.2, -0.8, 1.1, 1.9, 1.4], [1.4, 1.7, -1.1, np.nan, np.nan]])
    lengths = np.array([5.0, 3.0])
    data = {"y": y, "L": lengths, "p0": p0[None, :], "A": a, "mu": mu[:, None]}
    r = occam.Model.from_string(HMM, "hmm.occam").fit(data=data)
    p = r.predict(ahead=2)
    z, yp = p["z"], p["y"]
    assert z["probabilities"].shape == (2, 7, 2) and yp["mean"].shape == (2, 7, 1)
    assert yp["exact"]
    np.testing.assert_array_equal(z["horizon"][1], [1, 1, 1, 1, 2, 0, 0])
    assert np.isnan(yp["mean"][1, 5:]).all()
    for s, n in enumerate((5, 3)):
        rho = p0.copy()
        for t in range(n + 2):
            np.testing.assert_allclose(z["probabilities"][s, t], rho, rtol=0, atol=1e-12)
            np.testing.assert_allclose(yp["mean"][s, t, 0], rho @ mu, rtol=0, atol=1e-12)
            f = rho
            if t < n:
                lik = np.exp(-(y[s, t] - mu) ** 2)   # N(y | mu_k, 1/2) up to a constant
                f = rho * lik / (rho @ lik)
            rho = f @ a
    with pytest.raises(occam.UsageError, match="ahead"):
        r.predict()
