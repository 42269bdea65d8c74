//! `occam compare MODEL...`: fit every model on the same data; bounds, differences to the best
//! and posterior model probabilities (equal priors: a softmax of the bounds, Winn §1.6).

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::{model_path, DataArgs, RunArgs};
use crate::data::DataSet;
use crate::error::{CliError, Result};
use crate::infer;
use crate::model;

/// Arguments of `occam compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The model files (.occam).
    #[arg(required = true, num_args = 1..)]
    pub models: Vec<PathBuf>,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Prior model probabilities, one per model (default: equal); they need not sum to 1.
    #[arg(long, value_delimiter = ',')]
    pub priors: Option<Vec<f64>>,
    /// Print one JSON object on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Posterior model probabilities: softmax of the bounds plus log prior probabilities (equal
/// priors when `priors` is empty).
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

/// Runs `occam compare`.
pub fn run(a: &CompareArgs) -> Result<()> {
    for m in &a.models {
        model_path(m)?;
    }
    if a.run.order.is_some() {
        return Err(CliError::Usage("--order applies to `fit` only".into()));
    }
    let priors = a.priors.clone().unwrap_or_default();
    if !priors.is_empty()
        && (priors.len() != a.models.len() || priors.iter().any(|p| !(p.is_finite() && *p > 0.0)))
    {
        return Err(CliError::Usage(format!(
            "--priors: give {} positive numbers, one per model",
            a.models.len()
        )));
    }
    let settings = a.run.settings(true)?;
    let given = DataSet::from_args(&a.data.data)?;
    let mut rows = Vec::new();
    for m in &a.models {
        let loaded = model::load(m, &given)?;
        let mut c = loaded.compile(true)?;
        let o = infer::fit(&loaded, &mut c, &settings)?;
        rows.push((loaded.file_name.clone(), o));
    }
    let bounds: Vec<f64> = rows.iter().map(|(_, o)| o.bound).collect();
    let probs = probabilities(&bounds, &priors);
    let best = bounds.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if a.json {
        let models: Vec<_> = rows
            .iter()
            .zip(&probs)
            .map(|((name, o), p)| {
                json!({
                    "model": name,
                    "bound": o.bound,
                    "difference": o.bound - best,
                    "probability": p,
                    "iterations": o.iterations,
                    "converged": o.converged,
                    "restart_bounds": o.restart_bounds,
                    "warnings": o.warnings,
                })
            })
            .collect();
        let best_name = rows
            .iter()
            .find(|(_, o)| o.bound == best)
            .map(|(n, _)| n.clone());
        println!("{}", json!({"models": models, "best": best_name}));
        return Ok(());
    }
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(5).max(5);
    println!(
        "{:<width$}  {:>14}  {:>12}  {:>11}  {:>5}",
        "model", "bound", "vs best", "P(model)", "iter"
    );
    for ((name, o), p) in rows.iter().zip(&probs) {
        println!(
            "{:<width$}  {:>14.4}  {:>12.4}  {:>11.4e}  {:>5}{}",
            name,
            o.bound,
            o.bound - best,
            p,
            o.iterations,
            if o.bound == best { "  best" } else { "" }
        );
    }
    Ok(())
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
