#!/usr/bin/env python3
"""Whole processes on the same CSV: `occam fit` of BayesPy's GMM (examples/bayespy/gmm/gmm.occam:
K = 10 full-covariance components) against scikit-learn's BayesianGaussianMixture (full covariance,
K = 10, the priors of sklearn_gmm.py), each reading the CSV itself, in the same run. Prints one JSON
line per process and a table: peak RSS (GNU time), wall time, set-up (reading the CSV and compiling,
before the first iteration) and the ratio of peak memories.

Occam's set-up is the process's wall time to its first iteration: the wall time of the whole
process less the elapsed time the driver reports after the last iteration (`--progress 1` lines
count from the start of the run loop). scikit-learn's is the time to read the CSV (np.loadtxt).

Data: N points in D = 2 dimensions from 10 well-separated Gaussian clusters (seeded), header
y_1,y_2. Usage: compare_gmm_process.py [--n 1000000] [--iters 20] [--occam PATH]
[--python PATH] (a python with numpy and scikit-learn, e.g. /work/benchenv/bin/python)
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SKLEARN = r"""
import json, sys, time, warnings
import numpy as np
t0 = time.perf_counter()
X = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, ndmin=2)
t1 = time.perf_counter()
from sklearn.mixture import BayesianGaussianMixture
D = X.shape[1]
est = BayesianGaussianMixture(
    n_components=10, covariance_type="full",
    weight_concentration_prior_type="dirichlet_distribution",
    weight_concentration_prior=1e-5, mean_prior=np.zeros(D), mean_precision_prior=1e-5,
    degrees_of_freedom_prior=float(D), covariance_prior=1e-5 * np.identity(D),
    reg_covar=0.0, max_iter=int(sys.argv[2]), tol=0.0, random_state=1)
warnings.simplefilter("ignore")
est.fit(X)
t2 = time.perf_counter()
print(json.dumps({"peer": "sklearn", "setup_ms": 1e3 * (t1 - t0), "fit_ms": 1e3 * (t2 - t1),
                  "iterations": int(est.n_iter_)}))
"""


def timed(cmd, env=None):
    """Runs cmd under GNU time: (stdout, stderr, peak RSS in MB, wall seconds)."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS_KB=%M"] + cmd, capture_output=True,
                       text=True, env=env)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    kb = [l for l in p.stderr.splitlines() if l.startswith("MAXRSS_KB=")][-1]
    return p.stdout, p.stderr, int(kb.split("=")[1]) / 1024.0, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--occam", default=f"{ROOT}/target/release/occam")
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    rng = np.random.default_rng(11)
    centres = rng.uniform(-20, 20, size=(10, 2))
    z = rng.integers(0, 10, size=a.n)
    y = centres[z] + rng.standard_normal((a.n, 2))
    with tempfile.TemporaryDirectory() as tmp:
        csv = f"{tmp}/y.csv"
        np.savetxt(csv, y, delimiter=",", header="y_1,y_2", comments="", fmt="%.17g")
        data_mb = y.nbytes / 2**20
        out, err, rss_o, wall_o = timed(
            [a.occam, "fit", f"{ROOT}/examples/bayespy/gmm/gmm.occam", "--data", f"y={csv}",
             "--max-iter", str(a.iters), "--tol", "0", "--seed", "1", "--progress", "1",
             "--no-prune"])
        # The driver's elapsed time after the last iteration (seconds, from the run loop's start).
        elapsed = [float(m) for m in re.findall(r"(\d+(?:\.\d+)?)\s*s\b", err)]
        run_s = elapsed[-1] if elapsed else float("nan")
        occ = {"peer": "occam", "wall_ms": 1e3 * wall_o, "run_ms": 1e3 * run_s,
               "setup_ms": 1e3 * (wall_o - run_s), "peak_rss_mb": round(rss_o, 1)}
        print(json.dumps(occ), flush=True)
        out, _, rss_s, wall_s = timed([a.python, "-c", SKLEARN, csv, str(a.iters)], env)
        sk = json.loads(out.strip().splitlines()[-1])
        sk.update({"wall_ms": 1e3 * wall_s, "peak_rss_mb": round(rss_s, 1)})
        print(json.dumps(sk), flush=True)
    print()
    print(f"GMM N={a.n} D=2 K=10, {a.iters} iterations, data {data_mb:.1f} MB as doubles")
    print(f"{'peer':8} {'peak MB':>9} {'wall ms':>10} {'set-up ms':>10}")
    for r in (occ, sk):
        print(f"{r['peer']:8} {r['peak_rss_mb']:9.1f} {r['wall_ms']:10.0f} {r['setup_ms']:10.0f}")
    print(f"peak RSS occam/sklearn = {rss_o / rss_s:.2f} (target < 1); "
          f"occam set-up {occ['setup_ms']:.0f} ms (target < 1000; includes process start and "
          f"initialisation)")


if __name__ == "__main__":
    main()
