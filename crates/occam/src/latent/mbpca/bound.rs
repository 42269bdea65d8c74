//! The variational lower bound of a mixture of Bayesian PCA: the expected log joint minus the
//! expected log q, term by term, with every constant (so it compares with the generic engine's
//! bound of the same model).

use occam_core::special::{gamma_mean_ln, LN_2PI};

use super::{Expect, Mbpca};
use crate::latent::synth::Matrix;

/// The Gamma and symmetric-Dirichlet divergences, defined once in `occam_core::special`.
pub use occam_core::special::{kl_dirichlet_symmetric as kl_dirichlet, kl_gamma};

impl Mbpca {
    pub(super) fn logdet_x(&self) -> Vec<f64> {
        let q = self.q;
        (0..self.k)
            .map(|m| logdet(&self.x_cov[m * q * q..(m + 1) * q * q], q))
            .collect()
    }

    /// The lower bound L(q) on ln p(t) for the current q.
    pub fn bound(&self, t: &Matrix) -> f64 {
        self.bound_from(self.residuals(&self.expect(), t))
    }

    /// [`bound`](Self::bound) from the residuals R of (3.27) for the current q.
    pub(super) fn bound_from(&self, res: Vec<f64>) -> f64 {
        let e: Expect = self.expect();
        let logdet_x = self.logdet_x();
        // Σ_n Σ_m r_nm (ℓ_nm − ln r_nm): data, x_n's prior and entropy, ⟨ln π⟩ and H[q(s_n)].
        let ell = self.ells_from(&e, res, &logdet_x);
        let mut l = 0.0;
        for (&r, &x) in self.r.iter().zip(&ell) {
            if r > 0.0 {
                l += r * (x - r.ln());
            }
        }
        l + self.prior_bound()
    }

    /// The terms of the bound that do not touch the data: −KL of q(π), q(μ_m), q(W_m), q(α),
    /// q(τ) from their priors.
    pub(super) fn prior_bound(&self) -> f64 {
        let (d, q, k) = (self.d, self.q, self.k);
        let mut l = -kl_dirichlet(&self.u, self.priors.u0);
        // μ_m: −KL(N(m, s² I) ‖ N(0, β⁻¹ I)).
        let beta = self.priors.beta;
        for m in 0..k {
            let s2 = self.mu_var[m];
            let mm: f64 = self.mu[m * d..(m + 1) * d].iter().map(|v| v * v).sum();
            l -= 0.5 * (beta * (d as f64 * s2 + mm) - d as f64 - d as f64 * (beta * s2).ln());
        }
        // Rows of W_m: ⟨ln p(w_md | α)⟩ + H[q(w_md)].
        let ln_alpha: Vec<f64> = (0..q)
            .map(|i| gamma_mean_ln(self.alpha_shape[i], self.alpha_rate[i]))
            .collect();
        let alpha: Vec<f64> = (0..q)
            .map(|i| self.alpha_shape[i] / self.alpha_rate[i])
            .collect();
        for m in 0..k {
            let cov = &self.w_cov[m * q * q..(m + 1) * q * q];
            let entropy = 0.5 * q as f64 * (1.0 + LN_2PI) + 0.5 * logdet(cov, q);
            for r in 0..d {
                l += entropy;
                for i in 0..q {
                    let w2 = self.w[(m * d + r) * q + i].powi(2) + cov[i * q + i];
                    l += 0.5 * (ln_alpha[i] - LN_2PI) - 0.5 * alpha[i] * w2;
                }
            }
        }
        let p = &self.priors;
        for i in 0..q {
            l -= kl_gamma(
                self.alpha_shape[i],
                self.alpha_rate[i],
                p.a_alpha,
                p.b_alpha,
            );
        }
        l -= kl_gamma(self.tau_shape, self.tau_rate, p.a_tau, p.b_tau);
        l
    }
}

/// ln |A| of a symmetric positive-definite q × q matrix (−∞ if it is not).
fn logdet(a: &[f64], q: usize) -> f64 {
    occam_core::linalg::Cholesky::new(a, q).map_or(f64::NEG_INFINITY, |c| c.log_det())
}
