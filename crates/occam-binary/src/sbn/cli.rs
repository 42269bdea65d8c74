//! Plain functions behind the `occam` command line for SBNs: options structs in, reports
//! (CSV/JSON text) out, errors as [`SbnError`] naming the place of bad input. Nothing here prints
//! or exits; the binary wires these up.

use super::error::{Result, SbnError};
use super::infer::{self, InferMethod};
use super::io;
use super::learn::{self, Coding, LearnOptions, Method};
use super::model::Sbn;
use super::repro;
use super::Approx;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Errors of the CLI layer (the SBN error type; every variant names file/line/option).
pub type CliError = SbnError;

/// Options of `loglik`: an SBN file, a data file and the methods to run.
#[derive(Debug, Clone, PartialEq)]
pub struct LoglikOptions {
    /// Network CSV (see [`io`]).
    pub sbn_path: PathBuf,
    /// Data CSV (see [`io`]).
    pub data_path: PathBuf,
    /// Method names: exact, mf, mixture:M, chain, first, third.
    pub methods: Vec<String>,
    /// Seed of random initialisations.
    pub seed: u64,
}

/// Results for one pattern.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoglikRow {
    /// Pattern index (0-based data row).
    pub pattern: usize,
    /// One result per method, in the order asked.
    pub results: Vec<Approx>,
}

/// Report of `loglik`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoglikReport {
    /// Methods in column order.
    pub methods: Vec<String>,
    /// One row per pattern.
    pub rows: Vec<LoglikRow>,
}

impl LoglikReport {
    /// CSV: `pattern,<method>,<method>_is_bound,...`.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("pattern");
        for m in &self.methods {
            let _ = write!(s, ",{m},{m}_is_lower_bound");
        }
        s.push('\n');
        for r in &self.rows {
            let _ = write!(s, "{}", r.pattern);
            for a in &r.results {
                let _ = write!(s, ",{:?},{}", a.value, a.is_lower_bound);
            }
            s.push('\n');
        }
        s
    }
    /// JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// ln P(v) of every data pattern by every requested method, from text inputs (`*_name` label
/// the inputs in errors).
pub fn loglik_text(
    sbn_text: &str,
    sbn_name: &str,
    data_text: &str,
    data_name: &str,
    methods: &[String],
    seed: u64,
) -> Result<LoglikReport> {
    let sbn = io::parse_sbn(sbn_text, sbn_name)?;
    let data = io::parse_data(data_text, data_name)?;
    if methods.is_empty() {
        return Err(SbnError::Option {
            name: "methods".into(),
            why: "give at least one method".into(),
        });
    }
    let ms: Vec<InferMethod> = methods
        .iter()
        .map(|m| InferMethod::parse(m))
        .collect::<Result<_>>()?;
    for m in &ms {
        m.check_size(sbn.n_units())?;
    }
    for &u in &data.visible {
        if u >= sbn.n_units() {
            return Err(SbnError::Parse {
                file: data_name.into(),
                line: 1,
                why: format!(
                    "visible unit {u} is not in the network ({} units)",
                    sbn.n_units()
                ),
            });
        }
    }
    let mut rows = Vec::with_capacity(data.patterns.len());
    for k in 0..data.patterns.len() {
        let ev = data.evidence(sbn.n_units(), k)?;
        let results = ms
            .iter()
            .map(|&m| infer::approximate(&sbn, &ev, m, seed.wrapping_add(k as u64)))
            .collect::<Result<_>>()?;
        rows.push(LoglikRow {
            pattern: k,
            results,
        });
    }
    Ok(LoglikReport {
        methods: ms.iter().map(|m| m.name()).collect(),
        rows,
    })
}

/// `loglik` from files.
pub fn loglik(o: &LoglikOptions) -> Result<LoglikReport> {
    let st = io::read_file(&o.sbn_path)?;
    let dt = io::read_file(&o.data_path)?;
    loglik_text(
        &st,
        &o.sbn_path.display().to_string(),
        &dt,
        &o.data_path.display().to_string(),
        &o.methods,
        o.seed,
    )
}

/// Options of `learn`.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnCliOptions {
    /// Initial network CSV; if absent, `layers` builds a layered net.
    pub sbn_path: Option<PathBuf>,
    /// Layer sizes (top first) of a fresh layered network, e.g. [1, 8, 16].
    pub layers: Option<Vec<usize>>,
    /// Data CSV.
    pub data_path: PathBuf,
    /// exact | mf | mixture:M | third.
    pub method: String,
    /// Gradient steps.
    pub steps: usize,
    /// Learning rate.
    pub rate: f64,
    /// "01" (Lawrence) or "pm" (Leisink–Kappen ±1) parameterisation of the steps.
    pub coding: String,
    /// Adapt biases.
    pub learn_biases: bool,
    /// Std of the random initial weights of a fresh network.
    pub init_scale: f64,
    /// Seed.
    pub seed: u64,
}

impl Default for LearnCliOptions {
    fn default() -> Self {
        LearnCliOptions {
            sbn_path: None,
            layers: None,
            data_path: PathBuf::new(),
            method: "mf".into(),
            steps: 100,
            rate: 0.5,
            coding: "01".into(),
            learn_biases: true,
            init_scale: 0.1,
            seed: 0,
        }
    }
}

/// Report of `learn`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LearnReport {
    /// The trained network as CSV.
    pub sbn_csv: String,
    /// The objective before each step.
    pub objective: Vec<f64>,
    /// Exact weighted log-likelihood of the trained net (if ≤ 20 hidden units).
    pub exact_loglik: Option<f64>,
}

impl LearnReport {
    /// JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// `learn` with the data given as text.
pub fn learn_text(
    o: &LearnCliOptions,
    init: Option<(&str, &str)>,
    data_text: &str,
    data_name: &str,
) -> Result<LearnReport> {
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};
    let data = io::parse_data(data_text, data_name)?;
    let sbn = match (init, &o.layers) {
        (Some((text, name)), _) => io::parse_sbn(text, name)?,
        (None, Some(sizes)) => {
            if sizes.is_empty() || sizes.contains(&0) {
                return Err(SbnError::Option {
                    name: "layers".into(),
                    why: format!("layer sizes must be positive, got {sizes:?}"),
                });
            }
            let normal = Normal::new(0.0, o.init_scale.abs()).map_err(|e| SbnError::Option {
                name: "init_scale".into(),
                why: e.to_string(),
            })?;
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(o.seed);
            Sbn::layered(sizes, |_, _, _| normal.sample(&mut rng), |_, _| 0.0)?
        }
        (None, None) => {
            return Err(SbnError::Option {
                name: "sbn/layers".into(),
                why: "give an initial network file or layer sizes".into(),
            })
        }
    };
    // Every visible unit of the data must be a unit of the network: say which file and which
    // header entry, and how big the network is.
    if let Some(&u) = data.visible.iter().find(|&&u| u >= sbn.n_units()) {
        let net = match (init, &o.layers) {
            (Some((_, name)), _) => format!("the network {name}"),
            (None, Some(sizes)) => format!("the network of --layers {sizes:?}"),
            (None, None) => "the network".into(),
        };
        return Err(SbnError::Parse {
            file: data_name.into(),
            line: 1,
            why: format!(
                "the header names unit {u}, but {net} has only {} units (0 to {}); the data's {} \
                 columns need a network of at least {} units",
                sbn.n_units(),
                sbn.n_units().saturating_sub(1),
                data.visible.len(),
                data.visible.iter().max().map_or(0, |m| m + 1)
            ),
        });
    }
    let coding = match o.coding.as_str() {
        "01" => Coding::ZeroOne,
        "pm" => Coding::PlusMinus,
        c => {
            return Err(SbnError::Option {
                name: "coding".into(),
                why: format!("'{c}' is not 01 or pm"),
            })
        }
    };
    let lo = LearnOptions {
        method: Method::parse(&o.method)?,
        steps: o.steps,
        rate: o.rate,
        coding,
        learn_biases: o.learn_biases,
        seed: o.seed,
        ..LearnOptions::default()
    };
    let res = learn::learn(&sbn, &data, &lo)?;
    let hidden = res.sbn.n_units() - data.visible.len();
    let exact_loglik = if hidden <= 20 {
        Some(learn::exact_objective(&res.sbn, &data)?)
    } else {
        None
    };
    Ok(LearnReport {
        sbn_csv: io::write_sbn(&res.sbn),
        objective: res.objective,
        exact_loglik,
    })
}

/// `learn` from files.
pub fn learn_files(o: &LearnCliOptions) -> Result<LearnReport> {
    let dt = io::read_file(&o.data_path)?;
    let dn = o.data_path.display().to_string();
    match &o.sbn_path {
        Some(p) => {
            let st = io::read_file(p)?;
            learn_text(o, Some((&st, &p.display().to_string())), &dt, &dn)
        }
        None => learn_text(o, None, &dt, &dn),
    }
}

/// The SBN reproductions available from the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reproduction {
    /// Lawrence Fig. 2.4: mixtures on Saul's 2–4–6 nets.
    LawrenceFig24,
    /// Leisink & Kappen Table 1 (all 16 cells) with Fig. 8 relative errors.
    LkTable1,
    /// Leisink & Kappen cascade learning experiment.
    LkLearning,
    /// Lawrence Fig. 2.7: bars learning with mixtures.
    LawrenceBars,
}

impl Reproduction {
    /// Parses lawrence-fig2.4 | lk-table1 | lk-learning | lawrence-bars.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "lawrence-fig2.4" => Ok(Reproduction::LawrenceFig24),
            "lk-table1" => Ok(Reproduction::LkTable1),
            "lk-learning" => Ok(Reproduction::LkLearning),
            "lawrence-bars" => Ok(Reproduction::LawrenceBars),
            _ => Err(SbnError::Option {
                name: "reproduction".into(),
                why: format!(
                    "unknown '{s}' (use lawrence-fig2.4, lk-table1, lk-learning, lawrence-bars)"
                ),
            }),
        }
    }
}

/// Options of `repro`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReproOptions {
    /// Which study.
    pub which: Reproduction,
    /// Base seed.
    pub seed: u64,
    /// Number of networks / runs; 0 = the paper's (5000 nets for Fig. 2.4 is reduced to 1000,
    /// 981 for Table 1, 20 runs for LK learning, 10 runs for bars).
    pub size: usize,
}

/// The largest number of networks or runs of a reproduction.
pub const MAX_REPRO_SIZE: usize = 100_000;

/// Checks a reproduction's size (networks or runs) and gradient steps against their limits
/// ([`MAX_REPRO_SIZE`], [`super::learn::MAX_STEPS`]); 0 stands for the study's default.
pub fn check_repro(size: usize, steps: usize) -> Result<()> {
    if size > MAX_REPRO_SIZE {
        return Err(SbnError::Option {
            name: "size".into(),
            why: format!("{size} is more than the limit of {MAX_REPRO_SIZE} networks or runs"),
        });
    }
    if steps > super::learn::MAX_STEPS {
        return Err(SbnError::Option {
            name: "steps".into(),
            why: format!(
                "{steps} is more than the limit of {} gradient steps",
                super::learn::MAX_STEPS
            ),
        });
    }
    Ok(())
}

/// Runs a reproduction and returns its JSON report.
pub fn repro(o: &ReproOptions) -> Result<String> {
    check_repro(o.size, 0)?;
    let pick = |d: usize| if o.size == 0 { d } else { o.size };
    let json = match o.which {
        Reproduction::LawrenceFig24 => {
            serde_json::to_string_pretty(&repro::mixture_study(&repro::MixtureStudyOptions {
                networks: pick(1000),
                seed: o.seed,
                ..Default::default()
            })?)
        }
        Reproduction::LkTable1 => {
            let mut cells = Vec::new();
            for a in [0.5, 1.0, 1.5, 2.0] {
                for b in [0.5, 1.0, 1.5, 2.0] {
                    cells.push(repro::lk_table_cell(&repro::LkTableOptions {
                        a,
                        b,
                        networks: pick(981),
                        seed: o.seed,
                    })?);
                }
            }
            serde_json::to_string_pretty(&cells)
        }
        Reproduction::LkLearning => {
            serde_json::to_string_pretty(&repro::lk_learning(&repro::LkLearningOptions {
                runs: pick(20),
                seed: o.seed,
                ..Default::default()
            })?)
        }
        Reproduction::LawrenceBars => {
            serde_json::to_string_pretty(&repro::bars_study(&repro::BarsOptions {
                runs: pick(10),
                seed: o.seed,
                ..Default::default()
            })?)
        }
    };
    json.map_err(|e| SbnError::Io {
        file: "json".into(),
        why: e.to_string(),
    })
}
