//! `occam fit MODEL`: run VMP and report the posterior (text, `--json`, `--out DIR`).

use std::path::PathBuf;

use clap::Args;
use occam::report::outputs::write_outputs;
use occam::{DataSet, Model};

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
    /// Write posterior.json, bound.csv, bound.svg and Hinton diagrams into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print one JSON object on stdout instead of the text summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs `occam fit`.
pub fn run(a: &FitArgs) -> Result<()> {
    model_path(&a.model)?;
    let settings = a.run.settings()?;
    if let Some(dir) = &a.out {
        occam::atomic::check_dir(dir)?;
    }
    let given = DataSet::from_args(&a.data.data)?;
    let model = Model::from_file(&a.model, &given)?;
    let fitted = model.fit_observed(&settings, &mut super::progress::Bar::new("fit"))?;
    if let Some(dir) = &a.out {
        write_outputs(dir, &fitted)?;
    }
    if a.json {
        let text = serde_json::to_string(&fitted.report_json())
            .map_err(|e| Error::Run(format!("cannot encode JSON: {e}")))?;
        outln!("{text}");
    } else {
        out!("{}", fitted.summary());
        if let Some(dir) = &a.out {
            outln!(
                "\nwrote posterior.json, bound.csv, bound.svg and Hinton diagrams to {}",
                dir.display()
            );
        }
    }
    Ok(())
}
