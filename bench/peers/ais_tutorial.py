"""Occam's AIS against nested sampling (dynesty) on the VIBES tutorial mixture, K = 20, in the
same run (issue 28's performance point).

The model is examples/vibes_tutorial/mixture.occam written out here, the mixture index summed out:
    pi ~ Dirichlet(0.001, ..., 0.001) (K = 20),
    mu_kd ~ N(0, 1/0.01),  gamma_kd ~ Gamma(shape 0.001, rate 0.001)   (k = 1..K, d = 1, 2),
    ln p(D | theta) = sum_i ln sum_k pi_k prod_d N(x_id; mu_kd, 1/gamma_kd).
dynesty's prior transform maps the unit cube (100 dimensions: K Gamma(0.001) draws normalised to
pi, then gamma, then mu) onto that prior. A Gamma(0.001) quantile underflows a double for most of
the cube (the median of Gamma(0.001, 1) is about 2^-1000), so both the weights and the
precisions are carried as logarithms: ln G(u) = (ln u + ln Gamma(a + 1)) / a where the leading
term of the lower incomplete Gamma function, u = x^a / Gamma(a + 1), holds to double precision
(x < 1e-8 here), scipy's quantile elsewhere. Its ln Z is then ln p(D | K = 20) over the whole
prior, every relabelled mode included, as Occam's methods define it.

1. Occam: `compare --method vb,ais` (1,000 temperatures, 64 chains: the defaults) with the release
   binary, wall and CPU time of the process (CPU of both cores: ≈ 2 × wall when the chains run on
   both). On the shared development machine run it with both build slots held:
   --both-slots "flock /work/.slot-1 flock /work/.slot-2".
2. dynesty's static sampler (nlive live points, multi-ellipsoid bounds, random-walk moves, seeded)
   until dlogz or a time limit (--max-seconds) or --maxcall, whichever comes first; the live points
   are then added, so ln Z is what it reached, and `converged` says whether the remaining-volume
   estimate fell below dlogz. It runs in a child process (wrapped by --one-slot, e.g.
   /work/bin/cslot, on the shared machine).

Needs the peers venv (bench/peers/setup.sh: dynesty 3.1.0) and a release build:
    cargo build --release -p occam-cli
    bench/peers/.venv/bin/python bench/peers/ais_tutorial.py --occam target/release/occam
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

import numpy as np
from scipy.special import gammaln, logsumexp
from scipy.stats import gamma, norm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "vibes_tutorial")
K = 20
ALPHA, MU_PRECISION, SHAPE, RATE = 0.001, 0.01, 0.001, 0.001


def load_x():
    return np.loadtxt(os.path.join(EXAMPLE, "x.csv"), delimiter=",", skiprows=1)


def ln_gamma_quantile(u, a):
    """ln of the Gamma(a, 1) quantile of u, exact where the quantile itself underflows."""
    u = np.clip(u, 1e-300, 1.0 - 1e-16)
    small = (np.log(u) + gammaln(a + 1.0)) / a
    out = np.empty_like(u)
    tiny = small < np.log(1e-8)
    out[tiny] = small[tiny]
    out[~tiny] = np.log(gamma.ppf(u[~tiny], a))
    return out


def make_model(x):
    n, d = x.shape
    ln2pi = np.log(2.0 * np.pi)

    def prior_transform(u):
        ln_g = ln_gamma_quantile(u[:K], ALPHA)
        ln_pi = ln_g - logsumexp(ln_g)
        ln_tau = ln_gamma_quantile(u[K : K + K * d], SHAPE) - np.log(RATE)
        mu = norm.ppf(u[K + K * d :]) / np.sqrt(MU_PRECISION)
        return np.concatenate([ln_pi, ln_tau, mu])

    def loglike(theta):
        ln_pi = theta[:K]
        ln_tau = theta[K : K + K * d].reshape(K, d)
        mu = theta[K + K * d :].reshape(K, d)
        tau = np.exp(ln_tau)
        # rows × K: ln pi_k + sum_d ln N(x_id; mu_kd, 1/tau_kd)
        sq = (x[:, None, :] - mu[None, :, :]) ** 2
        ln = ln_pi + (0.5 * (ln_tau - ln2pi)).sum(axis=1) - 0.5 * (tau[None, :, :] * sq).sum(axis=2)
        v = float(logsumexp(ln, axis=1).sum())
        return v if np.isfinite(v) else -1e300

    return prior_transform, loglike, K + 2 * K * d


def run_occam(occam, seed, temperatures, chains, wrapper):
    # The wall and CPU time of the process are measured inside the wrapper (which may wait for
    # locks first) by GNU time.
    cmd = wrapper + [
        "/usr/bin/time", "-f", "OCCAM_TIME %e %U %S", occam, "compare", os.path.join(EXAMPLE, "mixture.occam"),
        "--data", "x=" + os.path.join(EXAMPLE, "x.csv"),
        "--method", "vb,ais", "--temperatures", str(temperatures), "--chains", str(chains),
        "--seed", str(seed), "--json",
    ]
    run = subprocess.run(cmd, check=True, capture_output=True, text=True)
    line = [l for l in run.stderr.splitlines() if l.startswith("OCCAM_TIME ")][-1].split()
    seconds, cpu = float(line[1]), float(line[2]) + float(line[3])
    doc = json.loads(run.stdout)
    rows = {}
    for e in doc["models"][0]["evidence"]:
        rows[e["method"]] = {
            "log_evidence": e.get("log_evidence"), "se": e.get("se"), "ess": e.get("ess"),
            "seconds": e.get("seconds"), "note": e.get("note"),
        }
    return rows, seconds, cpu


def run_dynesty(nlive, dlogz, seed, max_seconds, maxcall):
    import dynesty

    prior_transform, loglike, ndim = make_model(load_x())
    t0, c0 = time.perf_counter(), time.process_time()
    sampler = dynesty.NestedSampler(
        loglike, prior_transform, ndim, nlive=nlive, bound="multi", sample="rwalk",
        rstate=np.random.default_rng(seed),
    )
    delta, it, stopped = np.inf, 0, "dlogz"
    for it, r in enumerate(sampler.sample(dlogz=dlogz, maxcall=maxcall), start=1):
        delta = float(r.delta_logz)
        if time.perf_counter() - t0 > max_seconds:
            stopped = "time limit"
            break
    else:
        if delta >= dlogz:
            stopped = "maxcall"
    for _ in sampler.add_live_points():
        pass
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    res = sampler.results
    return {
        "ndim": ndim, "nlive": nlive, "logz": float(res.logz[-1]), "logzerr": float(res.logzerr[-1]),
        "calls": int(np.sum(res.ncall)), "iterations": it, "delta_logz": delta,
        "converged": bool(delta < dlogz), "stopped": stopped,
        "max_logl": float(np.max(res.logl)), "seconds": seconds, "cpu_seconds": cpu,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--occam", default=os.path.join(ROOT, "target", "release", "occam"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--temperatures", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=64)
    ap.add_argument("--nlive", type=int, default=500)
    ap.add_argument("--dlogz", type=float, default=0.1)
    ap.add_argument("--max-seconds", type=float, default=600.0)
    ap.add_argument("--maxcall", type=int, default=None)
    ap.add_argument("--both-slots", default="", help="command prefix for the timed Occam run")
    ap.add_argument("--one-slot", default="", help="command prefix for the dynesty child process")
    ap.add_argument("--dynesty-only", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json", default=None, help="also write the results as JSON here")
    a = ap.parse_args()

    if a.dynesty_only:
        r = run_dynesty(a.nlive, a.dlogz, a.seed, a.max_seconds, a.maxcall)
        with open(a.dynesty_only, "w") as f:
            json.dump(r, f)
        return

    rows, occ_s, occ_cpu = run_occam(a.occam, a.seed, a.temperatures, a.chains, shlex.split(a.both_slots))
    ais, vb = rows["ais"], rows["vb"]
    print(f"VIBES tutorial mixture, K = {K}, N = {len(load_x())}; seed {a.seed}")
    print(f"occam compare --method vb,ais ({a.chains} chains × {a.temperatures} temperatures): "
          f"process wall {occ_s:.2f} s, CPU {occ_cpu:.2f} s (CPU / wall {occ_cpu / occ_s:.2f}); "
          f"ais alone {ais['seconds']:.2f} s wall", flush=True)
    print(f"  vb bound {vb['log_evidence']:.2f}; ais {ais['log_evidence']:.2f} ± {ais['se']:.2f} "
          f"(ESS {ais['ess']:.1f}): {ais['note']}", flush=True)

    tmp = os.path.join(HERE, f".ais_tutorial_dynesty_{os.getpid()}.json")
    cmd = shlex.split(a.one_slot) + [
        sys.executable, os.path.abspath(__file__), "--dynesty-only", tmp, "--seed", str(a.seed),
        "--nlive", str(a.nlive), "--dlogz", str(a.dlogz), "--max-seconds", str(a.max_seconds),
    ] + (["--maxcall", str(a.maxcall)] if a.maxcall else [])
    try:
        subprocess.run(cmd, check=True)
        with open(tmp) as f:
            dyn = json.load(f)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print(f"dynesty (nlive {dyn['nlive']}, {dyn['ndim']} dimensions, rwalk, multi): ln Z "
          f"{dyn['logz']:.2f} ± {dyn['logzerr']:.2f}, {dyn['iterations']} iterations, "
          f"{dyn['calls']} likelihood calls, stopped by {dyn['stopped']}, remaining dlogz "
          f"{dyn['delta_logz']:.3g} ({'converged' if dyn['converged'] else 'NOT converged'}), "
          f"max ln L {dyn['max_logl']:.2f}, wall {dyn['seconds']:.1f} s, CPU {dyn['cpu_seconds']:.1f} s",
          flush=True)
    print()
    print("method | ln p(D) | ± | wall s | CPU s | note")
    print("---|---|---|---|---|---")
    print(f"vb (bound) | {vb['log_evidence']:.2f} | | | | lower bound")
    print(f"occam ais | {ais['log_evidence']:.2f} | {ais['se']:.2f} | {occ_s:.2f} | {occ_cpu:.2f} | "
          f"ESS {ais['ess']:.1f} of {a.chains}; process (fit + ais)")
    print(f"dynesty | {dyn['logz']:.2f} | {dyn['logzerr']:.2f} | {dyn['seconds']:.1f} | {dyn['cpu_seconds']:.1f} | "
          f"{'converged' if dyn['converged'] else 'not converged'} ({dyn['stopped']}; remaining dlogz "
          f"{dyn['delta_logz']:.3g})")
    print(f"dynesty / occam: wall {dyn['seconds'] / occ_s:.1f}, CPU {dyn['cpu_seconds'] / occ_cpu:.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"occam": rows, "occam_seconds": occ_s, "occam_cpu_seconds": occ_cpu,
                       "dynesty": dyn}, f, indent=1)


if __name__ == "__main__":
    main()
