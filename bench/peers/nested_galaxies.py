"""Nested sampling (dynesty) against Occam's evidence estimates on the galaxy velocities,
K = 1..6 components (--ks), in the same run.

The model is examples/galaxies/mixture.occam written out here: the mixture index summed out,
    pi ~ Dirichlet(1, ..., 1),  tau_k ~ Gamma(shape 2, rate 2),  mu_k | tau_k ~ N(20, 1/(0.01 tau_k)),
    ln p(D | theta) = sum_i ln sum_k pi_k N(v_i; mu_k, 1/tau_k).
dynesty's prior transform maps the unit cube onto that prior (pi from K exponentials
normalised, tau by the Gamma quantile, mu by the Normal quantile given tau), so its ln Z is
ln p(D | K) over the whole prior, every relabelled mode included, as Occam's methods define it.

For each K: Occam's `compare` (release binary, --method vb,vbsym,laplace,is,ais, wall time of
the process) and dynesty's static sampler (nlive live points, dlogz stop, multi-ellipsoid
bounds, random-walk moves, seeded). Prints one table; --json writes it as JSON lines too.

Needs the peers venv (bench/peers/setup.sh: dynesty 3.1.0) and a release build:
    cargo build --release -p occam-cli
    bench/peers/.venv/bin/python bench/peers/nested_galaxies.py --occam target/release/occam
"""

import argparse
import json
import os
import resource
import subprocess
import time

import numpy as np
from scipy.special import logsumexp
from scipy.stats import gamma, norm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "galaxies")
METHODS = "vb,vbsym,laplace,is,ais"


def load_v():
    with open(os.path.join(EXAMPLE, "v.csv")) as f:
        next(f)
        return np.array([float(line) for line in f if line.strip()])


def make_model(v, k):
    ln2pi = np.log(2.0 * np.pi)

    def prior_transform(u):
        e = -np.log1p(-u[:k]) if k > 1 else np.ones(1)
        pi = e / e.sum()
        tau = gamma.ppf(u[k : 2 * k], 2.0, scale=0.5)
        mu = 20.0 + norm.ppf(u[2 * k : 3 * k]) / np.sqrt(0.01 * tau)
        return np.concatenate([pi, tau, mu])

    def loglike(theta):
        pi, tau, mu = theta[:k], theta[k : 2 * k], theta[2 * k :]
        if np.any(pi <= 0) or np.any(tau <= 0):
            return -np.inf
        ln = np.log(pi) + 0.5 * (np.log(tau) - ln2pi) - 0.5 * tau * (v[:, None] - mu) ** 2
        return float(logsumexp(ln, axis=1).sum())

    return prior_transform, loglike


def run_occam(occam, k, seed):
    text = open(os.path.join(EXAMPLE, "mixture.occam")).read().replace("plate K = 3", f"plate K = {k}")
    path = os.path.join(EXAMPLE, f".nested_K{k}.occam")
    with open(path, "w") as f:
        f.write(text)
    try:
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        out = subprocess.run(
            [occam, "compare", path, "--method", METHODS, "--restarts", "10", "--seed", str(seed), "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
        seconds = time.perf_counter() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    finally:
        os.remove(path)
    doc = json.loads(out)
    rows = {}
    for e in doc["models"][0]["evidence"]:
        rows[e["method"]] = (e.get("log_evidence"), e.get("se"), e.get("seconds"), "UNRELIABLE" in (e.get("note") or ""))
    return rows, seconds, cpu


def run_dynesty(v, k, nlive, dlogz, seed):
    import dynesty

    prior_transform, loglike = make_model(v, k)
    t0, c0 = time.perf_counter(), time.process_time()
    sampler = dynesty.NestedSampler(
        loglike, prior_transform, 3 * k, nlive=nlive, bound="multi", sample="rwalk",
        rstate=np.random.default_rng(seed),
    )
    sampler.run_nested(dlogz=dlogz, print_progress=False)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    r = sampler.results
    return float(r.logz[-1]), float(r.logzerr[-1]), int(r.ncall.sum()), seconds, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--occam", default=os.path.join(ROOT, "target", "release", "occam"))
    ap.add_argument("--ks", default="1,2,3,4")
    ap.add_argument("--nlive", type=int, default=500)
    ap.add_argument("--dlogz", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the rows as JSON lines here")
    a = ap.parse_args()
    v = load_v()
    out = []
    fmt = lambda x: "n/a" if x[0] is None else (f"{x[0]:.2f}" + (f" ± {x[1]:.2f}" if x[1] else "") + (" †" if x[3] else ""))
    print(f"galaxies (N = {len(v)}); Occam --method {METHODS}; dynesty nlive {a.nlive}, dlogz {a.dlogz}; † = flagged")
    print("K | " + " | ".join(METHODS.split(",")) + " | dynesty ln Z ± err | Occam s | dynesty s | ratio"
          " | Occam CPU s | dynesty CPU s | CPU ratio")
    for k in [int(s) for s in a.ks.split(",")]:
        rows, occ_s, occ_cpu = run_occam(a.occam, k, a.seed)
        lz, lzerr, ncall, dyn_s, dyn_cpu = run_dynesty(v, k, a.nlive, a.dlogz, a.seed)
        cells = [fmt(rows.get(m, (None, None, None, False))) for m in METHODS.split(",")]
        print(f"{k} | " + " | ".join(cells) + f" | {lz:.2f} ± {lzerr:.2f} | {occ_s:.1f} | {dyn_s:.1f} | {dyn_s / occ_s:.2f}"
              f" | {occ_cpu:.1f} | {dyn_cpu:.1f} | {dyn_cpu / occ_cpu:.2f}",
              flush=True)
        out.append({"K": k, "occam": rows, "occam_seconds": occ_s, "occam_cpu_seconds": occ_cpu,
                    "dynesty_logz": lz, "dynesty_logzerr": lzerr, "dynesty_calls": ncall,
                    "dynesty_seconds": dyn_s, "dynesty_cpu_seconds": dyn_cpu})
    if a.json:
        with open(a.json, "w") as f:
            for r in out:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
