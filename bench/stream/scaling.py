"""Data-parallel scaling of occam.distributed (issue 30): per-sweep time of a batch GMM fit on a
Dask LocalCluster of 1 and 2 workers × 1 thread, the 1 → 2 worker efficiency, and the cost model

    time per sweep ≈ a + b · N / workers + c · G

(G = the globals' f64 values per reduction; fixed here, so c · G is folded into a and only a and b
are fitted, by least squares over every (N, workers) point). Each shard is written to its own
.npy file by the client one at a time and read by the worker that holds it, so no process but
the worker holds a shard's rows.

Usage: python bench/stream/scaling.py N [N ...]   (e.g. 1000000 10000000)
  env SWEEPS (default 4: the first sweep, with the start, is not timed), SHARDS (default 8).
Prints one JSON line per run, then the efficiency per N and the fitted a, b.

Limits: wall times on a shared machine measure the machine's load as much as Occam; the worker
CPU times (process_time summed over the workers) are printed beside them. The issue's N = 10⁸
run with 2 dedicated cores must be run on a quiet machine."""

import json
import os
import sys
import tempfile
import time

import numpy as np

import occam.distributed as od
from dask.distributed import Client, LocalCluster

GMM = """\
plate K = 10
plates N, D from data x
pi ~ Dirichlet(1) over K
z[N] ~ Categorical(pi)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-2)
Lambda[K] over D ~ Wishart(dof = 3, rate = identity * 1)
x[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
"""


def shard_files(n, shards, folder):
    rng = np.random.default_rng(0)
    centres = rng.uniform(-10, 10, (10, 2))
    out = []
    for s, size in enumerate(np.diff(np.linspace(0, n, shards + 1).astype(int))):
        x = centres[rng.integers(0, 10, size)] + rng.standard_normal((size, 2))
        path = os.path.join(folder, f"x-{s:03}.npy")
        np.save(path, x)
        out.append({"x": path})
        del x
    return out


def run(n, workers, sweeps, shards, folder):
    files = shard_files(n, shards, folder)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        stamps = []
        cpu0 = sum(client.run(time.process_time).values())
        od.fit(GMM, files, client=client, seed=0, max_iter=sweeps, tol=None,
               callback=lambda i, b: stamps.append(time.perf_counter()))
        cpu = sum(client.run(time.process_time).values()) - cpu0
    per = float(np.median(np.diff(stamps)))
    return {"n": n, "workers": workers, "shards": shards, "sweeps": sweeps,
            "seconds_per_sweep": round(per, 4), "worker_cpu_seconds": round(cpu, 3)}


def main():
    ns = [int(float(a)) for a in sys.argv[1:]] or [1_000_000]
    sweeps = int(os.environ.get("SWEEPS", "4"))
    shards = int(os.environ.get("SHARDS", "8"))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in ns:
            for w in (1, 2):
                r = run(n, w, sweeps, shards, folder)
                rows.append(r)
                print(json.dumps(r), flush=True)
    for n in ns:
        t = {r["workers"]: r["seconds_per_sweep"] for r in rows if r["n"] == n}
        print(json.dumps({"n": n, "throughput_1_to_2": round(t[1] / t[2], 3),
                          "efficiency": round(t[1] / t[2] / 2, 3)}))
    design = np.array([[1.0, r["n"] / r["workers"]] for r in rows])
    y = np.array([r["seconds_per_sweep"] for r in rows])
    (a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    print(json.dumps({"model": "seconds per sweep = a + b * N / workers", "a": a,
                      "b_seconds_per_row": b,
                      "max_relative_residual": float(np.max(np.abs(design @ [a, b] - y) / y))}))


if __name__ == "__main__":
    main()
