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
}

/// Runs `occam check`.
pub fn run(a: &CheckArgs) -> Result<()> {
    model_path(&a.model)?;
    let given = DataSet::from_args(&a.data.data)?;
    out!("{}", Model::from_file(&a.model, &given)?.check()?);
    Ok(())
}
