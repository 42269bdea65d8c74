"""Occam's diagonal-Gaussian Bayesian MLP against NumPyro's mean-field ADVI on the same network and
data, in one run: wall time, test NMSE, and the time ratio.

Data: yearly sunspots (crates/occam-nn/data/sunspot_year.csv), 12 lags, train targets 1712-1920,
test 1921-1979, the series standardised with the training years' mean and sd (the committee paper's
protocol). Network: 12 inputs, H hidden erf(a/sqrt 2) units with input and output biases, Gaussian
noise; weight prior N(0, 1/alpha) with one alpha ~ Gamma(3e-4, 1e-4), beta ~ Gamma(0.05, 1e-4)
(shape, rate; the paper's hyper-priors). NMSE = test MSE / test-target variance (both sides).

Occam: `occam nn fit --spec` with one restart and the paper's schedule (100 pre-training iterations,
5 x (500 L-BFGS iterations + the closed-form q(alpha), q(beta) updates)), then `occam nn predict`;
the wall time includes both processes. NumPyro: AutoNormal (mean field over every latent variable in
the unconstrained space: weights, log alpha, log beta) with Adam, STEPS steps, the time including
JIT compilation and 1000 posterior draws for the predictive mean; float64 throughout (jax_enable_x64),
JAX on its default CPU threads, Occam's single restart on one thread.

Usage: bench/peers/setup_advi.sh; cargo build --release -p occam-cli;
       bench/peers/.venv-advi/bin/python bench/peers/advi_bnn.py [--hidden 8] [--steps 20000] [--seed 0]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "crates" / "occam-nn" / "data" / "sunspot_year.csv"


def sunspots(lags=12):
    d = np.loadtxt(DATA, delimiter=",", skiprows=1)
    years, values = d[:, 1].astype(int), d[:, 2]
    train_years = years <= 1920
    mean, sd = values[train_years].mean(), values[train_years].std()
    z = (values - mean) / sd
    x = np.array([z[n - lags:n][::-1] for n in range(lags, len(z))])
    t, ty = z[lags:], years[lags:]
    tr, te = ty <= 1920, (ty >= 1921) & (ty <= 1979)
    return x[tr], t[tr], x[te], t[te]


def nmse(pred, t):
    return float(np.mean((pred - t) ** 2) / np.var(t))


def run_occam(binary, x, t, xt, tt, hidden, seed):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        cols = [f"lag{i + 1}" for i in range(x.shape[1])]
        header = ",".join(cols + ["y"])
        np.savetxt(tmp / "train.csv", np.c_[x, t], delimiter=",", header=header, comments="",
                   fmt="%.17g")
        np.savetxt(tmp / "test.csv", xt, delimiter=",", header=",".join(cols), comments="",
                   fmt="%.17g")
        (tmp / "spec.json").write_text(json.dumps({"hidden": hidden, "restarts": 1, "seed": seed}))
        t0 = time.perf_counter()
        subprocess.run([binary, "nn", "fit", str(tmp / "train.csv"), "--target", "y",
                        "--spec", str(tmp / "spec.json"), "--out", str(tmp / "net.json")],
                       check=True, capture_output=True)
        out = subprocess.run([binary, "nn", "predict", str(tmp / "net.json"),
                              str(tmp / "test.csv")], check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    pred = np.loadtxt(out.stdout.splitlines(), delimiter=",", skiprows=1)[:, 0]
    return wall, nmse(pred, tt)


def run_numpyro(x, t, xt, tt, hidden, steps, seed):
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from jax.scipy.special import erf
    from numpyro.infer import SVI, Predictive, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal

    jax.config.update("jax_enable_x64", True)  # float64, as Occam
    n_in = x.shape[1]

    def net(xb, u, ub, v, vb):
        return jnp.dot(erf((xb @ u + ub) / jnp.sqrt(2.0)), v) + vb

    def model(xb, y=None):
        alpha = numpyro.sample("alpha", dist.Gamma(3e-4, 1e-4))
        beta = numpyro.sample("beta", dist.Gamma(0.05, 1e-4))
        s = 1.0 / jnp.sqrt(alpha)
        u = numpyro.sample("u", dist.Normal(0.0, s).expand([n_in, hidden]).to_event(2))
        ub = numpyro.sample("ub", dist.Normal(0.0, s).expand([hidden]).to_event(1))
        v = numpyro.sample("v", dist.Normal(0.0, s).expand([hidden]).to_event(1))
        vb = numpyro.sample("vb", dist.Normal(0.0, s))
        f = numpyro.deterministic("f", net(xb, u, ub, v, vb))
        numpyro.sample("y", dist.Normal(f, 1.0 / jnp.sqrt(beta)), obs=y)

    guide = AutoNormal(model, init_scale=0.01)
    svi = SVI(model, guide, numpyro.optim.Adam(0.01), Trace_ELBO())
    t0 = time.perf_counter()
    res = svi.run(jax.random.PRNGKey(seed), steps, jnp.asarray(x), jnp.asarray(t),
                  progress_bar=False)
    draws = Predictive(model, guide=guide, params=res.params, num_samples=1000,
                       return_sites=["f"])(jax.random.PRNGKey(seed + 1), jnp.asarray(xt))
    pred = np.asarray(draws["f"].mean(0))
    wall = time.perf_counter() - t0
    elbo = -float(res.losses[-1000:].mean())
    return wall, nmse(pred, tt), elbo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--occam", default=os.environ.get(
        "OCCAM_BIN", str(ROOT / "target" / "release" / "occam")))
    a = ap.parse_args()
    if not pathlib.Path(a.occam).is_file():
        sys.exit(f"{a.occam} missing: cargo build --release -p occam-cli")
    x, t, xt, tt = sunspots()
    import jax
    import numpyro

    print(f"sunspots 12 lags, H = {a.hidden}: {len(t)} training and {len(tt)} test patterns; "
          f"jax {jax.__version__}, numpyro {numpyro.__version__}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")
    ow, on = run_occam(a.occam, x, t, xt, tt, a.hidden, a.seed + 1)
    nw, nn, elbo = run_numpyro(x, t, xt, tt, a.hidden, a.steps, a.seed)
    print(f"occam  VB diagonal (paper schedule)        wall {ow:8.2f} s   test NMSE {on:.4f}")
    print(f"numpyro ADVI AutoNormal ({a.steps} Adam steps) wall {nw:8.2f} s   test NMSE {nn:.4f}"
          f"   (ELBO {elbo:.1f}, mean of the last 1000 steps)")
    print(f"time ratio numpyro / occam: {nw / ow:.2f}")


if __name__ == "__main__":
    main()
