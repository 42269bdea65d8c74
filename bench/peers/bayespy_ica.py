#!/usr/bin/env python3
"""Bayesian ICA, Occam against BayesPy on the same data, model, q factorisation, start and update
order, in one run (issue 10, "Performance": 10 sources, 20 sensors, N = 10,000, at least 20x
faster per iteration than BayesPy at equal bound).

The model is examples/ica/ica.occam with I sources: t_n = W x_n + mu + noise, x_n = (s_1n, ..., s_In),
each source a two-component mixture of zero-mean Gaussians, s_in ~ N(0, 1/g_i[z_in]),
z_in ~ Categorical(pi_i), pi_i ~ Dirichlet(1, 1), g_ik ~ Gamma(1e-3, 1e-3); the rows of W
~ N(0, diag(alpha)^-1) (ARD on the columns), alpha_i ~ Gamma(1e-3, 1e-3), mu_p ~ N(0, 1e3),
beta ~ Gamma(1e-3, 1e-3). q is factorised over every source and indicator (q(s_in) q(z_in)), with
each row of W joint over the sources, as in the model file.

* Occam: the model language has no per-element mixture over a plate that is then read as a
  vector (x[N] over I is built by `concat` from scalars), so the script writes the model text
  with I copies of the per-source lines.
* BayesPy 0.6.6: s_i = Mixture(z_i, Gaussian, 0, Lambda_i) of one-dimensional Gaussians joined by
  ConcatGaussian (its Mixture cannot give GaussianARD a shape, and a scalar GaussianARD with a
  source plate cannot enter a sum over that plate). Lambda_ik ~ Wishart(2e-3, 2e-3) is the 1x1
  Wishart, the same distribution as Gamma(1e-3, 1e-3) on g_ik.
* Start: W at the point mass 0.5 everywhere (`init W = 0.5`; BayesPy's initialize_from_value),
  everything else at its prior. Occam's random starts cannot be passed to BayesPy, and this is a
  start both can reproduce exactly, so the bounds after each sweep must agree. With all columns of
  W equal, the sweeps stay in a rank-one subspace: a poor fit, but every update does its full
  work, so the cost per iteration is that of any fit.
* Order: s_1..s_I, z_1..z_I, g_1..g_I, pi_1..pi_I, mu, W, beta, alpha in every sweep (Occam's
  --order; BayesPy's VB node order).
* Time per iteration: BayesPy times each q.update(repeat=1) after the first; Occam's is the wall
  time of an ITERS-sweep fit minus that of a one-sweep fit, over ITERS - 1 (parsing, set-up and
  the first sweep cancel; best of --repeats). Both wall clocks, in the same run.

The Occam side is crates/occam/examples/bench_ica.rs (`cargo build --release -p occam --example
bench_ica`), which reads the generated model file with the library, as `occam fit` does.

Usage: bench/peers/.venv/bin/python bench/peers/bayespy_ica.py [--n 10000] [--sensors 20]
       [--sources 10] [--iters 6] [--repeats 2] [--occam target/release/examples/bench_ica]
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def data(n, p, i, seed):
    """Sources: each an equal mixture of N(0, 1) and N(0, 25); mixing W ~ N(0, 1); offsets
    mu ~ N(0, 1); noise std 0.3."""
    rng = np.random.default_rng(seed)
    wide = rng.random((n, i)) < 0.5
    s = rng.standard_normal((n, i)) * np.where(wide, 5.0, 1.0)
    w = rng.standard_normal((p, i))
    mu = rng.standard_normal(p)
    return s @ w.T + mu + 0.3 * rng.standard_normal((n, p))


def model_text(i):
    lines = [
        f"# Bayesian ICA with {i} sources (bench/peers/bayespy_ica.py; examples/ica/ica.occam generalised).",
        "plates N, P from data t",
        f"plate I = {i}",
        "plate K = 2",
        "alpha[I] ~ Gamma(shape = 1e-3, rate = 1e-3)",
        "W[P] over I ~ GaussianARD(mean = 0, precision = alpha)",
    ]
    for j in range(1, i + 1):
        lines += [
            f"pi{j} ~ Dirichlet(1) over K",
            f"g{j}[K] ~ Gamma(shape = 1e-3, rate = 1e-3)",
            f"z{j}[N] ~ Categorical(pi{j})",
            f"s{j}[N] ~ Gaussian(mean = 0, precision = g{j}[z{j}])",
        ]
    lines += [
        "x[N] over I = concat(" + ", ".join(f"s{j}" for j in range(1, i + 1)) + ")",
        "mu[P] ~ Gaussian(mean = 0, precision = 1e-3)",
        "beta ~ Gamma(shape = 1e-3, rate = 1e-3)",
        "t[N, P] ~ Gaussian(mean = dot(W[P], x[N]) + mu[P], precision = beta)",
        "init W = 0.5",
    ]
    lines += [f"init s{j} = prior" for j in range(1, i + 1)]
    return "\n".join(lines) + "\n"


def order(i):
    names = []
    for v in ("s", "z", "g", "pi"):
        names += [f"{v}{j}" for j in range(1, i + 1)]
    return names + ["mu", "W", "beta", "alpha"]


def bayespy(t, i, iters):
    from bayespy.inference import VB
    from bayespy.inference.vmp.nodes.concat_gaussian import ConcatGaussian
    from bayespy.nodes import (Add, Categorical, Dirichlet, Gamma, Gaussian, GaussianARD,
                               Mixture, SumMultiply, Wishart)

    n, p = t.shape
    k = 2
    pis = [Dirichlet(np.ones(k), name=f"pi{j}") for j in range(1, i + 1)]
    gs = [Wishart(2e-3, 2e-3 * np.ones((1, 1)), plates=(k,), name=f"g{j}") for j in range(1, i + 1)]
    zs = [Categorical(pis[j], plates=(n, 1), name=f"z{j + 1}") for j in range(i)]
    ss = [Mixture(zs[j], Gaussian, np.zeros(1), gs[j], name=f"s{j + 1}") for j in range(i)]
    x = ConcatGaussian(*ss)
    alpha = Gamma(1e-3, 1e-3, plates=(i,), name="alpha")
    w = GaussianARD(0, alpha, shape=(i,), plates=(1, p), name="W")
    mu = GaussianARD(0, 1e-3, plates=(p,), name="mu")
    beta = Gamma(1e-3, 1e-3, name="beta")
    y = GaussianARD(Add(SumMultiply("i,i", w, x), mu), beta, name="t")
    y.observe(t)
    w.initialize_from_value(np.full((1, p, i), 0.5))
    q = VB(y, *ss, *zs, *gs, *pis, mu, w, beta, alpha)
    bounds, times = [], []
    for _ in range(iters):
        start = time.perf_counter()
        q.update(repeat=1, verbose=False)
        times.append(time.perf_counter() - start)
        bounds.append(float(q.compute_lowerbound()))
    return bounds, times


def occam(binary, model, t_csv, i, iters, repeats):
    """Runs the Occam side (crates/occam/examples/bench_ica.rs); returns its JSON report."""
    cmd = [binary, model, t_csv, ",".join(order(i)), str(iters), str(repeats)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"occam failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--sensors", type=int, default=20)
    ap.add_argument("--sources", type=int, default=10)
    ap.add_argument("--iters", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--occam", default=f"{ROOT}/target/release/examples/bench_ica")
    a = ap.parse_args()
    t = data(a.n, a.sensors, a.sources, a.seed)
    with tempfile.TemporaryDirectory() as d:
        t_csv = f"{d}/t.csv"
        header = ",".join(f"p{j}" for j in range(a.sensors))
        np.savetxt(t_csv, t, delimiter=",", fmt="%.17g", header=header, comments="")
        model = f"{d}/ica{a.sources}.occam"
        with open(model, "w") as f:
            f.write(model_text(a.sources))
        occ = occam(a.occam, model, t_csv, a.sources, a.iters, a.repeats)
    bp_bounds, bp_times = bayespy(t, a.sources, a.iters)
    occ_ms = occ["ms_per_sweep"]
    bp_ms = 1e3 * float(np.mean(bp_times[1:]))
    rows = []
    for it, (b_o, b_p) in enumerate(zip(occ["bound_trace"], bp_bounds), start=1):
        rows.append({"iteration": it, "occam": b_o, "bayespy": b_p,
                     "relative_difference": abs(b_o - b_p) / abs(b_p)})
    for r in rows:
        print(json.dumps(r))
    load = os.getloadavg()
    print(json.dumps({
        "case": f"ica N={a.n} P={a.sensors} I={a.sources} K=2, {a.iters} sweeps from W = 0.5",
        "occam_ms_per_iteration": occ_ms,
        "occam_wall_s": {"one_sweep": occ["seconds_one_sweep"],
                         f"{a.iters}_sweeps": occ["seconds_all_sweeps"]},
        "bayespy_ms_per_iteration": bp_ms,
        "bayespy_s_each_iteration": bp_times,
        "ratio_bayespy_over_occam": bp_ms / occ_ms,
        "final_bound": {"occam": occ["bound_trace"][-1], "bayespy": bp_bounds[-1]},
        "load_average": load,
    }))


if __name__ == "__main__":
    main()
