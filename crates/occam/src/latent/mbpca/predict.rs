//! The predictive density of a fitted mixture of Bayesian PCA, for classification by the largest
//! density (Winn §3.4.4's digits study).
//!
//! The exact predictive p(t | data) = ∫ p(t | θ) q(θ) dθ has no closed form. Each component is
//! replaced by the Gaussian with the same first two moments under q: given s = m, t = W_m x + μ_m +
//! ε with x ~ N(0, I), so E[t] = ⟨μ_m⟩ and Cov[t] = ⟨W_m W_mᵀ⟩ + (Var μ_m + 1/⟨τ⟩) I, where
//! ⟨W_m W_mᵀ⟩ = ⟨W_m⟩⟨W_m⟩ᵀ + tr(Σ_w^(m)) I because every row of W_m has covariance Σ_w^(m)
//! (3.25). The weights are the posterior means ⟨π_m⟩ = u_m / Σ u (3.28). That is a mixture of
//! PPCA with loadings ⟨W_m⟩ and noise variance 1/⟨τ⟩ + tr Σ_w^(m) + Var μ_m, evaluated by
//! [`Mppca::log_density`](crate::latent::mppca::Mppca::log_density).

use super::Mbpca;
use crate::error::Result;
use crate::latent::mppca::Mppca;
use crate::latent::synth::Matrix;

impl Mbpca {
    /// The moment-matched mixture of PPCA of the predictive density (module doc).
    pub fn predictive(&self) -> Mppca {
        let (d, q, k) = (self.d, self.q, self.k);
        let total: f64 = self.u.iter().sum();
        let noise = self.tau_rate / self.tau_shape;
        Mppca {
            d,
            q,
            k,
            pi: self.u.iter().map(|u| u / total).collect(),
            mean: self.mu.clone(),
            w: self.w.clone(),
            noise_var: (0..k)
                .map(|m| {
                    let tr: f64 = (0..q).map(|i| self.w_cov[m * q * q + i * q + i]).sum();
                    noise + tr + self.mu_var[m]
                })
                .collect(),
        }
    }

    /// ln p(t_n | data) of every row of `t`, by the moment-matched predictive (module doc).
    pub fn log_predictive(&self, t: &Matrix) -> Result<Vec<f64>> {
        self.predictive().log_density(t)
    }
}
