"""The machine's own 1 -> 2 process factor, measured over time (issue 30's control).

Issue 30 asks for >= 1.8x throughput from 1 to 2 Dask workers. On a 2-vCPU virtual machine that
factor is bounded by what the host gives two busy processes at that moment: if it schedules the two
vCPUs on the two hyperthreads of one physical core, two processes share one core's execution units
and no program reaches 2x. This probe measures that bound with no Occam code in it: a cache-resident
arithmetic loop (a 32 KB float array scaled in place, so neither memory bandwidth nor the allocator
enters), run by one process, then by two at once, alternately, ROUNDS times. Each round prints the
aggregate rate of two against one; a spread of these factors over minutes is the host's, and the
scale benchmark's 1 -> 2 ratio can be read against it.

Usage: python bench/stream/cpu_pair.py [ROUNDS] [SECONDS]   (default 20 rounds of 1.5 s per phase)
Prints one JSON line per round and a summary line. Run with both build slots held.
"""

import json
import multiprocessing as mp
import sys
import time

import numpy as np


def spin(seconds, start, queue):
    a = np.ones(4096)
    start.wait()
    n, t0 = 0, time.perf_counter()
    while True:
        for _ in range(200):
            a *= 1.0000001
        n += 200
        t = time.perf_counter() - t0
        if t >= seconds:
            break
    queue.put(n / t)


def phase(procs, seconds):
    start, queue = mp.Barrier(procs), mp.Queue()
    ps = [mp.Process(target=spin, args=(seconds, start, queue)) for _ in range(procs)]
    for p in ps:
        p.start()
    rates = [queue.get() for _ in ps]
    for p in ps:
        p.join()
    return rates


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
    factors = []
    for r in range(rounds):
        one = phase(1, seconds)[0]
        two = phase(2, seconds)
        f = sum(two) / one
        factors.append(f)
        print(json.dumps({"round": r, "time": time.strftime("%H:%M:%S", time.gmtime()),
                          "one_per_s": one, "two_per_s": two, "two_over_one": f}), flush=True)
    s = sorted(factors)
    print(json.dumps({"rounds": rounds, "min": s[0], "median": s[len(s) // 2], "max": s[-1],
                      "at_least_1_8": sum(f >= 1.8 for f in s)}))


if __name__ == "__main__":
    main()
