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
use super::learn::{learn, toy_run, LearnOptions};
use super::mf::{mean_field, MeanFieldOptions};
use super::mixture::{mixture, MixtureOptions};
use super::model::BoltzmannMachine;
use super::sk::{sk_reproduction, SkOptions, SkReport};
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

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
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

/// The reproducible BM experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reproduction {
    /// Leisink & Kappen Fig. 4 (SK, N = 20, σ₁ = 0.1): η_{mf→tm}, η_{tm→to} vs σ₂.
    SkFig4,
    /// Lawrence §4.4 toy: biases under exact, mean-field and mixture Q⁻.
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

/// Lawrence Fig. 4.2 (digest §4.4, §9.3): `networks` random 10-unit BMs with W_ij, b_i ~ U(−1, 1),
/// mixtures annealed T = 60 → 1 in 8 geometric steps, for each M in `components`.
pub fn lawrence_fig42(networks: usize, components: &[usize], seed: u64) -> Result<Vec<MixtureRow>> {
    use rand::{Rng, SeedableRng};
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
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed.wrapping_add(k as u64));
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..i {
                let v = rng.random_range(-1.0..1.0);
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        let h = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let bm = BoltzmannMachine::new(w, h, 0.0)?;
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

/// Runs a reproduction from a seed; writes `<name>.json` and `<name>.csv` into `out_dir` if given.
pub fn reproduce(
    which: Reproduction,
    seed: u64,
    networks: usize,
    out_dir: Option<&Path>,
) -> Result<ReproductionReport> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn data_path(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(name)
    }

    #[test]
    fn log_z_by_every_method_on_the_shipped_grid() {
        let src = ModelSource::Fg(data_path("grid4x4.fg"));
        let ex = log_z_command(&LogZOptions::new(src.clone(), Method::Exact)).unwrap();
        assert_eq!(ex.quality, Quality::Exact);
        for m in [
            Method::JunctionTree,
            Method::MeanField,
            Method::Tap,
            Method::Mixture,
            Method::ThirdOrderMf,
            Method::ThirdOrder,
        ] {
            let r = log_z_command(&LogZOptions::new(src.clone(), m)).unwrap();
            if r.is_lower_bound {
                assert!(r.log_z <= ex.log_z, "{m:?}");
            }
            if m == Method::JunctionTree {
                assert!((r.log_z - ex.log_z).abs() < 1e-10);
            }
        }
        let mut o = LogZOptions::new(src.clone(), Method::Gibbs);
        o.samples = 2000;
        let g = log_z_command(&o).unwrap();
        assert!(!g.is_lower_bound && g.std_error.is_some());
        // clamping and temperature reach the model; JSON is written
        let dir = std::env::temp_dir().join(format!("occam_bm_cli_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut o = LogZOptions::new(src, Method::Exact);
        o.clamp = vec![(0, 1.0)];
        o.temperature = 2.0;
        o.json = Some(dir.join("r.json"));
        let r = log_z_command(&o).unwrap();
        assert_eq!(r.free_units.len(), 15);
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
        assert_eq!(j["quality"], "Exact");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Lawrence Fig. 4.2 trend (digest §9.3 reference, 30 nets: sum of squares 5.60 / 2.36 / 0.867
    /// / 0.338 and gap 0.701 / 0.390 / 0.264 / 0.168 for M = 1 / 2 / 3 / 5): both fall with M.
    #[test]
    fn lawrence_fig42_errors_fall_with_components() {
        let rows = lawrence_fig42(10, &[1, 2, 3, 5], 1).unwrap();
        for r in &rows {
            eprintln!(
                "M {}: sum sq corr error {:.3}, gap {:.3}",
                r.components, r.sum_sq_corr_error, r.gap
            );
            assert!(r.all_below);
        }
        for w in rows.windows(2) {
            assert!(w[1].gap < w[0].gap, "gap not decreasing: {w:?}");
        }
        assert!(rows[3].sum_sq_corr_error < 0.5 * rows[0].sum_sq_corr_error);
    }

    #[test]
    fn reproduce_writes_csv_and_json() {
        let dir = std::env::temp_dir().join(format!("occam_bm_repro_{}", std::process::id()));
        let r = reproduce(Reproduction::LawrenceToy, 1, 0, Some(&dir)).unwrap();
        let ReproductionReport::LawrenceToy(rows) = r else {
            panic!("wrong report")
        };
        let mix = rows.iter().find(|r| r.variant == "mixture-2").unwrap();
        assert!((0.5 * (mix.biases[0] + mix.biases[1]) - mix.target).abs() < 0.005);
        let csv = std::fs::read_to_string(dir.join("lawrence_toy.csv")).unwrap();
        assert_eq!(csv.lines().count(), 5);
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("lawrence_toy.json")).unwrap())
                .unwrap();
        assert!(j["LawrenceToy"].is_array());
        std::fs::remove_dir_all(&dir).ok();
        assert!("nope".parse::<Reproduction>().is_err());
    }

    #[test]
    fn errors_name_the_input() {
        let missing = ModelSource::Fg(PathBuf::from("/nonexistent/x.fg"));
        assert!(matches!(
            log_z_command(&LogZOptions::new(missing, Method::Exact)),
            Err(BmError::Io { .. })
        ));
        assert!("bogus".parse::<Method>().is_err());
        let mut o = LogZOptions::new(ModelSource::Fg(data_path("grid4x4.fg")), Method::Exact);
        o.temperature = -1.0;
        assert!(matches!(
            log_z_command(&o),
            Err(BmError::InvalidOption {
                option: "temperature",
                ..
            })
        ));
    }

    #[test]
    fn learn_from_the_toy_csv() {
        let dir = std::env::temp_dir().join(format!("occam_bm_learn_{}", std::process::id()));
        let o = LearnCommandOptions {
            data: data_path("lawrence_toy.csv"),
            coding: Coding::PlusMinus,
            learn: LearnOptions {
                iterations: 300,
                ..Default::default()
            },
            out_dir: Some(dir.clone()),
        };
        let r = learn_command(&o).unwrap();
        assert_eq!((r.units, r.patterns), (2, 3));
        let avg = 0.5 * (r.thresholds[0] + r.thresholds[1]);
        assert!((avg - 2f64.ln() / 4.0).abs() < 0.01, "{avg}");
        let h = std::fs::read_to_string(dir.join("thresholds.csv")).unwrap();
        assert_eq!(h.lines().count(), 2);
        std::fs::remove_dir_all(&dir).ok();
    }
}
