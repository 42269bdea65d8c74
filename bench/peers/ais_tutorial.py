"""Occam's AIS against nested sampling (dynesty) on the VIBES tutorial mixture, K = 1, 2, 3 (where
nested sampling converges: the reference) and K = 20 (issue 28's performance point), in the same run.

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

At K = 1, 2, 3 (--small-k) Occam runs `compare --plate K=1..3 --method vb,is,ais` (one process,
one slot) and dynesty runs to dlogz under --small-max-seconds each; their ln p(D) must agree.

1. Occam at K = 20: `compare --method vb,ais` (1,000 temperatures, 64 chains: the defaults) with the release
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


def make_model(x, K=K):
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


def run_occam(occam, seed, temperatures, chains, wrapper, methods="vb,ais", plate=None):
    # The wall and CPU time of the process are measured inside the wrapper (which may wait for
    # locks first) by GNU time. Returns one dict of methods per model (per plate size).
    cmd = wrapper + [
        "/usr/bin/time", "-f", "OCCAM_TIME %e %U %S", occam, "compare", os.path.join(EXAMPLE, "mixture.occam"),
        "--data", "x=" + os.path.join(EXAMPLE, "x.csv"),
        "--method", methods, "--temperatures", str(temperatures), "--chains", str(chains),
        "--seed", str(seed), "--json",
    ] + (["--plate", plate] if plate else [])
    run = subprocess.run(cmd, check=True, capture_output=True, text=True)
    line = [l for l in run.stderr.splitlines() if l.startswith("OCCAM_TIME ")][-1].split()
    seconds, cpu = float(line[1]), float(line[2]) + float(line[3])
    doc = json.loads(run.stdout)
    models = []
    for m in doc["models"]:
        rows = {}
        for e in m["evidence"]:
            rows[e["method"]] = {
                "log_evidence": e.get("log_evidence"), "se": e.get("se"), "ess": e.get("ess"),
                "seconds": e.get("seconds"), "note": e.get("note"),
            }
        models.append(rows)
    return models, seconds, cpu


def run_dynesty(nlive, dlogz, seed, max_seconds, maxcall, k=K):
    import dynesty

    prior_transform, loglike, ndim = make_model(load_x(), k)
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
        "k": k, "ndim": ndim, "nlive": nlive, "logz": float(res.logz[-1]), "logzerr": float(res.logzerr[-1]),
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
    ap.add_argument("--small-k", default="1,2,3", help="sizes where dynesty is the reference ('' for none)")
    ap.add_argument("--small-max-seconds", type=float, default=240.0)
    ap.add_argument("--k", type=int, default=K, help=argparse.SUPPRESS)
    ap.add_argument("--dynesty-only", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json", default=None, help="also write the results as JSON here")
    a = ap.parse_args()

    if a.dynesty_only:
        r = run_dynesty(a.nlive, a.dlogz, a.seed, a.max_seconds, a.maxcall, a.k)
        with open(a.dynesty_only, "w") as f:
            json.dump(r, f)
        return

    def dynesty_child(k, max_seconds):
        tmp = os.path.join(HERE, f".ais_tutorial_dynesty_{os.getpid()}_{k}.json")
        cmd = shlex.split(a.one_slot) + [
            sys.executable, os.path.abspath(__file__), "--dynesty-only", tmp, "--seed", str(a.seed),
            "--nlive", str(a.nlive), "--dlogz", str(a.dlogz), "--max-seconds", str(max_seconds),
            "--k", str(k),
        ] + (["--maxcall", str(a.maxcall)] if a.maxcall else [])
        try:
            subprocess.run(cmd, check=True)
            with open(tmp) as f:
                return json.load(f)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def dyn_line(dyn):
        return (f"dynesty K = {dyn['k']} (nlive {dyn['nlive']}, {dyn['ndim']} dimensions, rwalk, multi): ln Z "
                f"{dyn['logz']:.2f} ± {dyn['logzerr']:.2f}, {dyn['iterations']} iterations, "
                f"{dyn['calls']} likelihood calls, stopped by {dyn['stopped']}, remaining dlogz "
                f"{dyn['delta_logz']:.3g} ({'converged' if dyn['converged'] else 'NOT converged'}), "
                f"max ln L {dyn['max_logl']:.2f}, wall {dyn['seconds']:.1f} s, CPU {dyn['cpu_seconds']:.1f} s")

    small = {}
    if a.small_k:
        ks = [int(v) for v in a.small_k.split(",")]
        models, s_s, s_cpu = run_occam(a.occam, a.seed, a.temperatures, a.chains, shlex.split(a.one_slot),
                                       "vb,is,ais", "K=" + ",".join(map(str, ks)))
        print(f"VIBES tutorial mixture, K = {a.small_k}, N = {len(load_x())}; seed {a.seed}")
        print(f"occam compare --plate K={a.small_k} --method vb,is,ais ({a.chains} chains × "
              f"{a.temperatures} temperatures), one process under one slot: wall {s_s:.2f} s, CPU {s_cpu:.2f} s",
              flush=True)
        for k, rows in zip(ks, models):
            dyn = dynesty_child(k, a.small_max_seconds)
            small[k] = {"occam": rows, "dynesty": dyn}
            print(dyn_line(dyn), flush=True)
        print()
        print("K | vb (bound) | is ± se (ESS) | ais ± se (ESS) | ais s | dynesty ln Z ± err | dynesty s (CPU) | converged | ais − dynesty")
        print("---|---|---|---|---|---|---|---|---")
        for k in ks:
            r, dyn = small[k]["occam"], small[k]["dynesty"]
            vb, is_, ais = r["vb"], r["is"], r["ais"]
            print(f"{k} | {vb['log_evidence']:.2f} | {is_['log_evidence']:.2f} ± {is_['se']:.2f} ({is_['ess']:.0f}) | "
                  f"{ais['log_evidence']:.2f} ± {ais['se']:.2f} ({ais['ess']:.1f}) | {ais['seconds']:.2f} | "
                  f"{dyn['logz']:.2f} ± {dyn['logzerr']:.2f} | {dyn['seconds']:.1f} ({dyn['cpu_seconds']:.1f}) | "
                  f"{'yes' if dyn['converged'] else 'NO'} | {ais['log_evidence'] - dyn['logz']:+.2f}")
        for k in ks:
            print(f"  K = {k} ais note: {small[k]['occam']['ais']['note']}")
        print(flush=True)

    models, occ_s, occ_cpu = run_occam(a.occam, a.seed, a.temperatures, a.chains, shlex.split(a.both_slots))
    rows = models[0]
    ais, vb = rows["ais"], rows["vb"]
    print(f"VIBES tutorial mixture, K = {K}, N = {len(load_x())}; seed {a.seed}")
    print(f"occam compare --method vb,ais ({a.chains} chains × {a.temperatures} temperatures): "
          f"process wall {occ_s:.2f} s, CPU {occ_cpu:.2f} s (CPU / wall {occ_cpu / occ_s:.2f}); "
          f"ais alone {ais['seconds']:.2f} s wall", flush=True)
    print(f"  vb bound {vb['log_evidence']:.2f}; ais {ais['log_evidence']:.2f} ± {ais['se']:.2f} "
          f"(ESS {ais['ess']:.1f}): {ais['note']}", flush=True)

    dyn = dynesty_child(K, a.max_seconds)
    print(dyn_line(dyn), flush=True)
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
                       "dynesty": dyn, "small": small}, f, indent=1)


if __name__ == "__main__":
    main()
