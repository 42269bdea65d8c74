"""Issue 30's scale benchmark, end to end, at one size N (the cost model in bench/README.md).

1. **Data-parallel batch VB** of a GMM (D = 2, K = 10) on a Dask LocalCluster of W = 1 and 2
   workers × 1 thread. The shards are generated on the workers (each task draws one shard from
   its own seed and writes it to a .npy file; the worker holding the shard reads it), so no
   process ever holds the N rows. Per run: seconds per sweep (median over the timed sweeps; the
   first sweep, with the start, is not timed), worker CPU seconds, bytes moved per sweep
   (``Result.bytes_per_sweep``), peak RSS per worker (``ru_maxrss``) and its growth over the
   worker's RSS before the fit. Five runs fit the cost model
       t_sweep = a + b · N/W + c · S/W + d · W
   (a: per-sweep fixed cost, the reductions' round trips; b: per row; c: per shard on its worker,
   which also sums its shards' messages; d: per worker at the client, which sums one message per
   worker — the tree reduction) by least squares:
   (N, 1, S), (N, 2, S), (N, 1, 4S), (N, 2, 4S), (N/4, 1, S). The 1 → 2 worker throughput is
   t(N, 1, S) / t(N, 2, S) (the issue asks ≥ 1.8).
2. **Batch vs memoized vs stochastic VB** on N/10 rows (the issue's N = 10⁷ when N = 10⁸) on the
   2-worker cluster: the bound against wall time, each method for at most METHOD_SECONDS.
3. **scikit-learn's BayesianGaussianMixture** (full covariances, K = 10) at the largest N it can
   hold: its bytes per row measured at 10⁵ rows in a child process, then the largest
   {1, 2, 5}·10^k ≤ N whose footprint fits in half the available memory; seconds per iteration
   as (t(11 iterations) − t(1)) / 10 in child processes, beside Occam's batch sweep on the same
   data in one process (8 shards, ``occam.distributed.fit`` without a client) in the same run.

Usage: python bench/stream/scale.py N [SHARDS] [--prepare]
  (e.g. 1e6; the issue's run is 1e8, SHARDS 16). --prepare only writes the batch runs' shard
  files into SHARD_DIR (generated on a LocalCluster of 2 workers) and exits, so that a quiet
  window is spent on the fits.
  env SWEEPS (timed sweeps per run, default 4), METHOD_SECONDS (default 120), SCRATCH (folder
  for the shard files, default the system's temporary folder; N·16 bytes per shard set, five
  sets: N, N (4S), N/4, N/10 rows and sklearn's; removed after the run), SHARD_DIR (a folder
  kept instead: shard files already there are reused), SKIP (comma list of parts to skip: methods,
  sklearn), RUNS (the batch runs, a comma list of 1, 2, 1x4, 2x4, q for (N, 1, S), (N, 2, S),
  (N, 1, 4S), (N, 2, 4S), (N/4, 1, S); default all; the cost model is fitted on 4 or more),
  SKLEARN_MAX (the largest N tried for scikit-learn, default N: its iterations at 10⁷
  rows take ≈ 30 s each), BYTES_PER_ROW (the preflight's memory per row), FORCE=1 (run past the
  preflight), DOUBLE_ON_TWO=1 (a sixth batch run: 2N rows in 2S shards on 2 workers, each
  holding what the 1-worker run held — for an N whose 2N does not fit one worker),
  DASK_DEFAULT=1 (the clusters with Dask's default settings, not ``od.local_cluster``'s).
  Every batch run records its timed sweeps' times and each worker's ``AnonHugePages`` after
  the last one (transparent huge pages; ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1`` asks glibc's
  malloc for them where THP is ``madvise``), and GLIBC_TUNABLES as set.
Prints JSON lines, then a table; writes both to bench/results/scale_<N>_<date>_<time>utc.txt.
Needs the occam wheel (a release build: scripts/wheel), dask[distributed], SciPy and scikit-learn.
"""

import contextlib
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

GMM = """\
plate K = 10
plates N, D from data x
pi ~ Dirichlet(1) over K
z[N] ~ Categorical(pi)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-2)
Lambda[K] over D ~ Wishart(dof = 3, rate = identity * 1)
x[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
"""

SEED = 0
LINES = []
# A worker's peak RSS growth per row it holds (release wheel, row_bytes.py at N = 2·10⁶: 169
# after the sweeps — the data, x's moments and f(x), z's responsibilities and A — and up to 296
# while one shard starts; a worker starts its shards one at a time, so 190 leaves room for a
# sixteenth of that transient and the worker's own ≈ 0.3 GB).
BYTES_PER_ROW = 190


def out(record):
    text = json.dumps(record)
    LINES.append(text)
    print(text, flush=True)


CHUNK = 1 << 20  # rows drawn at a time: a shard's generation holds ≈ 56 bytes × CHUNK


def chunks(rows, seed, s):
    """Shard s of the data, CHUNK rows at a time: 10 centres from `seed`, each chunk's labels
    then noise from the generator of (seed, s)."""
    centres = np.random.default_rng(seed).uniform(-10, 10, (10, 2))
    rng = np.random.default_rng([seed, s])
    for at in range(0, rows, CHUNK):
        m = min(CHUNK, rows - at)
        yield centres[rng.integers(0, 10, m)] + rng.standard_normal((m, 2))


def save_rows(path, rows, parts):
    """An (rows × 2) float64 .npy file from the arrays ``parts`` (in order), written chunk by
    chunk (no array of all the rows) to a temporary name and renamed: never a partial file."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f8", "fortran_order": False, "shape": (rows, 2)})
        for part in parts:
            f.write(np.ascontiguousarray(part, dtype="<f8").tobytes())
    os.replace(tmp, path)


def make_shard(path, rows, seed, s):
    """Shard s written to `path` (runs on a worker)."""
    save_rows(path, rows, chunks(rows, seed, s))
    return path


def sizes(n, shards):
    return [int(v) for v in np.diff(np.linspace(0, n, shards + 1).astype(np.int64))]


def shard_files(client, n, shards, folder):
    """The shard files of N rows in `shards` shards, written by the workers (one task each)."""
    sub = os.path.join(folder, f"n{n}-s{shards}")
    os.makedirs(sub, exist_ok=True)
    paths = [os.path.join(sub, f"x-{s:04}.npy") for s in range(shards)]
    if not all(os.path.exists(p) for p in paths):
        futures = client.map(make_shard, paths, sizes(n, shards), [SEED] * shards,
                             range(shards), pure=False)
        client.gather(futures)
    return [{"x": p} for p in paths]


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def huge_pages():
    """This process's anonymous memory in transparent huge pages (``AnonHugePages`` of
    /proc/self/smaps_rollup), bytes."""
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_ticks():
    """The machine's CPU time so far by kind (the ``cpu`` line of /proc/stat, in USER_HZ ticks
    summed over the CPUs): user, nice, system, idle, iowait, irq, softirq, steal. ``steal`` is
    time a virtual CPU was ready to run but the hypervisor ran something else: on a VM it is
    CPU the workers asked for and did not get, which no setting of Occam or Dask can recover."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu "):
                return [int(v) for v in line.split()[1:9]]
    return [0] * 8


def shares(ticks):
    """Each timed sweep's share of the machine's CPU time that was stolen (``steal``) and idle
    (``idle`` + ``iowait``), from the ``cpu_ticks()`` taken at the sweeps' ends."""
    out_ = []
    for a, b in zip(ticks, ticks[1:]):
        d = [y - x for x, y in zip(a, b)]
        total = sum(d) or 1
        out_.append((d[7] / total, (d[3] + d[4]) / total))
    return out_


def current_rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cluster(workers):
    """A LocalCluster of ``workers`` processes × 1 thread, ``occam.distributed.local_cluster``:
    with occam's Dask settings (``cluster_config()``: no statistical profiler, rare health checks
    and system monitor) and the engine's own threads (rayon) one per worker too
    (``RAYON_NUM_THREADS=1``): by default each worker's engine would use every core, and the
    1-worker run would already use the machine's two cores. DASK_DEFAULT=1: Dask's default
    settings instead (the runs before 2026-11-30 18:30 UTC)."""
    from dask.distributed import Client, LocalCluster
    import occam.distributed as od
    if os.environ.get("DASK_DEFAULT") == "1":
        c = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                         dashboard_address=None, memory_limit=0, env={"RAYON_NUM_THREADS": "1"})
    else:
        c = od.local_cluster(workers, dashboard_address=None, memory_limit=0)
    return c, Client(c)


def batch_run(n, workers, shards, sweeps, folder):
    import occam.distributed as od
    c, client = cluster(workers)
    try:
        files = shard_files(client, n, shards, folder)
        before = client.run(current_rss)
        cpu0 = sum(client.run(time.process_time).values())
        stamps, huge, ticks = [], {}, []

        def see(i, b):
            stamps.append(time.perf_counter())
            ticks.append(cpu_ticks())
            if i == sweeps + 1:  # after the last timed sweep, every shard's memory still held
                huge.update(client.run(huge_pages))

        t0 = time.perf_counter()
        r = od.fit(GMM, files, client=client, seed=SEED, max_iter=sweeps + 1, tol=None,
                   callback=see)
        wall = time.perf_counter() - t0
        cpu = sum(client.run(time.process_time).values()) - cpu0
        peaks = client.run(peak_rss)
    finally:
        client.close()
        c.close()
    per = float(np.median(np.diff(stamps)))
    growth = [peaks[w] - before[w] for w in sorted(peaks)]
    stolen = shares(ticks)
    rec = {"part": "batch", "n": n, "workers": workers, "shards": shards,
           "timed_sweeps": len(stamps) - 1, "seconds_per_sweep": round(per, 4),
           "sweep_seconds": [round(float(t), 4) for t in np.diff(stamps)],
           "anon_huge_pages_per_worker": [int(huge.get(w, 0)) for w in sorted(peaks)],
           "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
           "steal_share_per_sweep": [round(a, 4) for a, _ in stolen],
           "idle_share_per_sweep": [round(b, 4) for _, b in stolen],
           "steal_share": round(float(np.median([a for a, _ in stolen])), 4) if stolen else 0.0,
           "wall_seconds": round(wall, 2), "worker_cpu_seconds": round(cpu, 2),
           "cpu_seconds_per_sweep": round(cpu / (sweeps + 1), 4),
           "bytes_per_sweep": int(r.bytes_per_sweep),
           "peak_rss_per_worker": [int(peaks[w]) for w in sorted(peaks)],
           "rss_growth_per_worker": [int(g) for g in growth],
           "bytes_per_row": round(max(growth) / (n / workers), 1),
           "bound": r.bound}
    out(rec)
    return rec


def chosen(n, shards):
    """The batch runs ``(rows, workers, shards)`` that RUNS chooses (default all five), in
    RUNS's order (a run named twice is run twice: ``RUNS=1,2,2,1`` for the spread and the
    order's effect)."""
    plan = {"1": (n, 1, shards), "2": (n, 2, shards), "1x4": (n, 1, 4 * shards),
            "2x4": (n, 2, 4 * shards), "q": (n // 4, 1, shards)}
    runs = os.environ.get("RUNS", ",".join(plan)).split(",")
    if not {"1", "2"} <= set(runs) or not set(runs) <= set(plan):
        sys.exit(f"RUNS={','.join(runs)}: a comma list of {', '.join(plan)} with 1 and 2")
    return [plan[r] for r in runs]


def prepare(n, shards, folder):
    """The shard files of the chosen batch runs (and of the DOUBLE_ON_TWO run) in ``folder``."""
    sets = sorted({(rows, s) for rows, _, s in chosen(n, shards)}, reverse=True)
    c, client = cluster(2)
    try:
        for rows, s in sets + ([(2 * n, 2 * shards)] if os.environ.get("DOUBLE_ON_TWO") else []):
            t0 = time.perf_counter()
            shard_files(client, rows, s, folder)
            print(f"{rows:.0e} rows in {s} shards: {time.perf_counter() - t0:.1f} s", flush=True)
    finally:
        client.close()
        c.close()


def fit_cost_model(runs):
    design = np.array([[1.0, r["n"] / r["workers"], r["shards"] / r["workers"], r["workers"]]
                       for r in runs])
    y = np.array([r["seconds_per_sweep"] for r in runs])
    # Non-negative least squares (every term is a cost), on relative errors (each run weighs
    # alike whatever its time).
    from scipy.optimize import nnls
    coef, _ = nnls(design / y[:, None], np.ones_like(y))
    resid = np.abs(design @ coef - y) / y
    model = {"part": "cost_model", "formula": "t = a + b*N/W + c*S/W + d*W",
             "a_seconds": coef[0], "b_seconds_per_row": coef[1],
             "c_seconds_per_shard_per_worker": coef[2], "d_seconds_per_worker_at_client": coef[3],
             "max_relative_residual": float(np.max(resid))}
    out(model)
    return model


def methods(n, shards, budget, folder):
    import occam.distributed as od
    c, client = cluster(2)
    finals = []
    try:
        files = shard_files(client, n, shards, folder)
        for method, kw in [("batch", {}), ("memoized", {}),
                           ("svi", dict(kappa=0.7, tau=1.0, bound_every=1))]:
            t0 = time.perf_counter()

            def see(i, bound, method=method, t0=t0):
                t = time.perf_counter() - t0
                out({"part": "methods", "method": method, "n": n, "seconds": round(t, 3),
                     "iteration": i, "bound": bound})
                return t < budget

            try:
                r = od.fit(GMM, files, client=client, seed=SEED, max_iter=100_000, tol=1e-8,
                           method=method, callback=see, **kw)
            except Exception as e:  # Interrupted at the budget carries its result
                r = getattr(e, "result", None)
                if r is None:
                    raise
            rec = {"part": "methods_final", "method": method, "n": n, "bound": r.bound,
                   "iterations": r.iterations, "converged": r.converged,
                   "seconds": round(time.perf_counter() - t0, 3),
                   "bytes_per_iteration": int(r.bytes_per_sweep)}
            out(rec)
            finals.append(rec)
    finally:
        client.close()
        c.close()
    return finals


SKLEARN_CHILD = """
import json, resource, sys, time
import numpy as np
from sklearn.mixture import BayesianGaussianMixture
path, iters = sys.argv[1], int(sys.argv[2])
x = np.load(path)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
t0, c0 = time.perf_counter(), time.process_time()
m = BayesianGaussianMixture(n_components=10, covariance_type="full", max_iter=iters, tol=0.0,
                            init_params="random", random_state=0).fit(x)
print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "n_iter": int(m.n_iter_), "lower_bound": float(m.lower_bound_),
                  "peak_growth": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base}))
"""


def child(args):
    done = subprocess.run([sys.executable, "-c", SKLEARN_CHILD, *map(str, args)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def available_memory():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def one_file(n, folder):
    path = os.path.join(folder, f"sk-{n}.npy")
    if not os.path.exists(path):
        save_rows(path, n, (c for s, m in enumerate(sizes(n, 8)) for c in chunks(m, SEED, s)))
    return path


def sklearn_part(n_max, folder):
    import occam.distributed as od
    probe = min(n_max, 100_000)
    small = child([one_file(probe, folder), 1])
    per_row = max(small["peak_growth"], 1) / probe
    room = available_memory() / 2
    n = 0
    for k in range(3, 12):
        for m in (1, 2, 5):
            v = m * 10 ** k
            if v <= n_max and v * per_row <= room:
                n = v
    path = one_file(n, folder)
    t1, t11 = child([path, 1]), child([path, 11])
    sk = {"part": "sklearn", "n": n, "bytes_per_row_probe": round(per_row, 1),
          "seconds_per_iteration": (t11["seconds"] - t1["seconds"]) / 10,
          "cpu_per_iteration": (t11["cpu"] - t1["cpu"]) / 10,
          "peak_growth_bytes": t11["peak_growth"], "lower_bound": t11["lower_bound"]}
    out(sk)
    x = np.load(path)
    parts = [{"x": p} for p in np.array_split(x, 8)]
    stamps, c0 = [], time.process_time()
    od.fit(GMM, parts, seed=SEED, max_iter=6, tol=None,
           callback=lambda i, b: stamps.append(time.perf_counter()))
    oc = {"part": "occam_same_n", "n": n, "seconds_per_sweep": float(np.median(np.diff(stamps))),
          "cpu_per_sweep": (time.process_time() - c0) / 6}
    out(oc)
    return sk, oc


def project(model, bytes_per_sweep, workers, nodes=100, rows=10**10, rows_per_shard=10**7,
            bandwidth=1.25e9, latency=1e-3, reductions=3):
    """Time per sweep on ``nodes`` workers (one per node) for ``rows`` rows in shards of
    ``rows_per_shard``: the fitted compute terms, and the network: per sweep each worker sends
    its shards' summed messages (as partials) and receives the sums, ``bytes_per_sweep / (2 ·
    workers)`` bytes each way per worker as measured, in ``reductions`` round trips."""
    s = rows // rows_per_shard
    g = bytes_per_sweep / (2 * workers)  # bytes of one worker's messages (one way) per sweep
    compute = (model["a_seconds"] + model["b_seconds_per_row"] * rows / nodes
               + model["c_seconds_per_shard_per_worker"] * s / nodes
               + model["d_seconds_per_worker_at_client"] * nodes)
    network = 2 * nodes * g / bandwidth + reductions * 2 * latency
    rec = {"part": "projection", "nodes": nodes, "rows": rows, "shards": s,
           "bytes_per_worker_message": g, "bytes_per_sweep": 2 * nodes * g,
           "seconds_compute": compute, "seconds_network": network,
           "seconds_per_sweep": compute + network,
           "assumed": f"1 worker per node, {bandwidth / 1e9:.2f} GB/s to the client, "
                      f"{latency * 1e3:.0f} ms per message round, {reductions} reductions/sweep"}
    out(rec)
    return rec


def table(batch, model, meth, sk, oc, proj):
    rows = ["| run | N | W | S | s/sweep | CPU s/sweep | steal | bytes/sweep | "
            "peak RSS/worker (MB) | RSS growth/row (B) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in batch:
        rows.append(f"| batch | {r['n']:.0e} | {r['workers']} | {r['shards']} | "
                    f"{r['seconds_per_sweep']:.3f} | {r['cpu_seconds_per_sweep']:.3f} | "
                    f"{r.get('steal_share', 0.0):.1%} | {r['bytes_per_sweep']} | "
                    f"{'/'.join(str(p >> 20) for p in r['peak_rss_per_worker'])} | "
                    f"{r['bytes_per_row']} |")
    same = [r for r in batch if r["n"] == batch[0]["n"] and r["shards"] == batch[0]["shards"]]
    ones = [r for r in same if r["workers"] == 1]
    twos = [r for r in same if r["workers"] == 2]
    one = ones[0]
    rows.append("")
    # The k-th one-worker run against the k-th two-worker run (RUNS=1,2,2,1: two pairs).
    for k, (a, b) in enumerate(zip(ones, twos)):
        rows.append(f"1 -> 2 workers throughput{f' (pair {k + 1})' if len(ones) > 1 else ''}: "
                    f"{a['seconds_per_sweep'] / b['seconds_per_sweep']:.3f} (issue: >= 1.8)")
    for big in (r for r in batch if r["n"] == 2 * one["n"] and r["workers"] == 2):
        rate = (big["n"] / big["seconds_per_sweep"]) / (one["n"] / one["seconds_per_sweep"])
        rows.append(f"1 -> 2 workers throughput at a fixed size per worker ({one['n']:.0e} rows "
                    f"on 1, {big['n']:.0e} on 2): {rate:.3f}")
    if model:
        rows.append(f"cost model {model['formula']}: a = {model['a_seconds']:.3g} s, "
                    f"b = {model['b_seconds_per_row']:.3g} s/row, "
                    f"c = {model['c_seconds_per_shard_per_worker']:.3g} s/shard, "
                    f"d = {model['d_seconds_per_worker_at_client']:.3g} s/worker (client); "
                    f"max residual {model['max_relative_residual']:.0%}")
    for m in meth:
        rows.append(f"{m['method']}: bound {m['bound']:.6f} after {m['iterations']} in "
                    f"{m['seconds']} s (converged {m['converged']}), "
                    f"{m['bytes_per_iteration']} bytes/iteration")
    if sk:
        rows.append(f"sklearn BayesianGaussianMixture at N = {sk['n']:.0e}: "
                    f"{sk['seconds_per_iteration']:.3f} s/iteration "
                    f"({sk['cpu_per_iteration']:.3f} CPU s), peak growth "
                    f"{sk['peak_growth_bytes'] >> 20} MB; Occam in one process, same data: "
                    f"{oc['seconds_per_sweep']:.3f} s/sweep ({oc['cpu_per_sweep']:.3f} CPU s)")
    if proj:
        rows.append(f"projection, {proj['nodes']} nodes, {proj['rows']:.0e} rows, "
                    f"{proj['shards']} shards: {proj['seconds_per_sweep']:.2f} s/sweep "
                    f"(compute {proj['seconds_compute']:.2f}, network "
                    f"{proj['seconds_network']:.3f}; {proj['assumed']})")
    return "\n".join(rows)


def main():
    args = [a for a in sys.argv[1:] if a != "--prepare"]
    n = int(float(args[0])) if args else 1_000_000
    shards = int(args[1]) if len(args) > 1 else 8
    sweeps = int(os.environ.get("SWEEPS", "4"))
    budget = float(os.environ.get("METHOD_SECONDS", "120"))
    skip = set(filter(None, os.environ.get("SKIP", "").split(",")))
    started = datetime.datetime.now(datetime.timezone.utc)
    if "--prepare" in sys.argv:
        if not os.environ.get("SHARD_DIR"):
            sys.exit("--prepare writes into SHARD_DIR: set it")
        prepare(n, shards, os.environ["SHARD_DIR"])
        return
    # Preflight: the W = 1 run holds every row in one worker (and W = 2 the same rows over two),
    # at the bytes per row measured at N = 10⁶ (bench/README.md); refuse a size that does not fit.
    per_row = float(os.environ.get("BYTES_PER_ROW", str(BYTES_PER_ROW)))
    room = 0.8 * available_memory()
    held = n * per_row * (2 if os.environ.get("DOUBLE_ON_TWO") else 1)
    if held > room and not os.environ.get("FORCE"):
        print(f"N = {n:.0e} needs about {held / 2**30:.1f} GiB in the workers "
              f"({per_row:.0f} bytes per row) and {room / 2**30:.1f} GiB is available (80%): "
              f"the largest N that fits is about {n * room / held:.2e}; FORCE=1 runs anyway",
              file=sys.stderr)
        sys.exit(2)
    import occam
    out({"part": "setup", "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
         "occam": os.path.dirname(occam.__file__), "sweeps": sweeps, "method_seconds": budget,
         "load": os.getloadavg(), "started": started.isoformat(),
         "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
         "dask_settings": "default" if os.environ.get("DASK_DEFAULT") == "1"
         else "occam.distributed.cluster_config()"})
    keep = os.environ.get("SHARD_DIR")
    folder_of = (contextlib.nullcontext(keep) if keep
                 else tempfile.TemporaryDirectory(dir=os.environ.get("SCRATCH")))
    with folder_of as folder:
        batch = [batch_run(rows, w, s, sweeps, folder) for rows, w, s in chosen(n, shards)]
        distinct = {(r["n"], r["workers"], r["shards"]) for r in batch}
        model = fit_cost_model(batch) if len(distinct) >= 4 else None
        if os.environ.get("DOUBLE_ON_TWO"):
            # 2N rows on 2 workers (each holds what the 1-worker run held): the size that does
            # not fit one worker, and the 1 -> 2 worker throughput at a fixed size per worker.
            batch.append(batch_run(2 * n, 2, 2 * shards, sweeps, folder))
        meth = [] if "methods" in skip else methods(n // 10, shards, budget, folder)
        sk_max = int(float(os.environ.get("SKLEARN_MAX", str(n))))
        sk, oc = (None, None) if "sklearn" in skip else sklearn_part(min(n, sk_max), folder)
    proj = model and project(model, batch[1]["bytes_per_sweep"], batch[1]["workers"])
    text = table(batch, model, meth, sk, oc, proj)
    print(text)
    stamp = started.strftime("%Y-%m-%d_%H%Mutc")
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "results", f"scale_{n:.0e}_{stamp}.txt".replace("+", ""))
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(f"# bench/stream/scale.py {n} {shards}, {started.isoformat()}, load at start "
                f"{os.getloadavg()}\n")
        f.write("\n".join(LINES) + "\n\n" + text + "\n")
    os.replace(tmp, path)
    print(f"written: {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
