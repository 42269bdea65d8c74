//! Second-order TAP (Thouless–Anderson–Palmer / Plefka) approximation of log Z.
//!
//! This is **an approximation, not a bound** (Leisink & Kappen §3.2, (25) and §5.1: "neither an
//! upper nor a lower bound"); the result is labelled [`Quality::Approximation`].
//!   −G(m) = c + ½ mᵀWm + hᵀm + Σ_i H₂(m_i) + ¼ Σ_ij w_ij² (1 − m_i²)(1 − m_j²)   (Plefka 1982)
//! Stationarity gives the TAP equations
//!   m_i = tanh(h_i + Σ_j w_ij m_j − m_i Σ_j w_ij² (1 − m_j²)),
//! iterated sequentially with damping from the mean-field solution.

use super::error::Result;
use super::mf::{mean_field, mf_bound, MeanFieldOptions};
use super::model::{dot, BoltzmannMachine};
use super::Quality;

/// TAP options.
#[derive(Debug, Clone)]
pub struct TapOptions {
    /// Mean-field options for the starting point.
    pub mean_field: MeanFieldOptions,
    /// Damping of the TAP iteration.
    pub damping: f64,
    /// Maximal sweeps.
    pub max_sweeps: usize,
    /// Convergence tolerance on max |Δm|.
    pub tol: f64,
}

impl Default for TapOptions {
    fn default() -> Self {
        Self {
            mean_field: MeanFieldOptions::default(),
            damping: 0.5,
            max_sweeps: 5000,
            tol: 1e-12,
        }
    }
}

/// TAP result.
#[derive(Debug, Clone)]
pub struct TapResult {
    /// The TAP value of log Z. NOT a bound.
    pub log_z: f64,
    /// Always [`Quality::Approximation`].
    pub quality: Quality,
    /// The TAP means.
    pub means: Vec<f64>,
    /// Whether the TAP iteration converged (it may not beyond σ₂ ≈ 1).
    pub converged: bool,
    /// Sweeps done.
    pub sweeps: usize,
}

/// −G(m), the TAP free energy (module doc).
pub fn tap_value(bm: &BoltzmannMachine, m: &[f64]) -> f64 {
    let n = bm.n();
    let w = bm.weights();
    let mut onsager = 0.0;
    for i in 0..n {
        for j in 0..n {
            let x = w[i * n + j];
            onsager += 0.25 * x * x * (1.0 - m[i] * m[i]) * (1.0 - m[j] * m[j]);
        }
    }
    mf_bound(bm, m) + onsager
}

/// Solves the TAP equations from the mean-field solution.
pub fn tap(bm: &BoltzmannMachine, o: &TapOptions) -> Result<TapResult> {
    let mf = mean_field(bm, &o.mean_field)?;
    let n = bm.n();
    let w = bm.weights();
    let h = bm.thresholds();
    let mut m = mf.means;
    let mut converged = false;
    let mut sweeps = 0;
    for s in 1..=o.max_sweeps {
        sweeps = s;
        let mut delta: f64 = 0.0;
        for k in 0..n {
            let row = &w[k * n..(k + 1) * n];
            let react: f64 = row
                .iter()
                .zip(&m)
                .map(|(x, mj)| x * x * (1.0 - mj * mj))
                .sum();
            let target = (h[k] + dot(row, &m) - m[k] * react).tanh();
            let new = (1.0 - o.damping) * m[k] + o.damping * target;
            delta = delta.max((new - m[k]).abs());
            m[k] = new;
        }
        if !delta.is_finite() {
            break;
        }
        if delta < o.tol {
            converged = true;
            break;
        }
    }
    Ok(TapResult {
        log_z: tap_value(bm, &m),
        quality: Quality::Approximation,
        means: m,
        converged,
        sweeps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::exact::exact;

    #[test]
    fn tap_is_stationary_and_accurate_for_small_weights() {
        let n = 8;
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..i {
                let v = (((i * 5 + j * 3) % 7) as f64 - 3.0) * 0.04;
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        let h: Vec<f64> = (0..n).map(|i| (i as f64 - 3.5) * 0.1).collect();
        let bm = BoltzmannMachine::new(w, h, 0.0).unwrap();
        let r = tap(&bm, &TapOptions::default()).unwrap();
        assert!(r.converged);
        assert_eq!(r.quality, Quality::Approximation);
        assert!(!r.quality.is_lower_bound());
        // stationarity of −G: finite-difference gradient vanishes at the TAP means (in atanh m)
        for k in 0..n {
            let e = 1e-6;
            let mut a = r.means.clone();
            let mut b = r.means.clone();
            a[k] += e;
            b[k] -= e;
            let g = (tap_value(&bm, &a) - tap_value(&bm, &b)) / (2.0 * e);
            assert!(g.abs() < 1e-7, "grad {k} = {g}");
        }
        let ex = exact(&bm).unwrap();
        let mf = crate::bm::mf::mean_field(&bm, &MeanFieldOptions::default()).unwrap();
        // TAP closer to the truth than mean field for small weights
        assert!((r.log_z - ex.log_z).abs() < 0.2 * (ex.log_z - mf.log_z));
    }
}
