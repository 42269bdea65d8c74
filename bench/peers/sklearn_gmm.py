#!/usr/bin/env python3
"""Fit a K-component Bayesian GMM with scikit-learn and print one JSON timing line.

BayesianGaussianMixture(covariance_type='full', weight_concentration_prior_type=
'dirichlet_distribution') with priors chosen to match bayespy_gmm.py as closely as sklearn allows:
    weight_concentration_prior = 1e-5        (alpha ~ Dirichlet(1e-5 * 1_K))
    mean_prior = 0, mean_precision_prior = 1e-5
    degrees_of_freedom_prior = D, covariance_prior = 1e-5 I_D
        (sklearn's Wishart W(Lambda | W0, nu0) has E[Lambda] = nu0 W0 and covariance_prior = W0^-1,
         so this is BayesPy's Wishart(n=D, V=1e-5 I))
    reg_covar = 0                            (no jitter added: the model above exactly)
Difference that remains: sklearn's prior is Normal-Wishart, mu_k | Lambda_k ~ N(0, (1e-5 Lambda_k)^-1),
with a joint q(mu_k, Lambda_k); BayesPy/Occam use independent mu_k ~ N(0, 1e-5^-1 I) and a factorised
q(mu_k) q(Lambda_k). So fits and bounds are close but not identical.
sklearn's lower_bound_ omits the constant terms (and it is only valid right after an M-step), so
`bound` is NOT comparable in value with BayesPy's/Occam's L; compare its components and speed only.

Timing: sklearn's own fit loop (e-step, m-step, _compute_lower_bound; same code as
BaseMixture.fit_predict) is run here explicitly so that only the iterations are timed, with no
tolerance check (every run does --iters iterations) and without fit's final extra e-step. Start:
responsibilities one-hot at the --init labels (then sklearn's _initialize M-step); without --init,
sklearn's 'random_from_data' with random_state=--seed. --warmup untimed iterations come first.
Usage: sklearn_gmm.py --data FILE --k K --iters I [--init FILE] [--warmup W] [--case NAME]
"""

import time
import warnings

import numpy as np

from peerlib import effective_components, emit, load_data, load_labels, parse_args


def main():
    args = parse_args("scikit-learn BayesianGaussianMixture benchmark")
    X = load_data(args.data)
    labels = load_labels(args.init, len(X), args.k) if args.init else None

    from sklearn.mixture import BayesianGaussianMixture
    from sklearn.utils import check_random_state

    N, D = X.shape
    K = args.k
    est = BayesianGaussianMixture(
        n_components=K, covariance_type="full",
        weight_concentration_prior_type="dirichlet_distribution",
        weight_concentration_prior=1e-5, mean_prior=np.zeros(D), mean_precision_prior=1e-5,
        degrees_of_freedom_prior=float(D), covariance_prior=1e-5 * np.identity(D),
        reg_covar=0.0, max_iter=args.iters, tol=0.0, init_params="random_from_data",
        random_state=args.seed)

    warnings.simplefilter("ignore")
    est._check_parameters(X, xp=np)
    if labels is not None:
        resp = np.zeros((N, K))
        resp[np.arange(N), labels] = 1.0
        est._initialize(X, resp)
    else:
        est._initialize_parameters(X, check_random_state(args.seed), xp=np)

    def iteration():
        log_prob_norm, log_resp = est._e_step(X, xp=np)
        est._m_step(X, log_resp, xp=np)
        return est._compute_lower_bound(log_resp, log_prob_norm)

    for _ in range(args.warmup):
        iteration()
    times, cpu_times = [], []
    for _ in range(args.iters):
        t0, c0 = time.perf_counter(), time.process_time()
        bound = iteration()
        times.append(time.perf_counter() - t0)
        cpu_times.append(time.process_time() - c0)

    conc = est.weight_concentration_
    emit("sklearn", args, times, cpu_times, bound, effective_components(N, conc / conc.sum()),
         bound_note="sklearn lower_bound_, constants omitted")


if __name__ == "__main__":
    main()
