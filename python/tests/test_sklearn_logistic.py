"""occam.sklearn.BayesianLogisticRegression: scikit-learn's estimator checks; the binary
posterior against quadrature of the exact posterior; the predictive by quadrature; test errors
beside scikit-learn's LogisticRegression on Pima (Ripley's split, examples/pima_logistic) and
iris (scikit-learn's bundled copy, a seeded stratified half split), measured in the same run.

scikit-learn's checks: none is expected to fail. Two are skipped by scikit-learn itself in this
environment, whatever the estimator: the array-API check (runs only with SCIPY_ARRAY_API=1; the
estimator computes in NumPy) and the pandas checks (pandas is not among the test pins). The
sample_weight and class_weight checks do not apply (the estimator has neither).
"""

import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

from conftest import ROOT, load_csv
from occam.sklearn import BayesianLogisticRegression

EXPECTED_FAILED = {}


@parametrize_with_checks([BayesianLogisticRegression(),
                          BayesianLogisticRegression(ard=True, method="jaakkola_jordan", max_iter=200)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def small_binary():
    """30 points, 2 inputs, from seed 3: y = 1 with probability σ(0.3 + 1.2 x₁ − 1.5 x₂)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 2))
    y = (rng.random(30) < expit(0.3 + X @ np.array([1.2, -1.5]))).astype(int)
    return X, y


def exact_posterior(X, y, C, s):
    """Means and sds of (w₁, w₂, b) under w ~ N(0, C I), b ~ N(0, C s²) by tensor
    Gauss–Legendre (64 points per axis) over ±8 sds of the Laplace box, and log Z."""
    Xa = np.hstack([X, np.ones((len(y), 1))])
    prec = np.array([1 / C, 1 / C, 1 / (C * s * s)])
    # centre and scale of the grid from a few Newton steps (the MAP) and the Hessian there
    t = np.zeros(3)
    for _ in range(50):
        p = expit(Xa @ t)
        g = Xa.T @ (y - p) - prec * t
        H = (Xa * (p * (1 - p))[:, None]).T @ Xa + np.diag(prec)
        t = t + np.linalg.solve(H, g)
    half = 8 * np.sqrt(np.diag(np.linalg.inv(H)))
    z, q = np.polynomial.legendre.leggauss(64)
    axes = [t[i] + half[i] * z for i in range(3)]
    W = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    Q = np.prod(np.stack(np.meshgrid(*[half[i] * q for i in range(3)], indexing="ij"), -1).reshape(-1, 3), 1)
    eta = W @ Xa.T
    logp = (np.where(y == 1, -np.logaddexp(0, -eta), -np.logaddexp(0, eta)).sum(1)
            - 0.5 * (W * W * prec).sum(1) + 0.5 * np.log(prec).sum() - 1.5 * np.log(2 * np.pi))
    top = logp.max()
    wgt = Q * np.exp(logp - top)
    Z = wgt.sum()
    mean = (W * wgt[:, None]).sum(0) / Z
    sd = np.sqrt(((W - mean) ** 2 * wgt[:, None]).sum(0) / Z)
    return mean, sd, top + np.log(Z)


def test_binary_posterior_against_quadrature():
    X, y = small_binary()
    C, s = 4.0, 2.0
    mean, sd, log_z = exact_posterior(X, y, C, s)
    fits = {m: BayesianLogisticRegression(C=C, intercept_scaling=s, method=m, tol=1e-10).fit(X, y)
            for m in ("quadrature", "jaakkola_jordan")}
    for m, f in fits.items():
        vb_mean = np.append(f.coef_[0], f.intercept_)
        vb_sd = np.append(f.coef_sd_[0], f.intercept_sd_)
        print(f"{m}: means {vb_mean} sds {vb_sd} bound {f.lower_bound_:.4f}; "
              f"exact means {mean} sds {sd} log Z {log_z:.4f}")
        assert f.lower_bound_ < log_z
    q = fits["quadrature"]
    np.testing.assert_allclose(np.append(q.coef_[0], q.intercept_), mean, rtol=0.1)
    np.testing.assert_allclose(np.append(q.coef_sd_[0], q.intercept_sd_), sd, rtol=0.1)
    # Jaakkola–Jordan: the bound is lower and the sds narrower (its curvature 2λ(ξ) ≥ σ′).
    jj = fits["jaakkola_jordan"]
    assert jj.lower_bound_ < q.lower_bound_
    assert np.all(np.append(jj.coef_sd_[0], jj.intercept_sd_) < sd)


def test_binary_predictive_quadrature():
    """predict_proba is E σ(η) under the Gaussian of η, to 1e-9 against adaptive quadrature, and
    differs from the probit approximation."""
    X, y = small_binary()
    f = BayesianLogisticRegression(C=100.0).fit(X, y)
    Xn = np.array([[0.0, 0.0], [2.0, -1.0], [-3.0, 4.0], [30.0, -20.0]])
    Xa = np.hstack([Xn, np.ones((4, 1))])
    m = Xn @ f.coef_[0] + f.intercept_[0]
    v = np.einsum("ni,ij,nj->n", Xa, f.sigma_[0], Xa)
    want = [integrate.quad(lambda e: expit(e) * np.exp(-(e - mi) ** 2 / (2 * vi)) / np.sqrt(2 * np.pi * vi),
                           mi - 40 * np.sqrt(vi), mi + 40 * np.sqrt(vi), epsabs=1e-12, limit=200)[0]
            for mi, vi in zip(m, v)]
    got = f.predict_proba(Xn)[:, 1]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    probit = expit(m / np.sqrt(1 + np.pi * v / 8))
    assert np.max(np.abs(probit - want)) > 1e-3
    np.testing.assert_allclose(f.decision_function(Xn), np.log(got) - np.log1p(-got), rtol=1e-9)


def test_multiclass_predictive_against_monte_carlo():
    """K = 3: the tensor Gauss–Hermite predictive against 10⁶ Monte Carlo draws (sd of the
    estimate < 5e-4)."""
    X, Y = load_iris(return_X_y=True)
    f = BayesianLogisticRegression(C=0.1).fit(X[:, :2], Y)
    Xn = X[::37, :2]
    got = f.predict_proba(Xn)
    rng = np.random.default_rng(1)
    Xa = np.hstack([Xn, np.ones((len(Xn), 1))])
    mean = np.hstack([f.coef_, f.intercept_[:, None]]).ravel()
    joint = f.sigma_joint_.reshape(mean.size, mean.size)
    for i, x in enumerate(Xa):
        # [coef, intercept] of the three classes drawn jointly (q is one Gaussian over them).
        eta = rng.multivariate_normal(mean, joint, 10**6).reshape(-1, 3, x.size) @ x
        p = np.exp(eta - np.logaddexp.reduce(eta, axis=1, keepdims=True)).mean(0)
        np.testing.assert_allclose(got[i], p, atol=2.5e-3)


def pima():
    d = ROOT / "examples" / "pima_logistic"
    return (load_csv(d / "X.csv"), load_csv(d / "y.csv").ravel(),
            load_csv(d / "X_test.csv"), load_csv(d / "y_test.csv").ravel())


def test_pima_test_errors_beside_sklearn():
    """Ripley's 200/332 split, inputs standardised (examples/pima_logistic). Measured: the ARD
    model 65/332 errors, the L2 prior (C = 1, the same MAP as scikit-learn's) 67/332,
    scikit-learn's LogisticRegression() 67/332; the fits are deterministic."""
    x, y, xt, yt = pima()
    errors = {name: int((est.fit(x, y).predict(xt) != yt).sum()) for name, est in [
        ("sklearn", LogisticRegression()),
        ("occam", BayesianLogisticRegression()),
        ("occam_ard", BayesianLogisticRegression(ard=True)),
    ]}
    print(errors)
    assert errors == {"sklearn": 67, "occam": 67, "occam_ard": 65}


def test_iris_multinomial_beside_sklearn():
    """Iris (150, 3 classes), stratified halves from seed 0: measured 3/75 test errors for
    Occam's multinomial model (the exact ⟨ln softmax⟩ by quadrature, the default for three
    classes, C = 1) and for scikit-learn's LogisticRegression(max_iter=1000)."""
    X, Y = load_iris(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, Y, test_size=0.5, stratify=Y, random_state=0)
    ours = BayesianLogisticRegression().fit(Xtr, ytr)
    theirs = LogisticRegression(max_iter=1000).fit(Xtr, ytr)
    e_ours, e_theirs = int((ours.predict(Xte) != yte).sum()), int((theirs.predict(Xte) != yte).sum())
    print(f"iris test errors: occam {e_ours}/75, scikit-learn {e_theirs}/75")
    assert (e_ours, e_theirs) == (3, 3)
    assert ours.coef_.shape == (3, 4) and ours.intercept_.shape == (3,)
    np.testing.assert_allclose(ours.predict_proba(Xte).sum(1), 1.0, rtol=1e-12)


def test_multinomial_method_chooses_the_softmax_term():
    """Three classes: the default fits the exact ⟨ln softmax⟩ (``softmax``, an exact bound),
    ``method="bohning"`` (and its other name ``"jaakkola_jordan"``) Böhning's bound
    (``softmax_bohning``, a lower bound), whose fixed curvature ½(I − 11ᵀ/K) lies above the
    softmax's own Hessian, so its posterior sds of the class contrasts are smaller and its bound
    lower (iris halves, C = 1). Four classes: ``softmax`` is Böhning's bound too."""
    X, Y = load_iris(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(X, Y, test_size=0.5, stratify=Y, random_state=0)
    exact = BayesianLogisticRegression(tol=1e-8).fit(Xtr, ytr)
    fits = {m: BayesianLogisticRegression(method=m, tol=1e-8).fit(Xtr, ytr)
            for m in ("bohning", "jaakkola_jordan")}
    bohning = fits["bohning"]
    np.testing.assert_array_equal(bohning.coef_, fits["jaakkola_jordan"].coef_)

    def contrast_sd(f):
        j = f.sigma_joint_
        return np.array([np.sqrt(np.diag(j[k, :, k, :] + j[0, :, 0, :] - j[k, :, 0, :] - j[0, :, k, :]))
                         for k in (1, 2)])

    ratio = contrast_sd(bohning) / contrast_sd(exact)
    print(f"iris: bound exact {exact.lower_bound_:.4f}, Böhning {bohning.lower_bound_:.4f}; "
          f"Böhning's contrast sds / exact's {np.round(ratio, 3)}")
    assert bohning.lower_bound_ < exact.lower_bound_
    assert np.all(ratio < 1)
    # Four classes (iris' first class split in two by its first input): Böhning's bound either way.
    y4 = np.where((Y == 0) & (X[:, 0] > np.median(X[Y == 0, 0])), 3, Y)
    a = BayesianLogisticRegression(max_iter=50).fit(X, y4)
    b = BayesianLogisticRegression(method="bohning", max_iter=50).fit(X, y4)
    assert a.coef_.shape == (4, 4)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.lower_bound_ == b.lower_bound_
