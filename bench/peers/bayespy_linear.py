#!/usr/bin/env python3
"""BayesPy's regression and PCA example models on the data written by compare_linear.py; one JSON
line with the time per full iteration (a sweep and the bound, BayesPy's VB.update(repeat=1)), the
set-up time (node construction, observe, initialisation) and the final bound.

regression (BayesPy's regression example with C covariates):
    B ~ GaussianARD(0, 1e-6, shape=(C,)), F = SumMultiply('i,i', B, X), tau ~ Gamma(1e-3, 1e-3),
    Y ~ GaussianARD(F, tau); sweep B, tau.
pca (BayesPy's PCA example):
    alpha ~ Gamma(1e-5, 1e-5, plates=(Q,)), C ~ GaussianARD(0, alpha, shape=(Q,), plates=(D, 1)),
    X ~ GaussianARD(0, 1, shape=(Q,), plates=(1, N)), F = Dot(C, X), tau ~ Gamma(1e-5, 1e-5),
    Y ~ GaussianARD(F, tau); X starts at the shared x0 (initialize_from_value); sweep C, X, alpha, tau.
pca_mean (BPCA with a mean, examples/models/bpca.occam's shape): the pca model with
    mu ~ GaussianARD(0, 1e-3, plates=(D, 1)) and Y ~ GaussianARD(Add(F, mu), tau); sweep C, X, mu,
    alpha, tau.
Usage: bayespy_linear.py --model regression|pca|pca_mean --dir DIR --n N (--c C | --d D --q Q) --iters I
"""

import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--c", type=int)
    ap.add_argument("--d", type=int)
    ap.add_argument("--q", type=int)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()

    from bayespy.inference import VB
    from bayespy.nodes import Add, Dot, Gamma, GaussianARD, SumMultiply

    t0 = time.perf_counter()
    if a.model == "regression":
        x = np.fromfile(f"{a.dir}/x.f64").reshape(a.n, a.c)
        y = np.fromfile(f"{a.dir}/y.f64")
        t0 = time.perf_counter()
        B = GaussianARD(0, 1e-6, shape=(a.c,))
        F = SumMultiply("i,i", B, x)
        tau = Gamma(1e-3, 1e-3)
        Y = GaussianARD(F, tau)
        Y.observe(y)
        Q = VB(Y, B, tau)
        order = (B, tau)
        case = f"regression_n{a.n}_c{a.c}"
    else:
        y = np.fromfile(f"{a.dir}/y.f64").reshape(a.d, a.n)
        x0 = np.fromfile(f"{a.dir}/x0.f64").reshape(a.n, a.q)
        t0 = time.perf_counter()
        alpha = Gamma(1e-5, 1e-5, plates=(a.q,))
        C = GaussianARD(0, alpha, shape=(a.q,), plates=(a.d, 1))
        X = GaussianARD(0, 1, shape=(a.q,), plates=(1, a.n))
        F = Dot(C, X)
        tau = Gamma(1e-5, 1e-5)
        if a.model == "pca_mean":
            mu = GaussianARD(0, 1e-3, plates=(a.d, 1))
            Y = GaussianARD(Add(F, mu), tau)
        else:
            Y = GaussianARD(F, tau)
        Y.observe(y)
        X.initialize_from_value(x0[None, :, :])
        if a.model == "pca_mean":
            Q = VB(Y, C, X, mu, alpha, tau)
            order = (C, X, mu, alpha, tau)
        else:
            Q = VB(Y, C, X, alpha, tau)
            order = (C, X, alpha, tau)
        case = f"{a.model}_n{a.n}_d{a.d}_q{a.q}"
    setup = time.perf_counter() - t0
    no_stop = -np.inf
    Q.update(*order, repeat=1, tol=no_stop, verbose=False)  # warm-up
    times = []
    for _ in range(a.iters):
        t = time.perf_counter()
        Q.update(*order, repeat=1, tol=no_stop, verbose=False)
        times.append(time.perf_counter() - t)
    ms = 1e3 * np.asarray(times)
    print(json.dumps({
        "peer": "bayespy", "case": case, "ms_per_iter": float(ms.mean()),
        "ms_per_iter_median": float(np.median(ms)), "setup_ms": 1e3 * setup,
        "iterations": a.iters + 1, "bound": float(Q.L[Q.iter - 1]),
    }))


if __name__ == "__main__":
    main()
