"""Bayesian logistic regression at N = 100,000, D = 20 (issue 29's performance item): Occam's
``occam.sklearn.BayesianLogisticRegression`` against NumPyro's SVI and PyMC's ADVI, each reaching
the same posterior means to 1e-2, and Occam's cost per iteration against one XᵀΛX.

Model (every peer the same): w ~ N(0, I_D), y_n ~ Bernoulli(σ(x_n·w)), no intercept; X ~ N(0, 1)
(seed 0), w_true ~ N(0, 0.5²), y drawn from the model. q(w) is a full-covariance Gaussian in all
three (Occam: exact expected log-likelihood by quadrature; NumPyro ``AutoMultivariateNormal``;
PyMC ``fullrank_advi``), so they share one optimum: the reference means are Occam's at
``tol = 1e-10`` (``--ref``).

Each measurement runs in its own process (``--peer NAME``), which prints one JSON line: wall and
CPU seconds (getrusage, all threads, with finished child processes such as PyTensor's g++) of
the fit to convergence, iterations, the largest distance of its means from the reference, and
the growth of peak RSS over the process's RSS just before the fit (the data are 16 MB); Occam's
line also has the time of every sweep (from the fit's callback). ``--peer xtlx`` times one XᵀΛX
(numpy/OpenBLAS: ``(X·λ)ᵀX``, 2ND² flops).

The peers stop at the first check (every ``--every`` steps) at which their means are within 1e-2
of the reference; JIT compilation (NumPyro) and graph compilation (PyMC) are inside the time and
also reported alone (PyMC: ``first_check_s``, compilation and the first 100 steps). The driver
(no ``--peer``) runs each measurement ``--rounds`` times, alternating, and prints medians.

Usage: python logistic_speed.py [--rounds 3] [--peers xtlx,occam,numpyro,pymc,pymc_mf]
(occam needs the occam wheel in the interpreter running --peer occam; PEER_PYTHON=... names the
interpreter with numpyro (setup_advi.sh), PYMC_PYTHON=... the one with PyMC (setup_pymc.sh; default
PEER_PYTHON)). ``pymc`` is full-rank ADVI, ``pymc_mf`` mean-field ADVI; they run in the first
``--pymc-rounds`` rounds only, each stopped after ``--cap`` seconds if it has not reached 1e-2, and
their lines carry the distance curve [step, wall s, max |mean - reference|] at every check.
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
    """CPU seconds of this process and of its finished children (PyTensor compiles its C code
    with g++ in child processes; the other peers have none)."""
    r, k = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + k.ru_utime + k.ru_stime


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


def run_pymc(args, X, y, ref, method):
    """PyMC's ``fit`` with ``method`` (``fullrank_advi`` or the mean-field ``advi``) and Adam at
    ``args.lr``; every ``args.every`` steps the largest distance of q's means (the shared ``mu``,
    read without compiling anything) from the reference is recorded as (step, wall s, distance),
    and the fit stops at the first within 1e-2 or after ``args.cap`` seconds."""
    # The BLAS that setup_pymc.sh configured (PyTensor's own probe does not find Debian's
    # OpenBLAS), unless the caller names another configuration.
    rc = os.path.join(sys.prefix, "pytensorrc")
    if "PYTENSORRC" not in os.environ and os.path.exists(rc):
        os.environ["PYTENSORRC"] = rc
    import pymc as pm
    import pytensor

    base = rss_mb()
    t, c = time.perf_counter(), cpu()
    state = {"steps": 0, "dmean": np.inf, "curve": [], "stop": "max_steps"}
    with pm.Model():
        w = pm.Normal("w", 0.0, 1.0, shape=D)
        pm.Bernoulli("y", logit_p=pm.math.dot(X, w), observed=y)

        def check(approx, losses, i):
            if i % args.every == 0 and i > 0:
                mu = approx.groups[0].params_dict["mu"].get_value()
                state["steps"] = i
                state["dmean"] = float(np.max(np.abs(mu - ref)))
                now = time.perf_counter() - t
                state["curve"].append([i, round(now, 2), round(state["dmean"], 5)])
                if args.curve_log:  # the curve so far survives a run that is stopped from outside
                    with open(args.curve_log, "a") as f:
                        f.write(json.dumps(dict(method=method, lr=args.lr, step=i, wall=now,
                                                max_dmean=state["dmean"])) + "\n")
                if state["dmean"] < TOL_MEANS:
                    state["stop"] = "reached"
                    raise StopIteration("reached")
                if now > args.cap:
                    state["stop"] = "cap"
                    raise StopIteration("cap")

        pm.fit(args.max_steps, method=method, random_seed=0, progressbar=False,
               callbacks=[check], obj_optimizer=pm.adam(learning_rate=args.lr))
    wall, cp = time.perf_counter() - t, cpu() - c
    name = "pymc" if method == "fullrank_advi" else "pymc_mf"
    return dict(peer=name, method=method, lr=args.lr, wall=wall, cpu=cp, steps=state["steps"],
                max_dmean=state["dmean"], reached=state["dmean"] < TOL_MEANS, stop=state["stop"],
                first_check_s=state["curve"][0][1] if state["curve"] else None,
                blas_ldflags=pytensor.config.blas__ldflags, mem_growth_mb=peak_mb() - base,
                curve=state["curve"])


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
        out = run_pymc(args, X, y, ref, "fullrank_advi")
    elif args.peer == "pymc_mf":
        out = run_pymc(args, X, y, ref, "advi")
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
    pymc_py = os.environ.get("PYMC_PYTHON", peer_py)
    lrs = {"numpyro": args.lr_numpyro, "pymc": args.lr_pymc, "pymc_mf": args.lr_pymc_mf}
    peers = args.peers.split(",")
    print(json.dumps(sub(me, "--peer", "occam", "--tol", "1e-10", "--save-ref", ref)), flush=True)
    print(json.dumps(sub(me, "--peer", "xtlx")), flush=True)
    rows = []
    for r in range(args.rounds):
        for p in peers:
            if p.startswith("pymc") and r >= args.pymc_rounds:
                continue
            py = pymc_py if p.startswith("pymc") else peer_py if p == "numpyro" else me
            extra = ["--lr", str(lrs[p])] if p in lrs else []
            if args.curve_log and p.startswith("pymc"):
                extra += ["--curve-log", args.curve_log]
            out = sub(py, "--peer", p, "--ref", ref, "--tol", str(args.tol), "--cap", str(args.cap),
                      *extra)
            out["round"] = r
            rows.append(out)
            print(json.dumps(out), flush=True)
    print("median over rounds (wall s, CPU s; '>=' where the peer stopped at the cap short of 1e-2):")
    med = {}
    for p in peers:
        ok = [o for o in rows if o.get("peer") == p and "wall" in o]
        if ok:
            med[p] = (np.median([o["wall"] for o in ok]), np.median([o["cpu"] for o in ok]))
            short = "" if all(o.get("reached", True) for o in ok) else ">="
            print(f"  {p:8s} wall {short}{med[p][0]:8.3f}  cpu {short}{med[p][1]:8.3f}  ({len(ok)} rounds)")
    if "occam" in med:
        for p in med:
            if p not in ("occam", "xtlx"):
                print(f"  peer / occam: {p:8s} wall {med[p][0] / med['occam'][0]:7.1f}x  "
                      f"cpu {med[p][1] / med['occam'][1]:7.1f}x")


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
    ap.add_argument("--lr-pymc-mf", type=float, default=0.01)
    ap.add_argument("--pymc-rounds", type=int, default=1, help="rounds that include the PyMC peers")
    ap.add_argument("--curve-log", help="a PyMC run appends each check to this file as it goes")
    ap.add_argument("--cap", type=float, default=900.0, help="a PyMC run stops after this many seconds")
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--max-steps", type=int, default=200_000)
    args = ap.parse_args()
    if args.peer:
        one(args)
    else:
        driver(args)


if __name__ == "__main__":
    main()
