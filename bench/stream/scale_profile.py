"""Where the second worker's time goes (issue 30's 1 → 2 worker efficiency): weak scaling of the
batch sweep of ``scale.py``'s mixture at a size that fits easily, with the time of every process
and thread of the cluster accounted for.

Usage: python bench/stream/scale_profile.py [ROWS_PER_WORKER] [SHARDS_PER_WORKER]
  (default 7e6 rows in 4 shards per worker: ≈ 1.3 GB per worker). env SWEEPS (timed sweeps,
  default 8), SHARD_DIR (the shard files, kept; default a temporary folder), PARTS (comma list of
  ``dask``, ``plain``; default both), DASK_TUNED (``0``: the Dask runs on a LocalCluster with
  Dask's default settings, as ``scale.py``'s; ``1``: on ``occam.distributed.local_cluster``, with
  ``cluster_config()``; ``both``, the default: each W with each).

1. **Dask** (``dask``): a LocalCluster of W = 1 and 2 workers × 1 thread (as ``scale.py``:
   ``RAYON_NUM_THREADS=1``), W · ROWS_PER_WORKER rows, the same shard size. Around the timed
   sweeps it reads from /proc, for every process of the cluster (the client, which also runs the
   scheduler; the nannies; the workers) and every thread of each, the CPU time
   (``schedstat``: ns on a CPU) and the time runnable but waiting for a CPU (run-queue delay),
   and each worker's minor page faults. Inside each worker, the occam actor's methods are timed
   (wall and thread CPU) around the engine call: the worker's own sweep.
2. **Plain processes** (``plain``): no Dask; one process sweeping one worker's shards
   (``occam.distributed.fit`` without a client), alone, then two such processes at once, each
   on its own shards: hardware contention (memory traffic) without Dask's processes.
3. **Paired with the machine's own factor** (``paired``, not in the default; env ROUNDS, default
   8): ROUNDS times, ``cpu_pair.py``'s probe (a cache-resident arithmetic loop in one process, then
   in two at once: what the host gives two busy processes at that moment, no Occam code in it)
   followed by the plain 1 → 2 pair. Each round records both factors (the engine's: two processes'
   rows per second over one's), so the engine's 1 → 2 ratio is read against the machine's.

Prints JSON lines and a summary; writes both to
bench/results/scale_profile_<date>_<time>utc.txt.
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import GMM, SEED, shard_files  # noqa: E402
from cpu_pair import phase  # noqa: E402

LINES = []


def out(record):
    text = json.dumps(record)
    LINES.append(text)
    print(text, flush=True)


def threads_of(pid):
    """``{tid: (ns on a CPU, ns runnable waiting, the kernel's name)}`` of every thread of
    ``pid``."""
    res = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return res
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                run, wait, _ = map(int, f.read().split())
            res[int(t)] = (run, wait, comm(pid, t))
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return res


def comm(pid, tid):
    """A thread's name as the kernel knows it (rayon's and other native threads)."""
    try:
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            return "native:" + f.read().strip()
    except FileNotFoundError:
        return "gone"


def minflt(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[7]), int(fields[9])  # minflt, majflt


def snapshot(pids):
    return {p: (threads_of(p), minflt(p)) for p in pids}


def worker_info():
    """On a worker: its pid, its parent's (the nanny) and its threads' names by native id."""
    return os.getpid(), os.getppid(), {t.native_id: t.name for t in threading.enumerate()}


def install_timers():
    """On a worker: times the occam actor's methods (wall and thread CPU, the engine calls) in
    ``_occam_timers``."""
    import occam._shards as sh
    import builtins
    timers = {}
    builtins._occam_timers = timers
    for name in ("each", "same", "in_turn", "reduce", "bound"):
        f = getattr(sh._Group, name)
        if getattr(f, "_timed", False):
            continue

        def timed(self, *a, _f=f, _name=name):
            w0, c0 = time.perf_counter(), time.thread_time()
            try:
                return _f(self, *a)
            finally:
                t = timers.setdefault(_name, [0.0, 0.0, 0, None])
                t[0] += time.perf_counter() - w0
                t[1] += time.thread_time() - c0
                t[2] += 1
                t[3] = threading.get_native_id()
        timed._timed = True
        setattr(sh._Group, name, timed)
    return True


def read_timers(reset=False):
    import builtins
    t = getattr(builtins, "_occam_timers", {})
    copy = {k: list(v) for k, v in t.items()}
    if reset:
        t.clear()
    return copy


def cluster(workers, tuned):
    """As ``scale.py``'s cluster; ``tuned``: made by ``occam.distributed.local_cluster`` (its
    Dask settings, ``cluster_config()``)."""
    from dask.distributed import Client, LocalCluster
    kw = dict(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
              memory_limit=0, env={"RAYON_NUM_THREADS": "1"})
    if tuned:
        import occam.distributed as od
        c = od.local_cluster(workers, dashboard_address=None, memory_limit=0)
    else:
        c = LocalCluster(**kw)
    return c, Client(c)


def dask_run(workers, files, sweeps, tuned):
    import occam.distributed as od
    c, client = cluster(workers, tuned)
    try:
        info = client.run(worker_info)
        client.run(install_timers)
        wpids = {info[w][0]: w for w in info}
        nannies = {info[w][1] for w in info}
        me = os.getpid()
        # LocalCluster runs the nannies in this process (its event loop thread), beside the
        # scheduler and the client; each nanny starts its worker as a process.
        pids = [me, *sorted(nannies - {me}), *sorted(wpids)]
        role = {p: "nanny" for p in nannies}
        role[me] = "client+scheduler+nannies" if me in nannies else "client+scheduler"
        role.update({p: "worker" for p in wpids})
        stamps, snaps = [], []

        def see(i, b):
            stamps.append(time.perf_counter())
            if i == 1:  # the start and the first sweep are not timed
                client.run(read_timers, True)
                snaps.append(snapshot(pids))
                stamps.append(time.perf_counter())
            if i == sweeps + 1:
                snaps.append(snapshot(pids))

        od.fit(GMM, files, client=client, seed=SEED, max_iter=sweeps + 1, tol=None, callback=see)
        timers = client.run(read_timers)
        info = client.run(worker_info)
        names = {info[w][0]: info[w][2] for w in info}
        names[me] = {t.native_id: t.name for t in threading.enumerate()}
        load = os.getloadavg()
    finally:
        client.close()
        c.close()
    # stamps: [end 1, after the snapshot, end 2, ..., end sweeps+1]
    ends = stamps[1:]
    per = np.diff(ends)
    wall = ends[-1] - ends[0]
    a, b = snaps
    procs = []
    for p in pids:
        (t0, f0), (t1, f1) = a[p], b[p]
        threads = []
        for tid, (r1, q1, c1) in t1.items():
            r0, q0, _ = t0.get(tid, (0, 0, ""))
            if r1 - r0 > 0 or q1 - q0 > 0:
                threads.append({"tid": tid, "name": names.get(p, {}).get(tid) or c1,
                                "cpu_s_per_sweep": (r1 - r0) / 1e9 / sweeps,
                                "runqueue_wait_s_per_sweep": (q1 - q0) / 1e9 / sweeps})
        threads.sort(key=lambda t: -t["cpu_s_per_sweep"])
        rec = {"pid": p, "role": role[p],
               "cpu_s_per_sweep": sum(t["cpu_s_per_sweep"] for t in threads),
               "runqueue_wait_s_per_sweep": sum(t["runqueue_wait_s_per_sweep"] for t in threads),
               "minflt_per_sweep": (f1[0] - f0[0]) / sweeps,
               "majflt_per_sweep": (f1[1] - f0[1]) / sweeps, "threads": threads}
        if role[p] == "worker":
            t = timers[wpids[p]]
            rec["actor"] = {k: {"wall_s_per_sweep": v[0] / sweeps, "cpu_s_per_sweep": v[1] / sweeps,
                                "calls_per_sweep": v[2] / sweeps, "tid": v[3]}
                            for k, v in t.items()}
            rec["actor_wall_s_per_sweep"] = sum(v[0] for v in t.values()) / sweeps
            rec["actor_cpu_s_per_sweep"] = sum(v[1] for v in t.values()) / sweeps
        procs.append(rec)
    rows = sum(int(np.load(f["x"], mmap_mode="r").shape[0]) for f in files)
    rec = {"part": "dask", "workers": workers, "rows": rows, "shards": len(files),
           "tuned": bool(tuned), "timed_sweeps": sweeps,
           "wall_s_per_sweep_mean": wall / sweeps, "wall_s_per_sweep_median": float(np.median(per)),
           "ns_per_row_per_worker": wall / sweeps / (rows / workers) * 1e9,
           "load_after": load, "processes": procs}
    out(rec)
    return rec


PLAIN = """
import json, os, resource, sys, time
import numpy as np
sys.path.insert(0, {here!r})
import occam.distributed as od
from scale import GMM, SEED
files = json.loads(sys.argv[1]); sweeps = int(sys.argv[2])
marks = []
def see(i, b):
    r = resource.getrusage(resource.RUSAGE_SELF)
    marks.append((time.perf_counter(), time.process_time(), r.ru_minflt))
od.fit(GMM, [{{"x": f}} for f in files], seed=SEED, max_iter=sweeps + 1, tol=None, callback=see)
(w0, c0, f0), (w1, c1, f1) = marks[0], marks[-1]
print(json.dumps({{"wall_s_per_sweep": (w1 - w0) / sweeps, "cpu_s_per_sweep": (c1 - c0) / sweeps,
                   "minflt_per_sweep": (f1 - f0) / sweeps,
                   "median_s_per_sweep": float(np.median(np.diff([m[0] for m in marks])))}}))
"""


def plain(groups, sweeps):
    """One process per group of shard files, all at once; their per-sweep records."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = PLAIN.format(here=here)
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", code, json.dumps(g), str(sweeps)],
                              stdout=subprocess.PIPE, text=True, env=env) for g in groups]
    res = []
    for p in procs:
        text, _ = p.communicate()
        if p.returncode:
            sys.exit(f"plain process failed ({p.returncode})")
        res.append(json.loads(text.strip().splitlines()[-1]))
    rows = int(np.load(groups[0][0], mmap_mode="r").shape[0]) * len(groups[0])
    rec = {"part": "plain", "processes": len(groups), "rows_per_process": rows,
           "timed_sweeps": sweeps, "load_after": os.getloadavg(),
           "each": res}
    for r in rec["each"]:
        r["ns_per_row"] = r["wall_s_per_sweep"] / rows * 1e9
        r["cpu_ns_per_row"] = r["cpu_s_per_sweep"] / rows * 1e9
    out(rec)
    return rec


def paired(mine, sweeps, rounds, seconds=1.5):
    """ROUNDS of (the machine's 1 -> 2 factor, the engine's plain 1 -> 2 factor), back to back."""
    for r in range(rounds):
        one = phase(1, seconds)[0]
        two = sum(phase(2, seconds))
        p1 = plain([mine[0]], sweeps)["each"][0]["wall_s_per_sweep"]
        p2 = max(e["wall_s_per_sweep"] for e in plain(mine, sweeps)["each"])
        out({"part": "paired", "round": r, "time": time.strftime("%H:%M:%S", time.gmtime()),
             "machine_two_over_one": two / one, "engine_two_over_one": 2 * p1 / p2,
             "engine_s_per_sweep": [p1, p2], "load": os.getloadavg()})


def summary(recs):
    lines = []
    pairs = [r for r in LINES if '"part": "paired"' in r]
    if pairs:
        rows = [json.loads(x) for x in pairs]
        lines.append("round | time | machine 1 -> 2 | engine 1 -> 2 (plain processes) | engine / machine")
        lines.append("---|---|---|---|---")
        for x in rows:
            lines.append(f"{x['round']} | {x['time']} | {x['machine_two_over_one']:.3f} | "
                         f"{x['engine_two_over_one']:.3f} | "
                         f"{x['engine_two_over_one'] / x['machine_two_over_one']:.3f}")
        m = np.array([x["machine_two_over_one"] for x in rows])
        e = np.array([x["engine_two_over_one"] for x in rows])
        if len(rows) > 2:
            lines.append(f"correlation (machine, engine) over rounds: {np.corrcoef(m, e)[0, 1]:.3f}")
        lines.append(f"median machine {np.median(m):.3f}, median engine {np.median(e):.3f}, "
                     f"rounds with engine >= 1.8: {int((e >= 1.8).sum())} of {len(e)}, "
                     f"machine >= 1.8: {int((m >= 1.8).sum())}")
    for r in recs:
        if r["part"] == "dask":
            lines.append(f"dask W={r['workers']} ({'tuned' if r['tuned'] else 'default'} config): "
                         f"{r['wall_s_per_sweep_mean']:.3f} s/sweep, "
                         f"{r['ns_per_row_per_worker']:.1f} ns per row of each worker")
            for p in r["processes"]:
                s = (f"  {p['role']} {p['pid']}: CPU {p['cpu_s_per_sweep']:.3f} s/sweep, "
                     f"run-queue wait {p['runqueue_wait_s_per_sweep']:.3f}, "
                     f"minflt {p['minflt_per_sweep']:.0f}/sweep")
                if p["role"] == "worker":
                    s += (f"; actor (engine calls) wall {p['actor_wall_s_per_sweep']:.3f}, "
                          f"thread CPU {p['actor_cpu_s_per_sweep']:.3f}")
                lines.append(s)
                for t in p["threads"][:4]:
                    lines.append(f"    thread {t['tid']} {t['name'] or '?'}: CPU "
                                 f"{t['cpu_s_per_sweep']:.4f}, wait "
                                 f"{t['runqueue_wait_s_per_sweep']:.4f}")
        else:
            each = ", ".join(f"{e['wall_s_per_sweep']:.3f} s ({e['ns_per_row']:.1f} ns/row, CPU "
                             f"{e['cpu_s_per_sweep']:.3f}, minflt {e['minflt_per_sweep']:.0f})"
                             for e in r["each"])
            lines.append(f"plain x{r['processes']}: {each}")
    return "\n".join(lines)


def main():
    args = sys.argv[1:]
    per_worker = int(float(args[0])) if args else 7_000_000
    spw = int(args[1]) if len(args) > 1 else 4
    sweeps = int(os.environ.get("SWEEPS", "8"))
    parts = set(os.environ.get("PARTS", "dask,plain").split(","))
    configs = {"0": [False], "1": [True], "both": [False, True]}[os.environ.get("DASK_TUNED",
                                                                                "both")]
    started = datetime.datetime.now(datetime.timezone.utc)
    import occam
    out({"part": "setup", "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
         "occam": os.path.dirname(occam.__file__), "rows_per_worker": per_worker,
         "shards_per_worker": spw, "sweeps": sweeps, "load": os.getloadavg(),
         "started": started.isoformat()})
    keep = os.environ.get("SHARD_DIR")
    tmp = None if keep else tempfile.TemporaryDirectory()
    folder = keep or tmp.name
    recs = []
    try:
        from dask.distributed import Client, LocalCluster
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as c, \
                Client(c) as client:
            files = shard_files(client, 2 * per_worker, 2 * spw, folder)
        paths = [f["x"] for f in files]
        mine = [paths[0::2], paths[1::2]]  # worker i's shards in the 2-worker run
        if "dask" in parts:
            for t in configs:
                recs.append(dask_run(1, [{"x": p} for p in mine[0]], sweeps, t))
                recs.append(dask_run(2, files, sweeps, t))
        if "plain" in parts:
            recs.append(plain([mine[0]], sweeps))
            recs.append(plain(mine, sweeps))
        if "paired" in parts:
            paired(mine, sweeps, int(os.environ.get("ROUNDS", "8")))
    finally:
        if tmp is not None:
            tmp.cleanup()
    text = summary(recs)
    print(text)
    stamp = started.strftime("%Y-%m-%d_%H%Mutc")
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "results", f"scale_profile_{stamp}.txt")
    with open(f"{path}.tmp", "w") as f:
        f.write(f"# bench/stream/scale_profile.py {per_worker} {spw}, {started.isoformat()}\n")
        f.write("\n".join(LINES) + "\n\n" + text + "\n")
    os.replace(f"{path}.tmp", path)
    print(f"written: {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
