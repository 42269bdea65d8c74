//! `occam predict --fit DIR`: the posterior predictive of a saved fit (`occam fit --out DIR`)
//! for new rows (`--data X=new.csv` for the covariates, `--plate N=20` for plates no new data
//! size) or for the missing entries of the fitted data (`--missing`), as CSV: a `row` column,
//! then each entry's mean, sd and quantiles; `--samples` adds the draws. For a chain model
//! (`MarkovChain`, `GaussianMarkovChain`) `--ahead K` gives the one-step predictive at every step
//! of each sequence and the k-step-ahead predictive for the K steps past its end, one line per
//! sequence and step.

use std::path::{Path, PathBuf};

use clap::Args;
use occam::model::plate_sizes;
use occam::predict::{ChainPredictive, PredictOptions, Predictive};
use occam::saved::SavedFit;
use occam::{atomic, DataSet};

use crate::error::{Error, Result};

/// Arguments of `occam predict`.
#[derive(Args, Debug)]
pub struct PredictArgs {
    /// The saved fit: the directory `occam fit --out DIR` wrote (its fit.json) or the file.
    #[arg(long)]
    pub fit: PathBuf,
    /// The new rows' data: NAME=FILE (.csv with a header, .npy, .npz or .parquet; FILE:COLUMNS@ROWS
    /// chooses columns and rows as for `fit`), under the names the fit used, e.g. the
    /// covariates X=new.csv of a regression. Data the fit read for other plates are reused.
    #[arg(long = "data", value_name = "NAME=FILE")]
    pub data: Vec<String>,
    /// Rows of a plate that no new data size: NAME=SIZE (repeatable); plates neither given nor
    /// sized by new data keep the fit's sizes.
    #[arg(long = "plate", value_name = "NAME=SIZE")]
    pub plates: Vec<String>,
    /// Predict the missing (empty or NaN) entries of the fitted data instead of new rows.
    #[arg(long, conflicts_with_all = ["data", "plates"])]
    pub missing: bool,
    /// For a chain model: the number of steps past each sequence's end to predict. The table has
    /// one line per sequence and step: the one-step predictive p(y_t | y_<t) at every step of the
    /// data (horizon 1), then the k-step-ahead predictive (horizon k = 1..K), with the state's
    /// predictive (probabilities, or mean and sd). The sequences are the fit's, or held-out ones
    /// given with --data under the fit's names.
    #[arg(long, value_name = "K", conflicts_with_all = ["missing", "plates", "samples"])]
    pub ahead: Option<usize>,
    /// Number of draws from the predictive (quantiles, and the moments where no closed form).
    #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
    pub draws: usize,
    /// Seed of the draws.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Probabilities of the quantiles, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.025,0.5,0.975",
        allow_hyphen_values = true
    )]
    pub quantiles: Vec<f64>,
    /// Also write the draws (`samples_NAME.csv`: draw, row, values); needs a directory --out.
    #[arg(long)]
    pub samples: bool,
    /// Output: a CSV file (one observed variable) or a directory (`predict_NAME.csv` per
    /// variable). Without it the table is printed.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `occam predict`.
pub fn run(a: &PredictArgs) -> Result<()> {
    let saved = SavedFit::read(&a.fit)?;
    let fitted = occam::Fitted::from_saved(&saved)?;
    let opts = PredictOptions {
        draws: a.draws,
        seed: a.seed,
        quantiles: a.quantiles.clone(),
        ..PredictOptions::default()
    };
    if let Some(k) = a.ahead {
        let new = DataSet::from_args(&a.data)?;
        let p = fitted.predict_ahead(&new, k, &opts)?;
        return write_ahead(a.out.as_deref(), &p);
    }
    let preds: Vec<Predictive> = if a.missing {
        let p = fitted.predict_missing(&opts)?;
        if p.is_empty() {
            return Err(Error::Usage(format!(
                "{}: the fitted data have no missing entries",
                a.fit.display()
            )));
        }
        p
    } else {
        let new = DataSet::from_args(&a.data)?;
        let sizes = plate_sizes(&a.plates)?;
        fitted.predict(&new, &sizes, &opts)?
    };
    write_predictions(&preds, a.out.as_deref(), a.samples)
}

/// Prints (`out` None) or writes the tables of `preds`: to the file `out` (one variable) or
/// into the directory `out` (`predict_NAME.csv`, with `samples` also `samples_NAME.csv`).
pub fn write_predictions(preds: &[Predictive], out: Option<&Path>, samples: bool) -> Result<()> {
    let as_dir = preds.len() > 1 || samples || out.is_some_and(|o| o.is_dir());
    match out {
        None if samples => {
            return Err(Error::Usage(
                "--samples writes files: give --out DIR".into(),
            ))
        }
        None => {
            for p in preds {
                outln!("{}", p.to_csv().trim_end());
            }
        }
        Some(out) => {
            if as_dir {
                atomic::ensure_dir(out)?;
            }
            for p in preds {
                let path = if as_dir {
                    out.join(format!("predict_{}.csv", p.name))
                } else {
                    out.to_path_buf()
                };
                atomic::write(&path, p.to_csv().as_bytes())?;
                eprintln!(
                    "wrote the predictive of {} ({} rows) to {}",
                    p.name,
                    p.rows,
                    path.display()
                );
                if samples {
                    let path = out.join(format!("samples_{}.csv", p.name));
                    atomic::write(&path, p.samples_csv().as_bytes())?;
                    eprintln!(
                        "wrote {} draws of {} to {}",
                        p.draws,
                        p.name,
                        path.display()
                    );
                }
            }
        }
    }
    Ok(())
}

/// Prints or writes (`--out FILE`, or `predict_CHAIN.csv` in an existing directory) the table
/// of `--ahead`.
pub fn write_ahead(out: Option<&Path>, p: &ChainPredictive) -> Result<()> {
    match out {
        None => outln!("{}", p.to_csv().trim_end()),
        Some(out) => {
            let path = if out.is_dir() {
                out.join(format!("predict_{}.csv", p.chain))
            } else {
                out.to_path_buf()
            };
            atomic::write(&path, p.to_csv().as_bytes())?;
            eprintln!(
                "wrote the predictive of chain {} ({} sequences, {} steps ahead) to {}",
                p.chain,
                p.lengths.len(),
                p.ahead,
                path.display()
            );
        }
    }
    Ok(())
}
