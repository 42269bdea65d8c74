//! Ranking fitted models: posterior model probabilities from their bounds (Winn §1.8.3), and the
//! refusal to rank bounds of different kinds. Used by `compare` and by the evidence table, so
//! that neither imports the other for it.

use crate::error::{Error, Result};
use crate::fitted::Fitted;

/// Posterior model probabilities: softmax of the bounds plus log prior weights (equal weights
/// when `priors` is empty) — Winn §1.8.3, (1.45), with the bound standing in for the log evidence.
pub fn probabilities(bounds: &[f64], priors: &[f64]) -> Vec<f64> {
    let score: Vec<f64> = bounds
        .iter()
        .enumerate()
        .map(|(i, b)| b + priors.get(i).map_or(0.0, |p| p.ln()))
        .collect();
    let max = score.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = score.iter().map(|b| (b - max).exp()).collect();
    let total: f64 = w.iter().sum();
    w.iter().map(|x| x / total).collect()
}

/// Refuses to rank fits whose bounds are of different kinds unless `mixed` (the caller's
/// `--mixed-bounds`): the error names each model's kind and the variables that make it so.
pub fn check_kinds(fitted: &[&Fitted], mixed: bool) -> Result<()> {
    let kinds: Vec<crate::quality::BoundQuality> =
        fitted.iter().map(|f| f.outcome().bound_quality).collect();
    if mixed || kinds.windows(2).all(|w| w[0] == w[1]) {
        return Ok(());
    }
    let lines: Vec<String> = fitted
        .iter()
        .zip(&kinds)
        .map(|(f, k)| {
            let why = match k {
                crate::quality::BoundQuality::Exact => String::new(),
                _ => format!(
                    " ({})",
                    crate::quality::culprits(f.loaded(), f.compiled(), *k).join(", ")
                ),
            };
            format!("  {}: {k}{why}", f.loaded().file_name)
        })
        .collect();
    Err(Error::Usage(format!(
        "the models' bounds are of different kinds, so their differences mix evidence with the \
         looseness of a bound:\n{}\nwrite the models with one kind (e.g. `sigmoid` for \
         `sigmoid_jj`: docs/guide/12-beyond-conjugate.md) or pass --mixed-bounds to rank them \
         anyway",
        lines.join("\n")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_of_bounds() {
        let p = probabilities(&[-10.0, -10.0 + 2f64.ln()], &[]);
        assert!((p[0] - 1.0 / 3.0).abs() < 1e-12 && (p[1] - 2.0 / 3.0).abs() < 1e-12);
        // A prior twice as large on the first model balances the evidence.
        let p = probabilities(&[-10.0, -10.0 + 2f64.ln()], &[2.0, 1.0]);
        assert!((p[0] - 0.5).abs() < 1e-12);
        let p = probabilities(&[-1e6, -1.0], &[]);
        assert_eq!(p[0], 0.0);
        assert_eq!(p[1], 1.0);
    }
}
