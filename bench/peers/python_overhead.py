#!/usr/bin/env python3
"""Cost of fitting through the Python package against the command line, same data, same run.

Usage:  python_overhead.py [--occam target/release/occam] [--n 100000] [--repeats 5] [--max-iter 200]

Needs the `occam` Python package (a release build: `scripts/wheel`, then `pip install target/wheels/occam-*.whl`, or
`maturin develop --release` in python/) and the release CLI (`cargo build --release`).

Data: case c of gen_data.py (N = 100,000, D = 2, K_true = 10; seed 2026 + 2), written as CSV.
Model: BayesPy's GMM with K = 10 full-covariance components (examples/bayespy/gmm/gmm.occam with
the data named y). Both sides run the same settings (seed 0, tol 0, --max-iter, no pruning) and
must print the same bound and number of sweeps (checked).

Timed, alternating CLI and Python runs, median of `--repeats`:
* CLI: the whole process, `occam fit MODEL --data y=FILE --json` (start-up, CSV parsing, model
  compilation, the fit, the JSON report on stdout);
* Python: `Model.fit(data={"y": Y})` with Y already in memory (C-contiguous float64), i.e. data
  conversion, model loading and compilation and the fit (what "fitting through Python" costs);
* Python with report: the above plus `Result.report()` (the CLI's JSON report, serialised by the
  library and parsed back into Python objects: 1M posterior probabilities of z);
Wall time, and CPU time (all threads: the process's for Python, the child's for the CLI), which
is steadier on a shared machine. Prints one JSON line per side and the ratios Python / CLI.
"""

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

MODEL = """plate K = 10
plates N, D from data y
alpha ~ Dirichlet(1e-5) over K
z[N] ~ Categorical(alpha)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-5)
Lambda[K] over D ~ Wishart(dof = 2, rate = identity * 1e-5)
y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--occam", default=str(ROOT / "target" / "release" / "occam"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-iter", type=int, default=200)
    args = ap.parse_args()

    import occam

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="occam_overhead_"))
    subprocess.run([sys.executable, str(HERE / "gen_data.py"), str(tmp), "--cases", "c"], check=True,
                   stdout=subprocess.DEVNULL)
    data = tmp / "n100k_d2_k10.csv"
    model_path = tmp / "gmm.occam"
    model_path.write_text(MODEL)
    cmd = [args.occam, "fit", str(model_path), "--data", f"y={data}", "--json", "--seed", "0",
           "--tol", "0", "--max-iter", str(args.max_iter), "--no-prune"]

    def child_cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    def cli():
        t, c = time.perf_counter(), child_cpu()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        dt, dc = time.perf_counter() - t, child_cpu() - c
        rep = json.loads(out)
        return dt, dc, rep["bound"], rep["iterations"]

    model = occam.Model(model_path)
    Y = np.loadtxt(data, delimiter=",", skiprows=1)
    assert Y.flags.c_contiguous and Y.dtype == np.float64

    def py(report):
        t, c = time.perf_counter(), time.process_time()
        r = model.fit(data={"y": Y}, seed=0, tol=0.0, max_iter=args.max_iter, prune=False)
        if report:
            r.report()
        return time.perf_counter() - t, time.process_time() - c, r.bound, r.iterations

    cli()
    py(False)  # warm-up (page cache, thread pool)
    sides = (("cli", cli), ("python", lambda: py(False)), ("python_with_report", lambda: py(True)))
    wall = {k: [] for k, _ in sides}
    cpu = {k: [] for k, _ in sides}
    results = {}
    for _ in range(args.repeats):
        for name, f in sides:
            dt, dc, bound, iters = f()
            wall[name].append(dt)
            cpu[name].append(dc)
            results.setdefault(name, (bound, iters))
            assert results[name] == (bound, iters), "runs differ"
    assert results["cli"] == results["python"], f"CLI {results['cli']} != Python {results['python']}"
    mw = {k: statistics.median(v) for k, v in wall.items()}
    mc = {k: statistics.median(v) for k, v in cpu.items()}
    for k in wall:
        print(json.dumps({"side": k, "wall_s": mw[k], "cpu_s": mc[k], "wall_runs_s": [round(x, 4) for x in wall[k]],
                          "bound": results[k][0], "iterations": results[k][1]}))
    print(json.dumps({"ratio_python_over_cli_wall": mw["python"] / mw["cli"],
                      "ratio_python_over_cli_cpu": mc["python"] / mc["cli"],
                      "ratio_python_with_report_over_cli_cpu": mc["python_with_report"] / mc["cli"],
                      "load_average": os.getloadavg()}))


if __name__ == "__main__":
    main()
