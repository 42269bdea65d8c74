"""Worker memory row by row (issue 30, bench/README.md "Worker memory, row by row"): one shard of
N rows of the scale benchmark's GMM (D = 2, K = 10) held in this process as a Dask worker holds
it — the rows in a .npy file read memory-mapped (``occam.distributed``'s ``_read``), compiled,
started (the engine's sharded start on one shard), then swept — with the RSS growth per row
after each stage and the peak growth per row (``ru_maxrss``, what ``scale.py``'s preflight
counts).

Usage: python bench/stream/row_bytes.py [N]     (default 2e6; the README's measurements)
Prints one JSON line. Needs the occam wheel (release build: scripts/wheel).
"""

import json
import os
import resource
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import GMM, SEED, save_rows, chunks  # noqa: E402


def current_rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 2_000_000
    import occam.distributed as od
    from occam._shards import _Here

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "x.npy")
        save_rows(path, n, chunks(n, SEED, 0))
        base = current_rss()
        runner = _Here(GMM, [{"x": path}], "model.occam", None)
        compiled = current_rss()
        steps = od._steps(runner.call("schedule", [()])[0])
        od._start(runner, steps, SEED, None)
        started = current_rss()
        bounds = [od._sweep(runner, steps, "batch")[0] for _ in range(2)]
        swept = current_rss()
        peak = peak_rss()
    per = lambda v: round((v - base) / n, 1)  # noqa: E731
    print(json.dumps({"n": n, "after_compile": per(compiled), "after_start": per(started),
                      "after_sweeps": per(swept), "peak": per(peak),
                      "bound_after_2_sweeps": bounds[-1]}))


if __name__ == "__main__":
    main()
