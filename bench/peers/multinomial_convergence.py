"""Why multinomial (softmax) regression, with or without ARD, converges slowly in Occam (issue 29),
measured on iris (inputs standardised, K = 3, the intercept as a synthetic input of value 10).

1. ``occam.sklearn.BayesianLogisticRegression`` as it is (q(w) = Π_k q(w_k): one Gaussian per
   class row, ``w[K] over D``): sweeps to the default ``tol = 1e-4`` and to ``1e-9``, and how far
   the coefficients stopped by 1e-4 are from the 1e-9 fit, split into the part along the softmax
   shift (the same vector added to every row, which leaves the likelihood unchanged) and the rest.
2. The same model with one Gaussian over all K·D weights (``v over J``, J = K·D, logits
   ``M[N] @ v`` with M[n] the K × KD block matrix that puts x_n in row k's block): sweeps to the
   same tolerances, and its means beside the row-wise ones.

Both fit Böhning's bound (``softmax_bohning``, ``method="bohning"``), which was ``softmax``'s term
when the results were recorded; ``softmax`` is now exact for K ≤ 3 (docs/guide/12-beyond-conjugate.md).

Usage: python bench/peers/multinomial_convergence.py (the occam package installed).
"""

import time
import warnings

import numpy as np
from sklearn.datasets import load_iris

from occam import Model
from occam.sklearn import BayesianLogisticRegression

X, y = load_iris(return_X_y=True)
X = (X - X.mean(0)) / X.std(0)
n, d = X.shape
K = 3


def rowwise(**kw):
    e = BayesianLogisticRegression(method="bohning", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        e.fit(X, y)
    return e, time.perf_counter() - t


def joint(tol, C=1.0):
    Xa = np.hstack([X, np.full((n, 1), 10.0)])
    da = d + 1
    M = np.zeros((n, K, K * da))
    for k in range(K):
        M[:, k, k * da:(k + 1) * da] = Xa
    text = (f"plate K = {K}\nplate J = {K * da}\nplates N from data y\ndata M[N, K] over J\n"
            f"v over J ~ MvGaussian(mean = 0, precision = identity * {1.0 / C!r})\n"
            "y[N] ~ Categorical(softmax_bohning(M[N] @ v))\nobserve y\n")
    t = time.perf_counter()
    r = Model.from_string(text, name="joint").fit(
        data={"M": M.reshape(n, -1), "y": y.astype(float)}, seed=0, max_iter=200_000, tol=tol / n)
    mean = np.asarray(r.posterior("v")["mean"]).reshape(K, da)
    return r, mean, time.perf_counter() - t


def main():
    print("1. row-wise q (the estimator):")
    tight = {}
    for kw in (dict(C=1.0), dict(C=0.1), dict(C=10.0), dict(ard=True)):
        full, _ = rowwise(tol=1e-9, max_iter=200_000, **kw)
        early, secs = rowwise(tol=1e-4, max_iter=200_000, **kw)
        diff = early.coef_ - full.coef_
        shift = diff.mean(axis=0)
        print(f"  {kw}: sweeps {early.n_iter_[0]} (tol 1e-4, {secs:.2f} s) / {full.n_iter_[0]} (tol 1e-9); "
              f"at 1e-4: max|dcoef| {np.abs(diff).max():.4f} (shift part {np.abs(shift).max():.4f}, "
              f"rest {np.abs(diff - shift).max():.4f}), bound {full.lower_bound_ - early.lower_bound_:.2e} "
              f"nats below the 1e-9 fit's ({full.lower_bound_:.6f})")
        tight[str(kw)] = full
    print("2. one Gaussian over all K·D weights (C = 1):")
    ref = tight[str(dict(C=1.0))]
    for tol in (1e-4, 1e-9):
        r, mean, secs = joint(tol)
        print(f"  tol {tol:g}: sweeps {r.iterations} ({secs:.2f} s), bound {r.bound:.6f}, max|mean - row-wise "
              f"1e-9 coef| {np.abs(mean[:, :d] - ref.coef_).max():.4f}")


if __name__ == "__main__":
    main()
