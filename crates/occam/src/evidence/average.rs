//! Bayesian model averaging of predictions (Sahani, "Learning model structure": the posterior
//! model probabilities weight the models' predictions, with no need to select one):
//!
//!   p(y* | D) = Σ_m P(m | D) p(y* | D, m),
//!
//! each p(y* | D, m) the model's predictive under its q ([`crate::predict`]), the weights
//! P(m | D) those of one evidence method ([`super::EvidenceRow::probability`]). The average is
//! a mixture: its mean is Σ_m w_m μ_m and its variance Σ_m w_m (σ_m² + μ_m²) − μ², both exact
//! when every model's are; its draws take draw d from model m with probability w_m (a seeded
//! choice per draw, so the draws are the mixture's), and its quantiles are the draws'.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::error::{Error, Result};
use crate::predict::{quantile, Predictive};

/// The average of the models' predictives `per_model[m]` (the same variables, rows and draws in
/// each) with weights `weights` (summing to 1), draws chosen with `seed`.
pub fn average(
    per_model: &[Vec<Predictive>],
    weights: &[f64],
    seed: u64,
) -> Result<Vec<Predictive>> {
    if per_model.is_empty() || per_model.len() != weights.len() {
        return Err(Error::Usage(format!(
            "average: {} models and {} weights",
            per_model.len(),
            weights.len()
        )));
    }
    let total: f64 = weights.iter().sum();
    if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) || (total - 1.0).abs() > 1e-9 {
        return Err(Error::Usage(
            "average: the weights must be probabilities summing to 1".into(),
        ));
    }
    let first = &per_model[0];
    for (m, p) in per_model.iter().enumerate() {
        let same = p.len() == first.len()
            && p.iter().zip(first).all(|(a, b)| {
                a.name == b.name
                    && a.rows == b.rows
                    && a.cols == b.cols
                    && a.draws == b.draws
                    && a.quantiles.len() == b.quantiles.len()
            });
        if !same {
            return Err(Error::Usage(format!(
                "average: model {} predicts other variables or shapes than model 1 (every \
                 model must predict the same variables for the same rows)",
                m + 1
            )));
        }
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let draws = first.first().map_or(0, |p| p.draws);
    // One choice of model per draw, shared by every variable (their draws stay joint).
    let choice: Vec<usize> = (0..draws)
        .map(|_| {
            let u: f64 = rng.random();
            let mut acc = 0.0;
            for (m, w) in weights.iter().enumerate() {
                acc += w;
                if u < acc {
                    return m;
                }
            }
            weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
        })
        .collect();
    let out = (0..first.len())
        .map(|v| {
            let b = &first[v];
            let n = b.rows * b.cols;
            let mut mean = vec![0.0; n];
            let mut second = vec![0.0; n];
            for (p, w) in per_model.iter().zip(weights) {
                for e in 0..n {
                    let (mu, sd) = (p[v].mean[e], p[v].sd[e]);
                    mean[e] += w * mu;
                    second[e] += w * (sd * sd + mu * mu);
                }
            }
            let sd: Vec<f64> = (0..n)
                .map(|e| (second[e] - mean[e] * mean[e]).max(0.0).sqrt())
                .collect();
            let mut samples = vec![0.0; draws * n];
            for (d, &m) in choice.iter().enumerate() {
                samples[d * n..(d + 1) * n]
                    .copy_from_slice(&per_model[m][v].samples[d * n..(d + 1) * n]);
            }
            let mut column = vec![0.0; draws];
            let quantiles = b
                .quantiles
                .iter()
                .map(|(prob, _)| {
                    let values = (0..n)
                        .map(|e| {
                            for d in 0..draws {
                                column[d] = samples[d * n + e];
                            }
                            column.sort_by(f64::total_cmp);
                            quantile(&column, *prob)
                        })
                        .collect();
                    (*prob, values)
                })
                .collect();
            Predictive {
                name: b.name.clone(),
                rows: b.rows,
                cols: b.cols,
                mean,
                sd,
                exact: per_model.iter().all(|p| p[v].exact),
                quantiles,
                draws,
                samples,
                missing: b.missing.clone(),
            }
        })
        .collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(mean: Vec<f64>, sd: Vec<f64>, value: f64, draws: usize) -> Vec<Predictive> {
        let n = mean.len();
        vec![Predictive {
            name: "y".into(),
            rows: n,
            cols: 1,
            mean,
            sd,
            exact: true,
            quantiles: vec![(0.5, vec![value; n])],
            draws,
            samples: vec![value; draws * n],
            missing: None,
        }]
    }

    #[test]
    fn the_average_is_the_mixture_by_hand() {
        let draws = 4000;
        let a = constant(vec![1.0, 2.0], vec![1.0, 1.0], 10.0, draws);
        let b = constant(vec![3.0, 0.0], vec![2.0, 1.0], 20.0, draws);
        let avg = average(&[a, b], &[0.25, 0.75], 5).unwrap();
        let p = &avg[0];
        // Row 1: mean 0.25·1 + 0.75·3 = 2.5; E y² = 0.25·(1 + 1) + 0.75·(4 + 9) = 10.25,
        // variance 10.25 − 6.25 = 4. Row 2: mean 0.5; E y² = 0.25·5 + 0.75·1 = 2, variance 1.75.
        assert!((p.mean[0] - 2.5).abs() < 1e-12 && (p.mean[1] - 0.5).abs() < 1e-12);
        assert!((p.sd[0] - 2.0).abs() < 1e-12);
        assert!((p.sd[1] - 1.75f64.sqrt()).abs() < 1e-12);
        assert!(p.exact);
        // A quarter of the draws from the first model (binomial sd 0.0068 at 4000 draws).
        let from_a = p.samples.iter().step_by(2).filter(|&&v| v == 10.0).count();
        let share = from_a as f64 / draws as f64;
        assert!((share - 0.25).abs() < 0.03, "share {share}");
        // The median of a 1:3 mixture of 10s and 20s is 20.
        assert_eq!(p.quantiles[0].1, vec![20.0, 20.0]);
        // The same seed, the same draws.
        let again = average(
            &[
                constant(vec![1.0, 2.0], vec![1.0, 1.0], 10.0, draws),
                constant(vec![3.0, 0.0], vec![2.0, 1.0], 20.0, draws),
            ],
            &[0.25, 0.75],
            5,
        )
        .unwrap();
        assert_eq!(again[0].samples, p.samples);
    }

    #[test]
    fn mismatched_models_and_weights_are_refused() {
        let a = constant(vec![1.0], vec![1.0], 1.0, 10);
        let b = constant(vec![1.0, 2.0], vec![1.0, 1.0], 1.0, 10);
        assert!(average(&[a.clone(), b], &[0.5, 0.5], 0).is_err());
        assert!(average(&[a.clone(), a.clone()], &[0.5, 0.6], 0).is_err());
        assert!(average(&[a], &[0.5, 0.5], 0).is_err());
    }
}
