//! Type-II maximum likelihood (ML-II, evidence maximisation) of the prior and noise precisions
//! of Bayesian linear regression by MacKay's fixed-point re-estimation (Sahani, slide "ARD"):
//!
//! γ_i = 1 − α_i Σ_ii,   α_i ← γ_i / μ_i²   (ARD, one α per input),
//! α ← Σ_i γ_i / ‖μ‖²                          (one α shared by every input),
//! β ← (N − Σ_i γ_i) / ‖y − Xμ‖²               (the slide's σ² update, inverted),
//!
//! each the zero of the gradient in [`super::evidence`](mod@super::evidence) solved for the
//! hyper-parameter with γ and μ held. An α_i that passes [`Ml2Options::alpha_max`] is pruned (α_i = ∞, w_i = 0): the input
//! is irrelevant. The updates are not guaranteed to raise the evidence at every step (Wipf &
//! Nagarajan 2008), so the trace is returned and the end point is checked by its gradient.

use super::design::Design;
use super::evidence::{evidence, Evidence};
use crate::error::{Error, Result};

/// Which prior precisions the evidence is maximised over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prior {
    /// One α for every weight (MacKay's evidence framework; scikit-learn's `BayesianRidge`
    /// without hyper-priors).
    Shared,
    /// One α_i per input: automatic relevance determination.
    PerInput,
}

/// Settings of the fixed-point iteration.
#[derive(Debug, Clone)]
pub struct Ml2Options {
    /// Shared or per-input prior precisions.
    pub prior: Prior,
    /// The largest number of re-estimations.
    pub max_iter: usize,
    /// Converged when no log hyper-parameter moves by more than this in one re-estimation.
    pub tol: f64,
    /// A prior precision above this is pruned to ∞.
    pub alpha_max: f64,
    /// The starting prior precision(s).
    pub alpha_init: f64,
    /// The starting noise precision; `None` is 1 / Var(y).
    pub beta_init: Option<f64>,
}

impl Default for Ml2Options {
    fn default() -> Self {
        Ml2Options {
            prior: Prior::PerInput,
            max_iter: 1000,
            tol: 1e-10,
            alpha_max: 1e12,
            alpha_init: 1.0,
            beta_init: None,
        }
    }
}

/// The result of evidence maximisation.
#[derive(Debug, Clone)]
pub struct Ml2Fit {
    /// The prior precision of each input (∞ for pruned inputs; all equal under [`Prior::Shared`]).
    pub alpha: Vec<f64>,
    /// The noise precision β (σ² = 1/β).
    pub beta: f64,
    /// Posterior, evidence and gradient at (α, β).
    pub at: Evidence,
    /// The log evidence before each re-estimation, then at the end point.
    pub trace: Vec<f64>,
    /// Re-estimations made.
    pub iterations: usize,
    /// Whether the hyper-parameters stopped moving within `max_iter`.
    pub converged: bool,
}

impl Ml2Fit {
    /// Whether input `i` was pruned (its α diverged).
    pub fn pruned(&self, i: usize) -> bool {
        !self.alpha[i].is_finite()
    }
}

/// Maximises the evidence over the prior precisions and the noise precision.
pub fn maximise(design: &Design, o: &Ml2Options) -> Result<Ml2Fit> {
    if !(o.alpha_init > 0.0 && o.alpha_init.is_finite() && o.alpha_max > o.alpha_init) {
        return Err(Error::Usage(format!(
            "ML-II needs 0 < alpha_init < alpha_max, got {} and {}",
            o.alpha_init, o.alpha_max
        )));
    }
    let d = design.inputs();
    let n = design.rows() as f64;
    let mut alpha = vec![o.alpha_init; d];
    let mut beta = match o.beta_init {
        Some(b) => b,
        None => 1.0 / (design.y_var() + f64::EPSILON),
    };
    let mut trace = Vec::new();
    let mut converged = false;
    let mut iterations = 0;
    while iterations < o.max_iter {
        let e = evidence(design, &alpha, beta)?;
        trace.push(e.log_evidence);
        let mut next = alpha.clone();
        match o.prior {
            Prior::PerInput => {
                for i in 0..d {
                    if alpha[i].is_finite() {
                        let m2 = e.mean[i] * e.mean[i];
                        next[i] = if m2 > 0.0 && e.gamma[i] > 0.0 {
                            e.gamma[i] / m2
                        } else {
                            f64::INFINITY
                        };
                    }
                }
            }
            Prior::Shared => {
                let m2: f64 = e.mean.iter().map(|m| m * m).sum();
                let a = e.gamma_sum() / m2;
                next.iter_mut().for_each(|v| *v = a);
            }
        }
        for a in &mut next {
            if a.is_nan() || *a > o.alpha_max {
                *a = f64::INFINITY;
            }
        }
        let dof = n - e.gamma_sum();
        if !(dof > 0.0 && e.sse > 0.0) {
            return Err(Error::Run(format!(
                "ML-II: the noise precision diverges (N − Σγ = {dof:.3e}, ‖y − Xμ‖² = {:.3e}): \
                 the inputs fit y exactly",
                e.sse
            )));
        }
        let next_beta = dof / e.sse;
        let moved = alpha
            .iter()
            .zip(&next)
            .map(|(a, b)| match (a.is_finite(), b.is_finite()) {
                (true, true) => (b.ln() - a.ln()).abs(),
                (false, false) => 0.0,
                _ => f64::INFINITY,
            })
            .fold((next_beta.ln() - beta.ln()).abs(), f64::max);
        alpha = next;
        beta = next_beta;
        iterations += 1;
        if moved <= o.tol {
            converged = true;
            break;
        }
    }
    let at = evidence(design, &alpha, beta)?;
    trace.push(at.log_evidence);
    Ok(Ml2Fit {
        alpha,
        beta,
        at,
        trace,
        iterations,
        converged,
    })
}
