"""The number of states of an HMM on the Old Faithful waiting times (examples/faithful_hmm), K = 1..5:
Occam's `compare --plate K=1..5` (the VB bound; the other estimators say why they do not apply to a
chain) next to hmmlearn 0.3.3's GaussianHMM maximum likelihood with its bic() and aic(), in the
same run. hmmlearn's bic = -2 ln L + p ln N and aic = -2 ln L + 2p, so -bic/2 is BIC's
approximation of ln p(D | K), on the scale of Occam's bound.

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
    a = ap.parse_args()
    from hmmlearn.hmm import GaussianHMM

    with open(os.path.join(EXAMPLE, "waiting.csv")) as f:
        next(f)
        x = np.array([float(v) for v in next(f).split(",")])[:, None]
    t0 = time.perf_counter()
    doc = json.loads(subprocess.run(
        [a.occam, "compare", os.path.join(EXAMPLE, "hmm.occam"), "--plate", "K=1..5",
         "--restarts", str(a.restarts), "--method", "vb,vbsym,laplace,bic", "--json"],
        check=True, capture_output=True, text=True).stdout)
    occam_s = time.perf_counter() - t0
    print(f"Old Faithful waiting times, N = {len(x)}; Occam {occam_s:.2f} s for K = 1..5")
    print("K | Occam vb bound | P(K) by vb | hmmlearn ln L | bic | aic | -bic/2 | hmmlearn s")
    for k, m in enumerate(doc["models"], start=1):
        vb = next(e for e in m["evidence"] if e["method"] == "vb")
        t1 = time.perf_counter()
        best = None
        for seed in range(a.restarts):
            h = GaussianHMM(n_components=k, covariance_type="diag", n_iter=1000, tol=1e-8,
                            random_state=seed).fit(x)
            ll = h.score(x)
            if best is None or ll > best[0]:
                best = (ll, h)
        ll, h = best
        print(f"{k} | {vb['log_evidence']:.2f} | {vb['probability']:.3g} | {ll:.2f} | {h.bic(x):.2f} | "
              f"{h.aic(x):.2f} | {-h.bic(x) / 2:.2f} | {time.perf_counter() - t1:.2f}", flush=True)
    na = [e.get("not_applicable") or e.get("note", "") for e in doc["models"][0]["evidence"] if e["method"] != "vb"]
    print("other Occam methods:", "; ".join(sorted(set(na))))


if __name__ == "__main__":
    main()
