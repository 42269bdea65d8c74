//! `occam check MODEL`: resolve, lower and compile the model with its data, and print plates,
//! nodes and the conjugacy of every parent slot.

use std::path::PathBuf;

use clap::Args;
use occam::{DataSet, Model};
use occam_report::ModelReport;

use super::{model_path, DataArgs};
use crate::error::Result;

/// Arguments of `occam check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The model file (.occam).
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
    /// Also show the model's split for data-parallel fits: its data plate (inferred from the
    /// observed data, or PLATE), the local variables (each shard holds their rows) and the
    /// global ones (replicated, one reduction each per sweep), or why it cannot be split.
    #[arg(long, value_name = "PLATE", num_args = 0..=1, default_missing_value = "")]
    pub split: Option<String>,
}

/// Runs `occam check`.
pub fn run(a: &CheckArgs) -> Result<()> {
    model_path(&a.model)?;
    let given = DataSet::from_args(&a.data.data)?;
    let model = Model::from_file(&a.model, &given)?;
    out!("{}", model.check()?);
    if let Some(plate) = &a.split {
        let plate = (!plate.is_empty()).then_some(plate.as_str());
        out!("{}", occam_report::check::split_report(&model, plate)?);
    }
    Ok(())
}
