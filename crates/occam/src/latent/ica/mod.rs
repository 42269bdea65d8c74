//! Bayesian ICA (Lawrence §6.5.1–6.5.6, (6.1)–(6.29) as corrected) with **q(x_n) joint over the
//! sources**, fitted by the VMP engine.
//!
//! Model: t_n = W x_n + μ + ε, ε ~ N(0, β⁻¹ I_P) (6.2, whose printed exp(+…) is a sign slip);
//! each source x_ni has a mixture-of-Gaussians prior Σ_k π_ik N(0, g_ik⁻¹) (6.1, 6.4, zero means,
//! Winn §4.8's variant), written with indicators z_ni ~ Discrete(π_i), π_i ~ Dirichlet(u₀),
//! g_ik ~ Γ(a_g, b_g); ARD on W's columns, w_pi ~ N(0, α_i⁻¹) with α_i ~ Γ(a_α, b_α) (6.9–6.10);
//! μ_p ~ N(0, τ⁻¹) (6.11); β ~ Γ(a_β, b_β).
//!
//! q = Π_n q(x_n) Π_{n,i} q(z_ni) Π_i q(π_i) Π_{i,k} q(g_ik) Π_p q(w_p) Π_p q(μ_p) q(α) q(β).
//! Lawrence keeps q(x_n) a mixture over all component combinations (App. D), whose entropy has
//! no closed form, so his bound cannot be computed; here the indicators get their own factors,
//! which keeps q(x_n) a full-covariance Gaussian — the engine's Gaussian q-block over the sources
//! (`occam_core`'s `Graph::joint_q`; the sources are updated jointly, so strongly coupled sources
//! do not crawl by coordinate ascent as in a fully factorised q) — and the bound exact. Every
//! update is the engine's (Winn (2.19) per factor, the block's joint update for q(x_n)); they
//! are Lawrence's (6.19)–(6.28) with App. D's D_m, f_m for q(x_n) at the components'
//! expectations, and the corrections: (6.21) keeps its ⟨β⟩, (6.28) its separate terms. One
//! sweep updates x, z, g, π, μ, W, α, β in this order, from a seeded PCA start ([`Start`]).
//!
//! The model was first written here by hand-derived updates (until issue 27 step 2); the
//! engine gives the same bounds from the same start (module `tests`).

mod engine;
mod start;
#[cfg(test)]
mod tests;

pub use start::Start;

use occam_core::prelude::{NodeId, Vmp};

use crate::error::{Error, Result};
use crate::latent::synth::Matrix;

/// The hyper-parameters (every Gamma 10⁻³, 10⁻³; τ = 10⁻³; a flat Dirichlet).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Priors {
    /// Shape and rate of the ARD precisions' prior.
    pub alpha: (f64, f64),
    /// Shape and rate of the noise precision's prior.
    pub beta: (f64, f64),
    /// Shape and rate of the source components' precisions' prior.
    pub g: (f64, f64),
    /// Precision τ of the prior of each μ_p.
    pub tau: f64,
    /// Dirichlet concentration u₀ of each component weight.
    pub u0: f64,
}

impl Default for Priors {
    fn default() -> Self {
        Priors {
            alpha: (1e-3, 1e-3),
            beta: (1e-3, 1e-3),
            g: (1e-3, 1e-3),
            tau: 1e-3,
            u0: 1.0,
        }
    }
}

/// The most mixture components per source (each source's posterior over its components is a
/// responsibility per data point; Lawrence uses 2 to 5).
pub const MAX_COMPONENTS: usize = 64;
/// The most seeded starts of [`fit`] (each is a whole fit).
pub const MAX_RESTARTS: usize = 10_000;
/// The most sweeps per start.
pub const MAX_SWEEPS: usize = 100_000_000;
/// The most responsibilities a fit may hold (data points × sources × components), 2 GiB of numbers.
pub const MAX_RESPONSIBILITIES: usize = 1 << 28;

/// Checks `components`, `restarts` and `max_iter` against their caps (what `occam latent ica`
/// checks at parse time; the messages name the flags).
pub fn check_settings(components: usize, restarts: usize, max_iter: usize) -> Result<()> {
    for (flag, v, lo, hi) in [
        ("--components", components, 1, MAX_COMPONENTS),
        ("--restarts", restarts, 1, MAX_RESTARTS),
        ("--max-iter", max_iter, 1, MAX_SWEEPS),
    ] {
        if !(lo..=hi).contains(&v) {
            return Err(Error::Usage(format!(
                "{flag} must be between {lo} and {hi}, got {v}"
            )));
        }
    }
    Ok(())
}

/// A fitted Bayesian ICA model: the engine's q and the results read from it.
pub struct Ica {
    /// Sensors P.
    pub p: usize,
    /// Model sources I.
    pub i: usize,
    /// Components per source's mixture, M.
    pub m: usize,
    /// The priors.
    pub priors: Priors,
    vmp: Vmp,
    alpha: NodeId,
    x: NodeId,
}

impl Ica {
    /// Fits from `start` on data `t`: sweeps until the bound changes by less than `tol` per data
    /// value or `max_iter` sweeps; returns the model and the bound after each sweep. A decrease
    /// beyond round-off is an error (it would be a bug).
    pub fn fit_from(
        t: &Matrix,
        priors: Priors,
        start: &Start,
        max_iter: usize,
        tol: f64,
    ) -> Result<(Ica, Vec<f64>)> {
        if start.w.len() != t.cols * start.i || start.mu.len() != t.cols {
            return Err(Error::Usage(format!(
                "Bayesian ICA: the start was set up for {} sensors, the data have {}",
                start.mu.len(),
                t.cols
            )));
        }
        let (fitted, trace) = engine::run(t, priors, start, max_iter, tol)?;
        let ica = Ica {
            p: t.cols,
            i: start.i,
            m: start.m,
            priors,
            vmp: fitted.vmp,
            alpha: fitted.alpha,
            x: fitted.x,
        };
        Ok((ica, trace))
    }

    /// The lower bound L(q) on ln p(t) at the fitted q.
    pub fn bound(&self) -> f64 {
        self.vmp.bound()
    }

    /// ⟨α_i⟩ of each source.
    pub fn alpha(&self) -> Vec<f64> {
        self.vmp.mean(self.alpha).expect("a Gamma node")
    }

    /// The relevance 1/⟨α_i⟩ of each source.
    pub fn relevance(&self) -> Vec<f64> {
        self.alpha().iter().map(|a| 1.0 / a).collect()
    }

    /// The posterior means of source `s` over the data points.
    pub fn source(&self, s: usize) -> Vec<f64> {
        let x = self.vmp.mean(self.x).expect("the sources' vector");
        x.iter().skip(s).step_by(self.i).copied().collect()
    }
}

/// The best of `restarts` seeded fits (seeds `seed`, `seed + 1`, …) by converged bound.
pub fn fit(
    t: &Matrix,
    sources: usize,
    components: usize,
    (restarts, max_iter, tol): (usize, usize, f64),
    seed: u64,
) -> Result<(Ica, Vec<f64>)> {
    if restarts > MAX_RESTARTS {
        return Err(Error::Usage(format!(
            "Bayesian ICA: restarts must be at most {MAX_RESTARTS}, got {restarts}"
        )));
    }
    let mut best: Option<(Ica, Vec<f64>)> = None;
    for r in 0..restarts.max(1) as u64 {
        let start = Start::new(
            t,
            sources,
            components,
            Priors::default(),
            seed.wrapping_add(r),
        )?;
        let (m, trace) = Ica::fit_from(t, Priors::default(), &start, max_iter, tol)?;
        let b = trace.last().copied().unwrap_or(f64::NEG_INFINITY);
        if best
            .as_ref()
            .is_none_or(|(_, tr)| tr.last().is_none_or(|&x| b > x))
        {
            best = Some((m, trace));
        }
    }
    best.ok_or_else(|| Error::Run("Bayesian ICA: no fit".into()))
}
