//! The Bayesian Occam's razor on polynomial regression (Sahani, slide "Occam's razor at work";
//! issue 28's first example): polynomials of degree 0–9 fitted to a few noisy points of a cubic.
//! The maximum likelihood rises with every degree (nested models), while the evidence, exact at
//! fixed hyper-parameters or maximised over them (ML-II), peaks near the true degree.
//!
//! Degree M regresses y on the features (1, x, …, x^M) with weights w_k ~ N(0, α⁻¹) and noise
//! precision β (`occam::regression`): ln p(y | α, β) = ln N(y; 0, β⁻¹I + α⁻¹XXᵀ).

use occam::error::Result;
use occam::regression::{evidence, maximise, Design, Ml2Options, Prior};
use occam_core::linalg::least_squares;
use occam_core::Rng;
use occam_report::figure::{Figure, Series};
use rand::{Rng as _, SeedableRng};
use rand_distr::StandardNormal;

/// The true polynomial, lowest power first: 1 − 2x − x² + 3x³ (degree 3).
pub const TRUE_COEFS: [f64; 4] = [1.0, -2.0, -1.0, 3.0];
/// The noise standard deviation of the generated data.
pub const NOISE_SD: f64 = 0.2;
/// The prior precision of every weight for the evidence at fixed hyper-parameters.
pub const ALPHA_FIXED: f64 = 0.1;
/// The highest degree fitted.
pub const MAX_DEGREE: usize = 9;
/// The seed of the example's data set.
pub const SEED: u64 = 1;

/// A data set: inputs and targets.
#[derive(Debug, Clone)]
pub struct Points {
    /// Inputs, uniform on [−1, 1].
    pub x: Vec<f64>,
    /// Targets, the true polynomial plus Gaussian noise of sd [`NOISE_SD`].
    pub y: Vec<f64>,
}

/// `n` points of the true cubic with noise, drawn from `seed`.
pub fn generate(n: usize, seed: u64) -> Points {
    let mut rng = Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
    let y = x
        .iter()
        .map(|&v| poly(&TRUE_COEFS, v) + NOISE_SD * rng.sample::<f64, _>(StandardNormal))
        .collect();
    Points { x, y }
}

fn poly(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, k| acc * x + k)
}

/// One degree's row of the study.
#[derive(Debug, Clone)]
pub struct DegreeRow {
    /// The degree M (M + 1 weights).
    pub degree: usize,
    /// max over w and σ² of ln p(y | w, σ²) (least squares, σ² = RSS/N).
    pub max_log_likelihood: f64,
    /// ln p(y | α, β) at the ML-II (α, β) (one shared α).
    pub ml2_log_evidence: f64,
    /// The ML-II prior precision α.
    pub ml2_alpha: f64,
    /// The ML-II noise precision β.
    pub ml2_beta: f64,
    /// ln p(y | α, β) at α = [`ALPHA_FIXED`] and the true β = 1/[`NOISE_SD`]².
    pub exact_log_evidence: f64,
}

/// The features (1, x, …, x^M), row-major.
fn features(x: &[f64], m: usize) -> Vec<f64> {
    x.iter()
        .flat_map(|&v| (0..=m).map(move |k| v.powi(k as i32)))
        .collect()
}

/// Fits every degree 0..=`max_degree` to `p`.
pub fn study(p: &Points, max_degree: usize) -> Result<Vec<DegreeRow>> {
    let n = p.x.len();
    let beta_true = 1.0 / (NOISE_SD * NOISE_SD);
    (0..=max_degree)
        .map(|m| {
            let x = features(&p.x, m);
            let design = Design::new(&x, n, m + 1, &p.y, false)?;
            let w = least_squares(&x, m + 1, &p.y)
                .map_err(|e| occam::Error::Run(format!("degree {m}: least squares: {e}")))?;
            let s2 = design.sse(&w) / n as f64;
            let nf = n as f64;
            let max_log_likelihood = -0.5 * nf * ((2.0 * std::f64::consts::PI * s2).ln() + 1.0);
            let ml2 = maximise(
                &design,
                &Ml2Options {
                    prior: Prior::Shared,
                    ..Ml2Options::default()
                },
            )?;
            let exact = evidence(&design, &vec![ALPHA_FIXED; m + 1], beta_true)?;
            Ok(DegreeRow {
                degree: m,
                max_log_likelihood,
                ml2_log_evidence: ml2.at.log_evidence,
                ml2_alpha: ml2.alpha[0],
                ml2_beta: ml2.beta,
                exact_log_evidence: exact.log_evidence,
            })
        })
        .collect()
}

/// The degree with the highest value of `f`.
pub fn best(rows: &[DegreeRow], f: impl Fn(&DegreeRow) -> f64) -> usize {
    rows.iter()
        .max_by(|a, b| f(a).total_cmp(&f(b)))
        .map_or(0, |r| r.degree)
}

/// The three curves against the degree as a line chart (SVG text).
pub fn figure(rows: &[DegreeRow], n: usize) -> String {
    let curve = |f: &dyn Fn(&DegreeRow) -> f64| -> Vec<(f64, f64)> {
        rows.iter().map(|r| (r.degree as f64, f(r))).collect()
    };
    occam_report::figure::line_chart(&Figure {
        title: format!(
            "Occam's razor: polynomial degree on {n} points of a cubic (noise sd {NOISE_SD})"
        ),
        x_label: "polynomial degree M".into(),
        y_label: "nats".into(),
        series: vec![
            Series::new("max log-likelihood", curve(&|r| r.max_log_likelihood)),
            Series::new("log evidence, ML-II (α, β)", curve(&|r| r.ml2_log_evidence)),
            Series::new(
                format!("log evidence, α = {ALPHA_FIXED}, true β"),
                curve(&|r| r.exact_log_evidence),
            ),
        ],
        references: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example's data set: the likelihood rises with every degree, both evidences peak at
    /// the true degree 3, and ML-II's evidence is at least the evidence at any fixed (α, β).
    #[test]
    fn the_evidence_peaks_at_the_true_degree_while_the_likelihood_rises() {
        let rows = study(&generate(20, SEED), MAX_DEGREE).unwrap();
        for r in &rows {
            println!(
                "M = {}: max ln L = {:8.3}, ML-II ln p = {:8.3} (α = {:.3e}, σ = {:.3}), \
                 ln p(α = {ALPHA_FIXED}, true β) = {:8.3}",
                r.degree,
                r.max_log_likelihood,
                r.ml2_log_evidence,
                r.ml2_alpha,
                1.0 / r.ml2_beta.sqrt(),
                r.exact_log_evidence
            );
        }
        for w in rows.windows(2) {
            assert!(w[1].max_log_likelihood >= w[0].max_log_likelihood - 1e-9);
        }
        assert!(rows[MAX_DEGREE].max_log_likelihood > rows[3].max_log_likelihood + 1.0);
        assert_eq!(best(&rows, |r| r.max_log_likelihood), MAX_DEGREE);
        assert_eq!(best(&rows, |r| r.ml2_log_evidence), 3);
        assert_eq!(best(&rows, |r| r.exact_log_evidence), 3);
        for r in &rows {
            assert!(
                r.ml2_log_evidence >= r.exact_log_evidence - 1e-9,
                "M = {}",
                r.degree
            );
        }
    }

    /// Over twenty data sets, how often each evidence picks each degree (printed, for the docs);
    /// the evidence at fixed hyper-parameters picks 3 on most of them.
    #[test]
    fn picks_over_twenty_data_sets() {
        let mut ml2 = [0usize; MAX_DEGREE + 1];
        let mut exact = [0usize; MAX_DEGREE + 1];
        for seed in 0..20 {
            let rows = study(&generate(20, seed), MAX_DEGREE).unwrap();
            ml2[best(&rows, |r| r.ml2_log_evidence)] += 1;
            exact[best(&rows, |r| r.exact_log_evidence)] += 1;
        }
        println!("picks by degree 0..9: ML-II {ml2:?}, fixed (α, β) {exact:?}");
        assert!(exact[3] >= 15, "{exact:?}");
    }
}
