#!/usr/bin/env python3
"""Fit a K-component Bayesian GMM with BayesPy (VMP) and print one JSON timing line.

Model (BayesPy's documented gmm example, the model Occam uses):
    alpha ~ Dirichlet(1e-5 * 1_K)
    z_n ~ Categorical(alpha)
    mu_k ~ Gaussian(0, precision 1e-5 I_D)             (independent of Lambda_k)
    Lambda_k ~ Wishart(n=D, V=1e-5 I_D)                 (E[Lambda] = n V^-1; V is a rate matrix)
    y_n ~ Gaussian(mu_{z_n}, precision Lambda_{z_n})
Factorisation q(alpha) q(z) prod_k q(mu_k) q(Lambda_k); sweep order mu, Lambda, z, alpha.

Initialisation: Q(z) one-hot at the labels of --init (z.initialize_from_value); without --init,
z.initialize_from_random() after numpy.random.seed(--seed). The other factors start at their priors.
Runs --warmup untimed sweeps, then times --iters sweeps with no early stopping (each sweep includes
BayesPy's bound evaluation, as in VB.update). bound = BayesPy's L after the last sweep (nats, all
constants). components = #{k : N * E[w_k] > 1} with E[w] = E_q[alpha] normalised.
Usage: bayespy_gmm.py --data FILE --k K --iters I [--init FILE] [--warmup W] [--case NAME]
"""

import time

import numpy as np

from peerlib import effective_components, emit, load_data, load_labels, parse_args


def main():
    args = parse_args("BayesPy Bayesian GMM benchmark")
    y = load_data(args.data)
    labels = load_labels(args.init, len(y), args.k) if args.init else None

    from bayespy.inference import VB
    from bayespy.nodes import Categorical, Dirichlet, Gaussian, Mixture, Wishart

    N, D = y.shape
    K = args.k
    alpha = Dirichlet(1e-5 * np.ones(K), name="alpha")
    z = Categorical(alpha, plates=(N,), name="z")
    mu = Gaussian(np.zeros(D), 1e-5 * np.identity(D), plates=(K,), name="mu")
    Lambda = Wishart(D, 1e-5 * np.identity(D), plates=(K,), name="Lambda")
    Y = Mixture(z, Gaussian, mu, Lambda, name="Y")
    Y.observe(y)
    if labels is not None:
        z.initialize_from_value(labels)
    else:
        np.random.seed(args.seed)
        z.initialize_from_random()
    Q = VB(Y, mu, Lambda, z, alpha)
    order = (mu, Lambda, z, alpha)

    no_stop = -np.inf  # (L1 - L0)/|L| < -inf never holds: every call runs all sweeps
    if args.warmup > 0:
        Q.update(*order, repeat=args.warmup, tol=no_stop, verbose=False)
    times, cpu_times = [], []
    for _ in range(args.iters):  # one sweep per call: same work as repeat=iters, timed per sweep
        t0, c0 = time.perf_counter(), time.process_time()
        Q.update(*order, repeat=1, tol=no_stop, verbose=False)
        times.append(time.perf_counter() - t0)
        cpu_times.append(time.process_time() - c0)
    assert Q.iter == args.warmup + args.iters

    conc = np.asarray(alpha.phi[0])
    emit("bayespy", args, times, cpu_times, Q.L[Q.iter - 1], effective_components(N, conc / conc.sum()))


if __name__ == "__main__":
    main()
