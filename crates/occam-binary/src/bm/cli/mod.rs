//! Plain functions behind the `occam` command line for Boltzmann machines. They take parsed option
//! structs, return results or write CSV/JSON files, and never print or exit: every failure is a
//! [`BmError`] naming the bad input.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{BmError, Result};
use super::exact::exact;
use super::gibbs::{ais_log_z, gibbs, AisOptions, GibbsOptions};
use super::io::{
    parse_binary_data, parse_fg, parse_weights_thresholds, read_text, write_text,
    write_weights_thresholds, Coding,
};
use super::jt::junction_tree;
use super::learn::{learn, LearnOptions};
use super::mf::{mean_field, MeanFieldOptions};
use super::mixture::{mixture, MixtureOptions};
use super::model::BoltzmannMachine;
use super::tap::{tap, TapOptions};
use super::third_order::{third_order, ThirdOrderOptions};
use super::Quality;

/// Where a model comes from.
#[derive(Debug, Clone)]
pub enum ModelSource {
    /// A libDAI `.fg` file.
    Fg(PathBuf),
    /// Weights and thresholds CSV files in a coding.
    Csv {
        /// n×n weights.
        weights: PathBuf,
        /// n thresholds.
        thresholds: PathBuf,
        /// Coding of the numbers.
        coding: Coding,
    },
}

/// log Z methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Method {
    /// Enumeration (≤ 30 free units).
    Exact,
    /// Junction tree.
    JunctionTree,
    /// Gibbs sampling for the marginals plus AIS for log Z.
    Gibbs,
    /// Mean-field lower bound.
    MeanField,
    /// TAP approximation (not a bound).
    Tap,
    /// Mixture-of-mean-field lower bound.
    Mixture,
    /// Third-order bound at the mean-field μ (B_tm).
    ThirdOrderMf,
    /// Third-order bound with μ optimised (B_to).
    ThirdOrder,
}

impl std::str::FromStr for Method {
    type Err = BmError;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "exact" => Method::Exact,
            "jt" | "junction-tree" => Method::JunctionTree,
            "gibbs" => Method::Gibbs,
            "mf" | "mean-field" => Method::MeanField,
            "tap" => Method::Tap,
            "mixture" => Method::Mixture,
            "third-order-mf" | "tm" => Method::ThirdOrderMf,
            "third-order" | "to" => Method::ThirdOrder,
            _ => {
                return Err(BmError::InvalidOption {
                    option: "method",
                    why: format!("unknown method `{s}` (exact, jt, gibbs, mf, tap, mixture, third-order-mf, third-order)"),
                })
            }
        })
    }
}

/// Options of [`log_z_command`].
#[derive(Debug, Clone)]
pub struct LogZOptions {
    /// The model.
    pub source: ModelSource,
    /// The method.
    pub method: Method,
    /// Temperature T (> 0).
    pub temperature: f64,
    /// Clamped units (unit index, ±1).
    pub clamp: Vec<(usize, f64)>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Mixture components.
    pub components: usize,
    /// Gibbs sweeps recorded per chain.
    pub samples: usize,
    /// Optional JSON output path.
    pub json: Option<PathBuf>,
}

impl LogZOptions {
    /// Defaults for a model source and method.
    pub fn new(source: ModelSource, method: Method) -> Self {
        Self {
            source,
            method,
            temperature: 1.0,
            clamp: Vec::new(),
            seed: 0,
            components: 2,
            samples: 20000,
            json: None,
        }
    }
}

/// The report of [`log_z_command`].
#[derive(Debug, Clone, Serialize)]
pub struct LogZReport {
    /// Method used.
    pub method: Method,
    /// The log Z value (bound, estimate, approximation or exact).
    pub log_z: f64,
    /// What the value is.
    pub quality: Quality,
    /// True only when `log_z` is a guaranteed lower bound.
    pub is_lower_bound: bool,
    /// Standard error for estimates.
    pub std_error: Option<f64>,
    /// Indices of the free (unclamped) units, in the order of `means`.
    pub free_units: Vec<usize>,
    /// ⟨s_i⟩ of the free units (±1 coding).
    pub means: Vec<f64>,
    /// Standard errors of `means` (Gibbs only).
    pub means_se: Option<Vec<f64>>,
    /// Whether the iterative method converged (None for direct methods).
    pub converged: Option<bool>,
}

/// Loads a model from its source.
pub fn load_model(src: &ModelSource) -> Result<BoltzmannMachine> {
    match src {
        ModelSource::Fg(p) => Ok(parse_fg(&p.display().to_string(), &read_text(p)?)?.model),
        ModelSource::Csv {
            weights,
            thresholds,
            coding,
        } => parse_weights_thresholds(
            &weights.display().to_string(),
            &read_text(weights)?,
            &thresholds.display().to_string(),
            &read_text(thresholds)?,
            *coding,
        ),
    }
}

pub(super) fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let s = serde_json::to_string_pretty(v)
        .map_err(|e| BmError::Data(format!("JSON encoding: {e}")))?;
    write_text(path, &(s + "\n"))
}

/// log Z of a network file by the chosen method (after temperature and clamping).
pub fn log_z_command(o: &LogZOptions) -> Result<LogZReport> {
    let bm = load_model(&o.source)?.at_temperature(o.temperature)?;
    let (bm, free) = bm.clamp(&o.clamp)?;
    let mfo = MeanFieldOptions {
        seed: o.seed,
        ..Default::default()
    };
    let mk = |log_z: f64, quality: Quality, means: Vec<f64>, converged: Option<bool>| LogZReport {
        method: o.method,
        log_z,
        quality,
        is_lower_bound: quality.is_lower_bound(),
        std_error: None,
        free_units: free.clone(),
        means,
        means_se: None,
        converged,
    };
    let rep = match o.method {
        Method::Exact => {
            let r = exact(&bm)?;
            mk(r.log_z, Quality::Exact, r.means, None)
        }
        Method::JunctionTree => {
            let r = junction_tree(&bm)?;
            mk(r.log_z, Quality::Exact, r.means, None)
        }
        Method::Gibbs => {
            let g = gibbs(
                &bm,
                &GibbsOptions {
                    seed: o.seed,
                    samples: o.samples,
                    ..Default::default()
                },
            )?;
            let a = ais_log_z(
                &bm,
                &AisOptions {
                    seed: o.seed,
                    ..Default::default()
                },
            )?;
            let mut r = mk(a.log_z, Quality::Estimate, g.means, None);
            r.std_error = Some(a.std_error);
            r.means_se = Some(g.means_se);
            r
        }
        Method::MeanField => {
            let r = mean_field(&bm, &mfo)?;
            mk(r.log_z, r.quality, r.means, Some(r.converged))
        }
        Method::Tap => {
            let r = tap(
                &bm,
                &TapOptions {
                    mean_field: mfo,
                    ..Default::default()
                },
            )?;
            mk(r.log_z, r.quality, r.means, Some(r.converged))
        }
        Method::Mixture => {
            let r = mixture(
                &bm,
                &MixtureOptions {
                    components: o.components,
                    seed: o.seed,
                    mean_field: mfo,
                    ..Default::default()
                },
            )?;
            mk(r.log_z, r.quality, r.state.means(), None)
        }
        Method::ThirdOrderMf | Method::ThirdOrder => {
            let r = third_order(
                &bm,
                &ThirdOrderOptions {
                    mean_field: mfo,
                    optimise: o.method == Method::ThirdOrder,
                    ..Default::default()
                },
            )?;
            mk(r.log_z, r.quality, r.means, Some(r.converged))
        }
    };
    if !rep.log_z.is_finite() || rep.means.iter().any(|m| !m.is_finite()) {
        return Err(BmError::InvalidModel(format!(
            "log Z by {:?} is {} at temperature {:e}: the scaled weights and thresholds are too large for floating point (raise --temperature)",
            o.method, rep.log_z, o.temperature
        )));
    }
    if let Some(p) = &o.json {
        write_json(p, &rep)?;
    }
    Ok(rep)
}

/// Options of [`learn_command`].
#[derive(Debug, Clone)]
pub struct LearnCommandOptions {
    /// Binary data CSV (one pattern per row).
    pub data: PathBuf,
    /// Coding of the data.
    pub coding: Coding,
    /// Learning options.
    pub learn: LearnOptions,
    /// Directory for `weights.csv`, `thresholds.csv` (±1 coding) and `trace.csv`.
    pub out_dir: Option<PathBuf>,
}

/// Summary of a learning run.
#[derive(Debug, Clone, Serialize)]
pub struct LearnReport {
    /// Units (visible + hidden).
    pub units: usize,
    /// Patterns.
    pub patterns: usize,
    /// Final thresholds.
    pub thresholds: Vec<f64>,
    /// Final F = L⁺ − L⁻ (not a bound).
    pub final_objective: f64,
}

fn trace_csv(r: &super::learn::LearnResult) -> String {
    let mut s = String::from("iteration,objective,thresholds...,weights(i<j)...\n");
    for (k, st) in r.trace.iter().enumerate() {
        let mut cols = vec![k.to_string(), format!("{:e}", st.objective)];
        cols.extend(st.thresholds.iter().map(|x| format!("{x:e}")));
        cols.extend(st.weights.iter().map(|x| format!("{x:e}")));
        s += &cols.join(",");
        s.push('\n');
    }
    s
}

/// Learns a BM from binary data and optionally writes the model and trace.
pub fn learn_command(o: &LearnCommandOptions) -> Result<LearnReport> {
    let data = parse_binary_data(
        &o.data.display().to_string(),
        &read_text(&o.data)?,
        o.coding,
    )?;
    let r = learn(&data, &o.learn)?;
    if let Some(dir) = &o.out_dir {
        std::fs::create_dir_all(dir).map_err(|e| BmError::Io {
            path: dir.display().to_string(),
            source: e,
        })?;
        let (w, h) = write_weights_thresholds(&r.model);
        write_text(&dir.join("weights.csv"), &w)?;
        write_text(&dir.join("thresholds.csv"), &h)?;
        write_text(&dir.join("trace.csv"), &trace_csv(&r))?;
    }
    Ok(LearnReport {
        units: r.model.n(),
        patterns: data.len(),
        thresholds: r.model.thresholds().to_vec(),
        final_objective: r.trace.last().map_or(f64::NAN, |s| s.objective),
    })
}

mod reproduce;
pub use reproduce::*;

#[cfg(test)]
mod tests;
