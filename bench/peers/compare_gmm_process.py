#!/usr/bin/env python3
"""Whole processes on the same CSV: `occam fit` of BayesPy's GMM (examples/bayespy/gmm/gmm.occam:
K = 10 full-covariance components) against scikit-learn's BayesianGaussianMixture (full covariance,
K = 10, the priors of sklearn_gmm.py), each reading the CSV itself, in the same run. Prints one JSON
line per process and a table: peak RSS (GNU time), wall and CPU time, Occam's set-up in phases,
the final bound in full (to compare builds), and the ratio of peak memories.

Occam's phases come from `occam fit --progress 1` (stderr, times since the command's start): the
data read (CSV parsing), the model loaded (parsed and resolved), then the first iteration's line
with the time since the run loop's start. Compiling (lowering, building the engine) is the time
from "loaded" to the run loop's start; the start (initialising q: the k-means start of z) is the
first iteration's time less one sweep (the median of the later sweeps); set-up is the command's
time to the first sweep: reading + loading + compiling + the start. Two more processes give CPU
time (user + system, GNU time): `occam check` (reading, loading and compiling, no fit) and
`occam fit --max-iter 1` (all that, the start, one sweep and the summary). scikit-learn's set-up
is the time to read the CSV (np.loadtxt). State the load average with every run (printed).

Data: N points in D = 2 dimensions from 10 well-separated Gaussian clusters (seeded), header
y_1,y_2. Usage: compare_gmm_process.py [--n 1000000] [--iters 20] [--occam PATH] [--repeats R]
[--python PATH] (a python with numpy and scikit-learn, e.g. bench/peers/.venv/bin/python).
With several `--occam` builds (e.g. before and after a change) they run interleaved, R times
each, on the same data, and every row is printed.
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
    """Runs cmd under GNU time: (stdout, stderr, peak RSS in MB, wall s, CPU s)."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS_KB=%M CPU_S=%U+%S"] + cmd,
                       capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    line = [l for l in p.stderr.splitlines() if l.startswith("MAXRSS_KB=")][-1]
    kb, cpu = line.split()
    user, sys_ = cpu.split("=")[1].split("+")
    return p.stdout, p.stderr, int(kb.split("=")[1]) / 1024.0, wall, float(user) + float(sys_)


def phases(err):
    """Occam's set-up phases (ms) and the final bound from `fit --progress 1` lines."""
    at = {m.group(1): float(m.group(2))
          for m in re.finditer(r"^fit: (read the data|loaded the model|fitted) \(([\d.]+) s\)$",
                               err, re.M)}
    its = [(float(m.group(1)), float(m.group(2)), float(m.group(3)))
           for m in re.finditer(r"^fit: iteration \d+/\d+ bound (\S+).*\(([\d.]+) s, "
                                r"([\d.]+) s since the start\)$", err, re.M)]
    if not its or len(at) < 3:
        sys.exit(f"cannot read occam's progress lines:\n{err[-2000:]}")
    sweeps = sorted(b[1] - a[1] for a, b in zip(its[1:], its[2:])) or [0.0]
    sweep = sweeps[len(sweeps) // 2]
    run_start = its[0][2] - its[0][1]
    ph = {"read_ms": at["read the data"], "load_ms": at["loaded the model"] - at["read the data"],
          "compile_ms": run_start - at["loaded the model"], "init_ms": its[0][1] - sweep,
          "sweep_ms": sweep, "setup_ms": its[0][2] - sweep,
          "after_fit_ms": None, "fitted_s": at["fitted"]}
    return {k: (round(1e3 * v, 1) if v is not None and k != "fitted_s" else v)
            for k, v in ph.items()}, its[-1][0]


def run_occam(occam, model, csv, iters):
    out, err, rss, wall, cpu = timed(
        [occam, "fit", model, "--data", f"y={csv}", "--max-iter", str(iters), "--tol", "0",
         "--seed", "1", "--progress", "1", "--no-prune"])
    ph, bound = phases(err)
    ph["after_fit_ms"] = round(1e3 * (wall - ph.pop("fitted_s")), 1)
    _, _, _, _, cpu_check = timed([occam, "check", model, "--data", f"y={csv}"])
    _, _, _, _, cpu_one = timed(
        [occam, "fit", model, "--data", f"y={csv}", "--max-iter", "1", "--tol", "0", "--seed",
         "1", "--no-prune"])
    return dict(peer="occam", build=occam, wall_ms=round(1e3 * wall), cpu_ms=round(1e3 * cpu),
                peak_rss_mb=round(rss, 1), **ph, cpu_check_ms=round(1e3 * cpu_check),
                cpu_fit1_ms=round(1e3 * cpu_one), bound=repr(float(bound)),
                load=round(os.getloadavg()[0], 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--occam", action="append", default=None)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    builds = a.occam or [f"{ROOT}/target/release/occam"]
    model = f"{ROOT}/examples/bayespy/gmm/gmm.occam"
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    rng = np.random.default_rng(11)
    centres = rng.uniform(-20, 20, size=(10, 2))
    z = rng.integers(0, 10, size=a.n)
    y = centres[z] + rng.standard_normal((a.n, 2))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        csv = f"{tmp}/y.csv"
        np.savetxt(csv, y, delimiter=",", header="y_1,y_2", comments="", fmt="%.17g")
        data_mb = y.nbytes / 2**20
        for r in range(a.repeats):
            for b in builds:
                occ = run_occam(b, model, csv, a.iters)
                print(json.dumps(occ), flush=True)
                rows.append(occ)
        out, _, rss_s, wall_s, cpu_s = timed([a.python, "-c", SKLEARN, csv, str(a.iters)], env)
        sk = json.loads(out.strip().splitlines()[-1])
        sk.update({"wall_ms": round(1e3 * wall_s), "cpu_ms": round(1e3 * cpu_s),
                   "peak_rss_mb": round(rss_s, 1), "load": round(os.getloadavg()[0], 2)})
        print(json.dumps(sk), flush=True)
    print()
    print(f"GMM N={a.n} D=2 K=10, {a.iters} iterations, data {data_mb:.1f} MB as doubles")
    print(f"{'peer':8} {'peak MB':>8} {'wall ms':>8} {'CPU ms':>7} {'set-up':>7} {'read':>6} "
          f"{'load':>5} {'compile':>7} {'start':>6} {'sweep':>6} {'check CPU':>9} "
          f"{'fit-1 CPU':>9}  bound / load avg")
    for o in rows:
        print(f"{'occam':8} {o['peak_rss_mb']:8.1f} {o['wall_ms']:8.0f} {o['cpu_ms']:7.0f} "
              f"{o['setup_ms']:7.0f} {o['read_ms']:6.0f} {o['load_ms']:5.0f} "
              f"{o['compile_ms']:7.0f} {o['init_ms']:6.0f} {o['sweep_ms']:6.0f} "
              f"{o['cpu_check_ms']:9.0f} {o['cpu_fit1_ms']:9.0f}  {o['bound']} / {o['load']}"
              f"  {o['build']}")
    print(f"{'sklearn':8} {sk['peak_rss_mb']:8.1f} {sk['wall_ms']:8.0f} {sk['cpu_ms']:7.0f} "
          f"{sk['setup_ms']:7.0f} (np.loadtxt)  / {sk['load']}")
    for o in rows:
        print(f"peak RSS occam/sklearn = {o['peak_rss_mb'] / sk['peak_rss_mb']:.2f} (target < 1); "
              f"occam set-up {o['setup_ms']:.0f} ms wall (target < 1000), {o['cpu_check_ms']:.0f} "
              f"ms CPU to compile; {o['build']}")


if __name__ == "__main__":
    main()
