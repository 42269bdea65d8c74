#!/usr/bin/env python3
"""Bernoulli mixture (issue 25): seeded data, BayesPy's fit with its documented initialisation.

Data: K_true components with weights ~ Dirichlet(1_K) and probabilities P_kd ~ Beta(0.5, 0.5),
x_nd ~ Bernoulli(P_{z_n d}), all drawn from numpy.random.default_rng(--data-seed). Written to
--out as CSV with header x_1..x_D (read by `occam fit examples/bayespy/bmm/bmm.occam
--data x=FILE`, whose model is the one fitted here).

Model (BayesPy's doc/source/examples/bmm.rst, the model of examples/bayespy/bmm/bmm.occam):
    R ~ Dirichlet(1e-5 * 1_K); z_n ~ Categorical(R); P_kd ~ Beta(0.5, 0.5);
    x_nd ~ Bernoulli(P_{z_n d}).
Initialisation as in that example: P.initialize_from_random() after numpy.random.seed(seed);
VB(Z, R, X, P), so each sweep updates Z, R, P. Runs to --tol (BayesPy's relative change of L)
or --max-iter sweeps, and prints one line per seed: seed, sweeps, L (BayesPy's
loglikelihood_lowerbound, all constants; the same terms as Occam's L, see
crates/occam-core/tests/it/bayespy_fixtures.rs `bmm_fixed_init_trace`), components with
sum_n q(z_n = k) >= 1.
Usage: bayespy_bmm.py --n 10000 --d 50 --k 10 --out FILE [--seeds 1,2,3] [--data-seed 25]
"""

import argparse
import time

import numpy as np


def make_data(n, d, k, seed):
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(k))
    p = rng.beta(0.5, 0.5, size=(k, d))
    z = rng.choice(k, size=n, p=w)
    return (rng.random((n, d)) < p[z]).astype(np.int64)


def fit(x, k, seed, tol, max_iter):
    from bayespy.inference import VB
    from bayespy.nodes import Bernoulli, Beta, Categorical, Dirichlet, Mixture

    n, d = x.shape
    R = Dirichlet(k * [1e-5], name="R")
    Z = Categorical(R, plates=(n, 1), name="Z")
    P = Beta([0.5, 0.5], plates=(d, k), name="P")
    X = Mixture(Z, Bernoulli, P, name="X")
    X.observe(x)
    np.random.seed(seed)
    P.initialize_from_random()
    Q = VB(Z, R, X, P)
    t0 = time.perf_counter()
    Q.update(repeat=max_iter, tol=tol, verbose=False)
    secs = time.perf_counter() - t0
    zsum = np.sum(Z.u[0], axis=(0, 1))
    return Q.iter, float(Q.L[Q.iter - 1]), int(np.sum(zsum >= 1.0)), secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--data-seed", type=int, default=25)
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--max-iter", type=int, default=2000)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    x = make_data(args.n, args.d, args.k, args.data_seed)
    header = ",".join(f"x_{j + 1}" for j in range(args.d))
    np.savetxt(args.out, x, fmt="%d", delimiter=",", header=header, comments="")
    print(f"data {args.out}: N={args.n} D={args.d} K={args.k} data_seed={args.data_seed}")
    for s in [int(v) for v in args.seeds.split(",")]:
        it, L, comps, secs = fit(x, args.k, s, args.tol, args.max_iter)
        print(f"bayespy seed={s} sweeps={it} L={L:.6f} components={comps} secs={secs:.1f}")


if __name__ == "__main__":
    main()
