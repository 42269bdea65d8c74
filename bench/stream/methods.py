"""Batch, memoized and stochastic VB on one Gaussian mixture, in the same run: the bound against
wall time (issue 30). Shards are held in this process (``occam.distributed.fit`` with no
client), so the times compare the methods, not Dask.

Usage: python bench/stream/methods.py [N] [SHARDS] [SECONDS]   (defaults 100000 10 120)
Prints one JSON line per bound evaluation: method, seconds since its start, sweep/pass/epoch,
bound. The SVI times include its full-bound evaluations (one extra pass over the data each)."""

import json
import sys
import time

import numpy as np

import occam.distributed as od

GMM = """\
plate K = 10
plates N, D from data x
pi ~ Dirichlet(1) over K
z[N] ~ Categorical(pi)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-2)
Lambda[K] over D ~ Wishart(dof = 3, rate = identity * 1)
x[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
"""


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    shards = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 120.0
    rng = np.random.default_rng(0)
    centres = rng.uniform(-10, 10, (10, 2))
    x = centres[rng.integers(0, 10, n)] + rng.standard_normal((n, 2))
    parts = [{"x": p} for p in np.array_split(x, shards)]
    runs = [("batch", {}), ("memoized", {}),
            ("svi", dict(kappa=0.7, tau=1.0, bound_every=1))]
    for method, kw in runs:
        t0 = time.perf_counter()

        def report(i, bound, method=method, t0=t0):
            t = time.perf_counter() - t0
            print(json.dumps({"method": method, "n": n, "shards": shards, "seconds": round(t, 3),
                              "iteration": i, "bound": bound}), flush=True)
            return t < budget

        r = od.fit(GMM, parts, seed=0, max_iter=10_000, tol=1e-8, method=method,
                   callback=report, **kw)
        print(json.dumps({"method": method, "final": r.bound, "converged": r.converged,
                          "iterations": r.iterations,
                          "seconds": round(time.perf_counter() - t0, 3)}), flush=True)


if __name__ == "__main__":
    main()
