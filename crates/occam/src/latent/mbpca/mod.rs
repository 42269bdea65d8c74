//! Mixtures of Bayesian PCA (Bishop & Winn; Winn §3.3, (3.10)–(3.30)) by hand-derived
//! variational Bayes, with a model-order search driven by the bound ([`search`]).
//!
//! Model: s_n ~ Discrete(π), π ~ Dirichlet(u₀); given s_n = m, x_n ~ N(0, I_q) and
//! t_n ~ N(W_m x_n + μ_m, τ⁻¹ I_d); the rows of W_m have prior N(0, diag(α)⁻¹) with **α shared by
//! every component** (so the components share one principal-subspace dimension, as Winn's text
//! says; the printed (3.16) indexes α by m, which contradicts it — here α is shared and its
//! update sums over components), μ_m ~ N(0, β⁻¹ I), α_i ~ Γ(a_α, b_α), τ ~ Γ(a_τ, b_τ).
//!
//! q keeps x_n joint with s_n: q(x_n, s_n = m) = r_nm N(x_n | m_nm, Σ_m), the "pick" form of
//! Winn §2.2.3, which the generic engine's fully factorised q(x)q(s) cannot express — hence this
//! module rather than a model file. The rest factorises: q(π) Π_m q(μ_m) Π_{m,d} q(w_md)
//! Π_i q(α_i) q(τ). Every update below is the exact maximiser of the bound over its factor
//! given the others, so the bound never decreases.
//!
//! Why not the generic engine: besides q(x_n | s_n), a mixture over components of a product
//! W_m x_n would need a gate of a dot product of two latent vectors, which VMP's gate node does
//! not support; the few closed forms are short and are checked against the engine's Bayesian
//! PCA when K = 1 (tests).

pub(crate) mod bound;
mod init;
mod kernels;
mod predict;
pub mod search;
mod sweep;
#[cfg(test)]
mod tests;

use occam_core::linalg::Cholesky;
use occam_core::special::digamma;

use super::dense::{mul, mul_tn};
use super::synth::Matrix;
use crate::error::{Error, Result};

/// The hyper-parameters (Winn: every one 10⁻³; a flat Dirichlet).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Priors {
    /// a_α, shape of the ARD precisions' prior.
    pub a_alpha: f64,
    /// b_α, its rate.
    pub b_alpha: f64,
    /// a_τ, shape of the noise precision's prior.
    pub a_tau: f64,
    /// b_τ, its rate.
    pub b_tau: f64,
    /// β, the precision of the prior of each μ_m.
    pub beta: f64,
    /// u₀, the Dirichlet concentration of each component weight.
    pub u0: f64,
}

impl Default for Priors {
    fn default() -> Self {
        Priors {
            a_alpha: 1e-3,
            b_alpha: 1e-3,
            a_tau: 1e-3,
            b_tau: 1e-3,
            beta: 1e-3,
            u0: 1.0,
        }
    }
}

/// The variational posterior of a mixture of Bayesian PCA and its data dimensions.
#[derive(Clone, Debug)]
pub struct Mbpca {
    /// Data dimension d.
    pub d: usize,
    /// Latent dimension q.
    pub q: usize,
    /// Number of components K.
    pub k: usize,
    /// The priors.
    pub priors: Priors,
    /// q(π) = Dirichlet(u), length K.
    pub u: Vec<f64>,
    /// Means of q(μ_m), K × d.
    pub mu: Vec<f64>,
    /// Variance of every coordinate of q(μ_m), length K (3.23).
    pub mu_var: Vec<f64>,
    /// Means of the rows of q(W_m), K × d × q (row d of W_m at `(m·d + d)·q`).
    pub w: Vec<f64>,
    /// Covariance Σ_w^(m) shared by the rows of W_m, K × q × q (3.25).
    pub w_cov: Vec<f64>,
    /// Shapes of q(α_i), length q.
    pub alpha_shape: Vec<f64>,
    /// Rates of q(α_i), length q.
    pub alpha_rate: Vec<f64>,
    /// Shape of q(τ).
    pub tau_shape: f64,
    /// Rate of q(τ).
    pub tau_rate: f64,
    /// Means m_nm of q(x_n | s_n = m), N × K × q (3.20).
    pub x: Vec<f64>,
    /// Covariances Σ_x^(m), K × q × q, the same for every n (3.21).
    pub x_cov: Vec<f64>,
    /// Responsibilities r_nm = q(s_n = m), N × K (3.29)–(3.30).
    pub r: Vec<f64>,
}

/// Per-component expectations used by several updates.
struct Expect {
    /// ⟨W_mᵀ W_m⟩ = ⟨W_m⟩ᵀ⟨W_m⟩ + d Σ_w^(m), K × q × q.
    wtw: Vec<f64>,
    /// ⟨‖μ_m‖²⟩, length K.
    mu2: Vec<f64>,
    /// ⟨ln π_m⟩, length K.
    ln_pi: Vec<f64>,
    /// ⟨τ⟩ and ⟨ln τ⟩.
    tau: f64,
    ln_tau: f64,
}

impl Mbpca {
    fn expect(&self) -> Expect {
        let (d, q, k) = (self.d, self.q, self.k);
        let mut wtw = Vec::with_capacity(k * q * q);
        for m in 0..k {
            let wm = &self.w[m * d * q..(m + 1) * d * q];
            let cov = &self.w_cov[m * q * q..(m + 1) * q * q];
            let ww = mul_tn(wm, wm, d, q, q);
            wtw.extend(ww.iter().zip(cov).map(|(v, c)| v + d as f64 * c));
        }
        let mu2 = (0..k)
            .map(|m| {
                self.mu[m * d..(m + 1) * d]
                    .iter()
                    .map(|v| v * v)
                    .sum::<f64>()
                    + d as f64 * self.mu_var[m]
            })
            .collect();
        let total: f64 = self.u.iter().sum();
        let ln_pi = self
            .u
            .iter()
            .map(|&u| digamma(u) - digamma(total))
            .collect();
        Expect {
            wtw,
            mu2,
            ln_pi,
            tau: self.tau_shape / self.tau_rate,
            ln_tau: digamma(self.tau_shape) - self.tau_rate.ln(),
        }
    }

    /// q(μ_m) (3.23)–(3.24; the printed ⟨μ_k⟩ there means ⟨μ_mk⟩): variance
    /// (β + ⟨τ⟩ N_m)⁻¹, mean variance · ⟨τ⟩ Σ_n r_nm (t_n − ⟨W_m⟩ m_nm).
    pub fn update_mu(&mut self, t: &Matrix) {
        let sums = self.sums(t);
        self.update_mu_from(&sums);
    }

    /// [`update_mu`](Self::update_mu) from the sums of the current q(x, s).
    fn update_mu_from(&mut self, sums: &sweep::Sums) {
        let (d, q, k) = (self.d, self.q, self.k);
        let tau = self.tau_shape / self.tau_rate;
        for m in 0..k {
            let sx = &sums.sx[m * q..(m + 1) * q];
            let var = 1.0 / (self.priors.beta + tau * sums.nm[m]);
            self.mu_var[m] = var;
            for j in 0..d {
                let wx: f64 = (0..q).map(|i| self.w[(m * d + j) * q + i] * sx[i]).sum();
                self.mu[m * d + j] = var * tau * (sums.tr[j * k + m] - wx);
            }
        }
    }

    /// q(w_md) (3.25): Σ_w^(m) = (diag⟨α⟩ + ⟨τ⟩ Σ_n r_nm ⟨x_n x_nᵀ | m⟩)⁻¹ and
    /// mean Σ_w^(m) ⟨τ⟩ Σ_n r_nm m_nm (t_nd − ⟨μ_md⟩).
    pub fn update_w(&mut self, t: &Matrix) -> Result<()> {
        let sums = self.sums(t);
        self.update_w_from(&sums)
    }

    /// [`update_w`](Self::update_w) from the sums of the current q(x, s).
    fn update_w_from(&mut self, sums: &sweep::Sums) -> Result<()> {
        let (d, q) = (self.d, self.q);
        let tau = self.tau_shape / self.tau_rate;
        for m in 0..self.k {
            let (nm, sx_sum) = (sums.nm[m], &sums.sx[m * q..(m + 1) * q]);
            let xx = &sums.xx[m * q * q..(m + 1) * q * q];
            let tx = &sums.tx[m * d * q..(m + 1) * d * q];
            let sx = &self.x_cov[m * q * q..(m + 1) * q * q];
            let mut a: Vec<f64> = xx.iter().zip(sx).map(|(v, s)| tau * (v + nm * s)).collect();
            for i in 0..q {
                a[i * q + i] += self.alpha_shape[i] / self.alpha_rate[i];
            }
            let c = chol(&a, q, "Σ_w")?;
            let cov = &mut self.w_cov[m * q * q..(m + 1) * q * q];
            c.inverse_into(cov);
            // b_r = Σ_n r_nm (t_nr − ⟨μ_mr⟩) m_nm.
            let b: Vec<f64> = (0..d * q)
                .map(|j| tx[j] - self.mu[m * d + j / q] * sx_sum[j % q])
                .collect();
            let w = mul(&b, cov, d, q, q);
            for (o, v) in self.w[m * d * q..(m + 1) * d * q].iter_mut().zip(&w) {
                *o = tau * v;
            }
        }
        Ok(())
    }

    /// q(α_i) = Γ(a_α + K d/2, b_α + ½ Σ_m ⟨‖w_mi‖²⟩): (3.26) with α shared, so the sum runs
    /// over every component's column i.
    pub fn update_alpha(&mut self) {
        let (d, q, k) = (self.d, self.q, self.k);
        for i in 0..q {
            let mut s = 0.0;
            for m in 0..k {
                s += d as f64 * self.w_cov[m * q * q + i * q + i];
                s += (0..d)
                    .map(|r| self.w[(m * d + r) * q + i].powi(2))
                    .sum::<f64>();
            }
            self.alpha_shape[i] = self.priors.a_alpha + 0.5 * (k * d) as f64;
            self.alpha_rate[i] = self.priors.b_alpha + 0.5 * s;
        }
    }

    /// q(τ) = Γ(a_τ + N d/2, b_τ + ½ Σ_n Σ_m r_nm E‖t_n − W_m x_n − μ_m‖²) (3.26)–(3.27).
    pub fn update_tau(&mut self, t: &Matrix) {
        let e = self.expect();
        let res = self.residuals(&e, t);
        self.update_tau_from(t, &res);
    }

    /// [`update_tau`](Self::update_tau) from the residuals R of the current q.
    fn update_tau_from(&mut self, t: &Matrix, res: &[f64]) {
        let s: f64 = res.iter().zip(&self.r).map(|(a, r)| a * r).sum();
        self.tau_shape = self.priors.a_tau + 0.5 * (t.rows * self.d) as f64;
        self.tau_rate = self.priors.b_tau + 0.5 * s;
    }

    /// q(π) = Dirichlet(u₀ + Σ_n r_nm) (3.28).
    pub fn update_pi(&mut self) {
        let n = self.r.len() / self.k.max(1);
        for m in 0..self.k {
            self.u[m] = self.priors.u0 + (0..n).map(|i| self.r[i * self.k + m]).sum::<f64>();
        }
    }

    /// One sweep: q(x, s), q(μ), q(W), q(α), q(τ), q(π); returns the bound after it.
    ///
    /// The same numbers as calling the updates and [`bound`](Self::bound) one by one, with less
    /// work: q(x, s) is the only pass that projects the data; the weighted sums of q(x, s) are
    /// formed once and serve q(μ), q(W), q(τ) and the bound (see `sweep.rs`).
    pub fn sweep(&mut self, t: &Matrix) -> Result<f64> {
        self.update_xs(t)?;
        let sums = self.sums(t);
        self.update_mu_from(&sums);
        self.update_w_from(&sums)?;
        self.update_alpha();
        let sr = self.weighted_residuals(t, &self.expect(), &sums);
        self.tau_shape = self.priors.a_tau + 0.5 * (t.rows * self.d) as f64;
        self.tau_rate = self.priors.b_tau + 0.5 * sr.iter().sum::<f64>();
        self.update_pi();
        let e = self.expect();
        Ok(self.data_bound_from_sums(&e, &sums, &sr) + self.prior_bound())
    }

    /// Sweeps until the bound changes by less than `tol`·|L| or `max_iter` sweeps; returns the
    /// bound after each sweep. A decrease beyond rounding is an error (it would be a bug).
    pub fn run(&mut self, t: &Matrix, max_iter: usize, tol: f64) -> Result<Vec<f64>> {
        self.check_data(t)?;
        let mut trace: Vec<f64> = Vec::new();
        for _ in 0..max_iter {
            let b = self.sweep(t)?;
            if !b.is_finite() {
                return Err(Error::Run(format!(
                    "mixture of Bayesian PCA: the bound became {b} after {} sweeps",
                    trace.len() + 1
                )));
            }
            if let Some(&prev) = trace.last() {
                if b < prev - 1e-9 * prev.abs() {
                    return Err(Error::Run(format!(
                        "mixture of Bayesian PCA: the bound decreased from {prev} to {b} at sweep {}",
                        trace.len() + 1
                    )));
                }
                trace.push(b);
                if (b - prev).abs() <= tol * b.abs() {
                    break;
                }
            } else {
                trace.push(b);
            }
        }
        Ok(trace)
    }

    fn check_data(&self, t: &Matrix) -> Result<()> {
        if t.cols != self.d || t.rows * self.k != self.r.len() {
            return Err(Error::Usage(format!(
                "mixture of Bayesian PCA: the model was set up for {} × {} data, got {} × {}",
                self.r.len() / self.k.max(1),
                self.d,
                t.rows,
                t.cols
            )));
        }
        Ok(())
    }

    /// Expected number of points of each component, Σ_n r_nm.
    pub fn counts(&self) -> Vec<f64> {
        let n = self.r.len() / self.k.max(1);
        (0..self.k)
            .map(|m| (0..n).map(|i| self.r[i * self.k + m]).sum())
            .collect()
    }

    /// The shared relevances 1/⟨α_i⟩.
    pub fn relevance(&self) -> Vec<f64> {
        self.alpha_rate
            .iter()
            .zip(&self.alpha_shape)
            .map(|(b, a)| b / a)
            .collect()
    }

    /// The relevances of component m's columns, ⟨‖w_mi‖²⟩ / d (its own variance along each
    /// latent direction; the shared α sets their common prior scale).
    pub fn component_relevance(&self, m: usize) -> Vec<f64> {
        let (d, q) = (self.d, self.q);
        (0..q)
            .map(|i| {
                let s: f64 = (0..d).map(|r| self.w[(m * d + r) * q + i].powi(2)).sum();
                s / d as f64 + self.w_cov[m * q * q + i * q + i]
            })
            .collect()
    }

    /// Removes component `m` (its points' responsibilities go to the rest at the next sweep).
    pub fn remove(&mut self, m: usize) {
        let (d, q, k) = (self.d, self.q, self.k);
        let n = self.r.len() / k;
        let drop_block = |v: &mut Vec<f64>, len: usize| {
            v.drain(m * len..(m + 1) * len);
        };
        self.u.remove(m);
        drop_block(&mut self.mu, d);
        self.mu_var.remove(m);
        drop_block(&mut self.w, d * q);
        drop_block(&mut self.w_cov, q * q);
        drop_block(&mut self.x_cov, q * q);
        let mut x = Vec::with_capacity(n * (k - 1) * q);
        let mut r = Vec::with_capacity(n * (k - 1));
        for i in 0..n {
            for j in (0..k).filter(|&j| j != m) {
                x.extend_from_slice(&self.x[(i * k + j) * q..(i * k + j + 1) * q]);
                r.push(self.r[i * k + j]);
            }
        }
        self.x = x;
        self.r = r;
        self.k = k - 1;
    }
}

fn chol(a: &[f64], q: usize, what: &str) -> Result<Cholesky> {
    Cholesky::new(a, q).ok_or_else(|| chol_error(what))
}

fn chol_error(what: &str) -> Error {
    Error::Run(format!(
        "mixture of Bayesian PCA: the precision matrix of {what} is not positive definite"
    ))
}

pub use init::{initialise, kmeans};
