#!/usr/bin/env python3
"""Generate BayesPy reference fixtures with a fully specified initialisation.

Writes to crates/occam-core/tests/fixtures/ (or the directory given as argv[1]):

  gmm_fixed_init.json        BayesPy's `gmm` example data and model; Q(z) set to a
                             stored N x K responsibilities array before the first sweep.
  bmm_fixed_init.json        BayesPy's `bmm` example data and model; Q(P) set to stored
                             Beta parameters, Q(R) = prior, before the first sweep.
  gaussian_mixture_1d.json   Winn's 1-D mixture (K=5, Gaussian means, Gamma precisions)
                             on the MASS `galaxies` velocities (in 1000 km/s); stored z_init.

Also checks (and prints) that this BayesPy reproduces the deterministic `quickstart`,
`regression`, `hmm_known` and `hmm_unknown` results of the shared bayespy_examples.json fixture.

Every random choice comes from an explicit numpy seed (numpy.random.default_rng). The
arrays actually used as the initial Q are read back from BayesPy and stored in the JSON
(floats written with Python's repr, which round-trips exactly), so a reimplementation
can start from bit-identical moments.

Run with the peer venv:  bench/peers/.venv/bin/python bench/peers/make_fixtures.py
"""

import csv
import json
import os
import sys
import warnings

import numpy as np
import bayespy
from bayespy.inference import VB
from bayespy.nodes import (Bernoulli, Beta, Categorical, CategoricalMarkovChain, Dirichlet, Gamma,
                           Gaussian, GaussianARD, Mixture, SumMultiply, Wishart)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXDIR = os.path.join(REPO, "crates", "occam-core", "tests", "fixtures")
EXAMPLES = os.path.join(FIXDIR, "bayespy_examples.json")
GALAXIES_CANDIDATES = [os.path.join(REPO, "..", "shared", "data", "galaxies.csv"),
                       "/work/shared/data/galaxies.csv"]

# No early stop: (L1 - L0)/div < -inf is never true, so every run does exactly `repeat` sweeps.
NO_STOP = -np.inf


def versions():
    return {"bayespy_version": bayespy.__version__, "numpy_version": np.__version__}


def tolist(a):
    return np.asarray(a, dtype=float).tolist()


def run(Q, order, iters):
    """Run `iters` full sweeps in `order`; return the L trace (one value per sweep).

    BayesPy computes L once per sweep, AFTER all nodes of the sweep were updated
    (VB._end_iteration_step), so L_trace[0] is the bound after the first sweep;
    the bound of the initial state is never part of VB.L."""
    Q.update(*order, repeat=iters, tol=NO_STOP, verbose=False)
    assert Q.iter == iters
    return Q.L[:Q.iter].copy()


def check_deterministic_examples(ex):
    """Re-run the deterministic examples; return (max abs, max rel) difference of L per example."""
    out = {}
    q = ex["quickstart"]
    mu = GaussianARD(0, 1e-6, name="mu")
    tau = Gamma(1e-6, 1e-6, name="tau")
    y = GaussianARD(mu, tau, plates=(len(q["y"]),), name="y")
    y.observe(np.array(q["y"]))
    Q = VB(mu, tau, y)
    Q.update(mu, tau, repeat=20, verbose=False)  # default tol 1e-5 as in the fixture
    L = Q.L[:Q.iter]
    ref = np.array(q["L_trace"])
    assert len(L) == len(ref), (len(L), len(ref))
    out["quickstart"] = (float(np.max(np.abs(L - ref))),
                         float(np.max(np.abs(L - ref) / np.abs(ref))))

    r = ex["regression"]
    x = np.array(r["x"], dtype=float)
    X = np.vstack([x, np.ones(len(x))]).T
    B = GaussianARD(0, 1e-6, shape=(2,), name="B")
    tau = Gamma(1e-3, 1e-3, name="tau")
    Y = GaussianARD(SumMultiply("i,i", B, X), tau, name="Y")
    Y.observe(np.array(r["y"]))
    Q = VB(Y, B, tau)
    Q.update(B, tau, repeat=1000, verbose=False)
    L = Q.L[:Q.iter]
    ref = np.array(r["L_trace_factorized"])
    assert len(L) == len(ref), (len(L), len(ref))
    out["regression"] = (float(np.max(np.abs(L - ref))),
                         float(np.max(np.abs(L - ref) / np.abs(ref))))

    # hmm_known: known parameters; one update of the chain gives the exact log-likelihood.
    h = ex["hmm_known"]
    Z = CategoricalMarkovChain([0.6, 0.4], [[0.7, 0.3], [0.4, 0.6]], states=len(h["y"]), name="Z")
    Y = Mixture(Z, Categorical, [[0.1, 0.4, 0.5], [0.6, 0.3, 0.1]], name="Y")
    Y.observe(np.array(h["y"]))
    Q = VB(Y, Z)
    Q.update(Z, repeat=1, verbose=False)
    ref = h["L_after_1_update"]
    out["hmm_known"] = (abs(Q.L[0] - ref), abs(Q.L[0] - ref) / abs(ref))

    # hmm_unknown: from the prior. NB the emission "0.25 I" of the fixture text is the PRECISION
    # (BayesPy Gaussian(mu, Lambda) takes a precision; the doc's data have std 2).
    h = ex["hmm_unknown"]
    K = 3
    a0 = Dirichlet(1e-3 * np.ones(K), name="a0")
    A = Dirichlet(1e-3 * np.ones(K), plates=(K,), name="A")
    Z = CategoricalMarkovChain(a0, A, states=len(h["y"]), name="Z")
    Y = Mixture(Z, Gaussian, np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 0.0]]),
                0.25 * np.identity(2), name="Y")
    Y.observe(np.array(h["y"]))
    Q = VB(Y, Z, A, a0)
    Q.update(Z, A, a0, repeat=1000, verbose=False)  # default tol 1e-5
    L = Q.L[:Q.iter]
    ref = np.array(h["L_trace"])
    assert len(L) == len(ref), (len(L), len(ref))
    out["hmm_unknown"] = (float(np.max(np.abs(L - ref))),
                          float(np.max(np.abs(L - ref) / np.abs(ref))))
    return out


def set_categorical_q(Z, resp):
    """Set Q(z_n) = Categorical(resp[n]) without touching any other node.

    set_parameters stores phi = log(resp) and recomputes u = softmax(phi), g; the
    returned array is Z.u[0] as BayesPy will use it (equal to resp up to ~1 ulp)."""
    Z.set_parameters([np.log(resp)])
    return np.array(Z.u[0], dtype=float)


def dirichlet_resp(rng, n, k):
    """Soft responsibilities: each row a Dirichlet(1,...,1) draw, floored away from 0."""
    r = rng.dirichlet(np.ones(k), size=n)
    r = np.maximum(r, 1e-3)
    return r / r.sum(axis=1, keepdims=True)


def gmm_fixed_init(ex, seed=20261121, iters=30):
    g = ex["gmm"]
    y = np.array(g["y"], dtype=float)
    N, D = y.shape
    K = 10
    alpha = Dirichlet(1e-5 * np.ones(K), name="alpha")
    z = Categorical(alpha, plates=(N,), name="z")
    mu = Gaussian(np.zeros(D), 1e-5 * np.identity(D), plates=(K,), name="mu")
    Lambda = Wishart(D, 1e-5 * np.identity(D), plates=(K,), name="Lambda")
    Y = Mixture(z, Gaussian, mu, Lambda, name="Y")
    Y.observe(y)
    Q = VB(Y, mu, Lambda, z, alpha)

    rng = np.random.default_rng(seed)
    z_init = set_categorical_q(z, dirichlet_resp(rng, N, K))
    L = run(Q, ["mu", "Lambda", "z", "alpha"], iters)

    a_post = np.array(alpha.phi[0], dtype=float)          # Dirichlet concentration
    Wphi0, Wphi1 = np.array(Lambda.phi[0]), np.array(Lambda.phi[1])  # -V/2, n/2
    zsum = np.sum(z.u[0], axis=0)
    return {
        "source": "bayespy doc/source/examples/gmm.rst data (y copied from bayespy_examples.json 'gmm'); "
                  "fixed initialisation made by bench/peers/make_fixtures.py",
        "model": "N=200, D=2, K=10; alpha ~ Dirichlet(1e-5 * 1_K); z_n ~ Categorical(alpha); "
                 "mu_k ~ Gaussian(mean 0, precision 1e-5 I_D) (BayesPy Gaussian node, joint over D); "
                 "Lambda_k ~ Wishart(n=D=2, V=1e-5 I_D) with BayesPy's parameterisation "
                 "p(L) ∝ |L|^((n-D-1)/2) exp(-tr(V L)/2), E[L] = n V^-1 (V is the rate/inverse-scale "
                 "matrix); y_n ~ Gaussian(mu_{z_n}, precision Lambda_{z_n}) (Mixture over the K plate). "
                 "Mean-field q(alpha) q(z) prod_k q(mu_k) q(Lambda_k).",
        "update_order": ["mu", "Lambda", "z", "alpha"],
        "iterations": iters,
        "init": (
            "Before the first sweep: q(alpha), q(mu_k), q(Lambda_k) are their priors (BayesPy's "
            "default initialize_from_prior at construction), i.e. q(alpha)=Dir(1e-5*1_K) so "
            "E[log alpha_k] = psi(1e-5)-psi(K*1e-5) for every k; q(mu_k)=N(0, prec 1e-5 I); "
            "q(Lambda_k)=Wishart(2, 1e-5 I) so E[Lambda_k] = 2e5 I and "
            "E[log|Lambda_k|] = sum_{i=1..D} psi((n+1-i)/2) - log|V| + D log 2. "
            "q(z_n) = Categorical(z_init[n]) set with z.set_parameters([log(r)]) where r = rows "
            "of numpy.random.default_rng(seed).dirichlet(ones(K), size=N), floored at 1e-3 and "
            "renormalised; z_init is z.u[0] read back from BayesPy (the exact moments used). "
            "The first update (mu) therefore uses E[Lambda_k] of the prior and z_init. "
            "L_trace[i] is the bound after sweep i+1 (BayesPy never records the bound of the "
            "initial state)."),
        "seed": seed,
        "y": tolist(y),
        "z_init": tolist(z_init),
        "L_trace": tolist(L),
        "L_final": float(L[-1]),
        "post": {
            "alpha_concentration": tolist(a_post),
            "E_alpha": tolist(a_post / a_post.sum()),
            "E_log_alpha": tolist(alpha.u[0]),
            "E_mu": tolist(mu.u[0]),
            "E_mu_muT": tolist(mu.u[1]),
            "E_Lambda": tolist(Lambda.u[0]),
            "E_logdet_Lambda": tolist(Lambda.u[1]),
            "Lambda_n": tolist(2 * Wphi1),
            "Lambda_V": tolist(-2 * Wphi0),
            "z_sum": tolist(zsum),
            "effective_components_sum_z_gt_1": int(np.sum(zsum > 1.0)),
        },
        **versions(),
    }


def bmm_fixed_init(ex, seed=20261122, iters=30):
    b = ex["bmm"]
    x = np.array(b["x"], dtype=int)
    N, D = x.shape
    K = 10
    R = Dirichlet(K * [1e-5], name="R")
    Z = Categorical(R, plates=(N, 1), name="Z")
    P = Beta([0.5, 0.5], plates=(D, K), name="P")
    X = Mixture(Z, Bernoulli, P, name="X")
    X.observe(x)
    Q = VB(Z, R, X, P)

    rng = np.random.default_rng(seed)
    # Beta parameters (a, b) of q(P_dk), each uniform on [0.5, 5.5): an informative but
    # random start (like BayesPy's random init, which draws P and sets it as a point).
    p_init = 0.5 + 5.0 * rng.random((D, K, 2))
    P.initialize_from_parameters(p_init)
    assert np.array_equal(np.asarray(P.phi[0]), p_init)
    L = run(Q, ["Z", "R", "P"], iters)

    r_post = np.array(R.phi[0], dtype=float)
    zsum = np.sum(Z.u[0], axis=(0, 1))
    return {
        "source": "bayespy doc/source/examples/bmm.rst data (x copied from bayespy_examples.json 'bmm'); "
                  "fixed initialisation made by bench/peers/make_fixtures.py",
        "model": "N=100, D=10, K=10; R ~ Dirichlet(1e-5 * 1_K); z_n ~ Categorical(R) (BayesPy plates "
                 "(N,1)); P_dk ~ Beta(0.5, 0.5) (plates (D,K)); x_nd ~ Bernoulli(P_{d,z_n}) "
                 "(Mixture over the K plate of P). Mean-field q(R) q(Z) prod_dk q(P_dk).",
        "update_order": ["Z", "R", "P"],
        "iterations": iters,
        "init": (
            "Before the first sweep: q(R) = prior Dir(1e-5*1_K) (E[log R_k] equal for all k); "
            "q(P_dk) = Beta(P_init[d][k][0], P_init[d][k][1]) set with "
            "P.initialize_from_parameters(P_init) (phi = P_init exactly; "
            "E[log P] = psi(a)-psi(a+b), E[log(1-P)] = psi(b)-psi(a+b)); "
            "P_init = 0.5 + 5*numpy.random.default_rng(seed).random((D,K,2)). "
            "q(Z) is not needed: Z is updated first. L_trace[i] is the bound after sweep i+1."),
        "seed": seed,
        "x": x.tolist(),
        "P_init": tolist(p_init),
        "L_trace": tolist(L),
        "L_final": float(L[-1]),
        "post": {
            "R_concentration": tolist(r_post),
            "E_R": tolist(r_post / r_post.sum()),
            "E_log_R": tolist(R.u[0]),
            "P_beta_params": tolist(P.phi[0]),
            "E_P": tolist(P.phi[0][..., 0] / P.phi[0].sum(axis=-1)),
            "E_log_P": tolist(P.u[0]),
            "z_sum": tolist(zsum),
            "effective_components_sum_z_gt_1": int(np.sum(zsum > 1.0)),
        },
        **versions(),
    }


def load_galaxies():
    for path in GALAXIES_CANDIDATES:
        if os.path.exists(path):
            with open(path) as f:
                rows = list(csv.DictReader(f))
            return np.array([float(r["dat"]) for r in rows]) / 1000.0, path
    raise FileNotFoundError("galaxies.csv not found in " + ", ".join(GALAXIES_CANDIDATES))


def gaussian_mixture_1d(seed=20261123, iters=30):
    y, _ = load_galaxies()
    N, K = len(y), 5
    alpha = Dirichlet(np.ones(K), name="alpha")
    z = Categorical(alpha, plates=(N,), name="z")
    mu = GaussianARD(0, 1e-3, plates=(K,), name="mu")
    tau = Gamma(1e-3, 1e-3, plates=(K,), name="tau")
    Y = Mixture(z, GaussianARD, mu, tau, name="Y")
    Y.observe(y)
    Q = VB(Y, mu, tau, z, alpha)

    rng = np.random.default_rng(seed)
    z_init = set_categorical_q(z, dirichlet_resp(rng, N, K))
    L = run(Q, ["mu", "tau", "z", "alpha"], iters)

    a_post = np.array(alpha.phi[0], dtype=float)
    zsum = np.sum(z.u[0], axis=0)
    return {
        "source": "MASS galaxies (shared/data/galaxies.csv, 82 velocities in km/s, divided by 1000); "
                  "model after Winn & Bishop's 1-D VMP mixture; made by bench/peers/make_fixtures.py",
        "model": "N=82, K=5; alpha ~ Dirichlet(1_K); z_n ~ Categorical(alpha); mu_k ~ N(0, precision "
                 "1e-3); tau_k ~ Gamma(shape 1e-3, rate 1e-3); y_n ~ N(mu_{z_n}, precision tau_{z_n}). "
                 "Mean-field q(alpha) q(z) prod_k q(mu_k) q(tau_k) (BayesPy GaussianARD and Gamma nodes).",
        "update_order": ["mu", "tau", "z", "alpha"],
        "iterations": iters,
        "init": (
            "Before the first sweep: q(alpha) = Dir(1_K), q(mu_k) = N(0, prec 1e-3), "
            "q(tau_k) = Gamma(1e-3, 1e-3) (priors; E[tau_k] = 1, E[log tau_k] = psi(1e-3)-log(1e-3)); "
            "q(z_n) = Categorical(z_init[n]) set with z.set_parameters([log(r)]), r = rows of "
            "numpy.random.default_rng(seed).dirichlet(ones(K), size=N) floored at 1e-3 and "
            "renormalised; z_init is z.u[0] read back from BayesPy. L_trace[i] is the bound after "
            "sweep i+1."),
        "seed": seed,
        "y": tolist(y),
        "z_init": tolist(z_init),
        "L_trace": tolist(L),
        "L_final": float(L[-1]),
        "post": {
            "alpha_concentration": tolist(a_post),
            "E_alpha": tolist(a_post / a_post.sum()),
            "E_log_alpha": tolist(alpha.u[0]),
            "E_mu": tolist(mu.u[0]),
            "E_mu2": tolist(mu.u[1]),
            "E_tau": tolist(tau.u[0]),
            "E_log_tau": tolist(tau.u[1]),
            "tau_shape": tolist(tau.phi[1]),
            "tau_rate": tolist(-np.asarray(tau.phi[0])),
            "z_sum": tolist(zsum),
            "effective_components_sum_z_gt_1": int(np.sum(zsum > 1.0)),
        },
        **versions(),
    }


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else FIXDIR
    with open(EXAMPLES) as f:
        ex = json.load(f)

    for name, (dabs, drel) in check_deterministic_examples(ex).items():
        print(f"reproduce {name}: max |dL| = {dabs:.3e}, max rel = {drel:.3e}")

    warnings.simplefilter("error")  # a decreasing bound would mean a broken fixture
    for fname, fn in [("gmm_fixed_init.json", gmm_fixed_init),
                      ("bmm_fixed_init.json", bmm_fixed_init),
                      ("gaussian_mixture_1d.json", gaussian_mixture_1d)]:
        fx = fn() if fn is gaussian_mixture_1d else fn(ex)
        path = os.path.join(outdir, fname)
        with open(path, "w") as f:
            json.dump(fx, f, indent=1)
            f.write("\n")
        L = fx["L_trace"]
        print(f"{fname}: L[0] = {L[0]:.10f}, L[-1] = {L[-1]:.10f}, "
              f"components(sum z > 1) = {fx['post']['effective_components_sum_z_gt_1']}, "
              f"{os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
