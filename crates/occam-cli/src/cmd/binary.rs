//! `occam bm ...` and `occam sbn ...`: the binary-network tools of `occam-binary` (Boltzmann
//! machines and sigmoid belief networks), wired to the command line. The library functions take
//! option structs and return reports; this module parses options, prints and writes files.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use occam::binary::bm::cli as bm;
use occam::binary::bm::io::Coding;
use occam::binary::bm::learn::{LearnOptions, Phase};
use occam::binary::bm::BmError;
use occam::binary::sbn::cli as sbn;
use occam::binary::sbn::SbnError;

use crate::error::{Error, Result};
use occam::atomic;
use occam_report::binary::{bm_err, bm_figure, sbn_err, sbn_outputs, stem};

/// Boltzmann-machine commands.
#[derive(Subcommand, Debug)]
pub enum BmCommand {
    /// log Z of a Boltzmann machine by one method (exact, jt, gibbs, mf, tap, mixture,
    /// third-order-mf, third-order).
    Logz(LogzArgs),
    /// Learn a Boltzmann machine from binary data.
    Learn(BmLearnArgs),
    /// Run a reproduction (sk-fig4, lawrence-toy, lawrence-fig4-2).
    Reproduce(BmReproArgs),
}

/// Sigmoid-belief-network commands.
#[derive(Subcommand, Debug)]
pub enum SbnCommand {
    /// ln P(v) of every data pattern by the given methods (exact, mf, mixture:M, chain, first,
    /// third).
    Loglik(LoglikArgs),
    /// Learn a sigmoid belief network from binary data.
    Learn(SbnLearnArgs),
    /// Run a reproduction (lawrence-fig2.4, lk-table1, lk-learning, lawrence-bars).
    Repro(SbnReproArgs),
}

/// Arguments of `occam bm logz`.
#[derive(Args, Debug)]
pub struct LogzArgs {
    /// A libDAI factor-graph file.
    #[arg(long, conflicts_with_all = ["weights", "thresholds"])]
    pub fg: Option<PathBuf>,
    /// Weights CSV (n × n).
    #[arg(long, requires = "thresholds")]
    pub weights: Option<PathBuf>,
    /// Thresholds CSV (n).
    #[arg(long, requires = "weights")]
    pub thresholds: Option<PathBuf>,
    /// Coding of the CSV model: pm (±1) or 01.
    #[arg(long, default_value = "pm")]
    pub coding: String,
    /// Method.
    #[arg(long, default_value = "mf")]
    pub method: String,
    /// Temperature (> 0).
    #[arg(
        long,
        default_value_t = 1.0,
        allow_hyphen_values = true,
        allow_negative_numbers = true
    )]
    pub temperature: f64,
    /// Clamp a unit: INDEX=±1 (repeatable).
    #[arg(long, value_name = "INDEX=VALUE")]
    pub clamp: Vec<String>,
    /// Seed.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Mixture components.
    #[arg(long, default_value_t = 2, allow_negative_numbers = true)]
    pub components: usize,
    /// Gibbs samples per chain.
    #[arg(long, default_value_t = 20000, allow_negative_numbers = true)]
    pub samples: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `occam bm learn`.
#[derive(Args, Debug)]
pub struct BmLearnArgs {
    /// Binary data CSV (one pattern per row).
    pub data: PathBuf,
    /// Coding of the data: pm (±1) or 01.
    #[arg(long, default_value = "01")]
    pub coding: String,
    /// Hidden units.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub hidden: usize,
    /// Learning rate.
    #[arg(
        long,
        default_value_t = 0.25,
        allow_hyphen_values = true,
        allow_negative_numbers = true
    )]
    pub rate: f64,
    /// Gradient steps.
    #[arg(long, default_value_t = 200, allow_negative_numbers = true)]
    pub iterations: usize,
    /// Negative phase: exact, mf, mixture:M or third-order.
    #[arg(long, default_value = "mixture:2")]
    pub negative: String,
    /// Seed.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Write weights.csv, thresholds.csv and trace.csv here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `occam bm reproduce`.
#[derive(Args, Debug)]
pub struct BmReproArgs {
    /// sk-fig4, lawrence-toy or lawrence-fig4-2.
    pub name: String,
    /// Seed.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Number of random networks.
    #[arg(long, default_value_t = 20, allow_negative_numbers = true)]
    pub networks: usize,
    /// Write the tables (`<name>.json`, `<name>.csv`) and the figure (`<name>.svg`) here;
    /// `<name>` is NAME with `-` and `.` replaced by `_`.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `occam sbn loglik`.
#[derive(Args, Debug)]
pub struct LoglikArgs {
    /// Network CSV.
    pub sbn: PathBuf,
    /// Data CSV.
    pub data: PathBuf,
    /// Methods (repeatable or comma-separated).
    #[arg(long = "method", value_delimiter = ',', default_value = "mf")]
    pub methods: Vec<String>,
    /// Seed.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Print JSON instead of CSV.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `occam sbn learn`.
#[derive(Args, Debug)]
pub struct SbnLearnArgs {
    /// Data CSV.
    pub data: PathBuf,
    /// Initial network CSV.
    #[arg(long, conflicts_with = "layers")]
    pub sbn: Option<PathBuf>,
    /// Layer sizes of a fresh layered network, top first, e.g. 1,8,16.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub layers: Option<Vec<usize>>,
    /// exact | mf | mixture:M | third.
    #[arg(long, default_value = "mf")]
    pub method: String,
    /// Gradient steps.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true)]
    pub steps: usize,
    /// Learning rate.
    #[arg(
        long,
        default_value_t = 0.5,
        allow_hyphen_values = true,
        allow_negative_numbers = true
    )]
    pub rate: f64,
    /// 01 or pm parameterisation.
    #[arg(long, default_value = "01")]
    pub coding: String,
    /// Keep the biases fixed.
    #[arg(long = "fixed-biases")]
    pub fixed_biases: bool,
    /// Std of the random initial weights.
    #[arg(
        long,
        default_value_t = 0.1,
        allow_hyphen_values = true,
        allow_negative_numbers = true
    )]
    pub init_scale: f64,
    /// Seed.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Write the learned network CSV here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `occam sbn repro`.
#[derive(Args, Debug)]
pub struct SbnReproArgs {
    /// lawrence-fig2.4, lk-table1, lk-learning or lawrence-bars.
    pub name: String,
    /// Seed.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Number of networks or runs (0: the study's default).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub size: usize,
    /// Gradient steps of each learning run (lk-learning, lawrence-bars; 0: the study's default).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub steps: usize,
    /// Write the tables (`<name>.json`, `<name>.csv`) and the figure (`<name>.svg`) here;
    /// `<name>` is NAME with `-` and `.` replaced by `_`.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn coding(s: &str) -> Result<Coding> {
    match s {
        "pm" | "+-1" | "plusminus" => Ok(Coding::PlusMinus),
        "01" | "zero-one" => Ok(Coding::ZeroOne),
        _ => Err(Error::Usage(format!("--coding {s}: use pm (±1) or 01"))),
    }
}

fn phase(s: &str) -> Result<Phase> {
    match s {
        "exact" => Ok(Phase::Exact),
        "mf" | "mean-field" => Ok(Phase::MeanField),
        "third-order" => Ok(Phase::ThirdOrder),
        _ => match s.strip_prefix("mixture:").map(str::parse::<usize>) {
            Some(Ok(components)) if components > 0 => Ok(Phase::Mixture { components }),
            _ => Err(Error::Usage(format!(
                "--negative {s}: use exact, mf, mixture:M or third-order"
            ))),
        },
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string_pretty(v).map_err(|e| Error::Run(format!("cannot encode JSON: {e}")))
}

/// The library names a bad option by its field in the options struct (`learning_rate`); on the
/// command line the user typed a flag (`--rate`). This renames the fields that have a flag.
fn flag_name(field: &'static str) -> &'static str {
    match field {
        "learning_rate" => "--rate",
        "hidden" => "--hidden",
        "iterations" => "--iterations",
        "negative" => "--negative",
        "temperature" => "--temperature",
        "components" => "--components",
        "method" => "--method",
        "networks" => "--networks",
        "gibbs" | "ais" => "--samples",
        "reproduction" => "NAME",
        other => other,
    }
}

/// A Boltzmann-machine error as a library error, with option fields renamed to their flags.
fn bm_flag_err(e: BmError) -> Error {
    bm_err(match e {
        BmError::InvalidOption { option, why } => BmError::InvalidOption {
            option: flag_name(option),
            why,
        },
        e => e,
    })
}

/// A sigmoid-belief-network error as a library error, with option names that are flags of
/// `occam sbn` written as the flag (`init_scale` → `--init-scale`).
fn sbn_flag_err(e: SbnError) -> Error {
    let flag = |part: &str| -> String {
        match part {
            "method" | "methods" => "--method".into(),
            "init_scale" => "--init-scale".into(),
            "rate" | "steps" | "layers" | "coding" | "size" | "networks" => format!("--{part}"),
            other => other.into(),
        }
    };
    sbn_err(match e {
        SbnError::Option { name, why } => {
            let name = name.split('/').map(flag).collect::<Vec<_>>().join("/");
            SbnError::Option { name, why }
        }
        e => e,
    })
}

/// Runs a Boltzmann-machine command.
pub fn run_bm(c: &BmCommand) -> Result<()> {
    match c {
        BmCommand::Logz(a) => {
            let source = match (&a.fg, &a.weights, &a.thresholds) {
                (Some(f), _, _) => bm::ModelSource::Fg(f.clone()),
                (None, Some(w), Some(h)) => bm::ModelSource::Csv {
                    weights: w.clone(),
                    thresholds: h.clone(),
                    coding: coding(&a.coding)?,
                },
                _ => {
                    return Err(Error::Usage(
                        "give the model as --fg FILE or --weights W.csv --thresholds H.csv".into(),
                    ))
                }
            };
            let method: bm::Method = a.method.parse().map_err(bm_flag_err)?;
            let mut clamp = Vec::new();
            for c in &a.clamp {
                let parsed = c.split_once('=').and_then(|(i, v)| {
                    Some((
                        i.trim().parse::<usize>().ok()?,
                        v.trim().parse::<f64>().ok()?,
                    ))
                });
                match parsed {
                    Some((i, v)) if v == 1.0 || v == -1.0 => clamp.push((i, v)),
                    _ => {
                        return Err(Error::Usage(format!(
                            "--clamp {c}: expected INDEX=1 or INDEX=-1"
                        )))
                    }
                }
            }
            let mut o = bm::LogZOptions::new(source, method);
            o.temperature = a.temperature;
            o.clamp = clamp;
            o.seed = a.seed;
            o.components = a.components;
            o.samples = a.samples;
            let r = bm::log_z_command(&o).map_err(bm_flag_err)?;
            if a.json {
                outln!("{}", to_json(&r)?);
            } else {
                outln!(
                    "log Z = {:.10} ({:?}{}){}",
                    r.log_z,
                    r.quality,
                    if r.is_lower_bound {
                        ", a lower bound"
                    } else {
                        ""
                    },
                    r.std_error.map_or(String::new(), |s| format!(" ± {s:.3e}"))
                );
            }
            Ok(())
        }
        BmCommand::Learn(a) => {
            let o = bm::LearnCommandOptions {
                data: a.data.clone(),
                coding: coding(&a.coding)?,
                learn: LearnOptions {
                    n_hidden: a.hidden,
                    learning_rate: a.rate,
                    iterations: a.iterations,
                    negative: phase(&a.negative)?,
                    seed: a.seed,
                    ..LearnOptions::default()
                },
                out_dir: a.out.clone(),
            };
            let r = bm::learn_command(&o).map_err(bm_flag_err)?;
            outln!("{}", to_json(&r)?);
            Ok(())
        }
        BmCommand::Reproduce(a) => {
            let which: bm::Reproduction = a.name.parse().map_err(bm_flag_err)?;
            let r =
                bm::reproduce(which, a.seed, a.networks, a.out.as_deref()).map_err(bm_flag_err)?;
            if let Some(dir) = &a.out {
                bm_figure(dir, &stem(&a.name), &r, a.seed)?;
            }
            outln!("{}", to_json(&r)?);
            Ok(())
        }
    }
}

/// Runs a sigmoid-belief-network command.
pub fn run_sbn(c: &SbnCommand) -> Result<()> {
    match c {
        SbnCommand::Loglik(a) => {
            let r = sbn::loglik(&sbn::LoglikOptions {
                sbn_path: a.sbn.clone(),
                data_path: a.data.clone(),
                methods: a.methods.clone(),
                seed: a.seed,
            })
            .map_err(sbn_flag_err)?;
            out!(
                "{}",
                if a.json {
                    r.to_json() + "\n"
                } else {
                    r.to_csv()
                }
            );
            Ok(())
        }
        SbnCommand::Learn(a) => {
            let r = sbn::learn_files(&sbn::LearnCliOptions {
                sbn_path: a.sbn.clone(),
                layers: a.layers.clone(),
                data_path: a.data.clone(),
                method: a.method.clone(),
                steps: a.steps,
                rate: a.rate,
                coding: a.coding.clone(),
                learn_biases: !a.fixed_biases,
                init_scale: a.init_scale,
                seed: a.seed,
            })
            .map_err(sbn_flag_err)?;
            if let Some(out) = &a.out {
                atomic::write(out, r.sbn_csv.as_bytes())?;
            }
            outln!("{}", r.to_json());
            Ok(())
        }
        SbnCommand::Repro(a) => {
            let which = sbn::Reproduction::parse(&a.name).map_err(sbn_flag_err)?;
            sbn::check_repro(a.size, a.steps).map_err(sbn_flag_err)?;
            let text = if a.steps == 0 {
                sbn::repro(&sbn::ReproOptions {
                    which,
                    seed: a.seed,
                    size: a.size,
                })
                .map_err(sbn_flag_err)?
            } else {
                repro_with_steps(which, a.seed, a.size, a.steps)?
            };
            if let Some(dir) = &a.out {
                sbn_outputs(dir, &stem(&a.name), which, &text)?;
            }
            outln!("{text}");
            Ok(())
        }
    }
}

/// An SBN learning study with a non-default number of gradient steps (otherwise the options of
/// `sbn::repro`: `size` runs, 0 for the study's default).
fn repro_with_steps(
    which: sbn::Reproduction,
    seed: u64,
    size: usize,
    steps: usize,
) -> Result<String> {
    use occam::binary::sbn::repro;
    let runs = |d: usize| if size == 0 { d } else { size };
    match which {
        sbn::Reproduction::LkLearning => to_json(
            &repro::lk_learning(&repro::LkLearningOptions {
                runs: runs(20),
                seed,
                steps,
                ..Default::default()
            })
            .map_err(sbn_flag_err)?,
        ),
        sbn::Reproduction::LawrenceBars => to_json(
            &repro::bars_study(&repro::BarsOptions {
                runs: runs(10),
                seed,
                steps,
                ..Default::default()
            })
            .map_err(sbn_flag_err)?,
        ),
        _ => Err(Error::Usage(
            "--steps applies only to lk-learning and lawrence-bars".into(),
        )),
    }
}
