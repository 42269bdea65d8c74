#!/usr/bin/env python3
"""Occam against BayesPy on BayesPy's regression and PCA example models, in the same run: writes the
data (seeded), runs each peer as a child process (peak RSS from GNU time), prints one JSON line per run
and a table with BayesPy/Occam time ratios, set-up times, peak RSS and the data's size.

Cases (--cases, comma-separated):
    reg100k   regression N = 100,000, C = 20
    reg1m     regression N = 1,000,000, C = 20 (Occam only unless --peer-large: the memory test, < 1 GB)
    pca       PCA N = 2,000, D = 100, latent Q = 40
    pca_mean  the same with a mean per row (BPCA, examples/models/bpca.occam's y ~ N(W x + mu, 1/tau))
    pca100k   PCA N = 100,000, D = 100, Q = 40 from random draws (Occam only unless --peer-large:
              peak memory, O(N Q + D Q^2) wanted)
    scale     Occam alone: regression at N = 10^3 .. 10^6 and PCA at N = 10^3 .. 10^5 (cost and peak
              memory against N; PCA from random draws, `--init random`, not from x0)
Usage: compare_linear.py [--cases reg100k,pca] [--iters 20] [--repeat R] [--occam CMD] [--threads T]
--repeat R runs every case R times, BayesPy and Occam alternating (peer, Occam, peer, Occam, ...) so
that the load of a shared machine falls on both; the table has one row per run and each repeat's
ratio.
The Occam command defaults to target/release/examples/bench_linear (built by `cargo build --release
-p occam-core --example bench_linear`). The peer uses bench/peers/.venv (setup.sh), or --python.
Set-up is reported apart from the iterations (graph building with the data, compiling, initialising).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write_regression(d, n, c, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c))
    b = rng.standard_normal(c)
    y = x @ b + 0.5 * rng.standard_normal(n)
    x.tofile(f"{d}/x.f64")
    y.tofile(f"{d}/y.f64")
    return x.nbytes + y.nbytes


def write_pca(d, n, dd, q, seed, q_true=10):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((dd, q_true))
    x = rng.standard_normal((q_true, n))
    y = w @ x + 0.3 * rng.standard_normal((dd, n))
    x0 = rng.standard_normal((n, q))
    y.tofile(f"{d}/y.f64")
    x0.tofile(f"{d}/x0.f64")
    return y.nbytes


def run(cmd, env=None):
    """Runs cmd under GNU time; returns (parsed JSON line, peak RSS in MB, wall seconds). (The child's
    own ru_maxrss from wait4 would include this script's RSS at fork time: Linux keeps the high-water
    mark across exec. `time` forks the command from its own small process.)"""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS_KB=%M"] + cmd, capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    kb = [l for l in p.stderr.splitlines() if l.startswith("MAXRSS_KB=")][-1]
    return json.loads(line), int(kb.split("=")[1]) / 1024.0, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="reg100k,pca")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--occam", default=f"{ROOT}/target/release/examples/bench_linear")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--peer-large", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--python", default=f"{HERE}/.venv/bin/python")
    a = ap.parse_args()
    py = a.python
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("PEER_THREADS", "1"),
               OPENBLAS_NUM_THREADS=os.environ.get("PEER_THREADS", "1"))
    threads = ["--threads", str(a.threads)] if a.threads else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        def case(label, model, dims, data_bytes, peer=True, occam_only=()):
            args = ["--model", model, "--dir", tmp, "--iters", str(a.iters)] + dims
            for r in range(a.repeat):
                res = {}
                if peer:
                    res["bayespy"] = run([py, f"{HERE}/bayespy_linear.py"] + args, env)
                res["occam"] = run([a.occam] + args + list(occam_only) + threads)
                for name, (j, rss, _) in res.items():
                    j.update({"peak_rss_mb": round(rss, 1), "data_mb": round(data_bytes / 2**20, 1),
                              "repeat": r, "load": round(os.getloadavg()[0], 1)})
                    print(json.dumps(j), flush=True)
                rows.append((label if a.repeat == 1 else f"{label} #{r + 1}", res, data_bytes))

        for c in a.cases.split(","):
            if c == "reg100k":
                b = write_regression(tmp, 100_000, 20, 1)
                case("regression N=1e5 C=20", "regression", ["--n", "100000", "--c", "20"], b)
            elif c == "reg1m":
                b = write_regression(tmp, 1_000_000, 20, 2)
                case("regression N=1e6 C=20", "regression", ["--n", "1000000", "--c", "20"], b,
                     peer=a.peer_large)
            elif c == "pca":
                b = write_pca(tmp, 2000, 100, 40, 3)
                case("PCA N=2000 D=100 Q=40", "pca", ["--n", "2000", "--d", "100", "--q", "40"], b)
            elif c == "pca_mean":
                b = write_pca(tmp, 2000, 100, 40, 3)
                case("BPCA+mean N=2000 D=100 Q=40", "pca_mean",
                     ["--n", "2000", "--d", "100", "--q", "40"], b)
            elif c == "pca100k":
                b = write_pca(tmp, 100_000, 100, 40, 6)
                case("PCA N=1e5 D=100 Q=40", "pca", ["--n", "100000", "--d", "100", "--q", "40"], b,
                     peer=a.peer_large, occam_only=("--init", "random"))
            elif c == "scale":
                for n in [1_000, 10_000, 100_000, 1_000_000]:
                    b = write_regression(tmp, n, 20, 4)
                    case(f"regression N={n}", "regression", ["--n", str(n), "--c", "20"], b, peer=False)
                for n in [1_000, 10_000, 100_000]:
                    b = write_pca(tmp, n, 100, 40, 5)
                    case(f"PCA N={n}", "pca", ["--n", str(n), "--d", "100", "--q", "40"], b, peer=False,
                         occam_only=("--init", "random"))
            else:
                sys.exit(f"unknown case {c}")
    print()
    print(f"{'case':28} {'peer':8} {'ms/iter':>10} {'median':>10} {'set-up ms':>10} {'peak MB':>9} "
          f"{'data MB':>8} {'bound':>18} {'peer/occam':>10}")
    for label, res, data_bytes in rows:
        occ = res["occam"][0]
        for name, (j, rss, _) in res.items():
            ratio = ""
            if name == "bayespy":
                ratio = f"{j['ms_per_iter_median'] / occ['ms_per_iter_median']:.1f}x"
            print(f"{label:28} {name:8} {j['ms_per_iter']:10.3f} {j['ms_per_iter_median']:10.3f} "
                  f"{j['setup_ms']:10.1f} {rss:9.1f} {data_bytes / 2**20:8.1f} {j['bound']:18.6f} {ratio:>10}")


if __name__ == "__main__":
    main()
