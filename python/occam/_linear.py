"""scikit-learn's ``BayesianRidge`` and ``ARDRegression`` fitted by Occam's Rust library
(``occam::regression::scikit`` through ``occam._occam.linear_fit``).

The algorithm is scikit-learn's own (``sklearn/linear_model/_bayes.py``, 1.9), step for step: the
same initial values (``alpha = 1 / (Var(y) + eps)``, ``lambda = 1``), the evidence fixed point
with Gamma hyper-priors (``lambda = (gamma + 2 lambda_1) / (|coef|^2 + 2 lambda_2)``,
``alpha = (N - gamma + 2 alpha_1) / (sse + 2 alpha_2)``), the same update order, pruning at
``threshold_lambda`` and convergence test (``sum |coef - coef_old| < tol``), the same
``scores_``, and the intercept by centring (not a random variable). Coefficients equal
scikit-learn's to rounding. Differences, all deliberate:

* The data are read once: Rust forms XᵀX, Xᵀy and an exact residual in two passes over the rows
  and iterates on D × D matrices, where scikit-learn takes the SVD of X (``BayesianRidge``) or
  forms XᵀX again at every iteration (``ARDRegression``). The eigenvalues of XᵀX stand for
  scikit-learn's squared singular values (the largest min(N, D) kept); ``ARDRegression`` inverts
  ``diag(lambda) + alpha XᵀX`` by scipy's ``pinvh`` cut-off also when N < D, where scikit-learn
  switches to the Woodbury identity (the same matrix in exact arithmetic).
* The computation is in float64 whatever the input's dtype; ``copy_X`` is accepted and never
  needed (X is not modified); ``sample_weight`` is not supported.

scikit-learn's ``check_estimator``: every applicable check passes, none is expected to fail
(python/tests/test_sklearn_linear.py). The ``sample_weight`` checks do not apply (``fit`` takes
none); scikit-learn itself skips the array-API check (``check_array_api_input``, run only with
``SCIPY_ARRAY_API=1``; the estimators compute in NumPy) and ``check_regressor_data_not_an_array``
where pandas is not installed (it is not among the test pins).
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._occam import linear_fit

__all__ = ["BayesianRidge", "ARDRegression"]


def _real(name, value, low=0.0, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < low:
        raise ValueError(f"{name} must be a finite number ≥ {low}, got {value}")
    return value


def _max_iter(value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"max_iter must be an integer ≥ 1, got {value!r}")
    return int(value)


class _BayesLinear(RegressorMixin, BaseEstimator):
    """What both estimators share: validation, the call into Rust, predictions."""

    _kind = None
    _min_samples = 1

    def fit(self, X, y):
        """Fits the model by evidence maximisation; returns self."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                             ensure_min_samples=self._min_samples)
        r = linear_fit(np.ascontiguousarray(X), np.ascontiguousarray(y, dtype=np.float64), self._kind,
                       bool(self.fit_intercept), _max_iter(self.max_iter),
                       _real("tol", self.tol), _real("alpha_1", self.alpha_1),
                       _real("alpha_2", self.alpha_2), _real("lambda_1", self.lambda_1),
                       _real("lambda_2", self.lambda_2),
                       _real("alpha_init", getattr(self, "alpha_init", None), allow_none=True),
                       _real("lambda_init", getattr(self, "lambda_init", None), allow_none=True),
                       bool(self.compute_score),
                       _real("threshold_lambda", getattr(self, "threshold_lambda", 1e4)))
        self.coef_ = r["coef"]
        self.intercept_ = float(r["intercept"]) if self.fit_intercept else 0.0
        self.alpha_ = float(r["alpha"])
        self.sigma_ = r["sigma"]
        self.n_iter_ = int(r["n_iter"])
        self.X_offset_ = r["x_offset"]
        self.X_scale_ = np.ones(X.shape[1])
        self._store_lambda(r)
        if self.verbose:
            print(f"{type(self).__name__}: stopped after {self.n_iter_} iterations")
        return self

    def _kept(self):
        return slice(None)

    def predict(self, X, return_std=False):
        """The predictive mean, and with ``return_std`` its standard deviation
        ``sqrt(xᵀ sigma_ x + 1 / alpha_)`` (x centred by ``X_offset_``)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        y_mean = X @ self.coef_ + self.intercept_
        if not return_std:
            return y_mean
        Xc = (X - self.X_offset_)[:, self._kept()]
        var = np.einsum("ij,ij->i", Xc @ self.sigma_, Xc)
        return y_mean, np.sqrt(var + 1.0 / self.alpha_)


class BayesianRidge(_BayesLinear):
    """Bayesian ridge regression (scikit-learn's API and algorithm), fitted by Occam."""

    _kind = "ridge"

    def __init__(self, *, max_iter=300, tol=1.0e-3, alpha_1=1.0e-6, alpha_2=1.0e-6,
                 lambda_1=1.0e-6, lambda_2=1.0e-6, alpha_init=None, lambda_init=None,
                 compute_score=False, fit_intercept=True, copy_X=True, verbose=False):
        self.max_iter = max_iter
        self.tol = tol
        self.alpha_1 = alpha_1
        self.alpha_2 = alpha_2
        self.lambda_1 = lambda_1
        self.lambda_2 = lambda_2
        self.alpha_init = alpha_init
        self.lambda_init = lambda_init
        self.compute_score = compute_score
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.verbose = verbose

    def _store_lambda(self, r):
        self.lambda_ = float(r["lambda"][0])
        self.scores_ = r["scores"] if self.compute_score else []


class ARDRegression(_BayesLinear):
    """Bayesian ARD regression (scikit-learn's API and algorithm), fitted by Occam."""

    _kind = "ard"
    _min_samples = 2

    def __init__(self, *, max_iter=300, tol=1.0e-3, alpha_1=1.0e-6, alpha_2=1.0e-6,
                 lambda_1=1.0e-6, lambda_2=1.0e-6, compute_score=False, threshold_lambda=1.0e4,
                 fit_intercept=True, copy_X=True, verbose=False):
        self.max_iter = max_iter
        self.tol = tol
        self.alpha_1 = alpha_1
        self.alpha_2 = alpha_2
        self.lambda_1 = lambda_1
        self.lambda_2 = lambda_2
        self.compute_score = compute_score
        self.threshold_lambda = threshold_lambda
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.verbose = verbose

    def _store_lambda(self, r):
        self.lambda_ = r["lambda"]
        self.scores_ = list(r["scores"])

    def _kept(self):
        return self.lambda_ < self.threshold_lambda
