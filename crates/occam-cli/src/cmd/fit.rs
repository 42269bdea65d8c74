//! `occam fit MODEL`: run VMP and report the posterior (text, `--json`, `--out DIR`).

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use occam::{DataSet, Model};
use occam_report::FittedReport;

use super::{model_path, DataArgs, RunArgs};
use crate::error::{Error, Result};

/// Arguments of `occam fit`.
#[derive(Args, Debug)]
pub struct FitArgs {
    /// The model file (.occam).
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Write posterior.json, bound.csv, bound.svg, a table posterior_NAME.csv of every latent
    /// variable (means, variances, most probable component), Hinton diagrams, for each chain
    /// chain_NAME.csv and chain_NAME.svg (state marginals and the most probable path, or
    /// smoothed means ± 2 sd) and, for each PCA-type product y ~ Gaussian(dot(W, X) …),
    /// reconstruction_y.csv/.svg (⟨y⟩ shaped as the data; data against ⟨y⟩),
    /// projection_X.csv/.svg (⟨x_n⟩ by explained variance; the two leading coordinates) and
    /// the saved fit fit.json (model, data and q, for `occam predict --fit DIR` and
    /// `--init-from DIR`) into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Start from a saved fit's q (the fit.json of an earlier `fit --out DIR`, or the file)
    /// instead of a random start: a warm start, for the same model on the same or more data of
    /// the same shapes. The first restart continues from it.
    #[arg(long = "init-from", value_name = "DIR")]
    pub init_from: Option<PathBuf>,
    /// After the fit, predict new rows as `occam predict` does (scikit-learn's
    /// `fit(...).predict(...)`): NAME=FILE gives the new rows' data under the model's names
    /// (repeatable), e.g. the covariates X=new.csv. The tables go to --predict-out; the numbers
    /// are those of `fit --out DIR` then `predict --fit DIR --data ...` (1000 draws, seed 0,
    /// quantiles 0.025, 0.5, 0.975).
    #[arg(long = "predict", value_name = "NAME=FILE", requires = "predict_out")]
    pub predict: Vec<String>,
    /// For a chain model, after the fit, the predictive K steps past each sequence's end, as
    /// `occam predict --ahead K` (with --predict: of those held-out sequences).
    #[arg(long = "predict-ahead", value_name = "K", requires = "predict_out")]
    pub predict_ahead: Option<usize>,
    /// Where --predict / --predict-ahead write: a CSV file (one variable) or a directory
    /// (predict_NAME.csv per variable).
    #[arg(long = "predict-out", value_name = "FILE")]
    pub predict_out: Option<PathBuf>,
    /// Keep the observed data's values in posterior.json (left out by default).
    #[arg(long = "include-data", requires = "out")]
    pub include_data: bool,
    /// Print one JSON object on stdout instead of the text summary.
    #[arg(long)]
    pub json: bool,
    /// Print a progress line on stderr every N iterations (default 10) instead of the bar that
    /// is shown only on a terminal. Lines with the time since the command's start also mark
    /// the set-up (data read, model loaded) and the end of the fit; each iteration's line gives
    /// the time since the run loop's start (the model is compiled before it; initialising q,
    /// e.g. a k-means start, is within it) and since the command's start.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10", allow_negative_numbers = true)]
    pub progress: Option<usize>,
    /// After the fit, estimate the model's log evidence by these methods (comma-separated, the
    /// methods of `compare --method`: vb, vbsym, exact, laplace, bic, cs, is, ais, cv) with
    /// their defaults and --seed; printed under the summary (with --json, an `evidence` list).
    #[arg(long, value_delimiter = ',', value_name = "METHODS")]
    pub evidence: Option<Vec<String>>,
    #[command(flatten)]
    pub shards: super::shards::ShardArgs,
    /// Watch the fit in the browser: serve `occam view`'s page on 127.0.0.1 (its URL, with the
    /// token, printed first), print the summary when the fit ends, and keep serving until
    /// Ctrl-C.
    #[arg(long, conflicts_with_all = ["json", "out", "init_from", "predict", "predict_ahead", "evidence", "progress", "shards", "stream", "chunk_rows"])]
    pub view: bool,
}

/// Runs `occam fit`.
pub fn run(a: &FitArgs) -> Result<()> {
    let start = Instant::now();
    model_path(&a.model)?;
    let settings = a.run.settings()?;
    if a.progress == Some(0) {
        return Err(Error::Usage("--progress 0: give N ≥ 1 iterations".into()));
    }
    let timed = |what: &str| {
        if a.progress.is_some() {
            eprintln!("fit: {what} ({:.3} s)", start.elapsed().as_secs_f64());
        }
    };
    if a.shards.given() {
        let mut bar = match a.progress {
            Some(n) => super::progress::Bar::lines("fit", n, start),
            None => super::progress::Bar::new("fit"),
        };
        return super::shards::run(&a.model, &a.shards, &a.run, a.json, &mut bar);
    }
    let given = DataSet::from_args(&a.data.data)?;
    timed("read the data");
    let model = Model::from_file(&a.model, &given)?;
    if a.view {
        return super::view::fit_and_serve(a);
    }
    let init = match &a.init_from {
        Some(dir) => Some(occam::saved::SavedFit::read(dir)?),
        None => None,
    };
    timed("loaded the model");
    // After the model loaded: a model with an error leaves no new directory behind.
    if let Some(dir) = &a.out {
        occam_report::outputs::check_out_dir(dir)?;
    }
    let mut bar = match a.progress {
        Some(n) => super::progress::Bar::lines("fit", n, start),
        None => super::progress::Bar::new("fit"),
    };
    let fitted = match &init {
        Some(saved) => model.fit_from(&settings, saved, &mut bar)?,
        None => model.fit_observed(&settings, &mut bar)?,
    };
    timed("fitted");
    if let Some(out) = &a.predict_out {
        let new = DataSet::from_args(&a.predict)?;
        let opts = occam::predict::PredictOptions::default();
        match a.predict_ahead {
            Some(k) => {
                let p = fitted.predict_ahead(&new, k, &opts)?;
                super::predict::write_ahead(Some(out), &p)?;
            }
            None if a.predict.is_empty() => {
                return Err(Error::Usage(
                    "--predict-out: give the new rows with --predict NAME=FILE (or a chain's \
                     --predict-ahead K)"
                        .into(),
                ))
            }
            None => {
                let p = fitted.predict(&new, &Default::default(), &opts)?;
                super::predict::write_predictions(&p, Some(out), false)?;
            }
        }
    }
    let evidence = match &a.evidence {
        Some(m) => {
            let methods = super::compare_methods::methods(Some(m))
                .map_err(|e| Error::Usage(e.to_string().replace("--method", "--evidence")))?;
            let opts = occam::evidence::Options {
                seed: settings.seed,
                refit: Some(settings.clone()),
                ..Default::default()
            };
            methods
                .iter()
                .map(|&m| occam::evidence::estimate(&fitted, m, &opts))
                .collect()
        }
        None => Vec::new(),
    };
    let written = match &a.out {
        Some(dir) => occam_report::outputs::write_outputs_swapped(dir, &fitted, a.include_data)?,
        None => Vec::new(),
    };
    if a.json {
        let mut report = serde_json::to_value(fitted.report(true))
            .map_err(|e| Error::Run(format!("cannot encode JSON: {e}")))?;
        if a.evidence.is_some() {
            report["evidence"] = evidence
                .iter()
                .map(|e| occam_report::evidence::evidence_json(e, None))
                .collect();
        }
        let text = serde_json::to_string(&report)
            .map_err(|e| Error::Run(format!("cannot encode JSON: {e}")))?;
        outln!("{text}");
    } else {
        out!("{}", fitted.summary());
        if !evidence.is_empty() {
            outln!("\nevidence (ln p(D), nats):");
            for e in &evidence {
                match e {
                    occam::evidence::Evidence::Estimate(e) => outln!(
                        "  {:<8} {:<18} {:>14.4}{}  {}",
                        e.method.name(),
                        e.kind.label(),
                        e.log_evidence,
                        e.se.map_or(String::new(), |s| format!(" ± {s:.4}")),
                        e.note
                    ),
                    occam::evidence::Evidence::NotApplicable { method, reason } => {
                        outln!("  {:<8} n/a: {reason}", method.name())
                    }
                }
            }
        }
        if let Some(dir) = &a.out {
            outln!(
                "\nwrote {} files to {}: {}",
                written.len(),
                dir.display(),
                written.join(", ")
            );
        }
    }
    Ok(())
}
