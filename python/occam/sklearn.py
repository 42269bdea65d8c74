"""Drop-ins for scikit-learn's ``BayesianGaussianMixture`` fitted by Occam's VMP engine, and for
its ``BayesianRidge`` and ``ARDRegression`` fitted by Occam's Rust evidence maximisation (their
differences are listed in ``occam/_linear.py``), and ``BayesianLogisticRegression``, a
``LogisticRegression``-style VB classifier (binary and multinomial, optional ARD, predictive
probabilities; ``occam/_logistic.py``).

Switch by changing one import::

    from occam.sklearn import BayesianGaussianMixture   # was: from sklearn.mixture import ...

Same constructor arguments (those meaningful for VB), same methods (``fit``, ``fit_predict``,
``predict``, ``predict_proba``, ``score``, ``score_samples``, ``sample``) and fitted attributes
(``weights_``, ``means_``, ``covariances_``, ``precisions_``, ``precisions_cholesky_``,
``converged_``, ``n_iter_``, ``lower_bound_``, ``weight_concentration_``,
``degrees_of_freedom_`` ...). Differences, all deliberate:

* ``n_jobs`` (not in scikit-learn's class) is the number of threads of a fit: ``None`` (default)
  runs small problems on one thread and large ones (``n_samples · n_components · moment length``
  above ``2**22`` values per sweep) on every core, ``-1`` always on every core, ``k ≥ 1`` on ``k``
  threads. The fitted values do not depend on it: the engine sums in a fixed order, whatever the
  number of threads.

* ``weight_concentration_prior_type`` means what it means in scikit-learn: ``"dirichlet_process"``
  (the default) is the truncated stick-breaking prior (``StickBreaking`` in the model language:
  ``v_k ~ Beta(1, weight_concentration_prior)``), ``"dirichlet_distribution"`` a symmetric
  Dirichlet. ``weight_concentration_`` is, as in scikit-learn, the tuple ``(a, b)`` of the sticks'
  Beta parameters for the first and the Dirichlet's concentration for the second. The truncation
  is Blei & Jordan's (2006): the last stick is ``v_K = 1``, so the K weights sum to one and the
  bound is on the evidence of the K-component truncated model; it is reported as
  ``Beta(1 + N_K, 0)`` (the point mass at 1). scikit-learn keeps a ``Beta(1 + N_K, α0)`` last
  stick instead (the rest of the stick is left to components beyond K), so its ``weights_`` are
  renormalised and its last component's ``E[log π_K]`` is lower by ``E[-log v_K]``.
* ``covariance_type`` is ``"full"`` or ``"diag"``.
* ``lower_bound_`` is the complete variational lower bound on ``log p(X)`` in nats, every
  constant included (scikit-learn's leaves constants out); ``lower_bounds_`` is its trace.
* ``tol`` means what it means in scikit-learn: stop when the bound's change over a sweep is at
  most ``tol`` nats in total (``|ΔL| ≤ tol``; constants do not change ΔL, so the test is the same
  on Occam's complete bound as on scikit-learn's constant-free one). Occam's own tolerance is per
  observed value, so the estimator passes ``tol / (n_samples · n_features)``.
* The prior of a component's mean has precision ``mean_precision_prior · E[Λ_k]`` under the prior,
  independent of Λ_k, with mean-field ``q(μ_k) q(Λ_k)`` (see ``occam._gmm_model``); there is
  therefore no ``mean_precision_``.
* ``init_params`` is k-means on the data (greedy k-means++ seeding and Lloyd iterations: Occam's
  initialisation of mixture indices), restarted
  ``n_init`` times from seeds ``s, s+1, ...`` with ``s`` from ``random_state``. Each
  initialisation ends with the engine's pruning stage (``_PRUNE``): after convergence, trials that
  empty one used component and, for the Dirichlet process, relabel the components by decreasing
  size, each kept only if the bound rises; ``n_iter_`` and ``lower_bounds_`` include its sweeps.

``score_samples(X)`` follows scikit-learn's definition for the variational mixture:
``log Σ_k exp(E_q[log π_k] + E_q[log N(x | μ_k, Λ_k⁻¹)])`` (the expected log-likelihood under q,
a lower bound on the log predictive density), ``score`` its mean; ``predict_proba`` is the
normalised ``exp`` of the same terms, i.e. the VMP update of q(z) for new points.
"""

import warnings

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import digamma
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import Model
from ._gmm_model import model_text, whitening

from ._linear import ARDRegression, BayesianRidge
from ._logistic import BayesianLogisticRegression

__all__ = ["BayesianGaussianMixture", "BayesianRidge", "ARDRegression", "BayesianLogisticRegression"]

# Values per sweep (n · K · moment length) up to which a fit runs on one thread when
# ``n_jobs=None`` (`_threads`): issue 2's N=2k D=10 K=40 (8.8e6) and N=1e5 D=2 K=10 (6e6) mixtures
# are above it, N=1e4 D=2 K=10 (6e5) below.
_ONE_THREAD_WORK = 1 << 22

# Whether a fit ends with the engine's pruning stage: after convergence, trials that empty one
# used component (smallest first) and, under the stick-breaking prior, relabel the components by
# decreasing size, each kept if the bound rises. k-means with K clusters splits natural clusters
# into several components that VMP does not merge by itself: on standardised iris (K = 10) one
# initialisation without it ended 29 nats (Dirichlet) and 33 nats (Dirichlet process) below five
# on average over seeds 0-9, 58 and 63 nats at worst (python/tests/test_sklearn_n_init.py).
_PRUNE = True


def _number(name, value, low, strict=True):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < low or (strict and value == low):
        op = ">" if strict else "≥"
        raise ValueError(f"{name} must be {op} {low}, got {value}")
    return value


def _integer(name, value, low):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be ≥ {low}, got {value}")
    return int(value)


def _logsumexp_rows(w):
    """``log Σ_k exp(w[n, k])`` as an N × 1 column (rows of -inf stay -inf)."""
    m = w.max(axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return m + np.log(np.exp(w - m).sum(axis=1, keepdims=True))


def _sticks(pi, alpha0):
    """scikit-learn's ``weight_concentration_`` for the Dirichlet process, ``(a, b)`` with
    ``q(v_k) = Beta(a_k, b_k)``, and ``E[log π_k]``, from the posterior of a ``StickBreaking``
    variable (its K − 1 sticks). The last stick is ``v_K = 1`` (the truncation of Blei & Jordan
    2006), shown as ``Beta(1 + N_K, 0)``, the point mass at 1: ``b_{K-1} = α0 + N_K``."""
    a, b = np.asarray(pi["stick_a"], dtype=np.float64), np.asarray(pi["stick_b"], dtype=np.float64)
    n_last = b[-1] - alpha0 if b.size else 0.0
    psi_ab = digamma(a + b)
    ln_v, ln_1mv = digamma(a) - psi_ab, digamma(b) - psi_ab
    rest = np.concatenate(([0.0], np.cumsum(ln_1mv)))
    elog = rest + np.concatenate((ln_v, [0.0]))
    return (np.append(a, 1.0 + n_last), np.append(b, 0.0)), elog


class BayesianGaussianMixture(DensityMixin, BaseEstimator):
    """Variational Bayesian Gaussian mixture (scikit-learn API) fitted by Occam."""

    def __init__(
        self,
        n_components=1,
        *,
        covariance_type="full",
        tol=1e-3,
        max_iter=100,
        n_init=1,
        weight_concentration_prior_type="dirichlet_process",
        weight_concentration_prior=None,
        mean_precision_prior=None,
        mean_prior=None,
        degrees_of_freedom_prior=None,
        covariance_prior=None,
        random_state=None,
        n_jobs=None,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.weight_concentration_prior_type = weight_concentration_prior_type
        self.weight_concentration_prior = weight_concentration_prior
        self.mean_precision_prior = mean_precision_prior
        self.mean_prior = mean_prior
        self.degrees_of_freedom_prior = degrees_of_freedom_prior
        self.covariance_prior = covariance_prior
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ----------------------------------------------------------------------------- priors
    def _check_params(self, X):
        n, d = X.shape
        k = _integer("n_components", self.n_components, 1)
        if self.covariance_type not in ("full", "diag"):
            raise ValueError(
                f"covariance_type must be 'full' or 'diag', got {self.covariance_type!r} "
                "('tied' and 'spherical' are not supported)"
            )
        if self.weight_concentration_prior_type not in ("dirichlet_process", "dirichlet_distribution"):
            raise ValueError(
                "weight_concentration_prior_type must be 'dirichlet_process' or "
                f"'dirichlet_distribution', got {self.weight_concentration_prior_type!r}"
            )
        _number("tol", self.tol, 0.0, strict=False)
        _integer("max_iter", self.max_iter, 1)
        _integer("n_init", self.n_init, 1)
        if self.n_jobs is not None and self.n_jobs != -1:
            _integer("n_jobs", self.n_jobs, 1)
        if n < k:
            raise ValueError(f"Expected n_samples >= n_components but got n_components = {k}, n_samples = {n}")
        alpha0 = (1.0 / k if self.weight_concentration_prior is None
                  else _number("weight_concentration_prior", self.weight_concentration_prior, 0.0))
        beta0 = (1.0 if self.mean_precision_prior is None
                 else _number("mean_precision_prior", self.mean_precision_prior, 0.0))
        nu0 = (float(d) if self.degrees_of_freedom_prior is None
               else _number("degrees_of_freedom_prior", self.degrees_of_freedom_prior, d - 1.0))
        # The data mean as one matrix-vector product (a column reduction of a C-ordered array
        # is strided and ~25x slower), and the centred data once, for the covariance and, when
        # the mean prior is the data mean, the whitening.
        xbar = np.ones(n) @ X / n
        centred = X - xbar
        if self.mean_prior is None:
            m0 = xbar
        else:
            centred = None if self.covariance_prior is not None else centred
            m0 = np.asarray(self.mean_prior, dtype=np.float64)
            if m0.shape != (d,) or not np.all(np.isfinite(m0)):
                raise ValueError(f"mean_prior must be {d} finite numbers, got shape {m0.shape}")
        if self.covariance_prior is None:
            if self.covariance_type == "full":
                cov = centred.T @ centred / (n - 1) if n > 1 else np.eye(d)
            else:
                cov = np.einsum("ij,ij->j", centred, centred) / (n - 1) if n > 1 else np.ones(d)
            cov = self._regularised(cov)
            if self.mean_prior is not None:
                centred = None
        else:
            cov = np.asarray(self.covariance_prior, dtype=np.float64)
            want = (d, d) if self.covariance_type == "full" else (d,)
            if cov.shape != want:
                raise ValueError(f"covariance_prior must have shape {want}, got {cov.shape}")
            ok = (np.all(np.isfinite(cov)) and np.allclose(cov, cov.T) and np.all(np.linalg.eigvalsh(cov) > 0)
                  if self.covariance_type == "full" else np.all(np.isfinite(cov)) and np.all(cov > 0))
            if not ok:
                raise ValueError("covariance_prior must be symmetric positive definite (full) or positive (diag)")
        # `centred` is X - m0 when m0 is the data mean (else None).
        return k, alpha0, beta0, nu0, m0, cov, centred

    def _regularised(self, cov):
        """The data covariance as a prior: degenerate data (a constant feature) get a unit scale
        in that direction instead of a singular prior."""
        if self.covariance_type == "diag":
            return np.where(cov > 1e-12 * max(1.0, float(np.max(cov))), cov, 1.0)
        w = np.linalg.eigvalsh(cov)
        floor = 1e-12 * max(1.0, float(np.max(w)))
        if np.all(w > floor):
            return cov
        w, v = np.linalg.eigh(cov)
        w = np.where(w > floor, w, 1.0)
        return (v * w) @ v.T

    # ----------------------------------------------------------------------------- fitting
    def fit(self, X, y=None):
        """Fits the mixture by VMP; returns self."""
        self._fit(X)
        return self

    def fit_predict(self, X, y=None):
        """Fits the mixture and returns the most probable component of every sample."""
        X = self._fit(X)
        return self._weighted_log_prob(X).argmax(axis=1)

    def _fit(self, X):
        X = self._validated(X)
        k, alpha0, beta0, nu0, m0, cov, centred = self._check_params(X)
        L, log_det_a = whitening(self.covariance_type, cov)
        Z = self._whiten(X, L, m0, centred)
        seed = self._seed()
        model = Model.from_string(model_text(self.covariance_type, k, alpha0, beta0, nu0,
                                             self.weight_concentration_prior_type),
                                  name="BayesianGaussianMixture")
        n = X.shape[0]
        # Occam's default schedule starts q(z) from k-means and updates the weights and the
        # components from it before q(z) itself. `settle` repeats those first updates until they
        # agree (mean-field q(mu_k) q(Lambda_k): mu's first update sees Lambda at its prior),
        # as scikit-learn's first M-step is the joint optimum of q(mu_k, Lambda_k); the rounds
        # read z's cached sums, not the data. Each initialisation ends with the engine's pruning
        # stage (`_PRUNE`).
        r = model.fit(data={"x": Z}, seed=seed, restarts=int(self.n_init),
                      max_iter=int(self.max_iter), tol=float(self.tol) / Z.size, prune=_PRUNE,
                      threads=self._threads(n, k, Z.shape[1]), settle=True)
        jacobian = n * log_det_a
        self.lower_bound_ = float(r.bound) + jacobian
        self.lower_bounds_ = np.asarray(r.bound_trace) + jacobian
        self.converged_ = bool(r.converged)
        self.n_iter_ = int(r.iterations)
        if not self.converged_:
            warnings.warn(
                f"Best performing initialization did not converge within max_iter={self.max_iter}. "
                "Try different init parameters, or increase max_iter, tol, or check for degenerate data.",
                ConvergenceWarning,
            )
        self.weight_concentration_prior_ = alpha0
        self.mean_precision_prior_ = beta0
        self.mean_prior_ = m0
        self.degrees_of_freedom_prior_ = nu0
        self.covariance_prior_ = cov
        self._store(r, L, m0, log_det_a)
        return X

    def _validated(self, X):
        """``validate_data(self, X, dtype=np.float64, ensure_min_samples=2)``, with a shortcut for
        the common input, a finite two-dimensional float64 ndarray with at least two rows and one
        column: that is what ``validate_data`` returns unchanged (no copy), after recording
        ``n_features_in_`` and dropping ``feature_names_in_`` (a plain array has no column names);
        the shortcut does the same without scikit-learn's generic input inspection, which costs a
        measurable share of a small fit. Finiteness is tested as scikit-learn's own first pass
        does, on the sum; any other input, or a non-finite sum, takes ``validate_data`` (and its
        messages)."""
        if (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
                and X.shape[0] >= 2 and X.shape[1] >= 1):
            with np.errstate(over="ignore"):
                finite = np.isfinite(X.sum())
        else:
            finite = False
        if finite:
            self.n_features_in_ = X.shape[1]
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            return X
        return validate_data(self, X, dtype=np.float64, ensure_min_samples=2)

    def _threads(self, n, k, d):
        """The fit's ``threads`` from ``n_jobs``: ``k`` threads, every core (``None``, for
        ``-1``) or, by default, one thread for small problems and every core otherwise. A sweep's
        arithmetic is about n · K · (moment length) values; below ``_ONE_THREAD_WORK`` (about a
        millisecond on one core) the pool's fork/join and idle spinning cost more than they save
        (measured: bench/peers/sklearn_estimator.py). Results do not depend on it."""
        if self.n_jobs == -1:
            return None
        if self.n_jobs is not None:
            return int(self.n_jobs)
        width = d + d * d if self.covariance_type == "full" else 2 * d
        return 1 if n * k * width <= _ONE_THREAD_WORK else None

    def _whiten(self, X, L, m0, centred=None):
        """``z = L⁻¹ (x - m0)`` for every row, as one C-contiguous array (what the extension
        reads without a copy): one product with the triangular inverse, no transposes.
        ``centred``, if given, is ``X - m0`` already."""
        if centred is None:
            centred = X - m0
        if self.covariance_type == "full":
            A = solve_triangular(L, np.eye(L.shape[0]), lower=True)
            return centred @ A.T
        centred /= L
        return centred

    def _seed(self):
        if isinstance(self.random_state, (int, np.integer)) and not isinstance(self.random_state, bool):
            if self.random_state < 0:
                raise ValueError(f"random_state must be ≥ 0, got {self.random_state}")
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _store(self, r, L, m0, log_det_a):
        """Posterior parameters in whitened space (for predictions) and scikit-learn's attributes
        in data space."""
        pi = r.posterior("pi")
        if self.weight_concentration_prior_type == "dirichlet_process":
            self.weight_concentration_, self._elog_pi = _sticks(pi, self.weight_concentration_prior_)
            self.weights_ = np.asarray(pi["mean"], dtype=np.float64).reshape(-1)
        else:
            conc = pi["concentration"]
            self.weight_concentration_ = conc
            self.weights_ = conc / conc.sum()
            self._elog_pi = digamma(conc) - digamma(conc.sum())
        self._m0, self._L, self._log_det_a = m0, L, log_det_a
        mu = r.posterior("mu")
        k = self._elog_pi.size
        m = mu["mean"].reshape(k, -1)
        self._mean_z = m
        if self.covariance_type == "full":
            # One dimension: the report gives a scalar variance rather than a 1 × 1 covariance.
            cov = mu["covariance"] if "covariance" in mu else mu["variance"]
            self._mean_cov_z = cov.reshape(k, m.shape[1], m.shape[1])
            lam = r.posterior("Lambda")
            d = m.shape[1]
            dof, rate = lam["dof"].reshape(k), lam["rate"].reshape(k, d, d)
            # One batched Cholesky rate = C Cᵀ gives every other matrix by triangular products:
            # E[Λ] = dof (C Cᵀ)⁻¹ = F Fᵀ with F = √dof C⁻ᵀ (the factor the predictions use),
            # ln|rate| = 2 Σ ln diag C; in data space (x = m0 + L z) the covariance is
            # L rate Lᵀ / dof, whose Cholesky factor is L C / √dof, so scikit-learn's
            # precisions_cholesky_ (the transposed inverse of that factor) is √dof L⁻ᵀ C⁻ᵀ.
            chol = np.linalg.cholesky(rate)
            c_inv_t = np.linalg.inv(chol).transpose(0, 2, 1)
            root = np.sqrt(dof)[:, None, None]
            i = np.arange(d)
            logdet_rate = 2.0 * np.log(chol[:, i, i]).sum(axis=1)
            self._elogdet = (digamma((dof[:, None] - i) / 2.0).sum(axis=1) + d * np.log(2.0) - logdet_rate)
            self._prec_chol_z = root * c_inv_t
            self._prec_z = self._prec_chol_z @ self._prec_chol_z.transpose(0, 2, 1)
            self.means_ = m0 + m @ L.T
            self.degrees_of_freedom_ = dof
            self.covariances_ = L @ rate @ L.T / dof[:, None, None]
            l_inv_t = solve_triangular(L, np.eye(d), lower=True).T
            self.precisions_cholesky_ = l_inv_t @ self._prec_chol_z
            self.precisions_ = self.precisions_cholesky_ @ self.precisions_cholesky_.transpose(0, 2, 1)
        else:
            self._mean_var_z = mu["variance"]
            g = r.posterior("gamma")
            a, b = g["shape"], g["rate"]
            self._prec_z = a / b
            self._elogdet = (digamma(a) - np.log(b)).sum(axis=1)
            self.means_ = m0 + m * L
            self.degrees_of_freedom_ = 2.0 * a.mean(axis=1)
            self.covariances_ = (L**2) * b / a
            self.precisions_ = 1.0 / self.covariances_
            self.precisions_cholesky_ = np.sqrt(self.precisions_)

    # ----------------------------------------------------------------------------- predictions
    def _weighted_log_prob(self, X):
        """``E[log π_k] + E[log N(x_n | μ_k, Λ_k⁻¹)]`` in data space, N × K."""
        check_is_fitted(self, "weights_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        d = X.shape[1]
        Z = self._whiten(X, self._L, self._m0)
        if self.covariance_type == "full":
            k = self._mean_z.shape[0]
            quad = np.empty((X.shape[0], k))
            for j in range(k):
                y = (Z - self._mean_z[j]) @ self._prec_chol_z[j]
                quad[:, j] = np.einsum("ij,ij->i", y, y) + np.sum(self._prec_z[j] * self._mean_cov_z[j])
        else:
            diff2 = (Z[:, None, :] - self._mean_z[None, :, :]) ** 2 + self._mean_var_z[None, :, :]
            quad = np.einsum("nkd,kd->nk", diff2, self._prec_z)
        elog_n = 0.5 * self._elogdet[None, :] - 0.5 * d * np.log(2 * np.pi) - 0.5 * quad + self._log_det_a
        return elog_n + self._elog_pi[None, :]

    def _log_resp(self, X):
        w = self._weighted_log_prob(X)
        return w - _logsumexp_rows(w)

    def predict_proba(self, X):
        """The posterior probability of each component for every sample (N × K)."""
        return np.exp(self._log_resp(X))

    def predict(self, X):
        """The most probable component of every sample."""
        return self._weighted_log_prob(X).argmax(axis=1)

    def score_samples(self, X):
        """``log Σ_k exp(E[log π_k] + E[log N(x | μ_k, Λ_k⁻¹)])`` per sample (scikit-learn's
        definition for the variational mixture)."""
        return _logsumexp_rows(self._weighted_log_prob(X))[:, 0]

    def score(self, X, y=None):
        """The mean of ``score_samples``."""
        return float(self.score_samples(X).mean())

    def sample(self, n_samples=1):
        """Draws samples from the fitted mixture (weights_, means_, covariances_), as
        scikit-learn does; returns ``(X, labels)``."""
        check_is_fitted(self, "weights_")
        n_samples = _integer("n_samples", n_samples, 1)
        rng = check_random_state(self.random_state)
        counts = rng.multinomial(n_samples, self.weights_)
        if self.covariance_type == "full":
            X = np.vstack([rng.multivariate_normal(m, c, int(s))
                           for m, c, s in zip(self.means_, self.covariances_, counts)])
        else:
            X = np.vstack([m + rng.standard_normal((int(s), m.size)) * np.sqrt(c)
                           for m, c, s in zip(self.means_, self.covariances_, counts)])
        y = np.concatenate([np.full(s, j, dtype=int) for j, s in enumerate(counts)])
        return X, y
