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
