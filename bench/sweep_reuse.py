#!/usr/bin/env python3
"""The plate sweep of `occam compare` (issue 28: "comparing K = 1..8 costs less than 8 separate
processes"), in wall and CPU time.

One `compare MODEL --plate K=1..8` process against eight `compare` processes, one per K (the
same model file with `plate K = k`), with the same methods, seed and restarts, alternated over
ROUNDS rounds in one run; CPU time is the children's user + system time (getrusage). With OLD=BIN
a second CLI (e.g. the tree before a change) runs the sweep too, alternated with the first, and
the bounds of the two are listed per K.

Usage:  bench/sweep_reuse.py OCCAM [OUTFILE]
  OLD=BIN        another CLI whose sweep is timed beside OCCAM's
  ROUNDS=N       rounds (default 5)
  RESTARTS=R     restarts per fit (default 1)
  METHODS=LIST   --method (default vb)
  MODEL=FILE     a model declaring `plate K = <size>` (default examples/galaxies/mixture.occam);
                 the CSV files beside it are its data
  SIZES=A..B     the sweep (default 1..8)
"""
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
occam = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else None
old = os.environ.get("OLD")
rounds = int(os.environ.get("ROUNDS", "5"))
restarts = os.environ.get("RESTARTS", "1")
methods = os.environ.get("METHODS", "vb")
model = os.environ.get("MODEL", os.path.join(root, "examples/galaxies/mixture.occam"))
lo, hi = (int(x) for x in os.environ.get("SIZES", "1..8").split(".."))
sizes = list(range(lo, hi + 1))

work = tempfile.mkdtemp()
src = open(model).read()
for f in os.listdir(os.path.dirname(os.path.abspath(model))):
    if f.endswith(".csv"):
        shutil.copy(os.path.join(os.path.dirname(os.path.abspath(model)), f), work)
for k in sizes:
    with open(f"{work}/K{k}.occam", "w") as fh:
        fh.write(re.sub(r"(?m)^plate K = \d+", f"plate K = {k}", src))
shutil.copy(model, f"{work}/model.occam")


def run(args):
    """Runs a command: (wall s, cpu s, stdout)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, p.stdout


common = ["--restarts", restarts, "--method", methods, "--json"]


def sweep(binary):
    w, c, o = run([binary, "compare", f"{work}/model.occam", "--plate", f"K={lo}..{hi}"] + common)
    return w, c, [m for m in json.loads(o)["models"]]


def vb_of(row):
    if "bound" in row:
        return row["bound"]
    for e in row.get("evidence", []):
        if e.get("method") == "vb":
            return e.get("log_evidence")
    return None


lines = []


def say(s):
    print(s, flush=True)
    lines.append(s)


head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                      text=True).stdout.strip()
say(f"# sweep_reuse {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {head} "
    f"model={os.path.relpath(model, root)} sizes={lo}..{hi} methods={methods} "
    f"restarts={restarts} rounds={rounds} occam={occam} old={old}")
totals = {"sweep": [], "separate": [], "old sweep": []}
for r in range(rounds):
    order = ["sweep", "separate", "old sweep"] if r % 2 == 0 else ["old sweep", "separate", "sweep"]
    for what in order:
        if what == "sweep":
            w, c, rows = sweep(occam)
            new_rows = rows
        elif what == "old sweep":
            if not old:
                continue
            w, c, rows = sweep(old)
            old_rows = rows
        else:
            w = c = 0.0
            one = []
            for k in sizes:
                dw, dc, o = run([occam, "compare", f"{work}/K{k}.occam"] + common)
                w += dw
                c += dc
                one.append(json.loads(o)["models"][0])
            sep_rows = one
        totals[what].append((w, c))
        say(f"round {r + 1}: {what:9s} wall {w:7.3f} s  cpu {c:7.3f} s")
say("vb bound per K (sweep | separate" + (" | old sweep" if old else "") + "):")
for i, k in enumerate(sizes):
    cols = [vb_of(new_rows[i]), vb_of(sep_rows[i])] + ([vb_of(old_rows[i])] if old else [])
    say(f"  K={k}: " + " | ".join(f"{v:.6f}" for v in cols))
for what, ts in totals.items():
    if ts:
        ws = sorted(t[0] for t in ts)
        cs = sorted(t[1] for t in ts)
        say(f"median {what:9s}: wall {ws[len(ws) // 2]:.3f} s, cpu {cs[len(cs) // 2]:.3f} s")
if totals["sweep"] and totals["separate"]:
    rw = [s[0] / w[0] for s, w in zip(totals["separate"], totals["sweep"])]
    rc = [s[1] / w[1] for s, w in zip(totals["separate"], totals["sweep"]) if w[1] > 0]
    say(f"separate / sweep per round: wall {' '.join(f'{x:.2f}' for x in rw)}; "
        f"cpu {' '.join(f'{x:.2f}' for x in rc)}")
if old and totals["old sweep"]:
    rw = [n[0] / o[0] for n, o in zip(totals["sweep"], totals["old sweep"])]
    rc = [n[1] / o[1] for n, o in zip(totals["sweep"], totals["old sweep"]) if o[1] > 0]
    say(f"sweep new / old per round: wall {' '.join(f'{x:.2f}' for x in rw)}; "
        f"cpu {' '.join(f'{x:.2f}' for x in rc)}")
if out:
    with open(out, "a") as fh:
        fh.write("\n".join(lines) + "\n")
shutil.rmtree(work)
