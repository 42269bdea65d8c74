//! The reproducible Boltzmann-machine experiments behind `occam bm reproduce`: Leisink & Kappen
//! Fig. 4, Lawrence's §4.5.2 toy and Fig. 4.2, each writing its table as CSV and JSON.

use std::path::Path;

use serde::Serialize;

use super::super::error::{BmError, Result};
use super::super::exact::exact;
use super::super::io::write_text;
use super::super::learn::toy_run;
use super::super::mixture::{mixture, MixtureOptions};
use super::super::model::BoltzmannMachine;
use super::super::sk::{sk_reproduction, SkOptions, SkReport};
use super::write_json;

/// The reproducible BM experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reproduction {
    /// Leisink & Kappen Fig. 4 (SK, N = 20, σ₁ = 0.1): η_{mf→tm}, η_{tm→to} vs σ₂.
    SkFig4,
    /// Lawrence §4.5.2 toy: biases under exact, mean-field and mixture Q⁻.
    LawrenceToy,
    /// Lawrence Fig. 4.2: random 10-unit BMs, W, b ~ U(−1, 1); correlation error and bound gap vs M.
    LawrenceFig42,
}

impl std::str::FromStr for Reproduction {
    type Err = BmError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "sk-fig4" => Ok(Reproduction::SkFig4),
            "lawrence-toy" => Ok(Reproduction::LawrenceToy),
            "lawrence-fig4-2" => Ok(Reproduction::LawrenceFig42),
            _ => Err(BmError::InvalidOption {
                option: "reproduction",
                why: format!("unknown reproduction `{s}` (sk-fig4, lawrence-toy, lawrence-fig4-2)"),
            }),
        }
    }
}

/// Result of a reproduction.
#[derive(Debug, Clone, Serialize)]
pub enum ReproductionReport {
    /// SK Fig. 4.
    SkFig4(SkReport),
    /// Lawrence toy: final biases per Q⁻ variant.
    LawrenceToy(Vec<ToyRow>),
    /// Lawrence Fig. 4.2: one row per number of components.
    LawrenceFig42(Vec<MixtureRow>),
}

/// One M of the Lawrence Fig. 4.2 reproduction (means over networks).
#[derive(Debug, Clone, Serialize)]
pub struct MixtureRow {
    /// Components M.
    pub components: usize,
    /// Mean over nets of Σ_{i<j} (Σ_m Q(m)⟨s_i⟩_m⟨s_j⟩_m − ⟨s_i s_j⟩)² (4.26).
    pub sum_sq_corr_error: f64,
    /// Mean ln Z − L⁻.
    pub gap: f64,
    /// Every bound was ≤ ln Z.
    pub all_below: bool,
}

/// Lawrence Fig. 4.2 (§4.5.1): `networks` random 10-unit BMs with W_ij, b_i ~ U(−1, 1),
/// mixtures annealed T = 60 → 1 in 8 steps (geometric here; the thesis does not give the shape),
/// for each M in `components`.
pub fn lawrence_fig42(networks: usize, components: &[usize], seed: u64) -> Result<Vec<MixtureRow>> {
    let n = 10;
    let mut acc: Vec<MixtureRow> = components
        .iter()
        .map(|&m| MixtureRow {
            components: m,
            sum_sq_corr_error: 0.0,
            gap: 0.0,
            all_below: true,
        })
        .collect();
    for k in 0..networks {
        let bm = BoltzmannMachine::uniform(n, seed.wrapping_add(k as u64))?;
        let ex = exact(&bm)?;
        for row in acc.iter_mut() {
            let r = mixture(
                &bm,
                &MixtureOptions {
                    components: row.components,
                    seed: seed ^ k as u64,
                    ..Default::default()
                },
            )?;
            let c = r.state.correlations();
            let mut sse = 0.0;
            for i in 0..n {
                for j in 0..i {
                    sse += (c[i * n + j] - ex.correlations[i * n + j]).powi(2);
                }
            }
            row.sum_sq_corr_error += sse / networks as f64;
            row.gap += (ex.log_z - r.log_z) / networks as f64;
            row.all_below &= r.log_z <= ex.log_z;
        }
    }
    Ok(acc)
}

/// One Q⁻ variant of the Lawrence toy.
#[derive(Debug, Clone, Serialize)]
pub struct ToyRow {
    /// Variant name.
    pub variant: String,
    /// Final biases.
    pub biases: Vec<f64>,
    /// Final weight w₁₂.
    pub weight: f64,
    /// Range of bias 0 over the last 100 steps (large = oscillation).
    pub bias_range_last_100: f64,
    /// ln 2 / 4, the exact maximum-likelihood bias.
    pub target: f64,
}

/// The most random networks a reproduction may average over (`--networks`; the studies use 20 and
/// 100, and each network costs an exact ln Z over 2ⁿ states).
pub const MAX_NETWORKS: usize = 10_000;

/// Runs a reproduction from a seed; writes `<name>.json` and `<name>.csv` into `out_dir` if given.
pub fn reproduce(
    which: Reproduction,
    seed: u64,
    networks: usize,
    out_dir: Option<&Path>,
) -> Result<ReproductionReport> {
    let uses_networks = matches!(which, Reproduction::SkFig4 | Reproduction::LawrenceFig42);
    if uses_networks && !(1..=MAX_NETWORKS).contains(&networks) {
        return Err(BmError::InvalidOption {
            option: "networks",
            why: format!("must be between 1 and {MAX_NETWORKS}, got {networks}"),
        });
    }
    let (rep, name, csv) = match which {
        Reproduction::SkFig4 => {
            let r = sk_reproduction(&SkOptions {
                seed,
                networks,
                ..Default::default()
            })?;
            let mut csv = String::from(
                "sigma2,eta_mf_tm,eta_tm_to,gap_mf,gap_tm,gap_to,tap_minus_log_z,ordered\n",
            );
            for row in &r.rows {
                csv += &format!(
                    "{},{},{},{},{},{},{},{}\n",
                    row.sigma2,
                    row.eta_mf_tm,
                    row.eta_tm_to,
                    row.gap_mf,
                    row.gap_tm,
                    row.gap_to,
                    row.tap_minus_log_z.map_or(String::new(), |v| v.to_string()),
                    row.ordered
                );
            }
            (ReproductionReport::SkFig4(r), "sk_fig4", csv)
        }
        Reproduction::LawrenceToy => {
            let variants = crate::bm::learn::TOY_VARIANTS;
            let mut rows = Vec::new();
            let mut csv = String::from("variant,bias0,bias1,weight,bias_range_last_100\n");
            for (name, phase, init) in variants {
                let r = toy_run(phase, init, 400, seed)?;
                let tail = &r.trace[r.trace.len().saturating_sub(100)..];
                let b0: Vec<f64> = tail.iter().map(|s| s.thresholds[0]).collect();
                let range = b0.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
                    - b0.iter().cloned().fold(f64::INFINITY, f64::min);
                let last = r
                    .trace
                    .last()
                    .ok_or_else(|| BmError::Data("empty trace".into()))?;
                csv += &format!(
                    "{name},{},{},{},{range}\n",
                    last.thresholds[0], last.thresholds[1], last.weights[0]
                );
                rows.push(ToyRow {
                    variant: name.into(),
                    biases: last.thresholds.clone(),
                    weight: last.weights[0],
                    bias_range_last_100: range,
                    target: 2f64.ln() / 4.0,
                });
            }
            (ReproductionReport::LawrenceToy(rows), "lawrence_toy", csv)
        }
        Reproduction::LawrenceFig42 => {
            let rows = lawrence_fig42(networks, &[1, 2, 3, 5, 10], seed)?;
            let mut csv = String::from("components,sum_sq_corr_error,gap,all_below\n");
            for r in &rows {
                csv += &format!(
                    "{},{},{},{}\n",
                    r.components, r.sum_sq_corr_error, r.gap, r.all_below
                );
            }
            (
                ReproductionReport::LawrenceFig42(rows),
                "lawrence_fig4_2",
                csv,
            )
        }
    };
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir).map_err(|e| BmError::Io {
            path: dir.display().to_string(),
            source: e,
        })?;
        write_json(&dir.join(format!("{name}.json")), &rep)?;
        write_text(&dir.join(format!("{name}.csv")), &csv)?;
    }
    Ok(rep)
}
