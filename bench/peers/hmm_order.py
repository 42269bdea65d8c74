"""The number of states of an HMM on the Old Faithful waiting times (examples/faithful_hmm), K = 1..6:
Occam's `compare --plate K=1..6 --method vb,vbsym,laplace,bic,is,ais` (every estimator that applies
to a chain, side by side) next to hmmlearn 0.3.3's GaussianHMM maximum likelihood with its bic()
and aic(), in the same run, and the time ratio. hmmlearn's bic = -2 ln L + p ln N and
aic = -2 ln L + 2p, so -bic/2 is BIC's approximation of ln p(D | K), on the scale of Occam's
estimates; Occam's own `bic` is ln p(D | θ̂) - (d/2) ln N at q's mean, with hmmlearn's d and N.

hmmlearn: covariance_type="diag" (one variance per state, as hmm.occam's tau[K]), n_iter 1000,
tol 1e-8, the best of --restarts random_state seeds by log likelihood.

Usage: bench/peers/.venv/bin/python bench/peers/hmm_order.py --occam target/release/occam
"""

import argparse
import json
import os
import subprocess
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "faithful_hmm")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--occam", default=os.path.join(ROOT, "target", "release", "occam"))
    ap.add_argument("--restarts", type=int, default=10)
    ap.add_argument("--kmax", type=int, default=6)
    ap.add_argument("--methods", default="vb,vbsym,laplace,bic,is,ais")
    ap.add_argument("--ais-moves", default="auto",
                    help="auto, hmc or gibbs (forward filtering, backward sampling of the paths)")
    a = ap.parse_args()
    from hmmlearn.hmm import GaussianHMM

    with open(os.path.join(EXAMPLE, "waiting.csv")) as f:
        next(f)
        x = np.array([float(v) for v in next(f).split(",")])[:, None]
    t0 = time.perf_counter()
    c0 = os.times()
    doc = json.loads(subprocess.run(
        [a.occam, "compare", os.path.join(EXAMPLE, "hmm.occam"), "--plate", f"K=1..{a.kmax}",
         "--restarts", str(a.restarts), "--method", a.methods, "--ais-moves", a.ais_moves,
         "--json"],
        check=True, capture_output=True, text=True).stdout)
    occam_s = time.perf_counter() - t0
    c1 = os.times()
    occam_cpu = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
    methods = a.methods.split(",")
    print(f"Old Faithful waiting times, N = {len(x)}; Occam {occam_s:.2f} s wall, {occam_cpu:.2f} s CPU "
          f"for K = 1..{a.kmax} ({a.methods}; --ais-moves {a.ais_moves})")

    def cell(e):
        if e.get("not_applicable"):
            return "n/a"
        v = f"{e['log_evidence']:.2f}"
        if e.get("se") is not None:
            v += f" ± {e['se']:.2f}"
        if "UNRELIABLE" in e.get("note", ""):
            v += " †"
        return v

    print("K | " + " | ".join(f"Occam {m}" for m in methods)
          + " | hmmlearn ln L | bic | aic | -bic/2 | hmmlearn s")
    hmm_s = 0.0
    hmm_cpu = 0.0
    for k, m in enumerate(doc["models"], start=1):
        by = {e["method"]: e for e in m["evidence"]}
        t1 = time.perf_counter()
        p1 = time.process_time()
        best = None
        for seed in range(a.restarts):
            h = GaussianHMM(n_components=k, covariance_type="diag", n_iter=1000, tol=1e-8,
                            random_state=seed).fit(x)
            ll = h.score(x)
            if best is None or ll > best[0]:
                best = (ll, h)
        ll, h = best
        dt = time.perf_counter() - t1
        hmm_s += dt
        hmm_cpu += time.process_time() - p1
        print(f"{k} | " + " | ".join(cell(by[n]) for n in methods)
              + f" | {ll:.2f} | {h.bic(x):.2f} | {h.aic(x):.2f} | {-h.bic(x) / 2:.2f} | {dt:.2f}",
              flush=True)
    print(f"hmmlearn {hmm_s:.2f} s wall, {hmm_cpu:.2f} s CPU for its {a.kmax * a.restarts} fits; "
          f"Occam / hmmlearn wall {occam_s / hmm_s:.3f}, CPU {occam_cpu / max(hmm_cpu, 1e-9):.3f}")
    best = doc.get("best") or {}
    if best:
        print("best per method:", json.dumps(best))
    for m in doc["models"]:
        for e in m["evidence"]:
            if e.get("not_applicable"):
                print(f"{m.get('model', '?')} {e['method']}: n/a ({e['not_applicable']})")
            elif "UNRELIABLE" in e.get("note", ""):
                print(f"{m.get('model', '?')} {e['method']}: {e.get('note', '')}")


if __name__ == "__main__":
    main()
