#!/usr/bin/env python3
"""occam.sklearn.BayesianRidge / ARDRegression against scikit-learn's own, one run.

Usage:  sklearn_linear.py [--n 100000] [--d 50] [--repeats 3] [--seed 0]

Needs the `occam` Python package (release build: `scripts/wheel`, then
`pip install target/wheels/occam-*.whl`) and scikit-learn.
Data: X (N × D) standard normal plus a per-column offset, y = X w + noise with half the weights
zero (seeded). Both sides take the default constructor arguments (fit_intercept=True, tol=1e-3,
max_iter=300, Gamma(1e-6, 1e-6) hyper-priors). Time per `fit()` call, wall and process CPU,
median over `--repeats` alternating runs; scikit-learn on PEER_THREADS BLAS threads (default 1,
as the other peer scripts), Occam on its default pool (all cores). Prints one JSON line per
estimator and side, with the largest coefficient difference and the time ratio.
"""

import argparse
import json
import os
import statistics
import time

THREADS = os.environ.get("PEER_THREADS", "1")
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, THREADS)

import numpy as np  # noqa: E402
from sklearn import linear_model as sk  # noqa: E402

import occam.sklearn as oc  # noqa: E402


def timed(make, X, y):
    est = make()
    t, c = time.perf_counter(), time.process_time()
    est.fit(X, y)
    return est, time.perf_counter() - t, time.process_time() - c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    X = rng.standard_normal((args.n, args.d)) + rng.uniform(-3, 3, args.d)
    w = rng.standard_normal(args.d) * (rng.random(args.d) < 0.5)
    y = X @ w + rng.standard_normal(args.n) + 2.0
    for name in ("BayesianRidge", "ARDRegression"):
        sides = {"occam": getattr(oc, name), "sklearn": getattr(sk, name)}
        wall = {s: [] for s in sides}
        cpu = {s: [] for s in sides}
        fitted = {}
        for _ in range(args.repeats):
            for side, make in sides.items():
                est, t, c = timed(make, X, y)
                wall[side].append(t)
                cpu[side].append(c)
                fitted[side] = est
        diff = float(np.max(np.abs(fitted["occam"].coef_ - fitted["sklearn"].coef_)))
        for side in sides:
            print(json.dumps({
                "estimator": name, "side": side, "n": args.n, "d": args.d,
                "wall_s": statistics.median(wall[side]), "cpu_s": statistics.median(cpu[side]),
                "n_iter": int(fitted[side].n_iter_), "blas_threads": THREADS if side == "sklearn" else None,
            }))
        ratio = statistics.median(wall["sklearn"]) / statistics.median(wall["occam"])
        print(f"{name}: scikit-learn / occam wall time = {ratio:.1f}x "
              f"(max |coef difference| {diff:.1e})")


if __name__ == "__main__":
    main()
