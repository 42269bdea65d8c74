//! `occam graph MODEL --out FILE.svg|.dot`: the Bayesian network as VIBES draws it — plates as
//! boxes, observed nodes shaded, deterministic nodes dashed, Categorical index edges dashed.

use std::path::PathBuf;

use clap::Args;
use occam::atomic;
use occam::DataSet;
use occam_report::graph::{dot, load_for_drawing, plate_labels, svg};

use super::{model_path, DataArgs};
use crate::error::{Error, Result};

/// Arguments of `occam graph`.
#[derive(Args, Debug)]
pub struct GraphArgs {
    /// The model file (.occam).
    pub model: PathBuf,
    /// Output file: `.svg` or `.dot`.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
}

/// Runs `occam graph`.
pub fn run(a: &GraphArgs) -> Result<()> {
    model_path(&a.model)?;
    let ext = a
        .out
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext != "svg" && ext != "dot" {
        return Err(Error::Usage(format!(
            "--out {}: the output must end in .svg or .dot",
            a.out.display()
        )));
    }
    let given = DataSet::from_args(&a.data.data)?;
    let loaded = load_for_drawing(&a.model, &given)?;
    let labels = plate_labels(&loaded);
    let text = if ext == "dot" {
        dot(&loaded.model, &labels)
    } else {
        occam_report::graph::check_drawable(&loaded.model)?;
        svg(&loaded.model, &labels)
    };
    atomic::write(&a.out, text.as_bytes())?;
    eprintln!("wrote {}", a.out.display());
    Ok(())
}
