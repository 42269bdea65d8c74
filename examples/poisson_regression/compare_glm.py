"""Occam's Poisson regression (poisson_regression.occam) beside a GLM fitted by scikit-learn's
PoissonRegressor on the same data: the maximum-likelihood estimate (alpha = 0) with its standard
errors from the inverse Fisher information (X' diag(mu) X)^-1 (what statsmodels' GLM reports),
and the MAP under Occam's prior w ~ N(0, 100 I) (alpha = 0.01 / n: scikit-learn minimises
deviance / (2n) + alpha/2 |w|^2). The intercept is the column `one` of X (fit_intercept=False).

Usage (from this directory, after `python generate.py`, with the occam package installed):
    python compare_glm.py
"""

import numpy as np
from sklearn.linear_model import PoissonRegressor

import occam

PRIOR_PRECISION = 0.01


def load(name):
    return np.loadtxt(f"{name}.csv", delimiter=",", skiprows=1, ndmin=2)


def main():
    X, y = load("X"), load("y").ravel()
    n = len(y)
    r = occam.Model("poisson_regression.occam").fit(data={"X": X, "y": y})
    w = r.posterior("w")
    mean, sd = w["mean"], np.sqrt(np.diag(w["covariance"]))
    mle = PoissonRegressor(alpha=0.0, fit_intercept=False, solver="newton-cholesky", tol=1e-12,
                           max_iter=1000).fit(X, y).coef_
    se = np.sqrt(np.diag(np.linalg.inv((X * np.exp(X @ mle)[:, None]).T @ X)))
    map_ = PoissonRegressor(alpha=PRIOR_PRECISION / n, fit_intercept=False, solver="newton-cholesky",
                            tol=1e-12, max_iter=1000).fit(X, y).coef_
    print(f"Occam: lower bound {r.bound:.6f} after {r.iterations} sweeps")
    print(f"{'':4s} {'Occam mean':>11s} {'Occam sd':>9s} {'GLM MLE':>9s} {'GLM se':>8s} {'MAP':>9s}")
    for name, row in zip(["one", "x1", "x2"], zip(mean, sd, mle, se, map_)):
        print(f"{name:4s} {row[0]:11.4f} {row[1]:9.4f} {row[2]:9.4f} {row[3]:8.4f} {row[4]:9.4f}")


if __name__ == "__main__":
    main()
