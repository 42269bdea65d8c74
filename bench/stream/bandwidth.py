"""Memory bandwidth, one process against two at once (issue 30: what limits the 1 -> 2 worker
throughput of the scale benchmark, whose sweep streams every row's state once).

Each process allocates an array of SIZE bytes (far beyond the caches), touches it, then times
PASSES passes of a read (the sum of the array) and of a read-and-write (the array scaled in
place), as the sweep reads x's moments and rewrites z's responsibilities. Run once with one
process, then with two started together (each on its own array); the ratio of the aggregate
rates, two against one, is what two workers can gain from bandwidth alone (2.0: no limit).

Usage: python bench/stream/bandwidth.py [SIZE_GB] [PASSES]     (default 1 GB, 5 passes)
Prints JSON lines: each process's rates, then the ratios. Run with both build slots held.
"""

import json
import multiprocessing as mp
import sys
import time

import numpy as np


def stream(size, passes, start, queue):
    a = np.ones(size // 8)
    start.wait()
    t0 = time.perf_counter()
    for _ in range(passes):
        a.sum()
    read = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(passes):
        a *= 1.0000001
    write = time.perf_counter() - t0
    # Bytes moved: a read pass reads the array, a scale pass reads and writes it.
    queue.put({"read_gb_s": passes * a.nbytes / read / 1e9,
               "read_write_gb_s": 2 * passes * a.nbytes / write / 1e9})


def run(procs, size, passes):
    start, queue = mp.Barrier(procs), mp.Queue()
    ps = [mp.Process(target=stream, args=(size, passes, start, queue)) for _ in range(procs)]
    for p in ps:
        p.start()
    rates = [queue.get() for _ in ps]
    for p in ps:
        p.join()
    rec = {"processes": procs, "size_bytes": size, "passes": passes, "each": rates,
           "read_gb_s": sum(r["read_gb_s"] for r in rates),
           "read_write_gb_s": sum(r["read_write_gb_s"] for r in rates)}
    print(json.dumps(rec), flush=True)
    return rec


def main():
    size = int(float(sys.argv[1]) * 1e9) if len(sys.argv) > 1 else 10**9
    passes = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    one, two = run(1, size, passes), run(2, size, passes)
    print(json.dumps({"two_over_one_read": two["read_gb_s"] / one["read_gb_s"],
                      "two_over_one_read_write": two["read_write_gb_s"] / one["read_write_gb_s"]}))


if __name__ == "__main__":
    main()
