//! `occam compare MODEL...`: fit every model on the same data; bounds, differences to the best
//! and posterior model probabilities (equal priors: a softmax of the bounds, Winn §1.8.3, (1.45)).

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use occam::{DataSet, Model, Observer};

use super::progress::Bar;
use super::{model_path, DataArgs, RunArgs};
use crate::error::{Error, Result};

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
    /// Evidence estimators, comma-separated: vb (the bound, the default), vbsym (the bound plus
    /// ln K!/Π m_g! for a mixture's relabelled modes), exact (closed form of a one-layer
    /// conjugate model, or every assignment of a small mixture), bic, cs (Cheeseman–Stutz from
    /// q's expected statistics), is (importance sampling
    /// from the widened q, symmetric under relabelling; ± standard error), ais (annealed
    /// importance sampling from the prior, Hamiltonian moves with the mixture index summed out,
    /// see --ais-moves; ± standard error), laplace (Laplace's
    /// approximation at the MAP: error O(1/N)), cv (K-fold cross-validation, --folds: the
    /// held-out log predictive density summed over rows, not an evidence; ± se across rows).
    /// For small data use
    /// `is` (checked against `exact` where that applies): `vb` alone under-rates a mixture of K
    /// separated components by up to ln K! and can pick too few. Where `is` is flagged
    /// UNRELIABLE (larger mixtures), use `ais`. A method that does not apply to a model prints
    /// n/a with the reason.
    #[arg(long = "method", value_delimiter = ',', value_name = "METHODS")]
    pub methods: Option<Vec<String>>,
    /// Sweep a plate of one model: NAME=FROM..TO (inclusive) or NAME=A,B,C, e.g. K=1..6; the
    /// model file must declare the plate with a size (`plate K = 3`).
    #[arg(long, value_name = "NAME=SIZES")]
    pub plate: Option<String>,
    /// Importance-sampling draws per model (method is).
    #[arg(long, default_value_t = 20_000)]
    pub samples: usize,
    /// Variance inflation of the importance-sampling proposal over q (≥ 1).
    #[arg(long, default_value_t = 2.0)]
    pub widen: f64,
    /// Temperatures of annealed importance sampling (method ais): transitions per chain.
    #[arg(long, default_value_t = 1000)]
    pub temperatures: usize,
    /// Chains of annealed importance sampling (method ais), run in parallel.
    #[arg(long, default_value_t = 64)]
    pub chains: usize,
    /// Transitions of annealed importance sampling (method ais): hmc (Hamiltonian moves with the
    /// mixture index summed out, and re-seeding of a component from its prior), gibbs (sweeps
    /// over the index and each conjugate parameter, the weights integrated out), or auto: hmc
    /// unless a prior has a Gamma shape or a Beta or Dirichlet concentration below 1 (such as
    /// Gamma(0.001, 0.001) or Dirichlet(0.001)), whose draws Hamiltonian moves do not bring back.
    #[arg(long = "ais-moves", default_value = "auto", value_name = "MOVES")]
    pub ais_moves: String,
    /// Rank models whose bounds are of different kinds (exact ELBO, lower bound, approximate);
    /// without it such a comparison is refused with each model's kind and the variables that
    /// make it so.
    #[arg(long = "mixed-bounds")]
    pub mixed_bounds: bool,
    /// Largest number of assignments K^N that method exact enumerates.
    #[arg(long = "max-assignments", default_value_t = 1 << 22)]
    pub max_assignments: u64,
    /// Folds of cross-validation (method cv), split by a shuffle seeded by --seed.
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Bayesian model averaging: predict new rows (--predict) with every model and average the
    /// predictives weighted by the posterior model probabilities under METHOD (one of
    /// --method); the averaged table goes to --predict-out.
    #[arg(long, value_name = "METHOD", requires = "predict_out")]
    pub average: Option<String>,
    /// The new rows' data for --average under the model's names (repeatable), e.g. X=new.csv.
    #[arg(long = "predict", value_name = "NAME=FILE", requires = "average")]
    pub predict: Vec<String>,
    /// Where --average writes the averaged predictive: a CSV file (one variable) or a directory.
    #[arg(long = "predict-out", value_name = "FILE", requires = "average")]
    pub predict_out: Option<PathBuf>,
    /// Write an SVG of every method's ln p(D) against the models' free parameters (their
    /// order when a model is not recognised) to FILE.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// Runs `occam compare`.
pub fn run(a: &CompareArgs) -> Result<()> {
    for m in &a.models {
        model_path(m)?;
    }
    if a.run.order.is_some() {
        return Err(Error::Usage("--order applies to `fit` only".into()));
    }
    let priors = a.priors.clone().unwrap_or_default();
    if !priors.is_empty() && priors.len() != a.models.len() && a.plate.is_none() {
        return Err(Error::Usage(format!(
            "--priors: give {} positive numbers, one per model",
            a.models.len()
        )));
    }
    let methods = super::compare_methods::methods(a.methods.as_deref())?;
    let settings = a.run.settings()?;
    let given = DataSet::from_args(&a.data.data)?;
    let mut models = a
        .models
        .iter()
        .map(|m| Model::from_file(m, &given))
        .collect::<Result<Vec<_>>>()?;
    if let Some(spec) = &a.plate {
        models = super::compare_methods::sweep(&models, spec)?;
        if !priors.is_empty() && priors.len() != models.len() {
            return Err(Error::Usage(format!(
                "--priors: give {} positive numbers, one per model of the sweep",
                models.len()
            )));
        }
    }
    if methods != [occam::evidence::Method::Vb] || a.average.is_some() || a.plot.is_some() {
        return super::compare_methods::run(a, &models, &settings, &priors, &methods);
    }
    let plate = super::compare_methods::swept_plate(a);
    let compared = occam::compare_swept(
        &models,
        &settings,
        &priors,
        a.mixed_bounds,
        plate.as_deref(),
        &mut |i| Box::new(Bar::new(models[i].name())) as Box<dyn Observer>,
    )
    .map_err(|e| match e {
        Error::Usage(m) if m.starts_with("priors:") => Error::Usage(format!("--{m}")),
        e => e,
    })?;
    let rows: Vec<(String, &occam::Outcome)> = compared
        .iter()
        .map(|c| (c.fitted.loaded().file_name.clone(), c.fitted.outcome()))
        .collect();
    let probs: Vec<f64> = compared.iter().map(|c| c.probability).collect();
    let seconds: Vec<f64> = compared.iter().map(|c| c.seconds).collect();
    let best = rows
        .iter()
        .map(|(_, o)| o.bound)
        .fold(f64::NEG_INFINITY, f64::max);
    if a.json {
        let models: Vec<_> = rows
            .iter()
            .zip(&probs)
            .zip(&seconds)
            .zip(&compared)
            .map(|((((name, o), p), t), c)| {
                let mut row = json!({
                    "seconds": t,
                    "model": name,
                    "bound": o.bound,
                    "difference": o.bound - best,
                    "probability": p,
                    "iterations": o.iterations,
                    "converged": o.converged,
                    "restart_bounds": o.restart_bounds,
                    "components": o.components,
                    "warnings": o.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
                });
                if let Some(w) = &c.warm {
                    row["warm_start"] = json!({
                        "from": w.from,
                        "default_bound": w.default_bound,
                        "warm_bound": if w.warm_bound.is_finite() { json!(w.warm_bound) } else { json!(null) },
                        "kept": w.kept,
                        "ended_early": w.ended_early,
                        "start_kept": if w.kept { "warm" } else { "default" },
                        "tolerance": w.tolerance,
                        "failed": w.failed,
                    });
                }
                // Only for bounds that are not the exact ELBO (other reports are unchanged).
                if o.bound_quality != occam::quality::BoundQuality::Exact {
                    row["bound_quality"] = json!(o.bound_quality);
                }
                row
            })
            .collect();
        let best_name = rows
            .iter()
            .find(|(_, o)| o.bound == best)
            .map(|(n, _)| n.clone());
        outln!("{}", json!({"models": models, "best": best_name}));
        return Ok(());
    }
    // Best first; ties keep the order the models were given in.
    let mut ranked: Vec<usize> = (0..rows.len()).collect();
    ranked.sort_by(|&i, &j| rows[j].1.bound.total_cmp(&rows[i].1.bound));
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(5).max(5);
    outln!(
        "{:<width$}  {:>14}  {:>12}  {:>11}  {:>10}  {:>5}  {:>7}",
        "model",
        "bound (nats)",
        "vs best",
        "P(model)",
        "components",
        "iter",
        "time"
    );
    for &i in &ranked {
        let ((name, o), p) = (&rows[i], probs[i]);
        outln!(
            "{:<width$}  {:>14.4}  {:>12.4}  {:>11}  {:>10}  {:>5}  {:>7}{}",
            name,
            o.bound,
            o.bound - best,
            probability(p),
            in_use(o),
            o.iterations,
            duration(seconds[i]),
            if o.bound == best { "  best" } else { "" }
        );
    }
    // The kind of the bounds ranked (several only with --mixed-bounds).
    let mut kinds: Vec<String> = rows
        .iter()
        .map(|(n, o)| format!("{n}: {}", o.bound_quality))
        .collect();
    if rows
        .windows(2)
        .all(|w| w[0].1.bound_quality == w[1].1.bound_quality)
    {
        kinds = vec![format!("{} (every model)", rows[0].1.bound_quality)];
    }
    if rows
        .iter()
        .any(|(_, o)| o.bound_quality != occam::quality::BoundQuality::Exact)
    {
        outln!("bound kind: {}", kinds.join(", "));
    }
    for (c, (name, _)) in compared.iter().zip(&rows) {
        if let Some(w) = &c.warm {
            outln!("{name}: {w}");
        }
    }
    for ((name, o), _) in rows.iter().zip(&probs) {
        for w in &o.warnings {
            eprintln!("warning: {name}: {w}");
        }
    }
    Ok(())
}

/// A posterior model probability as a reader takes it in: three decimals from 0.001 up (`0.961`,
/// `1.000`), then scientific notation (`2.84e-86`), and `<1e-300` below that (where a double's
/// exponent runs out).
pub(super) fn probability(p: f64) -> String {
    if p >= 1e-3 {
        format!("{p:.3}")
    } else if p >= 1e-300 {
        format!("{p:.2e}")
    } else {
        "<1e-300".to_string()
    }
}

/// Seconds with three significant digits and a unit (`0.041s`, `1.25s`, `312s`): a fit's time
/// as a reader compares them down a column.
pub(super) fn duration(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.3}s")
    } else if s < 10.0 {
        format!("{s:.2}s")
    } else if s < 100.0 {
        format!("{s:.1}s")
    } else {
        format!("{s:.0}s")
    }
}

/// Mixture components in use over the model's components (`in use/total`, summed over its
/// mixtures), `-` for a model without mixtures.
fn in_use(o: &occam::Outcome) -> String {
    if o.components.is_empty() {
        return "-".into();
    }
    let used: usize = o.components.iter().map(|c| c.in_use).sum();
    let total: usize = o.components.iter().map(|c| c.total).sum();
    format!("{used}/{total}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_and_times_read_as_a_user_reads_them() {
        assert_eq!(probability(0.9614), "0.961");
        assert_eq!(probability(1.0), "1.000");
        assert_eq!(probability(2.84e-86), "2.84e-86");
        assert_eq!(probability(0.0), "<1e-300");
        assert_eq!(duration(0.04123), "0.041s");
        assert_eq!(duration(1.254), "1.25s");
        assert_eq!(duration(31.26), "31.3s");
        assert_eq!(duration(312.4), "312s");
    }
}
