#!/usr/bin/env python3
"""The peers' side of compare_chains.py: one JSON line with the time per full iteration, the set-up
time and the final bound, on the data the script wrote (see bench_chain.rs for the models).

gauss (BayesPy 0.6.6): a0 ~ Dirichlet(1e-3), A ~ Dirichlet(1e-3, plates=(K,)),
    Z ~ CategoricalMarkovChain(a0, A, states=T), mu ~ Gaussian(0, 1e-3 I, plates=(K,)),
    Y ~ Mixture(Z, Gaussian, mu, I); mu starts at the shared mu0; VB.update(Z, mu, A, a0, repeat=1).
cat (hmmlearn 0.3.3): VariationalCategoricalHMM(K) with priors startprob/transmat 1e-3 and emission 1
    (the same as Occam's), started where Occam starts (init_params="": start and transition posteriors
    at their priors, emission posteriors (T/K)·b0), n_iter = iters, tol = -inf:
    time per iteration = fit time / iterations.
lds (BayesPy 0.6.6, its linear state-space example): alpha, gamma ~ Gamma(1e-5, 1e-5, plates=(D,)),
    A ~ GaussianARD(0, alpha, shape=(D,), plates=(D,)), X ~ GaussianMarkovChain(0, 1e-3 I, A, 1, n=T),
    C ~ GaussianARD(0, gamma, shape=(D,), plates=(M, 1)), tau ~ Gamma(1e-5, 1e-5),
    Y ~ GaussianARD(SumMultiply('i,i', C, X), tau); C starts at the shared c0; order X, C, gamma, A,
    alpha, tau (--k is D).
Usage: peer_hmm.py --model gauss|cat --dir DIR --t T --k K (--d D | --m M) --iters I
"""

import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    for name in ["--model", "--dir"]:
        ap.add_argument(name, required=True)
    for name in ["--t", "--k", "--d", "--m", "--iters", "--seqs"]:
        ap.add_argument(name, type=int)
    a = ap.parse_args()
    times = []
    if a.model == "gauss":
        from bayespy.inference import VB
        from bayespy.nodes import CategoricalMarkovChain, Dirichlet, Gaussian, Mixture

        y = np.fromfile(f"{a.dir}/y.f64").reshape(a.t, a.d)
        mu0 = np.fromfile(f"{a.dir}/mu0.f64").reshape(a.k, a.d)
        t0 = time.perf_counter()
        a0 = Dirichlet(1e-3 * np.ones(a.k), name="a0")
        A = Dirichlet(1e-3 * np.ones(a.k), plates=(a.k,), name="A")
        Z = CategoricalMarkovChain(a0, A, states=a.t, name="Z")
        mu = Gaussian(np.zeros(a.d), 1e-3 * np.identity(a.d), plates=(a.k,), name="mu")
        Y = Mixture(Z, Gaussian, mu, np.identity(a.d), name="Y")
        Y.observe(y)
        mu.initialize_from_value(mu0)
        Q = VB(Y, Z, mu, A, a0)
        setup = time.perf_counter() - t0
        for _ in range(a.iters):
            t = time.perf_counter()
            Q.update(Z, mu, A, a0, repeat=1, verbose=False)
            times.append(time.perf_counter() - t)
        bound, peer = float(Q.L[Q.iter - 1]), "bayespy"
        trace = [float(v) for v in Q.L[: Q.iter]]
        case = f"hmm_gauss_t{a.t}_k{a.k}_d{a.d}_s1"
    elif a.model == "lds":
        from bayespy.inference import VB
        from bayespy.nodes import Gamma, GaussianARD, GaussianMarkovChain, SumMultiply

        d = a.k
        y = np.fromfile(f"{a.dir}/y.f64").reshape(a.t, a.m).T
        c0 = np.fromfile(f"{a.dir}/c0.f64").reshape(a.m, 1, d)
        t0 = time.perf_counter()
        alpha = Gamma(1e-5, 1e-5, plates=(d,), name="alpha")
        A = GaussianARD(0, alpha, shape=(d,), plates=(d,), name="A")
        X = GaussianMarkovChain(np.zeros(d), 1e-3 * np.identity(d), A, np.ones(d), n=a.t, name="X")
        gamma = Gamma(1e-5, 1e-5, plates=(d,), name="gamma")
        C = GaussianARD(0, gamma, shape=(d,), plates=(a.m, 1), name="C")
        F = SumMultiply("i,i", C, X)
        tau = Gamma(1e-5, 1e-5, name="tau")
        Y = GaussianARD(F, tau, name="Y")
        Y.observe(y)
        C.initialize_from_value(c0)
        Q = VB(Y, X, C, gamma, A, alpha, tau)
        setup = time.perf_counter() - t0
        for _ in range(a.iters):
            t = time.perf_counter()
            Q.update(X, C, gamma, A, alpha, tau, repeat=1, verbose=False)
            times.append(time.perf_counter() - t)
        bound, peer = float(Q.L[Q.iter - 1]), "bayespy"
        trace = [float(v) for v in Q.L[: Q.iter]]
        case = f"lds_t{a.t}_d{d}_m{a.m}"
    else:
        from hmmlearn.vhmm import VariationalCategoricalHMM

        y = np.fromfile(f"{a.dir}/y.f64").astype(np.int64).reshape(-1, 1)
        t0 = time.perf_counter()
        h = VariationalCategoricalHMM(n_components=a.k, n_iter=a.iters, tol=-np.inf,
                                      startprob_prior=1e-3, transmat_prior=1e-3,
                                      emissionprob_prior=1.0, n_features=a.m, random_state=0,
                                      init_params="")
        # Occam's start: q(start), q(transitions) = their priors, q(B_k) = Dirichlet((T/K)·b0_k).
        b0 = np.fromfile(f"{a.dir}/b0.f64").reshape(a.k, a.m)
        h.startprob_prior_ = np.full(a.k, 1e-3)
        h.startprob_posterior_ = np.full(a.k, 1e-3)
        h.transmat_prior_ = np.full((a.k, a.k), 1e-3)
        h.transmat_posterior_ = np.full((a.k, a.k), 1e-3)
        h.emissionprob_prior_ = np.full((a.k, a.m), 1.0)
        h.emissionprob_posterior_ = b0 * (a.t / a.k)
        setup = time.perf_counter() - t0
        t = time.perf_counter()
        h.fit(y)
        total = time.perf_counter() - t
        iters = h.monitor_.iter
        times = [total / iters] * iters
        trace = [float(v) for v in h.monitor_.history]
        bound, peer = trace[-1], "hmmlearn"
        case = f"hmm_cat_t{a.t}_k{a.k}_m{a.m}_s1"
    ms = [1e3 * v for v in times]
    print(json.dumps({"peer": peer, "case": case, "ms_per_iter": float(np.mean(ms)),
                      "ms_per_iter_median": float(np.median(ms)), "setup_ms": 1e3 * setup,
                      "iterations": len(ms), "bound": bound, "trace": trace}), flush=True)


if __name__ == "__main__":
    main()
