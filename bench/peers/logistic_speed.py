"""Bayesian logistic regression at N = 100,000, D = 20 (issue 29's performance item): Occam's
``occam.sklearn.BayesianLogisticRegression`` against NumPyro's SVI and PyMC's ADVI, each reaching
the same posterior means to 1e-2, and Occam's cost per iteration against one XᵀΛX.

Model (every peer the same): w ~ N(0, I_D), y_n ~ Bernoulli(σ(x_n·w)), no intercept; X ~ N(0, 1)
(seed 0), w_true ~ N(0, 0.5²), y drawn from the model. q(w) is a full-covariance Gaussian in all
three (Occam: exact expected log-likelihood by quadrature; NumPyro ``AutoMultivariateNormal``;
PyMC ``fullrank_advi``), so they share one optimum: the reference means are Occam's at
``tol = 1e-10`` (``--ref``).

Each measurement runs in its own process (``--peer NAME``), which prints one JSON line: wall and
CPU seconds (getrusage, all threads) of the fit to convergence, iterations, the largest distance
of its means from the reference, and the growth of peak RSS over the process's RSS just before
the fit (the data are 16 MB); Occam's line also has the time of every sweep (from the fit's
callback). ``--peer xtlx`` times one XᵀΛX (numpy/OpenBLAS: ``(X·λ)ᵀX``, 2ND² flops).

The peers stop at the first check (every ``--every`` steps) at which their means are within 1e-2
of the reference; JIT compilation (NumPyro) and graph compilation (PyMC) are inside the time and
also reported alone. The driver (no ``--peer``) runs each measurement ``--rounds`` times,
alternating, and prints medians.

Usage: python logistic_speed.py [--rounds 3] [--peers occam,numpyro,pymc]
(occam needs the occam wheel in the interpreter running --peer occam; PEER_PYTHON=... names the
interpreter with numpyro and pymc).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

N, D = 100_000, 20
TOL_MEANS = 1e-2
HERE = os.path.dirname(os.path.abspath(__file__))


def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    w = 0.5 * rng.standard_normal(D)
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-(X @ w)))).astype(np.float64)
    return X, y


def rss_mb():
    """Current resident set size (MB), from /proc."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_occam(args, X, y, ref):
    """The estimator's own model and call (``occam._logistic``), through ``Model.fit`` with a
    callback that records the time of every sweep."""
    from occam import Model
    from occam._logistic import _model_text
    base = rss_mb()
    t, c = time.perf_counter(), cpu()
    stamps = []
    text = _model_text(2, False, False, 1.0, 10.0, 1e-6, 1e-6, "sigmoid")
    r = Model.from_string(text, name="BayesianLogisticRegression").fit(
        data={"X": np.ascontiguousarray(X), "y": y}, seed=0, max_iter=1000, tol=args.tol / N,
        callback=lambda i, b, e: stamps.append((time.perf_counter(), cpu())) or True)
    wall, cp = time.perf_counter() - t, cpu() - c
    mean = np.asarray(r.posterior("w")["mean"], dtype=np.float64).reshape(-1)
    sweeps = np.diff([(t, c)] + stamps, axis=0)
    out = dict(peer="occam", wall=wall, cpu=cp, iters=int(r.iterations), bound=float(r.bound),
               mem_growth_mb=peak_mb() - base, first_callback_s=float(sweeps[0, 0]),
               sweep_s=[round(float(v), 4) for v in sweeps[1:, 0]],
               sweep_cpu_s=[round(float(v), 4) for v in sweeps[1:, 1]])
    if ref is not None:
        out["max_dmean"] = float(np.max(np.abs(mean - ref)))
    return out, mean


def run_xtlx(args, X, y):
    """One XᵀΛX by OpenBLAS (median of 7)."""
    lam = np.random.default_rng(1).random(N) * 0.25
    times = []
    for _ in range(7):
        t = time.perf_counter()
        (X * lam[:, None]).T @ X
        times.append(time.perf_counter() - t)
    gemm = float(np.median(times))
    return dict(peer="xtlx", xtlx_s=gemm, flops=2 * N * D * D, gflops=2 * N * D * D / gemm / 1e9)


def run_numpyro(args, X, y, ref):
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoMultivariateNormal
    from numpyro.optim import Adam

    jax.config.update("jax_enable_x64", True)
    Xj, yj = jnp.asarray(X), jnp.asarray(y)

    def model(X, y):
        w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([D]).to_event(1))
        numpyro.sample("y", dist.Bernoulli(logits=X @ w), obs=y)

    guide = AutoMultivariateNormal(model)
    svi = SVI(model, guide, Adam(args.lr), Trace_ELBO())
    base = rss_mb()
    t, c = time.perf_counter(), cpu()
    state = svi.init(jax.random.PRNGKey(0), Xj, yj)

    @jax.jit
    def chunk(state):
        return jax.lax.fori_loop(0, args.every, lambda i, s: svi.update(s, Xj, yj)[0], state)

    state = chunk(state)
    jax.block_until_ready(state)
    compile_s = time.perf_counter() - t  # includes the first chunk
    steps, dmean = args.every, np.inf
    while steps <= args.max_steps:
        loc = np.asarray(svi.get_params(state)["auto_loc"])
        dmean = float(np.max(np.abs(loc - ref)))
        if dmean < TOL_MEANS:
            break
        state = chunk(state)
        steps += args.every
    jax.block_until_ready(state)
    wall, cp = time.perf_counter() - t, cpu() - c
    return dict(peer="numpyro", lr=args.lr, wall=wall, cpu=cp, steps=steps, compile_and_first_s=compile_s,
                max_dmean=dmean, reached=dmean < TOL_MEANS, mem_growth_mb=peak_mb() - base)


def run_pymc(args, X, y, ref):
    import pymc as pm

    base = rss_mb()
    t, c = time.perf_counter(), cpu()
    with pm.Model():
        w = pm.Normal("w", 0.0, 1.0, shape=D)
        pm.Bernoulli("y", logit_p=pm.math.dot(X, w), observed=y)
        state = {"steps": 0, "dmean": np.inf}

        def check(approx, losses, i):
            if i % args.every == 0 and i > 0:
                state["steps"] = i
                state["dmean"] = float(np.max(np.abs(approx.mean.eval() - ref)))
                if state["dmean"] < TOL_MEANS:
                    raise StopIteration("reached")

        pm.fit(args.max_steps, method="fullrank_advi", random_seed=0, progressbar=False,
               callbacks=[check], obj_optimizer=pm.adam(learning_rate=args.lr))
    wall, cp = time.perf_counter() - t, cpu() - c
    return dict(peer="pymc", lr=args.lr, wall=wall, cpu=cp, steps=state["steps"], max_dmean=state["dmean"],
                reached=state["dmean"] < TOL_MEANS, mem_growth_mb=peak_mb() - base)


def one(args):
    X, y = data()
    ref = np.load(args.ref) if args.ref and os.path.exists(args.ref) else None
    if args.peer == "occam":
        out, mean = run_occam(args, X, y, ref)
        if args.save_ref:
            np.save(args.save_ref, mean)
    elif args.peer == "xtlx":
        out = run_xtlx(args, X, y)
    elif args.peer == "numpyro":
        out = run_numpyro(args, X, y, ref)
    elif args.peer == "pymc":
        out = run_pymc(args, X, y, ref)
    else:
        raise SystemExit(f"unknown peer {args.peer}")
    out["threads"] = os.environ.get("OMP_NUM_THREADS", "default")
    print(json.dumps(out), flush=True)


def sub(python, *extra):
    cmd = [python, os.path.abspath(__file__), *extra]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        return {"peer": extra[1], "error": res.stderr.strip().splitlines()[-3:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def driver(args):
    ref = args.ref or "/tmp/logistic_ref.npy"
    me = sys.executable
    peer_py = os.environ.get("PEER_PYTHON", me)
    print(json.dumps(sub(me, "--peer", "occam", "--tol", "1e-10", "--save-ref", ref)), flush=True)
    print(json.dumps(sub(me, "--peer", "xtlx")), flush=True)
    rows = []
    for r in range(args.rounds):
        for p in args.peers.split(","):
            py = me if p == "occam" else peer_py
            extra = ["--lr", str(args.lr_numpyro if p == "numpyro" else args.lr_pymc)] if p != "occam" else []
            out = sub(py, "--peer", p, "--ref", ref, "--tol", str(args.tol), *extra)
            out["round"] = r
            rows.append(out)
            print(json.dumps(out), flush=True)
    print("median over rounds (wall s, CPU s):")
    for p in args.peers.split(","):
        ok = [o for o in rows if o.get("peer") == p and "wall" in o]
        if ok:
            print(f"  {p:8s} wall {np.median([o['wall'] for o in ok]):8.3f}  "
                  f"cpu {np.median([o['cpu'] for o in ok]):8.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer")
    ap.add_argument("--peers", default="occam,numpyro,pymc")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ref")
    ap.add_argument("--save-ref")
    ap.add_argument("--tol", type=float, default=1e-4, help="Occam's tol (nats per sweep, total)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--lr-numpyro", type=float, default=0.01)
    ap.add_argument("--lr-pymc", type=float, default=0.01)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--max-steps", type=int, default=200_000)
    args = ap.parse_args()
    if args.peer:
        one(args)
    else:
        driver(args)


if __name__ == "__main__":
    main()
