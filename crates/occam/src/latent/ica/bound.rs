//! The variational lower bound of Bayesian ICA with q(x_n) joint over the sources: the expected
//! log joint minus the expected log q, term by term, with every constant.

use occam_core::linalg::Cholesky;
use occam_core::special::{digamma, LN_2PI};

use super::Ica;
use crate::latent::mbpca::bound::{kl_dirichlet, kl_gamma};
use crate::latent::synth::Matrix;

fn logdet(a: &[f64], d: usize) -> f64 {
    Cholesky::new(a, d).map_or(f64::NEG_INFINITY, |c| c.log_det())
}

impl Ica {
    /// The lower bound L(q) on ln p(t) for the current q.
    pub fn bound(&self, t: &Matrix) -> f64 {
        let (n, p, i, m) = (t.rows, self.p, self.i, self.m);
        let pr = &self.priors;
        let (beta, ln_beta) = (self.beta(), digamma(self.beta_shape) - self.beta_rate.ln());
        // Data: ⟨ln N(t_n | W x_n + μ, β⁻¹ I)⟩.
        let mut l = 0.5 * (n * p) as f64 * (ln_beta - LN_2PI) - 0.5 * beta * self.residual(t);
        // Sources: ⟨ln p(x_ni | z_ni)⟩ + ⟨ln p(z_ni | π_i)⟩ − ⟨ln q(z_ni)⟩, and H[q(x_n)].
        let (g, ln_g) = self.g_moments();
        let ln_pi = self.ln_pi();
        let xsq = self.x_sq();
        for (c, rho) in self.rho.chunks_exact(m).enumerate() {
            let s = c % i;
            for k in 0..m {
                let r = rho[k];
                if r > 0.0 {
                    l += r
                        * (ln_pi[s * m + k] + 0.5 * (ln_g[s * m + k] - LN_2PI)
                            - 0.5 * g[s * m + k] * xsq[c]
                            - r.ln());
                }
            }
        }
        for k in 0..n {
            l += 0.5 * i as f64 * (1.0 + LN_2PI)
                + 0.5 * logdet(&self.x_cov[k * i * i..(k + 1) * i * i], i);
        }
        for s in 0..i {
            l -= kl_dirichlet(&self.pi_u[s * m..(s + 1) * m], pr.u0);
            for k in 0..m {
                l -= kl_gamma(
                    self.g_shape[s * m + k],
                    self.g_rate[s * m + k],
                    pr.g.0,
                    pr.g.1,
                );
            }
        }
        // W's rows: ⟨ln p(w_p | α)⟩ + H[q(w_p)].
        l += p as f64 * (0.5 * i as f64 * (1.0 + LN_2PI) + 0.5 * logdet(&self.w_cov, i));
        for s in 0..i {
            let (a, b) = (self.alpha_shape[s], self.alpha_rate[s]);
            let w2: f64 = (0..p).map(|r| self.w[r * i + s].powi(2)).sum::<f64>()
                + p as f64 * self.w_cov[s * i + s];
            l += 0.5 * p as f64 * (digamma(a) - b.ln() - LN_2PI) - 0.5 * (a / b) * w2;
            l -= kl_gamma(a, b, pr.alpha.0, pr.alpha.1);
        }
        // μ: −KL(N(m, Σ_μ I) ‖ N(0, τ⁻¹ I)).
        let mm: f64 = self.mu.iter().map(|v| v * v).sum();
        let pf = p as f64;
        l -= 0.5 * (pr.tau * (pf * self.mu_var + mm) - pf - pf * (pr.tau * self.mu_var).ln());
        l -= kl_gamma(self.beta_shape, self.beta_rate, pr.beta.0, pr.beta.1);
        l
    }
}
