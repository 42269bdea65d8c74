#!/usr/bin/env python3
"""Re-derive the fixed-initialisation fixtures with plain numpy/scipy (no BayesPy).

Reads gmm_fixed_init.json, bmm_fixed_init.json and gaussian_mixture_1d.json from
crates/occam-core/tests/fixtures/ (or the directory in argv[1]), runs the closed-form VMP sweeps
written out below from the stored data and init arrays, and prints the largest relative
difference between this L trace and the stored BayesPy trace. It is the written-out recipe a
reimplementation follows: update formulas, the order of updates, and every term of the bound
(BayesPy's L = sum over nodes of E[log p(node | parents)] - E[log q(node)], data terms included,
all normalising constants kept; L is evaluated once after each full sweep).

Conventions (BayesPy): Wishart(n, V) has density |L|^((n-D-1)/2) exp(-tr(V L)/2) / norm, so
E[L] = n V^-1 and E[log|L|] = sum_{i<D} psi((n-i)/2) + D log 2 - log|V|. Dirichlet(a) and Beta(a,b)
are parameterised by their concentrations; Gamma(a, b) by shape and rate.
"""

import json
import os
import sys

import numpy as np
from scipy.special import digamma, gammaln, multigammaln

HERE = os.path.dirname(os.path.abspath(__file__))
FIXDIR = os.path.join(HERE, "..", "..", "crates", "occam-core", "tests", "fixtures")
LOG2PI = np.log(2 * np.pi)


def xlogx(r):
    return np.where(r > 0, r * np.log(np.where(r > 0, r, 1.0)), 0.0)


def softmax_rows(logp):
    m = logp.max(axis=1, keepdims=True)
    p = np.exp(logp - m)
    return p / p.sum(axis=1, keepdims=True)


def dirichlet_kl_term(a0, a):
    """E_q[log Dir(w|a0)] - E_q[log Dir(w|a)] for q = Dir(a)."""
    elog = digamma(a) - digamma(a.sum())
    return (gammaln(a0.sum()) - gammaln(a0).sum() - gammaln(a.sum()) + gammaln(a).sum()
            + np.sum((a0 - a) * elog))


def gmm(fx):
    y = np.array(fx["y"])
    r = np.array(fx["z_init"])
    N, D = y.shape
    K = r.shape[1]
    a0 = 1e-5 * np.ones(K)
    P0 = 1e-5 * np.eye(D)
    n0, V0 = float(D), 1e-5 * np.eye(D)
    # initial q = priors
    a = a0.copy()
    m = np.zeros((K, D))
    P = np.repeat(P0[None], K, axis=0)
    n = np.full(K, n0)
    V = np.repeat(V0[None], K, axis=0)

    def lam_moments():
        EL = n[:, None, None] * np.linalg.inv(V)
        Elogdet = (sum(digamma((n - i) / 2) for i in range(D)) + D * np.log(2)
                   - np.linalg.slogdet(V)[1])
        return EL, Elogdet

    def mu_moments():
        S = np.linalg.inv(P)
        return m, S + np.einsum("ki,kj->kij", m, m)

    def S_nk(Em, Emm):  # E[(y_n - mu_k)(y_n - mu_k)^T], shape (N, K, D, D)
        yy = np.einsum("ni,nj->nij", y, y)[:, None]
        ym = np.einsum("ni,kj->nkij", y, Em)
        return yy - ym - np.swapaxes(ym, -1, -2) + Emm[None]

    trace = []
    for _ in range(fx["iterations"]):
        # mu
        EL, _ = lam_moments()
        Nk = r.sum(0)
        P = P0[None] + Nk[:, None, None] * EL
        m = np.linalg.solve(P, np.einsum("kij,kj->ki", EL, r.T @ y)[..., None])[..., 0]
        # Lambda
        Em, Emm = mu_moments()
        S = S_nk(Em, Emm)
        n = n0 + Nk
        V = V0[None] + np.einsum("nk,nkij->kij", r, S)
        # z
        EL, Elogdet = lam_moments()
        Elogw = digamma(a) - digamma(a.sum())
        quad = np.einsum("kij,nkji->nk", EL, S)
        logp_y = -0.5 * D * LOG2PI + 0.5 * Elogdet[None] - 0.5 * quad
        r = softmax_rows(Elogw[None] + logp_y)
        # alpha
        a = a0 + r.sum(0)
        Elogw = digamma(a) - digamma(a.sum())
        # bound
        L = np.sum(r * logp_y)                                  # Y
        L += np.sum(r * Elogw[None]) - np.sum(xlogx(r))          # z
        L += dirichlet_kl_term(a0, a)                            # alpha
        for k in range(K):                                       # mu
            L += (0.5 * np.linalg.slogdet(P0)[1] - 0.5 * np.trace(P0 @ Emm[k])
                  - 0.5 * np.linalg.slogdet(P[k])[1] + 0.5 * D)
        for k in range(K):                                       # Lambda
            logZ0 = 0.5 * n0 * np.linalg.slogdet(V0)[1] - 0.5 * n0 * D * np.log(2) - multigammaln(n0 / 2, D)
            logZk = 0.5 * n[k] * np.linalg.slogdet(V[k])[1] - 0.5 * n[k] * D * np.log(2) - multigammaln(n[k] / 2, D)
            L += logZ0 - logZk + 0.5 * (n0 - n[k]) * Elogdet[k] - 0.5 * np.trace((V0 - V[k]) @ EL[k])
        trace.append(L)
    return np.array(trace)


def bmm(fx):
    x = np.array(fx["x"], dtype=float)
    N, D = x.shape
    pab = np.array(fx["P_init"])              # (D, K, 2)
    K = pab.shape[1]
    R0 = 1e-5 * np.ones(K)
    R = R0.copy()
    A, B = pab[..., 0], pab[..., 1]
    trace = []
    for _ in range(fx["iterations"]):
        # Z
        ElogP, Elog1mP = digamma(A) - digamma(A + B), digamma(B) - digamma(A + B)
        ElogR = digamma(R) - digamma(R.sum())
        logp_x = x @ ElogP + (1 - x) @ Elog1mP   # (N, K)
        r = softmax_rows(ElogR[None] + logp_x)
        # R
        R = R0 + r.sum(0)
        ElogR = digamma(R) - digamma(R.sum())
        # P
        A = 0.5 + x.T @ r
        B = 0.5 + (1 - x).T @ r
        ElogP, Elog1mP = digamma(A) - digamma(A + B), digamma(B) - digamma(A + B)
        # bound
        L = np.sum(r * (x @ ElogP + (1 - x) @ Elog1mP))          # X
        L += np.sum(r * ElogR[None]) - np.sum(xlogx(r))           # Z
        L += dirichlet_kl_term(R0, R)                             # R
        L += np.sum(gammaln(1.0) - 2 * gammaln(0.5) - gammaln(A + B) + gammaln(A) + gammaln(B)
                    + (0.5 - A) * ElogP + (0.5 - B) * Elog1mP)    # P
        trace.append(L)
    return np.array(trace)


def gmm1d(fx):
    y = np.array(fx["y"])
    r = np.array(fx["z_init"])
    K = r.shape[1]
    a0, m_prec0, s0, b0 = np.ones(K), 1e-3, 1e-3, 1e-3
    a = a0.copy()
    mean, prec = np.zeros(K), np.full(K, m_prec0)
    shape, rate = np.full(K, s0), np.full(K, b0)
    trace = []
    for _ in range(fx["iterations"]):
        Etau = shape / rate
        Nk = r.sum(0)
        # mu
        prec = m_prec0 + Nk * Etau
        mean = Etau * (r.T @ y) / prec
        Emu, Emu2 = mean, 1 / prec + mean**2
        # tau
        S = y[:, None] ** 2 - 2 * y[:, None] * Emu[None] + Emu2[None]   # (N, K)
        shape = s0 + 0.5 * Nk
        rate = b0 + 0.5 * np.sum(r * S, axis=0)
        Etau, Elogtau = shape / rate, digamma(shape) - np.log(rate)
        # z
        Elogw = digamma(a) - digamma(a.sum())
        logp_y = -0.5 * LOG2PI + 0.5 * Elogtau[None] - 0.5 * Etau[None] * S
        r = softmax_rows(Elogw[None] + logp_y)
        # alpha
        a = a0 + r.sum(0)
        Elogw = digamma(a) - digamma(a.sum())
        # bound
        L = np.sum(r * logp_y) + np.sum(r * Elogw[None]) - np.sum(xlogx(r))
        L += dirichlet_kl_term(a0, a)
        L += np.sum(0.5 * np.log(m_prec0) - 0.5 * m_prec0 * Emu2 - 0.5 * np.log(prec) + 0.5)
        L += np.sum(s0 * np.log(b0) - gammaln(s0) - shape * np.log(rate) + gammaln(shape)
                    + (s0 - shape) * Elogtau - (b0 - rate) * Etau)
        trace.append(L)
    return np.array(trace)


def main():
    fixdir = sys.argv[1] if len(sys.argv) > 1 else FIXDIR
    worst = 0.0
    for fname, fn in [("gmm_fixed_init.json", gmm), ("bmm_fixed_init.json", bmm),
                      ("gaussian_mixture_1d.json", gmm1d)]:
        with open(os.path.join(fixdir, fname)) as f:
            fx = json.load(f)
        ours = fn(fx)
        ref = np.array(fx["L_trace"])
        rel = np.max(np.abs(ours - ref) / np.abs(ref))
        worst = max(worst, rel)
        print(f"{fname}: {len(ref)} iterations, max |dL| = {np.max(np.abs(ours - ref)):.3e}, "
              f"max rel = {rel:.3e}")
    sys.exit(0 if worst < 1e-8 else 1)


if __name__ == "__main__":
    main()
