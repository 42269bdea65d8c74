//! `occam nn ...`: Lawrence's networks (occam-nn) — `fit` a Bayesian network to a data file and
//! save it, `predict` with a saved network, and `reproduce` the thesis's and the VB committee
//! paper's tables (measured next to the documents' numbers; CSV, JSON and SVG with `--out DIR`).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use occam::nn::bnn::prior::PriorKind;
use occam::nn::net::{Method, NetSpec};
use occam::nn::{
    fit_spec, predicted_rows_csv, read_spec, reproduce, Columns, ReproduceOptions, SavedNetwork,
    REPRODUCTIONS,
};

use crate::error::Result;

/// Lawrence's-network commands.
#[derive(Subcommand, Debug)]
pub enum NnCommand {
    /// Fit a Bayesian MLP (VB, committee, evidence, HMC or early stopping) to a data file and
    /// save it as JSON.
    Fit(FitArgs),
    /// Predict with a saved network: CSV of mean (and sd_function, sd_total when the method
    /// gives them).
    Predict(PredictArgs),
    /// Run a reproduction (toy, sunspots, tecator, t51, t52, t61, t62, protocols, ltu); `list` names
    /// them.
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
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub seed: u64,
    /// Use the papers' c = 1.24 approximation of ⟨g²⟩ instead of the exact form (the exact form
    /// keeps the objective a true bound).
    #[arg(long)]
    pub approx_g2: bool,
    /// Write each table (CSV, JSON) and its figures (SVG) into DIR/NAME/.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The weight priors.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum PriorArg {
    /// One α for every weight.
    Single,
    /// Input, hidden-bias, output and output-bias groups.
    Grouped,
    /// One α per input (automatic relevance determination).
    Ard,
    /// Node relevance determination.
    Nrd,
}

/// The approximation methods.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum MethodArg {
    /// Variational Bayes (diagonal Gaussian, or a committee with --components).
    Vb,
    /// Evidence procedure (Laplace, MacKay's re-estimation).
    Evidence,
    /// Hybrid Monte Carlo from the best evidence mode.
    Hmc,
    /// Early stopping on a held-out tenth.
    EarlyStopping,
}

/// Arguments of `occam nn fit`.
#[derive(Args, Debug)]
pub struct FitArgs {
    /// The data file (CSV with a header, .npy, .npz); FILE:COLUMNS@ROWS chooses columns and
    /// rows as --data does (e.g. sunspots.csv@..200 to train on the first 200 rows).
    pub data: String,
    /// Where to save the network (JSON).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The target column (name or position counted from 0); default: the last column.
    #[arg(long)]
    pub target: Option<String>,
    /// Input columns, comma-separated (names, positions from 0, ranges A..B with B excluded);
    /// default: every column but the target.
    #[arg(long, value_delimiter = ',')]
    pub inputs: Option<Vec<String>>,
    /// Treat the target as a time series; its K previous values are the inputs.
    #[arg(long, value_name = "K", allow_negative_numbers = true)]
    pub lags: Option<usize>,
    /// A JSON spec (every field optional; see the guide); the flags below override it.
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,
    /// Hidden units (default 8).
    #[arg(long, allow_negative_numbers = true)]
    pub hidden: Option<usize>,
    /// Mixture components of the variational posterior (default 1).
    #[arg(long, allow_negative_numbers = true)]
    pub components: Option<usize>,
    /// Weight prior (default single).
    #[arg(long, value_enum)]
    pub prior: Option<PriorArg>,
    /// Method (default vb).
    #[arg(long, value_enum)]
    pub method: Option<MethodArg>,
    /// Restarts (default 10; the best by bound or evidence is kept).
    #[arg(long, allow_negative_numbers = true)]
    pub restarts: Option<usize>,
    /// Seed (default 1).
    #[arg(long, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// NRD structure-EM cycles (prior nrd).
    #[arg(long, allow_negative_numbers = true)]
    pub structure_cycles: Option<usize>,
    /// Use the c = 1.24 approximation of <g^2> (the bound is then approximate).
    #[arg(long)]
    pub approx_g2: bool,
}

impl FitArgs {
    fn spec(&self) -> Result<NetSpec> {
        let mut s = match &self.spec {
            Some(p) => read_spec(p)?,
            None => NetSpec::default(),
        };
        if let Some(v) = self.hidden {
            s.hidden = v;
        }
        if let Some(v) = self.components {
            s.components = v;
        }
        if let Some(v) = self.restarts {
            s.restarts = v;
        }
        if let Some(v) = self.seed {
            s.seed = v;
        }
        if let Some(v) = self.structure_cycles {
            s.structure_cycles = v;
        }
        if self.approx_g2 {
            s.exact_g2 = false;
        }
        if let Some(p) = self.prior {
            s.prior = match p {
                PriorArg::Single => PriorKind::Single,
                PriorArg::Grouped => PriorKind::Grouped,
                PriorArg::Ard => PriorKind::Ard,
                PriorArg::Nrd => PriorKind::Nrd,
            };
        }
        if let Some(m) = self.method {
            s.method = match m {
                MethodArg::Vb => Method::Vb,
                MethodArg::Evidence => Method::Evidence,
                MethodArg::Hmc => Method::Hmc,
                MethodArg::EarlyStopping => Method::EarlyStopping,
            };
        }
        Ok(s)
    }
}

/// Arguments of `occam nn predict`.
#[derive(Args, Debug)]
pub struct PredictArgs {
    /// A network saved by `occam nn fit`.
    pub network: PathBuf,
    /// The data file holding the network's input columns (for --lags networks, the series);
    /// FILE@ROWS predicts chosen rows (e.g. @200..), still named by the file's own row.
    pub data: String,
    /// Write the CSV here instead of printing it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// A column of the data (name or position counted from 0, e.g. the year) whose value in each
    /// predicted row is written beside the row index.
    #[arg(long, value_name = "COLUMN")]
    pub time: Option<String>,
}

/// Runs an `occam nn` command.
pub fn run(c: &NnCommand) -> Result<()> {
    match c {
        NnCommand::Fit(a) => {
            let spec = a.spec()?;
            // The library names a setting by its spec field; here it is the flag when there is one.
            spec.validate().map_err(|e| match e {
                occam::nn::bnn::network::NetError::Setting { name, why } => {
                    let flag = name.replace('_', "-");
                    occam::Error::Usage(match flag.as_str() {
                        "hidden" | "components" | "restarts" | "structure-cycles" => {
                            format!("--{flag}: {why}")
                        }
                        _ => format!("spec field `{name}`: {why}"),
                    })
                }
                e => occam::Error::Usage(e.to_string()),
            })?;
            if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty()) {
                occam::atomic::check_dir(dir)?;
            }
            let cols = Columns {
                target: a.target.clone(),
                inputs: a.inputs.clone(),
                lags: a.lags,
            };
            let saved = fit_spec(&a.data, &cols, &spec)?;
            saved.save(&a.out)?;
            let net = &saved.net;
            outln!(
                "fitted {:?} network: {} inputs, {} hidden, {} component(s), {:?} prior, {} restart(s)",
                spec.method,
                net.inputs,
                spec.hidden,
                spec.components,
                spec.prior,
                spec.restarts
            );
            outln!(
                "target `{}`, training RMSE {:.6}",
                saved.target,
                net.train_rmse
            );
            if let Some(b) = net.bound {
                outln!(
                    "lower bound on ln p(D) (standardised data, <g^2> {}): {b:.6}",
                    if spec.exact_g2 {
                        "exact"
                    } else {
                        "approximate"
                    }
                );
            }
            outln!("wrote {}", a.out.display());
            Ok(())
        }
        NnCommand::Predict(a) => {
            let saved = SavedNetwork::load(&a.network)?;
            let table = occam::data::read_spec("data", &a.data)?;
            let csv = predicted_rows_csv(&saved.predict_rows_table(&table, a.time.as_deref())?);
            match &a.out {
                Some(p) => occam::atomic::write(p, csv.as_bytes())?,
                None => out!("{csv}"),
            }
            Ok(())
        }
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
