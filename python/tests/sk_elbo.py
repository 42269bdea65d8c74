"""The complete variational lower bound (every constant included) of a fitted scikit-learn
``BayesianGaussianMixture`` with full covariances and a Dirichlet-distribution or Dirichlet-process
weight prior, under scikit-learn's own model (Bishop, PRML §10.2, eqs. 10.70–10.77; for the
Dirichlet process, Blei & Jordan 2006's sticks, with scikit-learn's last stick kept as a Beta):

    π ~ Dir(α0·1), μ_k | Λ_k ~ N(m0, (β0 Λ_k)⁻¹), Λ_k ~ W(W0, ν0), W0⁻¹ = covariance_prior_,
    q(z) q(π) Π_k q(μ_k, Λ_k) with q(μ_k, Λ_k) = N(m_k, (β_k Λ_k)⁻¹) W(W_k, ν_k).

scikit-learn's ``lower_bound_`` drops the terms that do not change during a fit; this puts them
back so that the value is a bound on log p(X) in nats, comparable with Occam's. q(z) is given
(``resp``) or the E-step of the fitted parameters (which can only raise the bound).
"""

import numpy as np
from scipy.special import betaln, digamma, gammaln, logsumexp


def _log_b(w_logdet, nu, d):
    """ln B(W, ν) of the Wishart normaliser (PRML B.79)."""
    i = np.arange(1, d + 1)
    return (-0.5 * nu * w_logdet - 0.5 * nu * d * np.log(2.0) - 0.25 * d * (d - 1) * np.log(np.pi)
            - np.sum(gammaln((nu + 1 - i) / 2.0)))


def full_elbo(est, X, resp=None):
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    alpha0 = est.weight_concentration_prior_
    beta0 = est.mean_precision_prior_
    m0 = est.mean_prior_
    nu0 = est.degrees_of_freedom_prior_
    w0_inv = np.atleast_2d(est.covariance_prior_)
    alpha = est.weight_concentration_
    beta = est.mean_precision_
    m = est.means_
    nu = est.degrees_of_freedom_
    # covariances_ = W_k⁻¹ / ν_k  ⇒  W_k = (ν_k covariances_)⁻¹.
    W = np.linalg.inv(est.covariances_ * nu[:, None, None])
    k = len(m)
    i = np.arange(1, d + 1)
    w_logdet = np.linalg.slogdet(W)[1]
    ln_lam = np.array([np.sum(digamma((nu[j] + 1 - i) / 2.0)) for j in range(k)]) + d * np.log(2.0) + w_logdet
    dp = getattr(est, "weight_concentration_prior_type", "") == "dirichlet_process"
    if dp:
        # Sticks q(v_k) = Beta(a_k, b_k) for every k ≤ K (scikit-learn keeps a last stick; the
        # rest of the stick goes to components beyond K, at their prior): E[ln π_k] as in its
        # _estimate_log_weights.
        a, b = alpha
        k = a.size
        psi_ab = digamma(a + b)
        ln_pi = digamma(a) - psi_ab + np.concatenate(([0.0], np.cumsum(digamma(b) - psi_ab)[:-1]))
    else:
        ln_pi = digamma(alpha) - digamma(alpha.sum())
    if resp is None:
        # E-step (PRML 10.46, 10.64–10.66).
        quad = np.stack([nu[j] * np.einsum("ni,ij,nj->n", X - m[j], W[j], X - m[j]) + d / beta[j] for j in range(k)], 1)
        log_rho = ln_pi + 0.5 * ln_lam - 0.5 * d * np.log(2 * np.pi) - 0.5 * quad
        resp = np.exp(log_rho - logsumexp(log_rho, axis=1, keepdims=True))
    nk = resp.sum(0) + 10 * np.finfo(resp.dtype).eps
    xbar = (resp.T @ X) / nk[:, None]
    S = np.stack([((X - xbar[j]).T * resp[:, j]) @ (X - xbar[j]) / nk[j] for j in range(k)])
    # E[ln p(X | Z, μ, Λ)] (10.71)
    e_lik = 0.0
    for j in range(k):
        dx = xbar[j] - m[j]
        e_lik += 0.5 * nk[j] * (ln_lam[j] - d / beta[j] - nu[j] * np.trace(S[j] @ W[j])
                                - nu[j] * dx @ W[j] @ dx - d * np.log(2 * np.pi))
    # E[ln p(Z | π)] (10.72), E[ln p(π)] (10.73)
    e_z = np.sum(resp * ln_pi)
    if dp:
        # E[ln p(v)] − E[ln q(v)] = −Σ_k KL(Beta(a_k, b_k) ‖ Beta(1, α0)), put in e_pi (e_qpi = 0).
        kl = (betaln(1.0, alpha0) - betaln(a, b) + (a - 1.0) * digamma(a) + (b - alpha0) * digamma(b)
              + (1.0 + alpha0 - a - b) * digamma(a + b))
        e_pi = -float(np.sum(kl))
    else:
        ln_c0 = gammaln(k * alpha0) - k * gammaln(alpha0)
        e_pi = ln_c0 + (alpha0 - 1) * ln_pi.sum()
    # E[ln p(μ, Λ)] (10.74)
    w0_logdet = -np.linalg.slogdet(w0_inv)[1]
    e_mu_lam = 0.0
    for j in range(k):
        dm = m[j] - m0
        e_mu_lam += 0.5 * (d * np.log(beta0 / (2 * np.pi)) + ln_lam[j] - d * beta0 / beta[j]
                           - beta0 * nu[j] * dm @ W[j] @ dm)
        e_mu_lam += 0.5 * (nu0 - d - 1) * ln_lam[j] - 0.5 * nu[j] * np.trace(w0_inv @ W[j])
    e_mu_lam += k * _log_b(w0_logdet, nu0, d)
    # E[ln q(Z)] (10.75), E[ln q(π)] (10.76), E[ln q(μ, Λ)] (10.77)
    with np.errstate(divide="ignore", invalid="ignore"):
        e_qz = np.sum(np.where(resp > 0, resp * np.log(resp), 0.0))
    if dp:
        e_qpi = 0.0
    else:
        ln_c = gammaln(alpha.sum()) - gammaln(alpha).sum()
        e_qpi = np.sum((alpha - 1) * ln_pi) + ln_c
    e_qml = 0.0
    for j in range(k):
        entropy = -_log_b(w_logdet[j], nu[j], d) - 0.5 * (nu[j] - d - 1) * ln_lam[j] + 0.5 * nu[j] * d
        e_qml += 0.5 * ln_lam[j] + 0.5 * d * np.log(beta[j] / (2 * np.pi)) - 0.5 * d - entropy
    return float(e_lik + e_z + e_pi + e_mu_lam - e_qz - e_qpi - e_qml)
