#!/usr/bin/env python3
"""Occam's Markov-chain q-block against the peers, in the same run: writes the data (seeded), runs each
side as a child process (peak RSS from GNU time), prints one JSON line per run and a table with the
peer/Occam time-per-iteration ratio.

Cases (--cases, comma-separated):
    gauss10k  HMM T = 10,000, K = 3, 2-D Gaussian emissions (BayesPy's HMM example at scale) vs BayesPy
    lds1k     linear state-space model T = 1,000, latent D = 10, observed M = 30 (BayesPy's example
              model) vs BayesPy
    cat100k   HMM T = 100,000, K = 3, categorical emissions over 4 symbols vs hmmlearn
              VariationalCategoricalHMM
    scale     Occam alone: the gauss model at T = 10^3 .. 10^6 (cost against T), and 1,000 sequences
              of length 100 on 1 and on all threads
Usage: compare_chains.py [--cases gauss10k,lds1k,cat100k] [--iters 10] [--occam CMD]
The Occam command defaults to target/release/examples/bench_chain (`cargo build --release -p occam-core
--example bench_chain`). The peers use bench/peers/.venv (setup.sh), or the Python named by $PEER_PYTHON.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from compare_linear import run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MU = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 0.0]])


def simulate(t, k, seed):
    """A sticky K-state chain (stay with probability 0.9)."""
    rng = np.random.default_rng(seed)
    z = np.empty(t, dtype=np.int64)
    z[0] = 0
    u = rng.random(t)
    jump = rng.integers(1, k, size=t)
    for i in range(1, t):
        z[i] = z[i - 1] if u[i] < 0.9 else (z[i - 1] + jump[i]) % k
    return z, rng


def write_gauss(d, t, seed):
    z, rng = simulate(t, 3, seed)
    y = MU[z] + 2.0 * rng.standard_normal((t, 2))
    y.tofile(f"{d}/y.f64")
    (MU + rng.standard_normal(MU.shape)).tofile(f"{d}/mu0.f64")
    return y.nbytes


def write_cat(d, t, seed, m=4):
    z, rng = simulate(t, 3, seed)
    b = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.4, 0.4]])
    y = np.array([rng.choice(m, p=b[s]) for s in z], dtype=np.float64)
    y.tofile(f"{d}/y.f64")
    rng.dirichlet(np.ones(m), size=3).tofile(f"{d}/b0.f64")
    return y.nbytes


def write_lds(d, t, dim, m, seed):
    rng = np.random.default_rng(seed)
    th = 0.2
    a = np.identity(dim)
    a[:2, :2] = 0.99 * np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    c = rng.standard_normal((m, dim))
    x = np.zeros((t, dim))
    x[0] = rng.standard_normal(dim)
    for i in range(1, t):
        x[i] = a @ x[i - 1] + 0.1 * rng.standard_normal(dim)
    y = x @ c.T + 0.5 * rng.standard_normal((t, m))
    y.tofile(f"{d}/y.f64")
    rng.standard_normal((m, dim)).tofile(f"{d}/c0.f64")
    return y.nbytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="gauss10k,lds1k,cat100k")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--occam", default=f"{ROOT}/target/release/examples/bench_chain")
    a = ap.parse_args()
    py = os.environ.get("PEER_PYTHON", f"{HERE}/.venv/bin/python")
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("PEER_THREADS", "1"),
               OPENBLAS_NUM_THREADS=os.environ.get("PEER_THREADS", "1"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        def case(label, model, dims, data_bytes, peer=True, extra=()):
            args = ["--model", model, "--dir", tmp, "--iters", str(a.iters)] + dims
            res = {}
            if peer:
                res["peer"] = run([py, f"{HERE}/peer_hmm.py"] + args, env)
            res["occam"] = run([a.occam] + args + list(extra))
            for j, rss, _ in res.values():
                j.update({"peak_rss_mb": round(rss, 1), "data_mb": round(data_bytes / 2**20, 1)})
                j.pop("trace", None)
                print(json.dumps(j), flush=True)
            rows.append((label, res))

        for c in a.cases.split(","):
            if c == "gauss10k":
                b = write_gauss(tmp, 10_000, 1)
                case("HMM T=1e4 K=3 Gaussian", "gauss", ["--t", "10000", "--k", "3", "--d", "2"], b)
            elif c == "lds1k":
                b = write_lds(tmp, 1000, 10, 30, 5)
                case("LDS T=1e3 D=10 M=30", "lds", ["--t", "1000", "--k", "10", "--m", "30"], b)
            elif c == "cat100k":
                b = write_cat(tmp, 100_000, 2)
                case("HMM T=1e5 K=3 categorical", "cat", ["--t", "100000", "--k", "3", "--m", "4"], b)
            elif c == "scale":
                for t in [1_000, 10_000, 100_000, 1_000_000]:
                    b = write_gauss(tmp, t, 3)
                    case(f"HMM T={t}", "gauss", ["--t", str(t), "--k", "3", "--d", "2"], b, peer=False)
                b = write_gauss(tmp, 100_000, 4)
                for threads in ["1", "2"]:
                    case(f"1000 seqs x 100, {threads} thr", "gauss",
                         ["--t", "100000", "--k", "3", "--d", "2", "--seqs", "1000"], b, peer=False,
                         extra=["--threads", threads])
            else:
                sys.exit(f"unknown case {c}")
    print()
    print(f"{'case':30} {'side':9} {'ms/iter':>10} {'median':>10} {'set-up ms':>10} {'peak MB':>9} "
          f"{'bound':>18} {'peer/occam':>10}")
    for label, res in rows:
        occ = res["occam"][0]
        for name, (j, rss, _) in res.items():
            ratio = ""
            if name == "peer":
                ratio = f"{j['ms_per_iter_median'] / occ['ms_per_iter_median']:.1f}x"
            print(f"{label:30} {j['peer']:9} {j['ms_per_iter']:10.3f} {j['ms_per_iter_median']:10.3f} "
                  f"{j['setup_ms']:10.1f} {rss:9.1f} {j['bound']:18.6f} {ratio:>10}")


if __name__ == "__main__":
    main()
