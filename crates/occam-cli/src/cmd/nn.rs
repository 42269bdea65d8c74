//! `occam nn ...`: Lawrence's networks (occam-nn) — the reproductions of the thesis and the VB
//! committee paper, printed as tables (measured next to the documents' numbers) and written as
//! CSV, JSON and SVG with `--out DIR`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use occam::nn::{reproduce, ReproduceOptions, REPRODUCTIONS};

use crate::error::Result;

/// Lawrence's-network commands.
#[derive(Subcommand, Debug)]
pub enum NnCommand {
    /// Run a reproduction (toy, sunspots, tecator, t51, t52, t61, t62, ltu); `list` names them.
    Reproduce(ReproduceArgs),
}

/// Arguments of `occam nn reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Reproduction names, or `list`.
    #[arg(required = true, num_args = 1..)]
    pub names: Vec<String>,
    /// The papers' full schedules (slow: minutes); default: the shortened schedules of the tests.
    #[arg(long)]
    pub full: bool,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Use the papers' c = 1.24 approximation of ⟨g²⟩ instead of the exact form (the exact form
    /// keeps the objective a true bound).
    #[arg(long)]
    pub approx_g2: bool,
    /// Write each table (CSV, JSON) and its figures (SVG) into DIR/NAME/.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs an `occam nn` command.
pub fn run(c: &NnCommand) -> Result<()> {
    match c {
        NnCommand::Reproduce(a) => {
            if a.names.iter().any(|n| n == "list") {
                for (name, what) in REPRODUCTIONS {
                    outln!("{name:<9} {what}");
                }
                return Ok(());
            }
            if let Some(dir) = &a.out {
                occam::atomic::check_dir(dir)?;
            }
            let o = ReproduceOptions {
                seed: a.seed,
                full: a.full,
                exact_g2: !a.approx_g2,
            };
            for name in &a.names {
                let dir = a.out.as_ref().map(|d| d.join(name));
                let text = reproduce(name, &o, dir.as_deref())?;
                outln!("{text}");
            }
            Ok(())
        }
    }
}
