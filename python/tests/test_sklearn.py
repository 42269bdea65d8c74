"""occam.sklearn.BayesianGaussianMixture: scikit-learn's estimator checks, and a bound at least as
high as scikit-learn's BayesianGaussianMixture on the same data.

How bounds are compared: Occam's ``lower_bound_`` is the complete bound on log p(X) in nats (the
whitening's Jacobian included). scikit-learn's ``lower_bound_`` leaves out constants, so
``sk_elbo.full_elbo`` recomputes scikit-learn's complete bound under its own model (Normal–Wishart
prior, joint q(μ_k, Λ_k)) from its fitted attributes, with q(z) refreshed by an E-step (which can
only raise it). ``test_full_elbo_is_sklearn_bound_plus_a_constant`` checks that recomputation:
across fits it differs from scikit-learn's own bound by one constant. Both are lower bounds on the
evidence of a Bayesian GMM with the same hyperparameters (the priors on the means differ, see
occam/_gmm_model.py), so the comparison is a model comparison on the same footing.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import BayesianGaussianMixture as SkBGM
from sklearn.utils.estimator_checks import parametrize_with_checks

from conftest import blobs
from occam.sklearn import BayesianGaussianMixture
from sk_elbo import full_elbo

# Checks that fail, and why (each is a deliberate difference, documented in occam/sklearn.py).
EXPECTED_FAILED = {}


@parametrize_with_checks(
    [BayesianGaussianMixture(n_components=2, max_iter=50), BayesianGaussianMixture(covariance_type="diag")],
    expected_failed_checks=lambda est: EXPECTED_FAILED,
)
def test_sklearn_compatible_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


@pytest.mark.parametrize("prior_type", ["dirichlet_distribution", "dirichlet_process"])
def test_full_elbo_is_sklearn_bound_plus_a_constant(prior_type):
    X = blobs(500, 3, 4, seed=1)
    offsets = []
    for iters, seed in [(1, 0), (3, 0), (20, 1), (200, 2)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            s = SkBGM(n_components=6, weight_concentration_prior_type=prior_type,
                      random_state=seed, max_iter=iters, reg_covar=0.0).fit(X)
        # scikit-learn's bound is valid right after an M-step, with the E-step's q(z) before it.
        log_norm, log_resp = s._e_step(X)
        s._m_step(X, log_resp)
        offsets.append(full_elbo(s, X, resp=np.exp(log_resp)) - s._compute_lower_bound(log_resp, log_norm))
    assert np.ptp(offsets) < 1e-9 * abs(offsets[0])


CASES = [  # (N, D, true K, fitted K, seed)
    (1000, 2, 5, 8, 0),
    (600, 4, 4, 6, 1),
    (2000, 3, 8, 10, 2),
]


@pytest.mark.parametrize("n,d,k_true,k,seed", CASES)
def test_bound_at_least_sklearn(n, d, k_true, k, seed):
    X = blobs(n, d, k_true, seed)
    # One initialisation each: Occam's k-means++ assignment, scikit-learn's k-means.
    ours = BayesianGaussianMixture(n_components=k, max_iter=500, n_init=1, random_state=0,
                                   weight_concentration_prior_type="dirichlet_distribution").fit(X)
    sk = SkBGM(n_components=k, weight_concentration_prior_type="dirichlet_distribution", max_iter=500,
               random_state=0).fit(X)
    sk_bound = full_elbo(sk, X)
    assert ours.converged_
    assert ours.lower_bound_ >= sk_bound, (ours.lower_bound_, sk_bound)


def test_means_match_sklearn_on_separated_clusters():
    X = blobs(1000, 2, 5, seed=0)
    ours = BayesianGaussianMixture(n_components=8, max_iter=500, n_init=5, random_state=0,
                                   weight_concentration_prior_type="dirichlet_distribution").fit(X)
    sk = SkBGM(n_components=8, weight_concentration_prior_type="dirichlet_distribution", max_iter=500,
               random_state=0).fit(X)

    def heavy(e):
        return np.sort(e.means_[e.weights_ > 0.05], axis=0)

    assert heavy(ours).shape == heavy(sk).shape == (5, 2)
    np.testing.assert_allclose(heavy(ours), heavy(sk), atol=0.1)


@pytest.mark.parametrize("covariance_type", ["full", "diag"])
def test_attributes_and_predictions(covariance_type):
    X = blobs(800, 3, 3, seed=4)
    est = BayesianGaussianMixture(n_components=5, covariance_type=covariance_type, random_state=1,
                                  max_iter=300).fit(X)
    k, d = 5, 3
    assert est.weights_.shape == (k,) and est.weights_.sum() == pytest.approx(1.0, abs=1e-12)
    assert est.means_.shape == (k, d)
    cov_shape = (k, d, d) if covariance_type == "full" else (k, d)
    assert est.covariances_.shape == cov_shape and est.precisions_.shape == cov_shape
    if covariance_type == "full":
        assert np.all(np.linalg.eigvalsh(est.covariances_) > 0)
        np.testing.assert_allclose(est.precisions_ @ est.covariances_, np.broadcast_to(np.eye(d), (k, d, d)), atol=1e-9)
        P = est.precisions_cholesky_
        np.testing.assert_allclose(P @ np.transpose(P, (0, 2, 1)), est.precisions_, rtol=1e-9)
    else:
        assert np.all(est.covariances_ > 0)
    p = est.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X), p.argmax(axis=1))
    assert est.score(X) == pytest.approx(est.score_samples(X).mean(), rel=1e-12)
    assert est.converged_ and est.n_iter_ >= 1
    assert np.all(np.diff(est.lower_bounds_) >= -1e-9 * np.abs(est.lower_bounds_[:-1]))
    assert est.lower_bounds_[-1] == est.lower_bound_
    # Data far from every cluster scores lower than the data.
    assert est.score(X + 100.0) < est.score(X)
    labels = BayesianGaussianMixture(n_components=5, covariance_type=covariance_type, random_state=1,
                                     max_iter=300).fit_predict(X)
    np.testing.assert_array_equal(labels, est.predict(X))
    Xs, ys = est.sample(50)
    assert Xs.shape == (50, d) and ys.shape == (50,)


def test_same_random_state_same_fit():
    X = blobs(500, 2, 3, seed=5)
    a = BayesianGaussianMixture(n_components=4, n_init=3, random_state=7).fit(X)
    b = BayesianGaussianMixture(n_components=4, n_init=3, random_state=7).fit(X)
    assert a.lower_bound_ == b.lower_bound_ and np.array_equal(a.means_, b.means_)


@pytest.mark.parametrize("covariance_type", ["full", "diag"])
def test_fit_does_not_depend_on_n_jobs(covariance_type):
    # 6000 points: 12 of the engine's blocks, shared out differently on 1, 2 and 3 threads.
    X = blobs(6000, 3, 4, seed=8)
    fits = [BayesianGaussianMixture(n_components=5, covariance_type=covariance_type, random_state=3,
                                    n_jobs=j).fit(X) for j in (1, 2, 3, -1, None)]
    for f in fits[1:]:
        assert f.n_iter_ == fits[0].n_iter_
        np.testing.assert_array_equal(f.lower_bounds_, fits[0].lower_bounds_)
        for name in ("weights_", "means_", "covariances_"):
            np.testing.assert_array_equal(getattr(f, name), getattr(fits[0], name))


def test_bad_parameters_raise_value_error():
    X = blobs(50, 2, 2, seed=6)
    for kw in ({"covariance_type": "tied"}, {"weight_concentration_prior_type": "process"},
               {"n_components": 0}, {"n_components": 60}, {"degrees_of_freedom_prior": 0.5},
               {"weight_concentration_prior": -1.0}, {"max_iter": 0}, {"mean_prior": [0.0]},
               {"n_jobs": 0}, {"n_jobs": 1.5}, {"n_jobs": -2}):
        with pytest.raises(ValueError):
            BayesianGaussianMixture(**kw).fit(X)
    with pytest.raises(ValueError):
        BayesianGaussianMixture().fit(np.array([[1.0, np.nan], [2.0, 3.0]]))


def test_input_shortcut_agrees_with_validate_data():
    # `fit` takes a finite 2-D float64 ndarray as it is (no copy) and records what
    # scikit-learn's validate_data records; everything else goes through validate_data.
    from sklearn.utils.validation import validate_data

    X = blobs(40, 3, 2, seed=9)
    est = BayesianGaussianMixture(n_components=2, random_state=0)
    est.feature_names_in_ = np.array(["a", "b", "c"], dtype=object)  # from an earlier fit
    assert est._validated(X) is X
    ref = BayesianGaussianMixture(n_components=2, random_state=0)
    ref.feature_names_in_ = np.array(["a", "b", "c"], dtype=object)
    assert validate_data(ref, X, dtype=np.float64, ensure_min_samples=2) is X
    assert est.n_features_in_ == ref.n_features_in_ == 3
    assert not hasattr(est, "feature_names_in_") and not hasattr(ref, "feature_names_in_")
    # Fortran order, as validate_data: not copied either.
    F = np.asfortranarray(X)
    assert est._validated(F) is F
    # Lists, other dtypes, NaN, infinity and one row: validate_data's conversions and messages.
    np.testing.assert_array_equal(est._validated(X.tolist()), X)
    np.testing.assert_array_equal(est._validated(X.astype(np.float32)), X.astype(np.float32))
    for bad, message in ((np.array([[1.0, np.nan], [2.0, 3.0]]), "NaN"),
                         (np.array([[1.0, np.inf], [2.0, 3.0]]), "infinity"),
                         (np.array([[1.0, 2.0]]), "minimum of 2 is required")):
        with pytest.raises(ValueError, match=message):
            est._validated(bad)
    # Finite values whose sum overflows: validate_data's full check, which accepts them (and
    # no overflow warning, as in scikit-learn's own first pass).
    big = np.array([[1e308, 1.0], [1e308, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert est._validated(big) is big
