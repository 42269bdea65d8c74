//! The subcommands and their shared options.

pub mod binary;
pub mod check;
pub mod compare;
pub mod compare_extras;
pub mod compare_methods;
pub mod fit;
pub mod graph;
pub mod latent;
pub mod nn;
pub mod predict;
pub mod progress;
pub mod sample;
pub mod shards;
pub mod view;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::error::{Error, Result};
use occam::Settings;

/// Automatic variational Bayesian inference (variational message passing, Winn's VIBES).
#[derive(Parser, Debug)]
#[command(name = "occam", version, about, long_about = None, disable_help_subcommand = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate a model (and its data) and print its plates, nodes and conjugacy.
    Check(check::CheckArgs),
    /// Run variational message passing and report the posterior.
    Fit(fit::FitArgs),
    /// Fit several models (or one over a plate's sizes, --plate) on the same data and compare
    /// their evidence: the bound, or other estimators side by side (--method).
    Compare(compare::CompareArgs),
    /// The posterior predictive of a saved fit (fit --out DIR) for new rows or missing entries.
    Predict(predict::PredictArgs),
    /// Draw data from the generative model (ancestral sampling).
    Sample(sample::SampleArgs),
    /// Draw the Bayesian network (plates as boxes) as SVG or DOT.
    Graph(graph::GraphArgs),
    /// A local browser view: the model graph, the bound live while it is fitted, each node's
    /// posterior and an editor that re-checks and re-fits (on 127.0.0.1, with a token).
    View(view::ViewArgs),
    /// Boltzmann machines (occam-binary): log Z, learning, reproductions.
    #[command(subcommand)]
    Bm(binary::BmCommand),
    /// Sigmoid belief networks (occam-binary): log-likelihoods, learning, reproductions.
    #[command(subcommand)]
    Sbn(binary::SbnCommand),
    /// Lawrence's networks (occam-nn): Bayesian MLPs, committees, linear threshold units.
    #[command(subcommand)]
    Nn(nn::NnCommand),
    /// Latent-variable models: mixtures of Bayesian PCA, Bayesian ICA, the digits study.
    #[command(subcommand)]
    Latent(latent::LatentCommand),
    /// Help on a command, or `occam help distributions`: every distribution and function.
    Help(HelpArgs),
}

/// Arguments of `occam help`.
#[derive(Args, Debug)]
pub struct HelpArgs {
    /// `distributions`, or a command name (default: the list of commands).
    pub topic: Vec<String>,
}

/// `--data NAME=FILE`, repeatable.
#[derive(Args, Debug, Clone, Default)]
pub struct DataArgs {
    /// Attach data: NAME=FILE (.csv with a header, .npy, .npz or .parquet). Without it, NAME.csv
    /// next to the model is used for each observed variable. FILE:COLUMNS@ROWS chooses columns
    /// (header names, or positions counted from 0 and ranges with the end excluded:
    /// x=f.csv:eruptions,waiting, x=f.csv:1..3; a text column left out is skipped) and rows,
    /// counted the same way (@..200 and @200.., or by fraction @..80% and @80%..; add
    /// ,shuffle=SEED for a seeded random split).
    #[arg(long = "data", value_name = "NAME=FILE")]
    pub data: Vec<String>,
}

/// Inference options shared by `fit` and `compare`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Seed of the first restart (restart r uses seed + r).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Number of restarts; the best bound is kept.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub restarts: usize,
    /// Tolerance on the change of the bound per iteration, in nats per observed value.
    #[arg(long, default_value_t = 1e-6, allow_hyphen_values = true)]
    pub tol: f64,
    /// Maximum number of iterations per restart.
    #[arg(
        long = "max-iter",
        default_value_t = 1000,
        allow_negative_numbers = true
    )]
    pub max_iter: usize,
    /// Size of the thread pool, at most 1024 (results do not depend on it).
    #[arg(long, allow_negative_numbers = true)]
    pub threads: Option<usize>,
    /// Update order, comma-separated node names (default: parents before children, except that
    /// variables whose start carries information — k-means for mixture indices, random draws,
    /// `init` lines — come last, so their start is used before it is updated).
    #[arg(long, value_delimiter = ',')]
    pub order: Option<Vec<String>>,
    /// Do not delete surplus mixture components.
    #[arg(long = "no-prune")]
    pub no_prune: bool,
    /// Start a mixture from its k-means start alone. By default each restart also runs two
    /// random-label starts (each ends early once it cannot reach the best bound so far) and keeps
    /// the best, since one start can end in a poor optimum without a word.
    #[arg(long = "single-start")]
    pub single_start: bool,
    /// Treat a decreasing bound as an error (exit 1).
    #[arg(long)]
    pub strict: bool,
    /// Require rotations: after every sweep, rotate the two factors of each dot(W, X) of latent
    /// Gaussian vectors jointly to raise the bound (parameter expansion: PCA-type models converge
    /// in tens of sweeps instead of thousands), and the state space of each linear dynamical
    /// system dot(C, x) with x a GaussianMarkovChain (x, its dynamics and C together). Rotations
    /// are on by default wherever the model has such a product; with --rotate a model with
    /// neither is an error.
    #[arg(long, conflicts_with = "no_rotate")]
    pub rotate: bool,
    /// Never rotate (the plain VMP updates, e.g. to reproduce a run without parameter expansion).
    #[arg(long = "no-rotate")]
    pub no_rotate: bool,
}

impl RunArgs {
    /// Inference settings; sets up the thread pool.
    pub fn settings(&self) -> Result<Settings> {
        let settings = Settings {
            seed: self.seed,
            restarts: self.restarts,
            tol: self.tol,
            max_iter: self.max_iter,
            order: self.order.clone(),
            prune: !self.no_prune,
            strict: self.strict,
            rotate: if self.rotate {
                Some(true)
            } else if self.no_rotate {
                Some(false)
            } else {
                None
            },
            settle: false,
            candidate_starts: !self.single_start,
            prune_screen_from: occam::driver::PRUNE_SCREEN_FROM,
            fixed_sweeps: false,
        };
        // One check of every domain, in the library; its messages name the field, here the flag.
        settings.validate().map_err(|e| match e {
            Error::Usage(m) => Error::Usage(format!("--{}", m.replacen("max_iter", "max-iter", 1))),
            e => e,
        })?;
        if let Some(n) = self.threads {
            if !(1..=MAX_THREADS).contains(&n) {
                return Err(Error::Usage(format!(
                    "--threads must be between 1 and {MAX_THREADS}, got {n}"
                )));
            }
            // The global pool can be set once; a second call (tests in one process) is harmless.
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build_global();
        }
        Ok(settings)
    }
}

/// The largest `--threads` accepted (a pool far beyond the machine's cores only costs start-up).
pub const MAX_THREADS: usize = 1024;

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Check(a) => check::run(&a),
        Command::Fit(a) => fit::run(&a),
        Command::Compare(a) => compare::run(&a),
        Command::Predict(a) => predict::run(&a),
        Command::Sample(a) => sample::run(&a),
        Command::Graph(a) => graph::run(&a),
        Command::View(a) => view::run(&a),
        Command::Bm(c) => binary::run_bm(&c),
        Command::Sbn(c) => binary::run_sbn(&c),
        Command::Nn(c) => nn::run(&c),
        Command::Latent(c) => latent::run(&c),
        Command::Help(a) => help(&a.topic),
    }
}

/// `occam help [TOPIC...]`.
fn help(topic: &[String]) -> Result<()> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    match topic.first().map(String::as_str) {
        None => outln!("{}", cmd.render_long_help()),
        Some("distributions") => out!("{}", occam_report::reference::distributions()),
        Some(_) => {
            let mut sub = &mut cmd;
            for t in topic {
                let names: Vec<String> = sub
                    .get_subcommands()
                    .map(|c| c.get_name().to_string())
                    .collect();
                sub = sub.find_subcommand_mut(t).ok_or_else(|| {
                    Error::Usage(format!(
                        "help: no topic `{t}` (topics: distributions, {})",
                        names.join(", ")
                    ))
                })?;
            }
            outln!("{}", sub.render_long_help());
        }
    }
    Ok(())
}

/// Checks that a model path exists (exit 2 otherwise).
pub fn model_path(p: &PathBuf) -> Result<()> {
    if p.is_file() {
        Ok(())
    } else {
        Err(Error::io(p, "no such model file"))
    }
}
