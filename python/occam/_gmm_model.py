"""The Occam model text of a variational Bayesian Gaussian mixture, and the exact change of
variables that lets it use scikit-learn's data-dependent priors.

The model language takes constant means as scalars and constant Wishart rates as multiples of the
identity, while scikit-learn's defaults are a mean prior at the data mean and a covariance prior
equal to the data covariance. So the estimator fits whitened data ``z = A (x - m0)`` with
``A = L⁻¹``, ``L Lᵀ = covariance_prior`` (diagonal ``A`` for ``covariance_type="diag"``): under
that linear map the priors become ``mean 0`` and ``rate identity``, the bound on ``log p(X)`` is
the bound on ``log p(Z)`` plus ``N log|det A|`` (the Jacobian), and posteriors map back exactly.

Priors (after whitening; K components, D dimensions):

* ``pi ~ StickBreaking(weight_concentration_prior)`` over K (``"dirichlet_process"``: sticks
  ``v_k ~ Beta(1, weight_concentration_prior)`` for k < K, ``v_K = 1``) or
  ``pi ~ Dirichlet(weight_concentration_prior)`` over K (``"dirichlet_distribution"``);
* full: ``mu[k] ~ N(0, (β0 ν0 I)⁻¹)`` and ``Lambda[k] ~ Wishart(dof = ν0, rate = I)``, i.e. in data
  space ``mu_k ~ N(m0, (β0 E[Λ])⁻¹)`` independent of ``Λ_k ~ W(ν0, covariance_prior⁻¹)`` (mean
  ``ν0 · covariance_prior⁻¹``, scikit-learn's Wishart prior);
* diag: ``mu[k, d] ~ N(0, 1/(β0 ν0))`` and ``gamma[k, d] ~ Gamma(ν0/2, 1/2)``.

scikit-learn's Normal–Wishart prior ties the mean's precision to Λ_k (``mu_k | Λ_k ~ N(m0,
(β0 Λ_k)⁻¹)``) and keeps q(mu_k, Λ_k) joint; the language cannot scale a Wishart variable by a
constant inside a parent slot, so the mean's prior precision here is β0 times the *prior mean*
of Λ_k, with mean-field q(mu_k) q(Λ_k) (BayesPy's GMM).
"""

import numpy as np


def model_text(covariance_type, n_components, alpha0, beta0, nu0, weights="dirichlet_process"):
    """The model for whitened data ``x`` (N × D); ``weights`` is scikit-learn's
    ``weight_concentration_prior_type``."""
    family = "StickBreaking" if weights == "dirichlet_process" else "Dirichlet"
    head = [
        f"# Variational Bayesian Gaussian mixture, {covariance_type} covariances (occam.sklearn).",
        f"plate K = {int(n_components)}",
        "plates N, D from data x",
        f"pi ~ {family}({alpha0!r}) over K",
        "z[N] ~ Categorical(pi)",
    ]
    if covariance_type == "full":
        body = [
            f"mu[K] over D ~ MvGaussian(mean = 0, precision = identity * {beta0 * nu0!r})",
            f"Lambda[K] over D ~ Wishart(dof = {nu0!r}, rate = identity * 1)",
            "x[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])",
        ]
    else:
        body = [
            f"mu[K, D] ~ Gaussian(mean = 0, precision = {beta0 * nu0!r})",
            f"gamma[K, D] ~ Gamma(shape = {nu0 / 2.0!r}, rate = 0.5)",
            "x[N, D] ~ Gaussian(mean = mu[z], precision = gamma[z])",
        ]
    return "\n".join(head + body) + "\n"


def whitening(covariance_type, covariance_prior):
    """``(L, log|det A|)``: ``L`` maps whitened vectors back (``x = m0 + L z``; a vector of scales
    for ``diag``), ``A = L⁻¹``."""
    if covariance_type == "full":
        L = np.linalg.cholesky(covariance_prior)
        return L, -float(np.sum(np.log(np.diag(L))))
    s = np.sqrt(covariance_prior)
    return s, -float(np.sum(np.log(s)))
