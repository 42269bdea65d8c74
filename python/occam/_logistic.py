"""``BayesianLogisticRegression``: a ``LogisticRegression``-style classifier fitted by Occam's VMP
engine, binary (``y ~ Bernoulli(sigmoid(x·w + b))``) and multinomial
(``y ~ Categorical(softmax(W x + b))``), with an optional ARD prior.

The model (written in Occam's language by ``_model_text`` and fitted by :class:`occam.Model`):

* weights ``w ~ N(0, C·I)``: the prior whose MAP estimate is scikit-learn's
  ``LogisticRegression(C=C)`` (the L2 penalty ``½‖w‖²/C`` beside the summed log-loss);
  ``ard=True`` gives each input its own precision instead, ``alpha_d ~ Gamma(lambda_1,
  lambda_2)`` (shape, rate; shared by the classes of a multinomial model), learnt with the
  weights — inputs the data do not need get a large precision and a weight near 0;
* the intercept ``b ~ N(0, C·intercept_scaling²)``: as scikit-learn's ``intercept_scaling``,
  a synthetic input of constant value ``intercept_scaling`` appended to X whose weight is
  ``b / intercept_scaling``, so the intercept and the weights share one Gaussian posterior (with
  their correlations). With ``ard=True`` the intercept is a separate variable of the same prior
  (not subject to ARD), mean-field with the weights;
* ``method="quadrature"`` (default): the exact expected log-likelihood by quadrature
  (non-conjugate VMP, the bound is the ELBO): ``Bernoulli(sigmoid(η))`` for two classes,
  ``Categorical(softmax(η))`` for three (the joint q over the classes' weights, sds within 1.2%
  and class contrasts' within 3% of the exact posterior on the 30-point test of
  ``crates/occam/tests/it/softmax.rs``); beyond three classes ``softmax`` is Böhning's bound (a
  lower bound whose posterior sds are too small; the quadrature would take 20^(K − 1) points per
  row);
* ``method="bohning"`` (or its other name ``"jaakkola_jordan"``): the local bound, conjugate
  updates, fast: Jaakkola–Jordan's for two classes (``sigmoid_jj``; posterior sds 10–30% too
  small), Böhning's for more (``softmax_bohning``, every K; on the 30-point test sds 8–15% and
  class contrasts' sds 28–49% too small). docs/guide/12-beyond-conjugate.md measures both.

Predictions come from the posterior predictive, not from the posterior mean: ``predict_proba``
integrates the likelihood over the Gaussian of the linear predictor under q,

* two classes: η ~ N(m, v), ``p(y=1) = E σ(η)`` by quadrature (Gauss–Hermite for sd ≤ 1,
  Gauss–Legendre over the logistic variable beyond, see ``_GH_NODES``; the probit
  approximation σ(m / √(1 + πv/8)) is off by up to 0.016 (measured over |m| ≤ 10, sd ≤ 30)
  and is not used);
* K classes: η ~ N(M, S) over the K logits, ``p_k = E softmax_k(η)`` by randomised
  quasi-Monte Carlo: 4096 scrambled Sobol points with a fixed seed (0), the same for every row,
  so predictions are deterministic and each row's depends on that row only (errors measured
  ≤ 5e-4 on iris, see ``_SOBOL_LOG2``; about 0.4 ms a row for K = 3 here).

``decision_function`` is the log-odds of the predictive, ``log p(y=1) − log p(y=0)`` (two
classes), and the log predictive probabilities (K classes), so that its sign, its argmax and
``predict`` agree with ``predict_proba`` (the posterior-mean logit ``x·E[w] + E[b]`` can rank rows
differently from the predictive, whose spread varies by row). ``predict`` is the most probable
class under the predictive.

Fitted attributes: ``classes_``, ``coef_`` and ``intercept_`` (posterior means; shapes
``(1, n_features)`` and ``(1,)`` for two classes, ``(K, n_features)`` and ``(K,)`` otherwise),
``coef_sd_`` and ``intercept_sd_`` (posterior standard deviations), ``sigma_`` (the posterior
covariance of each row's ``[coef, intercept]``, ``(rows, n_features + 1, n_features + 1)``;
zero between coef and intercept when ``ard=True``), ``sigma_joint_`` (K > 2 classes: the
covariance of ``[coef, intercept]`` across classes, ``(K, n_features + 1, K, n_features + 1)``,
whose diagonal blocks are ``sigma_``; q(w) is one Gaussian over every class's weights; with
``ard=True`` the intercept's entries are zero, its covariance being ``b``'s, separate; None for two
classes), ``alpha_`` (``ard=True``: the posterior mean
precisions ``E[alpha_d]``), ``lower_bound_`` (the variational lower bound on ``log p(y | X)`` in
nats), ``n_iter_`` (sweeps, shape ``(1,)`` as scikit-learn's), ``converged_``.

Differences from scikit-learn's ``LogisticRegression``, all deliberate: no ``penalty``/``solver``
/``l1_ratio`` (the prior is the penalty), no ``sample_weight`` or ``class_weight``, no
one-vs-rest; ``tol`` is the bound's total change over a sweep (nats), as in
``occam.sklearn.BayesianGaussianMixture``; ``intercept_scaling`` defaults to 10 (a broad prior
on the intercept; scikit-learn's 1 matters only for its liblinear solver); the fit is
deterministic (no ``random_state``).

**q(w) is one Gaussian over every class's weights** (the engine's softmax q-block, from issue 29):
the rows' posterior is strongly correlated (adding one vector to every row leaves the likelihood
unchanged), and the joint q represents that; ``sigma_joint_`` holds it and ``predict_proba`` reads
it. On the training half of ``examples/iris_softmax`` (C = 1) the fit with ``method="bohning"``
takes 222 sweeps to the default ``tol`` and 579 to ``tol = 1e-9`` (bound −38.9208); the same
model by ``occam fit`` with the exact term (the default for three classes) converges in 28
sweeps. The history below was measured with the earlier per-class q and Böhning's bound.

**Slow convergence with more than two classes** (per-class q, measured on standardised iris, K = 3,
``bench/peers/multinomial_convergence.py``, ``bench/results/multinomial_convergence_*``). q(w) was
one Gaussian per class row (``w[K] over D``), and the rows are coupled through the softmax: adding
one vector to every row leaves the likelihood unchanged, so along that direction only the prior
(precision 1/C, or a small ARD precision for a relevant input) pulls the rows back, while each
row's own update sees the data's curvature; a sweep is one round of block coordinate ascent on
this coupled problem. To ``tol = 1e-9``: 14,504 sweeps at C = 1, 2,064 at C = 0.1, 48,306 at
C = 10, 11,641 with ARD; one Gaussian over all K·D weights (the logits as a K × KD block matrix
times one vector) takes 765 at C = 1 and has the same means (Böhning's curvature is fixed, so the
means do not depend on q's cross-row covariance), with a bound 8.3 nats higher. Böhning's fixed
curvature is the second cause: it is far above the softmax's own where a class is nearly
separable (setosa), so even the joint q takes hundreds of sweeps. The default stop, the bound's
change over a sweep below ``tol = 1e-4``, then comes early: at 221 sweeps (C = 1) the coefficients
are 0.04 from the 1e-9 fit's, at 836 (C = 10) 0.20, and with ARD at 1,195 sweeps 0.85. Lower
``tol`` when the coefficients matter; the estimator warns (``ConvergenceWarning``) when
``max_iter`` stops it.

scikit-learn's ``check_estimator``: every applicable check passes, none is expected to fail
(python/tests/test_sklearn_logistic.py). The checks of ``sample_weight`` and ``class_weight`` do
not apply (the estimator has neither); scikit-learn itself skips the array-API check (it runs only
with ``SCIPY_ARRAY_API=1``; the estimator computes in NumPy) and the pandas checks where pandas
is not installed (it is not among the test pins).
"""

import functools
import numbers
import warnings

import numpy as np
from scipy.special import log_expit, log_ndtr, logsumexp, ndtri
from scipy.stats import qmc
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import Model

__all__ = ["BayesianLogisticRegression"]

# Two classes, E σ(η) with η ~ N(m, s²) (`_binary_log_predictive`): Gauss–Hermite in η for
# s ≤ 1 (σ is analytic in the strip |Im η| < π, wide against s); for s > 1, where σ(m + s z)
# turns too fast in z for the rule, E σ(η) = E Φ((m − ε)/s) with ε standard logistic (σ is its
# distribution function), by composite Gauss–Legendre in ε over [−50, 50] (the logistic density
# is analytic in |Im ε| < π and below e⁻⁵⁰ outside; Φ((m − ε)/s) turns on the scale s > 1).
# Checked to 1e-9 against adaptive quadrature (python/tests/test_sklearn_logistic.py).
_GH_NODES = 64
_GL_PANELS, _GL_NODES, _EPS_RANGE = 40, 16, 50.0
# K classes: E softmax(η) by randomised quasi-Monte Carlo, 2^_SOBOL_LOG2 scrambled Sobol points
# (scipy.stats.qmc.Sobol, seed 0) mapped to standard normals by Φ⁻¹, the same points for every
# row. On iris (K = 3, training on every third row, predicting at 1, 1.5 and 3 times the inputs)
# the largest error against 4 × 2^16 points is 3.4e-4 (C = 1) and 5.0e-4 (C = 100); a tensor
# Gauss–Hermite rule of the same size (16³) is off by 5e-3 there (softmax turns sharply where
# the logits' spread is wide).
_SOBOL_LOG2 = 12
# Values per block of rows in the K-class predictive (about 16 MB of float64 per array).
_CHUNK = 1 << 21

# The link of each method, (two classes, more classes).
_METHODS = {
    "quadrature": ("sigmoid", "softmax"),
    "bohning": ("sigmoid_jj", "softmax_bohning"),
    "jaakkola_jordan": ("sigmoid_jj", "softmax_bohning"),
}


def _real(name, value, strict=True):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (strict and value == 0):
        raise ValueError(f"{name} must be a finite number {'>' if strict else '≥'} 0, got {value}")
    return value


def _gauss_hermite(n):
    """Nodes z and weights q of E f(Z), Z ~ N(0, 1) ≈ Σ q f(z) (probabilists' Hermite)."""
    z, q = np.polynomial.hermite_e.hermegauss(n)
    return z, q / q.sum()


def _binary_log_predictive(m, s):
    """``[log E σ(−η), log E σ(η)]`` per row for η ~ N(m, s²), each computed in logs (accurate in
    both tails; see ``_GH_NODES``)."""
    out = np.empty((m.size, 2))
    narrow = s <= 1.0
    if narrow.any():
        z, q = _gauss_hermite(_GH_NODES)
        eta = m[narrow, None] + s[narrow, None] * z[None, :]
        lq = np.log(q)[None, :]
        out[narrow, 0] = logsumexp(log_expit(-eta) + lq, axis=1)
        out[narrow, 1] = logsumexp(log_expit(eta) + lq, axis=1)
    wide = ~narrow
    if wide.any():
        x, w = np.polynomial.legendre.leggauss(_GL_NODES)
        h = 2.0 * _EPS_RANGE / _GL_PANELS
        lo = -_EPS_RANGE + h * np.arange(_GL_PANELS)
        eps = (lo[:, None] + 0.5 * h * (x[None, :] + 1.0)).ravel()
        lw = (np.log(0.5 * h * w)[None, :] + np.zeros((_GL_PANELS, 1))).ravel()
        lw = lw + log_expit(eps) + log_expit(-eps)  # the logistic density
        t = (m[wide, None] - eps[None, :]) / s[wide, None]
        out[wide, 0] = logsumexp(log_ndtr(-t) + lw, axis=1)
        out[wide, 1] = logsumexp(log_ndtr(t) + lw, axis=1)
    return out


@functools.lru_cache(maxsize=8)
def _sobol_normal(k):
    """2^_SOBOL_LOG2 standard-normal points in K dimensions (scrambled Sobol, seed 0, by Φ⁻¹);
    read-only."""
    z = ndtri(qmc.Sobol(k, scramble=True, seed=0).random_base2(_SOBOL_LOG2))
    z.setflags(write=False)
    return z


def _model_text(n_classes, fit_intercept, ard, C, intercept_scaling, lambda_1, lambda_2, link):
    """The Occam model: X (n × D, with the synthetic intercept column when the intercept is part
    of the weights) and y (0/1, or 0..K−1)."""
    prec = 1.0 / C
    b_prec = 1.0 / (C * intercept_scaling**2)
    lines = ["plates N, D from data X", "data X[N] over D"]
    if ard:
        lines.append(f"alpha[D] ~ Gamma(shape = {lambda_1!r}, rate = {lambda_2!r})")
    if n_classes == 2:
        if ard:
            lines.append("w over D ~ GaussianARD(mean = 0, precision = alpha)")
        else:
            lines.append(f"w over D ~ MvGaussian(mean = 0, precision = identity * {prec!r})")
        eta = "dot(X[N], w)"
        if ard and fit_intercept:
            lines.append(f"b ~ Gaussian(mean = 0, precision = {b_prec!r})")
            eta += " + b"
        lines.append(f"y[N] ~ Bernoulli({link}({eta}))")
    else:
        lines.insert(0, f"plate K = {n_classes}")
        if ard:
            lines.append("w[K] over D ~ GaussianARD(mean = 0, precision = alpha)")
        else:
            lines.append(f"w[K] over D ~ MvGaussian(mean = 0, precision = identity * {prec!r})")
        eta = "w @ X[N]"
        if ard and fit_intercept:
            lines.append(f"b over K ~ MvGaussian(mean = 0, precision = identity * {b_prec!r})")
            eta += " + b"
        lines.append(f"y[N] ~ Categorical({link}({eta}))")
    lines.append("observe y")
    return "\n".join(lines) + "\n"


def _gaussian(post, rows, d):
    """Mean (rows × d) and covariance (rows × d × d) of a Gaussian posterior (a 1-D vector's
    covariance is reported as a variance)."""
    mean = np.asarray(post["mean"], dtype=np.float64).reshape(rows, d)
    cov = post["covariance"] if "covariance" in post else post["variance"]
    return mean, np.asarray(cov, dtype=np.float64).reshape(rows, d, d)


class BayesianLogisticRegression(ClassifierMixin, BaseEstimator):
    """Variational Bayesian logistic regression (binary and multinomial, optional ARD), a
    ``LogisticRegression``-style estimator fitted by Occam (see the module docs)."""

    def __init__(self, *, C=1.0, fit_intercept=True, intercept_scaling=10.0, ard=False,
                 lambda_1=1e-6, lambda_2=1e-6, method="quadrature", tol=1e-4, max_iter=1000):
        self.C = C
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.ard = ard
        self.lambda_1 = lambda_1
        self.lambda_2 = lambda_2
        self.method = method
        self.tol = tol
        self.max_iter = max_iter

    def _check_params(self):
        C = _real("C", self.C)
        s = _real("intercept_scaling", self.intercept_scaling)
        l1, l2 = _real("lambda_1", self.lambda_1), _real("lambda_2", self.lambda_2)
        tol = _real("tol", self.tol, strict=False)
        if isinstance(self.max_iter, (bool, np.bool_)) or not isinstance(self.max_iter, numbers.Integral) \
                or self.max_iter < 1:
            raise ValueError(f"max_iter must be an integer ≥ 1, got {self.max_iter!r}")
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {sorted(_METHODS)}, got {self.method!r}")
        return C, s, l1, l2, tol

    def fit(self, X, y):
        """Fits the model by VMP; returns self."""
        C, s, l1, l2, tol = self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        enc = LabelEncoder().fit(y)
        k = enc.classes_.size
        if k < 2:
            raise ValueError(
                "BayesianLogisticRegression needs samples of at least 2 classes in the data, but "
                f"the data contain only one class: {enc.classes_[0]!r}")
        n, d = X.shape
        ard, fit_b = bool(self.ard), bool(self.fit_intercept)
        joined = fit_b and not ard  # the intercept is the weight of a synthetic input
        Xa = np.hstack([X, np.full((n, 1), s)]) if joined else X
        link = _METHODS[self.method][0 if k == 2 else 1]
        text = _model_text(k, fit_b, ard, C, s, l1, l2, link)
        r = Model.from_string(text, name="BayesianLogisticRegression").fit(
            data={"X": np.ascontiguousarray(Xa), "y": enc.transform(y).astype(np.float64)},
            seed=0, max_iter=int(self.max_iter), tol=tol / n)
        rows = 1 if k == 2 else k
        post_w = r.posterior("w")
        mean, cov = _gaussian(post_w, rows, Xa.shape[1])
        # The joint posterior of [coef, intercept] per row, in the data's units.
        self.sigma_ = np.zeros((rows, d + 1, d + 1))
        full_mean = np.zeros((rows, d + 1))
        self._b_cov = None
        if joined:
            # intercept = s · (weight of the synthetic input)
            scale = np.append(np.ones(d), s)
            full_mean[:] = mean * scale
            self.sigma_[:] = cov * np.outer(scale, scale)
        else:
            full_mean[:, :d] = mean
            self.sigma_[:, :d, :d] = cov
            if fit_b:
                bm, bc = _gaussian(r.posterior("b"), 1, rows)
                full_mean[:, d] = bm[0]
                self.sigma_[:, d, d] = np.diag(bc[0])
                self._b_cov = bc[0]
        # q(w) is one Gaussian over every class's weights (the engine's softmax q-block): the
        # covariance across classes, [class, input, class, input] in the data's units (the
        # intercept's entries zero where it is b's), which the predictive reads.
        self._joint = self.sigma_joint_ = None
        if "joint_covariance" in post_w:
            p = Xa.shape[1]
            jc = np.asarray(post_w["joint_covariance"], dtype=np.float64).reshape(rows, p, rows, p)
            self._joint = np.zeros((rows, d + 1, rows, d + 1))
            if joined:
                self._joint[:] = jc * np.outer(scale, scale)[None, :, None, :]
            else:
                self._joint[:, :d, :, :d] = jc
            self.sigma_joint_ = self._joint
        self.classes_ = enc.classes_
        self.coef_ = full_mean[:, :d].copy()
        self.intercept_ = full_mean[:, d].copy()
        sd = np.sqrt(np.diagonal(self.sigma_, axis1=1, axis2=2))
        self.coef_sd_ = sd[:, :d].copy()
        self.intercept_sd_ = sd[:, d].copy()
        if ard:
            a = r.posterior("alpha")
            self.alpha_ = np.asarray(a["shape"], dtype=np.float64) / np.asarray(a["rate"], dtype=np.float64)
        self.lower_bound_ = float(r.bound)
        self.n_iter_ = np.array([int(r.iterations)])
        self.converged_ = bool(r.converged)
        if not self.converged_:
            warnings.warn(f"BayesianLogisticRegression did not converge within max_iter={self.max_iter} "
                          "sweeps; increase max_iter or tol.", ConvergenceWarning)
        return self

    # ----------------------------------------------------------------------------- predictive
    def _linear(self, X):
        """Mean (n × rows) and covariance of the linear predictor under q: per row a variance
        (two classes, n) or a K × K covariance (n × K × K)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xa = np.hstack([X, np.ones((X.shape[0], 1))])
        m = X @ self.coef_.T + self.intercept_
        v = np.einsum("ni,kij,nj->nk", Xa, self.sigma_, Xa)
        if self.coef_.shape[0] == 1:
            return m[:, 0], v[:, 0]
        if getattr(self, "_joint", None) is not None:
            # Rows of weights joint in q: Cov(η_k, η_k') = x̃ᵀ Σ_kk' x̃.
            S = np.einsum("na,kalb,nb->nkl", Xa, self._joint, Xa)
            if self._b_cov is not None:
                S += self._b_cov
            return m, S
        S = np.zeros((X.shape[0],) + self.sigma_.shape[:1] * 2)
        idx = np.arange(S.shape[1])
        S[:, idx, idx] = v
        if self._b_cov is not None:
            # b is one vector over the classes: its off-diagonal covariance is shared by all rows
            # (its diagonal is in sigma_ already).
            S += self._b_cov - np.diag(np.diag(self._b_cov))
        return m, S

    def _log_proba(self, X):
        m, S = self._linear(X)
        if m.ndim == 1:
            return _binary_log_predictive(m, np.sqrt(np.maximum(S, 0.0)))
        Z = _sobol_normal(m.shape[1])
        # A zero row without an intercept has S = 0: a jitter of 1e-12 variance keeps it factorable.
        L = np.linalg.cholesky(S + 1e-12 * np.eye(m.shape[1]))
        out = np.empty_like(m)
        step = max(1, _CHUNK // Z.size)  # rows per block of about _CHUNK values
        k = m.shape[1]
        for i in range(0, m.shape[0], step):
            r = slice(i, i + step)
            # η_k at every point, one rows × points array per class (K small: the class axis is
            # kept outermost so no reduction runs along a short axis).
            eta = [m[r, j, None] + L[r, j, :] @ Z.T for j in range(k)]
            top = functools.reduce(np.maximum, eta)
            e = [np.exp(x - top) for x in eta]
            total = functools.reduce(np.add, e)
            for j in range(k):
                out[r, j] = (e[j] / total).mean(axis=1)
        with np.errstate(divide="ignore"):
            return np.log(out / out.sum(axis=1, keepdims=True))

    def predict_log_proba(self, X):
        """The log of ``predict_proba``."""
        lp = self._log_proba(X)
        return lp - logsumexp(lp, axis=1, keepdims=True)

    def predict_proba(self, X):
        """The posterior predictive probability of each class (n × classes), by quadrature of
        the likelihood over the Gaussian of the linear predictor (module docs)."""
        return np.exp(self.predict_log_proba(X))

    def decision_function(self, X):
        """The log-odds of the predictive (two classes, shape (n,)) or the log predictive
        probabilities (n × K): its sign / argmax is ``predict``."""
        lp = self._log_proba(X)
        return lp[:, 1] - lp[:, 0] if lp.shape[1] == 2 else lp - logsumexp(lp, axis=1, keepdims=True)

    def predict(self, X):
        """The most probable class under the posterior predictive."""
        lp = self._log_proba(X)
        if lp.shape[1] == 2:
            return self.classes_[(lp[:, 1] > lp[:, 0]).astype(int)]
        return self.classes_[np.argmax(lp, axis=1)]

