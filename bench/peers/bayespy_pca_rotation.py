#!/usr/bin/env python3
"""BayesPy's documented PCA example (doc/source/examples/pca.rst) run twice on the same data,
without and with its parameter-expansion rotation (RotationOptimizer over RotateGaussianARD(X) and
RotateGaussianARD(C, alpha)); prints the sweeps to convergence and the final bound of each.

The data are the example's own recipe: numpy seed 1, M = 20 rows, N = 100 columns, two true
components, f = w xᵀ, y = f + 0.1·noise. `--write FILE` also writes y (M × N, CSV with a header), the file
Occam's test and example use (examples/pca_rotation/y.csv).

BayesPy's convergence rule is relative: (L₁ − L₀) / ½(|L₀| + |L₁|) < tol (default 1e-5).
Usage: bayespy_pca_rotation.py [--write examples/pca_rotation/y.csv] [--tol 1e-5] [--maxiter 1000]
"""

import argparse
import json

import numpy as np


def data():
    np.random.seed(1)
    m, n = 20, 100
    x = np.random.randn(n, 2)
    w = np.random.randn(m, 2)
    f = np.einsum("ik,jk->ij", w, x)
    return f + 0.1 * np.random.randn(m, n)


def fit(y, rotate, tol, maxiter, c0):
    from bayespy.inference import VB
    from bayespy.inference.vmp.transformations import RotateGaussianARD, RotationOptimizer
    from bayespy.nodes import Gamma, GaussianARD, SumMultiply

    m, n = y.shape
    d = 10
    x = GaussianARD(0, 1, plates=(1, n), shape=(d,))
    alpha = Gamma(1e-5, 1e-5, plates=(d,))
    c = GaussianARD(0, alpha, plates=(m, 1), shape=(d,))
    f = SumMultiply("d,d->", x, c)
    tau = Gamma(1e-5, 1e-5)
    obs = GaussianARD(f, tau)
    obs.observe(y)
    q = VB(obs, x, c, alpha, tau)
    c.initialize_from_value(c0[:, None, :])
    if rotate:
        r = RotationOptimizer(RotateGaussianARD(x), RotateGaussianARD(c, alpha), d)
        q.set_callback(r.rotate)
    q.update(repeat=maxiter, tol=tol, verbose=False)
    trace = [float(v) for v in q.L[: q.iter]]
    return {"rotate": rotate, "iterations": q.iter, "bound": trace[-1], "converged": bool(q.converged)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", default=None)
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--maxiter", type=int, default=1000)
    a = ap.parse_args()
    y = data()
    # C's start: the example's C.initialize_from_random(), drawn here once so that both runs start
    # from the same point (a draw from C's prior with alpha at its prior mean 1).
    rng = np.random.RandomState(2)
    c0 = rng.randn(y.shape[0], 10)
    if a.write:
        header = ",".join(f"n{j}" for j in range(y.shape[1]))
        np.savetxt(a.write, y, delimiter=",", fmt="%.17g", header=header, comments="")
    for rotate in (False, True):
        print(json.dumps(fit(y, rotate, a.tol, a.maxiter, c0)))


if __name__ == "__main__":
    main()
