//! Held-out likelihood by K-fold cross-validation (Sahani, "Likelihood validation" and
//! "cross-validation"): the rows are split into K folds by a seeded shuffle; for each fold the
//! model is fitted on the other K − 1 (those rows removed, so plates sized from data shrink) and
//! each held-out row scored by its log predictive density under that fit's q,
//!
//!   ℓ_i = ln ∫ p(x_i | θ) q_{−f(i)}(θ) dθ  (Winn §1.8.2, q standing in for the posterior),
//!
//! the mixture index of the row summed out. The integral is a Monte Carlo average over draws
//! from q (blocks of [`BLOCK`] draws, block b of fold f from its own seeded generator, combined
//! in a fixed order: the same bits on any number of threads).
//!
//! The total Σ_i ℓ_i is **not** ln p(D): it estimates N times the expected log predictive
//! density of a new row (with K = N it is the log pseudo-marginal likelihood of Geisser and
//! Eddy). Its standard error is the rows' spread, √(N · Var_i ℓ_i), as for any sum of N
//! exchangeable terms; it does not include the Monte Carlo error, which is far smaller with
//! thousands of draws.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rayon::prelude::*;

use super::density::{log_sum_exp, row_in_component, Theta};
use super::flat::{recognise, Flat};
use super::importance::{block_seed, BLOCK};
use super::proposal::Proposal;
use super::NotApplicable;
use crate::driver::Settings;
use crate::fitted::Fitted;

/// A cross-validation score.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HeldOut {
    /// Σ_i ℓ_i over the scored rows.
    pub total: f64,
    /// √(N · Var_i ℓ_i).
    pub se: f64,
    /// ℓ_i per row (rows with no present value are not scored: NaN).
    pub per_row: Vec<f64>,
    /// Rows scored.
    pub rows: usize,
}

/// ln p(row i | θ), the mixture index summed out.
fn ln_row(flat: &Flat, theta: &Theta, i: usize) -> f64 {
    match flat.weights {
        Some(w) => {
            let per: Vec<f64> = (0..flat.k)
                .map(|k| theta[w][k].ln() + row_in_component(flat, theta, i, k))
                .collect();
            log_sum_exp(&per)
        }
        None => row_in_component(flat, theta, i, 0),
    }
}

/// The fold of every row (`None`: no present value, never held out).
pub(crate) fn folds(flat: &Flat, k: usize, seed: u64) -> Vec<Option<usize>> {
    let usable: Vec<usize> = (0..flat.n)
        .filter(|&i| {
            flat.obs
                .iter()
                .any(|o| (0..o.cols).any(|d| o.present[i * o.cols + d]))
        })
        .collect();
    let mut order = usable.clone();
    order.shuffle(&mut StdRng::seed_from_u64(seed));
    let mut out = vec![None; flat.n];
    for (j, &i) in order.iter().enumerate() {
        out[i] = Some(j % k);
    }
    out
}

/// K-fold cross-validation of a fitted model (module doc): `draws` draws from each fold's q,
/// fold fits with `settings`.
pub(crate) fn cross_validate(
    fitted: &Fitted,
    flat: &Flat,
    k: usize,
    draws: usize,
    seed: u64,
    settings: &Settings,
) -> Result<HeldOut, NotApplicable> {
    let fold = folds(flat, k, seed);
    let rows = fold.iter().flatten().count();
    if k < 2 || k > rows {
        return Err(NotApplicable::Other(format!(
            "{k} folds of {rows} rows: give 2 to {rows} folds"
        )));
    }
    let model = fitted.model();
    let mut per_row = vec![f64::NAN; flat.n];
    for f in 0..k {
        let keep: Vec<usize> = (0..flat.n).filter(|&i| fold[i] != Some(f)).collect();
        let mut data = fitted.loaded().data.clone();
        for o in &flat.obs {
            if let Some(t) = data.tables.get_mut(&o.name) {
                t.values = keep
                    .iter()
                    .flat_map(|&i| t.values[i * o.cols..(i + 1) * o.cols].to_vec())
                    .collect();
                t.present = keep
                    .iter()
                    .flat_map(|&i| t.present[i * o.cols..(i + 1) * o.cols].to_vec())
                    .collect();
                t.rows = keep.len();
                t.line_shifts.clear();
                t.source_rows = t
                    .source_rows
                    .as_ref()
                    .map(|r| keep.iter().map(|&i| r[i]).collect());
            }
        }
        let why = |e: crate::Error| NotApplicable::Other(format!("fold {} of {k}: {e}", f + 1));
        let part = model.with_data(&data).map_err(why)?;
        let fit = part.fit(settings).map_err(why)?;
        let q = Proposal::new(&recognise(fit.loaded())?, &fit, 1.0, 0.0)?;
        let held: Vec<usize> = (0..flat.n).filter(|&i| fold[i] == Some(f)).collect();
        let blocks = draws.div_ceil(BLOCK);
        // Per block, ln Σ_s p(x_i | θ_s) for every held-out row.
        let sums: Vec<Vec<f64>> = (0..blocks)
            .into_par_iter()
            .map(|b| {
                let s = block_seed(
                    seed ^ (f as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407),
                    b as u64,
                );
                let mut rng = StdRng::seed_from_u64(s);
                let n = BLOCK.min(draws - b * BLOCK);
                let mut terms = vec![Vec::with_capacity(n); held.len()];
                for _ in 0..n {
                    let theta = q.sample(flat, &mut rng);
                    for (t, &i) in terms.iter_mut().zip(&held) {
                        let v = ln_row(flat, &theta, i);
                        t.push(if v.is_nan() { f64::NEG_INFINITY } else { v });
                    }
                }
                terms.iter().map(|t| log_sum_exp(t)).collect()
            })
            .collect();
        for (j, &i) in held.iter().enumerate() {
            let per: Vec<f64> = sums.iter().map(|s| s[j]).collect();
            per_row[i] = log_sum_exp(&per) - (draws as f64).ln();
        }
    }
    let scored: Vec<f64> = per_row.iter().copied().filter(|v| !v.is_nan()).collect();
    let n = scored.len() as f64;
    let total: f64 = scored.iter().sum();
    let mean = total / n;
    let var = scored.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    Ok(HeldOut {
        total,
        se: (n * var).sqrt(),
        per_row,
        rows,
    })
}
