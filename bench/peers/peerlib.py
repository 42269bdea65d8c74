"""Shared helpers of the peer benchmark scripts (bayespy_gmm.py, sklearn_gmm.py).

Command line common to all peers (and to Occam's `bench_gmm` example):
    --data FILE   CSV with header x0..x{D-1} (from gen_data.py)
    --k K         number of mixture components
    --iters I     number of timed full iterations (no early stopping)
    --init FILE   optional CSV with header z: initial hard labels 0..K-1 (gen_data.py *.init.csv)
    --warmup W    untimed full iterations run before the timed ones (default 1)
    --case NAME   label echoed in the JSON line (default: data file stem)
    --seed S      seed for a peer's own random initialisation when --init is not given
Output: one JSON line {"peer", "case", "ms_per_iter", "iterations", "bound", "components", ...}
(extra keys allowed: ms_per_iter_median, cpu_ms_per_iter, warmup, blas_threads, bound_note).
"""

import argparse
import json
import os

import numpy as np

# A component counts as effective when it explains more than one data point: N * E[w_k] > 1.
EFFECTIVE_MIN_POINTS = 1.0


def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--init", default=None)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--case", default=None)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.case is None:
        args.case = os.path.splitext(os.path.basename(args.data))[0]
    return args


def load_data(path):
    y = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return np.ascontiguousarray(y, dtype=np.float64)


def load_labels(path, n, k):
    z = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=1)
    if z.shape != (n,) or z.min() < 0 or z.max() >= k:
        raise ValueError(f"{path}: expected {n} labels in 0..{k - 1}")
    return z


def effective_components(n, weights):
    return int(np.sum(n * np.asarray(weights) > EFFECTIVE_MIN_POINTS))


def emit(peer, args, times, cpu_times, bound, components, **extra):
    """Print the JSON line; times / cpu_times = wall / process CPU seconds of each timed iteration.

    ms_per_iter is the mean wall time over the timed iterations; ms_per_iter_median is less
    sensitive to other processes on the machine; cpu_ms_per_iter (process CPU time, all threads)
    is the least sensitive when the peer runs single-threaded on a busy machine."""
    rec = {"peer": peer, "case": args.case,
           "ms_per_iter": 1000.0 * float(np.mean(times)),
           "ms_per_iter_median": 1000.0 * float(np.median(times)),
           "cpu_ms_per_iter": 1000.0 * float(np.mean(cpu_times)),
           "iterations": args.iters, "bound": float(bound), "components": int(components),
           "warmup": args.warmup,
           "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default")}
    rec.update(extra)
    print(json.dumps(rec), flush=True)
