//! Mixtures of Bayesian PCA (Bishop & Winn; Winn §3.3, (3.10)–(3.30)) by variational Bayes on
//! the VMP engine, with a model-order search driven by the bound ([`search`]).
//!
//! Model: s_n ~ Discrete(π), π ~ Dirichlet(u₀); given s_n = m, x_n ~ N(0, I_q) and
//! t_n ~ N(W_m x_n + μ_m, τ⁻¹ I_d); the rows of W_m have prior N(0, diag(α)⁻¹) with **α shared by
//! every component** (so the components share one principal-subspace dimension, as Winn's text
//! says; the printed (3.16) indexes α by m, which contradicts it — here α is shared and its
//! update sums over components), μ_m ~ N(0, β⁻¹ I), α_i ~ Γ(a_α, b_α), τ ~ Γ(a_τ, b_τ).
//!
//! q keeps x_n joint with s_n: q(x_n, s_n = m) = r_nm N(x_n | m_nm, Σ_m), the "pick" form of
//! Winn §2.2.3; the rest factorises: q(π) Π_m q(μ_m) Π_{m,d} q(w_md) Π_i q(α_i) q(τ). The fit is
//! an engine model ([`engine`]): q(x, s) is the engine's gated q-block (`occam_core`'s
//! `engine/gated_linear`, declared by `Graph::gated_q`), which owns the product W_m x_n that
//! VMP's gate cannot gate, and every other factor is an ordinary engine node. [`Mbpca`] holds the
//! state between fits (the search's splits and deletions edit it) and the results.

pub mod engine;
mod init;
mod predict;
pub mod search;
#[cfg(test)]
mod tests;

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

impl Mbpca {
    /// Sweeps q(x, s), q(μ), q(W), q(α), q(τ), q(π) on the engine ([`engine::Engine`]) from this
    /// state until the bound changes by less than `tol`·|L| or `max_iter` sweeps, then keeps the
    /// result; returns the bound after each sweep. A decrease beyond rounding is an error (it
    /// would be a bug).
    pub fn run(&mut self, t: &Matrix, max_iter: usize, tol: f64) -> Result<Vec<f64>> {
        let mut e = engine::Engine::new(self, t)?;
        let mut trace: Vec<f64> = Vec::new();
        for _ in 0..max_iter {
            let b = e.sweep()?;
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
        if !trace.is_empty() {
            e.read(self)?;
        }
        Ok(trace)
    }

    pub(crate) fn check_data(&self, t: &Matrix) -> Result<()> {
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

pub use init::{initialise, kmeans};
