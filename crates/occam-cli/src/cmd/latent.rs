//! `occam latent ...`: the latent-variable models that are not model files — mixtures of Bayesian
//! PCA with the bound-driven order search, Bayesian ICA with sources joint in q, and the digits
//! study (Winn §3.4.4) with its ML mixture-of-PPCA baseline.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use occam::latent::ica;
use occam::latent::mbpca::search::{search, SearchOptions};
use occam::latent::synth::Matrix;
use occam_report::latent::figures;
use occam_studies::digits::{self, Digits};

use crate::error::Result;

/// Latent-variable commands.
#[derive(Subcommand, Debug)]
pub enum LatentCommand {
    /// Mixture of Bayesian PCA on a CSV (rows = points): search the number of components by the
    /// bound; print K, each component's effective dimension and the bound.
    Mbpca(MbpcaArgs),
    /// Bayesian ICA on a CSV (rows = samples, columns = sensors): print each source's ⟨α⟩ and
    /// which sources ARD kept.
    Ica(IcaArgs),
    /// The digits study on `examples/digits/digits.npz` (or another file with x_train, y_train,
    /// x_test, y_test): test errors of mixtures of BPCA and of ML mixtures of PPCA.
    Digits(DigitsArgs),
}

/// Arguments of `occam latent mbpca`.
#[derive(Args, Debug)]
pub struct MbpcaArgs {
    /// Data file (CSV with a header, .npy, .npz or .parquet); FILE:COLUMNS@ROWS chooses columns and rows
    /// as --data does.
    pub data: String,
    /// Latent dimension of each component (default d − 1).
    #[arg(long, allow_negative_numbers = true)]
    pub q: Option<usize>,
    /// The most components tried.
    #[arg(long = "max-k", default_value_t = 30, allow_negative_numbers = true)]
    pub max_k: usize,
    /// Seed of the starting point.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `occam latent ica`.
#[derive(Args, Debug)]
pub struct IcaArgs {
    /// Data file (CSV with a header, .npy, .npz or .parquet); FILE:COLUMNS@ROWS chooses columns and rows
    /// as --data does.
    pub data: String,
    /// Model sources (default: the number of sensors).
    #[arg(long, allow_negative_numbers = true)]
    pub sources: Option<usize>,
    /// Mixture components per source.
    #[arg(long, default_value_t = 2, allow_negative_numbers = true)]
    pub components: usize,
    /// Seeded starts; the best bound is kept.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub restarts: usize,
    /// Sweeps per start.
    #[arg(
        long = "max-iter",
        default_value_t = 3000,
        allow_negative_numbers = true
    )]
    pub max_iter: usize,
    /// Seed of the first start.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
}

/// Arguments of `occam latent digits`.
#[derive(Args, Debug)]
pub struct DigitsArgs {
    /// The .npz file.
    #[arg(default_value = "examples/digits/digits.npz")]
    pub file: PathBuf,
    /// Use only the first TRAIN,TEST images of each digit.
    #[arg(long, value_delimiter = ',', num_args = 2)]
    pub subset: Option<Vec<usize>>,
    /// Latent dimension of every model (default 63 = d − 1 for the mixtures of BPCA, 10 for
    /// PPCA).
    #[arg(long, allow_negative_numbers = true)]
    pub q: Option<usize>,
    /// The most components of each digit's mixture of BPCA.
    #[arg(long = "max-k", default_value_t = 8, allow_negative_numbers = true)]
    pub max_k: usize,
    /// Write the confusion matrices (SVG and CSV) and the results (JSON) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

fn matrix(spec: &str) -> Result<Matrix> {
    let t = occam::data::read_spec("data", spec)?;
    if let Some(i) = t.present.iter().position(|p| !p) {
        return Err(t.error_at(i, "missing values are not supported here"));
    }
    Ok(Matrix {
        rows: t.rows,
        cols: t.cols,
        values: t.values.into_vec(),
    })
}

fn json_text<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string_pretty(v).map_err(|e| occam::Error::Run(format!("JSON: {e}")))
}

/// Runs a latent-variable command.
pub fn run(c: &LatentCommand) -> Result<()> {
    match c {
        LatentCommand::Mbpca(a) => {
            let t = matrix(&a.data)?;
            let mut o = SearchOptions::new(a.q.unwrap_or(t.cols.saturating_sub(1)));
            o.max_k = a.max_k;
            o.seed = a.seed;
            let s = search(&t, &o)?;
            let dims = s.component_dimensions();
            if a.json {
                let v = serde_json::json!({
                    "components": s.model.k,
                    "effective_components": s.effective_components(1.0),
                    "effective_dimension": s.effective_dimension(),
                    "component_dimensions": dims,
                    "relevance": s.model.relevance(),
                    "counts": s.model.counts(),
                    "bound": s.bound,
                    "steps": s.steps,
                });
                outln!("{}", json_text(&v)?);
            } else {
                outln!(
                    "mixture of Bayesian PCA: K = {} ({} with at least one point), shared \
                     effective dimension {}, bound {:.6}",
                    s.model.k,
                    s.effective_components(1.0),
                    s.effective_dimension(),
                    s.bound
                );
                for (m, (d, c)) in dims.iter().zip(s.model.counts()).enumerate() {
                    outln!("  component {m}: {c:.1} points, effective dimension {d}");
                }
            }
        }
        LatentCommand::Ica(a) => {
            ica::check_settings(a.components, a.restarts, a.max_iter)?;
            let t = matrix(&a.data)?;
            let sources = a.sources.unwrap_or(t.cols);
            let (m, trace) = ica::fit(
                &t,
                sources,
                a.components,
                (a.restarts, a.max_iter, 1e-9),
                a.seed,
            )?;
            let alpha = m.alpha();
            let relevance = m.relevance();
            let kept = occam::latent::ard::effective(&relevance);
            outln!(
                "Bayesian ICA: {} sweeps, bound {:.6}, {} of {sources} sources kept",
                trace.len(),
                trace.last().copied().unwrap_or(f64::NAN),
                kept.iter().filter(|&&k| k).count()
            );
            for (s, (al, k)) in alpha.iter().zip(&kept).enumerate() {
                outln!(
                    "  source {s}: log10 ⟨α⟩ = {:.2}{}",
                    al.log10(),
                    if *k { "" } else { " (switched off)" }
                );
            }
        }
        LatentCommand::Digits(a) => {
            if let Some(dir) = &a.out {
                occam::atomic::check_dir(dir)?;
            }
            let mut data = Digits::read(&a.file)?;
            if let Some(s) = &a.subset {
                data = data.subset(s[0], s[1]);
            }
            let (bayes, ml) = digits::study(&data, a.q, a.max_k)?;
            for r in [&bayes, &ml] {
                outln!(
                    "{}: test error {:.2} % ({} test images); components {:?}, dimensions {:?}",
                    r.method,
                    100.0 * r.error,
                    r.predictions.len(),
                    r.components,
                    r.dimensions
                );
            }
            if let Some(dir) = &a.out {
                occam::atomic::write(
                    &dir.join("confusion_mbpca.svg"),
                    figures::confusion_matrix("Digits: mixture of Bayesian PCA", &bayes.confusion)?
                        .as_bytes(),
                )?;
                occam::atomic::write(
                    &dir.join("confusion_mppca.svg"),
                    figures::confusion_matrix("Digits: ML PPCA", &ml.confusion)?.as_bytes(),
                )?;
                occam::atomic::write(
                    &dir.join("confusion_mbpca.csv"),
                    figures::confusion_csv(&bayes.confusion).as_bytes(),
                )?;
                occam::atomic::write(
                    &dir.join("confusion_mppca.csv"),
                    figures::confusion_csv(&ml.confusion).as_bytes(),
                )?;
                occam::atomic::write(
                    &dir.join("digits.json"),
                    json_text(&[&bayes, &ml])?.as_bytes(),
                )?;
            }
        }
    }
    Ok(())
}
