"""occam.sklearn.BayesianRidge and ARDRegression: scikit-learn's estimator checks, and the same
fit as scikit-learn's own estimators (same algorithm, same hyper-priors) on the examples of
scikit-learn's documentation: the docstrings' three points, ``plot_ard.py`` (``make_regression``
with 100 samples, 100 features, 10 informative, noise 8, seed 42) and
``plot_bayesian_ridge_curvefit.py`` (a cubic in ``np.vander`` on 25 noisy points of a sinusoid).
"""

import numpy as np
import pytest
from sklearn import linear_model as sk
from sklearn.datasets import make_regression
from sklearn.utils.estimator_checks import parametrize_with_checks

from occam.sklearn import ARDRegression, BayesianRidge

# Checks that fail, and why (each a deliberate difference, documented in occam/_linear.py): none.
# Skipped by scikit-learn itself in this environment, whatever the estimator (2 of each
# estimator's 51 checks, measured with the test pins): check_array_api_input (runs only with
# SCIPY_ARRAY_API=1; the estimators compute in NumPy) and check_regressor_data_not_an_array
# (needs pandas, which is not among the test pins). The sample_weight checks do not apply
# (fit takes no sample_weight, so scikit-learn does not yield them).
EXPECTED_FAILED = {}


@parametrize_with_checks([BayesianRidge(), ARDRegression()],
                         expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def docstring():
    return np.array([[0, 0], [1, 1], [2, 2.0]]), np.array([0, 1, 2.0])


def plot_ard():
    X, y = make_regression(n_samples=100, n_features=100, n_informative=10, noise=8,
                           random_state=42)
    return X, y


def curvefit():
    rng = np.random.RandomState(1234)
    x = rng.uniform(0.0, 1.0, 25)
    y = np.sin(2 * np.pi * x) + rng.normal(scale=0.1, size=25)
    return np.vander(x, 4), y


def sparse_with_offset():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 8))
    return X, X @ np.array([1, 0, 0, 2, 0, 0, -1, 0.0]) + 0.1 * rng.standard_normal(200) + 5


CASES = [
    ("docstring", docstring, {}),
    ("plot_ard", plot_ard, {"compute_score": True}),
    ("curvefit", curvefit, {"tol": 1e-6, "fit_intercept": False, "compute_score": True,
                            "alpha_init": 1.0, "lambda_init": 1e-3}),
    ("curvefit-default-init", curvefit, {"tol": 1e-6, "fit_intercept": False}),
    ("offset", sparse_with_offset, {"compute_score": True}),
]


def same_fit(ours, theirs, X):
    assert ours.n_iter_ == theirs.n_iter_
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=0, atol=1e-6)
    assert abs(ours.intercept_ - theirs.intercept_) < 1e-6
    np.testing.assert_allclose(ours.alpha_, theirs.alpha_, rtol=1e-6)
    np.testing.assert_allclose(ours.lambda_, theirs.lambda_, rtol=1e-6)
    np.testing.assert_allclose(ours.sigma_, theirs.sigma_, rtol=0,
                               atol=1e-6 * np.abs(theirs.sigma_).max())
    np.testing.assert_allclose(ours.scores_, theirs.scores_, rtol=1e-6)
    m1, s1 = ours.predict(X, return_std=True)
    m2, s2 = theirs.predict(X, return_std=True)
    np.testing.assert_allclose(m1, m2, rtol=0, atol=1e-6)
    np.testing.assert_allclose(s1, s2, rtol=1e-6)


@pytest.mark.parametrize("name,data,kw", CASES, ids=[c[0] for c in CASES])
def test_bayesian_ridge_equals_sklearn(name, data, kw):
    X, y = data()
    same_fit(BayesianRidge(**kw).fit(X, y), sk.BayesianRidge(**kw).fit(X, y), X)


@pytest.mark.parametrize("name,data,kw", [c for c in CASES if "alpha_init" not in c[2]],
                         ids=[c[0] for c in CASES if "alpha_init" not in c[2]])
def test_ard_regression_equals_sklearn(name, data, kw):
    X, y = data()
    same_fit(ARDRegression(**kw).fit(X, y), sk.ARDRegression(**kw).fit(X, y), X)


def test_docstring_predictions():
    X, y = docstring()
    for est in (BayesianRidge(), ARDRegression()):
        np.testing.assert_allclose(est.fit(X, y).predict([[1, 1]]), [1.0], atol=1e-9)


def test_ard_prunes_the_uninformative_features():
    X, y = sparse_with_offset()
    est = ARDRegression().fit(X, y)
    kept = est.lambda_ < est.threshold_lambda
    assert list(np.flatnonzero(kept)) == [0, 3, 6]
    assert est.sigma_.shape == (3, 3)
    assert np.all(est.coef_[~kept] == 0.0)


@pytest.mark.parametrize("Est", [BayesianRidge, ARDRegression])
def test_bad_input_names_the_problem(Est):
    X, y = docstring()
    with pytest.raises(ValueError, match="tol"):
        Est(tol=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        Est(max_iter=0).fit(X, y)
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Est().fit(X, y)
