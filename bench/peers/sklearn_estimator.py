#!/usr/bin/env python3
"""occam.sklearn.BayesianGaussianMixture against scikit-learn's BayesianGaussianMixture, one run.

Usage:  sklearn_estimator.py [--cases a,b,c] [--repeats 3] [--n-init 1] [--max-iter 100]

Needs the `occam` Python package (release build: `scripts/wheel`, then
`pip install target/wheels/occam-*.whl`) and scikit-learn.
Data: gen_data.py cases a (N=10k D=2 K=10), b (N=2k D=10 K=40), c (N=100k D=2 K=10).
Both estimators: n_components=K, covariance_type="full", Dirichlet-distribution weight prior,
the same (default) hyperparameters, tol and max_iter, random_state=0; Occam with `--n-init`
restarts, scikit-learn with its default one k-means initialisation. Time per `fit()` call, wall
and process CPU, median over `--repeats` alternating runs; scikit-learn on one BLAS thread (as in
compare.sh; PEER_THREADS to change), Occam on its default pool (all cores).

Bounds, in nats with every constant: Occam's `lower_bound_`; for scikit-learn the complete ELBO
of its fitted q under its own model (python/tests/sk_elbo.py: its `lower_bound_` leaves out
constants), with q(z) refreshed by an E-step. Prints one JSON line per case and side, then the
time ratios.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "python" / "tests"))

THREADS = os.environ.get("PEER_THREADS", "1")
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, THREADS)

import numpy as np  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.mixture import BayesianGaussianMixture as SkBGM  # noqa: E402

from occam.sklearn import BayesianGaussianMixture  # noqa: E402
from sk_elbo import full_elbo  # noqa: E402

CASES = {"a": ("n10k_d2_k10", 10), "b": ("n2k_d10_k40", 40), "c": ("n100k_d2_k10", 10)}


def timed(make, X):
    est = make()
    t, c = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X)
    return est, time.perf_counter() - t, time.process_time() - c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="a,b,c")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-init", type=int, default=1)
    ap.add_argument("--max-iter", type=int, default=100)
    args = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="occam_sklearn_"))
    subprocess.run([sys.executable, str(HERE / "gen_data.py"), str(tmp), "--cases", args.cases], check=True,
                   stdout=subprocess.DEVNULL)
    summary = []
    for case in args.cases.split(","):
        name, k = CASES[case]
        X = np.loadtxt(tmp / f"{name}.csv", delimiter=",", skiprows=1)
        sides = {
            "occam": lambda: BayesianGaussianMixture(n_components=k, max_iter=args.max_iter,
                                                     n_init=args.n_init, random_state=0),
            "sklearn": lambda: SkBGM(n_components=k, weight_concentration_prior_type="dirichlet_distribution",
                                     max_iter=args.max_iter, random_state=0),
        }
        wall = {s: [] for s in sides}
        cpu = {s: [] for s in sides}
        fitted = {}
        for _ in range(args.repeats):
            for s, make in sides.items():
                est, w, c = timed(make, X)
                wall[s].append(w)
                cpu[s].append(c)
                fitted[s] = est
        bound = {"occam": fitted["occam"].lower_bound_, "sklearn": full_elbo(fitted["sklearn"], X)}
        for s in sides:
            e = fitted[s]
            print(json.dumps({
                "case": name, "side": s, "wall_s": statistics.median(wall[s]), "cpu_s": statistics.median(cpu[s]),
                "n_iter": int(e.n_iter_), "converged": bool(e.converged_), "bound": bound[s],
                "components": int(np.sum(X.shape[0] * e.weights_ > 1)),
            }), flush=True)
        summary.append({"case": name,
                        "speedup_wall": statistics.median(wall["sklearn"]) / statistics.median(wall["occam"]),
                        "speedup_cpu": statistics.median(cpu["sklearn"]) / statistics.median(cpu["occam"]),
                        "bound_occam_minus_sklearn": bound["occam"] - bound["sklearn"]})
    for s in summary:
        print(json.dumps(s))
    print(json.dumps({"load_average": os.getloadavg(), "sklearn_threads": THREADS, "n_init": args.n_init}))


if __name__ == "__main__":
    main()
