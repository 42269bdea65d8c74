//! `occam sample MODEL --plate N=500 --out FILE`: ancestral sampling from the generative model.
//! Plates sized from data (`plates N, D from data x`) take their sizes from `--plate`; the
//! observed variables (those the model attaches data to) are written as CSV with a header — to
//! FILE if there is one, or as `NAME.csv` files in the directory FILE if there are several.

use std::path::PathBuf;

use clap::Args;
use occam::model::{load_without_data, plate_sizes};
use occam::sample::draw;
use occam::{atomic, DataSet};

use super::{model_path, DataArgs};
use crate::error::Result;

/// Arguments of `occam sample`.
#[derive(Args, Debug)]
pub struct SampleArgs {
    /// The generator model (.occam).
    pub model: PathBuf,
    /// Size of a plate that the model sizes from data: NAME=SIZE (repeatable).
    #[arg(long = "plate", value_name = "NAME=SIZE")]
    pub plates: Vec<String>,
    /// Seed of the draw.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Output: a CSV file (one observed variable) or a directory (one NAME.csv per variable).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
}

/// Runs `occam sample`.
pub fn run(a: &SampleArgs) -> Result<()> {
    model_path(&a.model)?;
    let sizes = plate_sizes(&a.plates)?;
    let given = DataSet::from_args(&a.data.data)?;
    let loaded = load_without_data(&a.model, &given, &sizes, None)?;
    let draws = draw(&loaded, a.seed)?;
    let as_dir = draws.len() > 1 || a.out.is_dir();
    if as_dir {
        atomic::ensure_dir(&a.out)?;
    }
    for d in &draws {
        let path = if as_dir {
            a.out.join(format!("{}.csv", d.name))
        } else {
            a.out.clone()
        };
        atomic::write(&path, d.to_csv().as_bytes())?;
        eprintln!(
            "wrote {} ({}×{}) to {}",
            d.name,
            d.rows,
            d.cols,
            path.display()
        );
    }
    Ok(())
}
