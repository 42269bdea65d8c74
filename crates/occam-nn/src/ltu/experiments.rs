//! Table 3.1 of the thesis: LTU networks on the Pima Indians and Leptograpsus crabs data.
//!
//! Protocol (§3.8): C = 10^k, k ∈ {0, 1, 2}; H ∈ {10, 15, 20} hidden units (Pima) or {10, 20, 30,
//! 40} (crabs); ten random initialisations per setting; seven rounds of annealed inference and SMO
//! learning with the heuristics of §3.7 ([`TrainOptions::thesis`]). Reported: the smallest and the
//! mean test-error count over all networks. The thesis's seeds are unknown, so the numbers can
//! only be reproduced in distribution; every network's seed is derived from [`Options::seed`], and
//! the networks are trained in parallel with results independent of the thread count.

use std::fmt::Write as _;
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::datasets::{crabs, pima, Split};
use super::error::{LtuError, Result};
use super::learn::{train, TrainOptions};

/// Options of [`table_3_1`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// Initialisations per (C, H) setting (the thesis: 10).
    pub inits: usize,
    /// Master seed.
    pub seed: u64,
    /// Error penalties C.
    pub cs: Vec<f64>,
    /// Hidden-layer sizes for Pima.
    pub pima_hidden: Vec<usize>,
    /// Hidden-layer sizes for crabs.
    pub crabs_hidden: Vec<usize>,
    /// Training protocol; its `hidden` and `c` are replaced by each grid point's.
    pub protocol: TrainOptions,
}

impl Default for Options {
    /// The thesis's full grid: 90 Pima and 120 crabs networks.
    fn default() -> Self {
        Self {
            inits: 10,
            seed: 2000,
            cs: vec![1.0, 10.0, 100.0],
            pima_hidden: vec![10, 15, 20],
            crabs_hidden: vec![10, 20, 30, 40],
            protocol: TrainOptions::thesis(10, 1.0),
        }
    }
}

/// One trained network of the grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetResult {
    /// Data set name.
    pub dataset: String,
    /// Error penalty.
    pub c: f64,
    /// Hidden units.
    pub hidden: usize,
    /// Initialisation number within the setting.
    pub init: usize,
    /// Seed of this network.
    pub seed: u64,
    /// Training errors of the returned network.
    pub train_errors: usize,
    /// Test errors of the returned network.
    pub test_errors: usize,
    /// Round whose network was kept (0 = initial).
    pub best_round: usize,
    /// Unit SVMs stopped by the SMO iteration cap.
    pub smo_capped: usize,
    /// Pattern inferences whose ICM passes did not converge.
    pub icm_unconverged: usize,
}

/// Summary of one data set's grid, next to the thesis's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Data set name.
    pub dataset: String,
    /// Training-set size.
    pub n_train: usize,
    /// Test-set size.
    pub n_test: usize,
    /// Number of networks.
    pub nets: usize,
    /// Smallest test-error count ("Best LTU").
    pub best_test_errors: usize,
    /// Mean test-error count ("Average LTU").
    pub average_test_errors: f64,
    /// Standard deviation of the test-error counts.
    pub sd_test_errors: f64,
    /// The thesis's best.
    pub thesis_best: f64,
    /// The thesis's average.
    pub thesis_average: f64,
}

/// Table 3.1 as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The options used.
    pub options: Options,
    /// Pima, then crabs.
    pub summaries: Vec<Summary>,
    /// Every network, Pima first, in grid order (C, then H, then initialisation).
    pub nets: Vec<NetResult>,
}

/// The comparison rows of Table 3.1 (test errors; Pima out of 332, crabs out of 120), as printed
/// in the thesis from Ripley (1996) and Barber & Williams (1997). `None`: not reported.
pub const THESIS_BASELINES: [(&str, Option<f64>, Option<f64>); 7] = [
    ("Neural network", Some(75.0), Some(3.0)),
    ("Linear discriminant", Some(67.0), Some(8.0)),
    ("Logistic regression", Some(66.0), Some(4.0)),
    ("MARS (degree = 1)", Some(75.0), Some(4.0)),
    ("PP (4 ridge functions)", Some(75.0), Some(6.0)),
    ("2 Gaussian mixture", Some(64.0), None),
    ("Gaussian process classifier", Some(68.0), Some(3.0)),
];

/// The thesis's LTU rows: (Pima best, Pima average, crabs best, crabs average).
pub const THESIS_LTU: (f64, f64, f64, f64) = (63.0, 73.97, 2.0, 6.08);

/// SplitMix64 finaliser, to derive well-separated per-network seeds.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Trains every network of a (C, H, initialisation) grid on `split` and counts its errors.
pub fn run_grid(
    split: &Split,
    cs: &[f64],
    hidden: &[usize],
    inits: usize,
    protocol: &TrainOptions,
    seed: u64,
) -> Result<Vec<NetResult>> {
    let name_hash = split
        .train
        .name
        .bytes()
        .fold(0u64, |h, b| mix(h ^ u64::from(b)));
    let jobs: Vec<(usize, usize, usize)> = (0..cs.len())
        .flat_map(|ci| (0..hidden.len()).flat_map(move |hi| (0..inits).map(move |i| (ci, hi, i))))
        .collect();
    jobs.par_iter()
        .map(|&(ci, hi, init)| {
            let net_seed =
                mix(mix(mix(mix(seed ^ name_hash) ^ ci as u64) ^ hi as u64) ^ init as u64);
            let mut opts = protocol.clone();
            opts.hidden = vec![hidden[hi]];
            opts.c = cs[ci];
            let report = train(&split.train, &opts, net_seed)?;
            let net = &report.network;
            Ok(NetResult {
                dataset: split.train.name.clone(),
                c: cs[ci],
                hidden: hidden[hi],
                init,
                seed: net_seed,
                train_errors: report.train_errors[report.best_round],
                test_errors: net.count_errors(&split.test.x, &split.test.y)?,
                best_round: report.best_round,
                smo_capped: report.smo_capped,
                icm_unconverged: report.icm_unconverged,
            })
        })
        .collect()
}

/// Best, mean and standard deviation of the test errors of `nets`.
pub fn summarise(split: &Split, nets: &[NetResult], thesis: (f64, f64)) -> Result<Summary> {
    if nets.is_empty() {
        return Err(LtuError::InvalidOption {
            name: "grid",
            why: "no networks to summarise".into(),
        });
    }
    let errs: Vec<f64> = nets.iter().map(|r| r.test_errors as f64).collect();
    let mean = errs.iter().sum::<f64>() / errs.len() as f64;
    let var = errs.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / errs.len() as f64;
    Ok(Summary {
        dataset: split.train.name.clone(),
        n_train: split.train.n,
        n_test: split.test.n,
        nets: nets.len(),
        best_test_errors: nets.iter().map(|r| r.test_errors).min().unwrap_or(0),
        average_test_errors: mean,
        sd_test_errors: var.sqrt(),
        thesis_best: thesis.0,
        thesis_average: thesis.1,
    })
}

/// Runs both grids of Table 3.1.
pub fn table_3_1(opts: &Options) -> Result<Table> {
    if opts.inits == 0 || opts.cs.is_empty() {
        return Err(LtuError::InvalidOption {
            name: "grid",
            why: "need at least one initialisation and one C".into(),
        });
    }
    let (pima, crabs) = (pima()?, crabs()?);
    let p = &opts.protocol;
    let pima_nets = run_grid(&pima, &opts.cs, &opts.pima_hidden, opts.inits, p, opts.seed)?;
    let crabs_nets = run_grid(
        &crabs,
        &opts.cs,
        &opts.crabs_hidden,
        opts.inits,
        p,
        opts.seed,
    )?;
    let (pb, pa, cb, ca) = THESIS_LTU;
    let summaries = vec![
        summarise(&pima, &pima_nets, (pb, pa))?,
        summarise(&crabs, &crabs_nets, (cb, ca))?,
    ];
    Ok(Table {
        options: opts.clone(),
        summaries,
        nets: pima_nets.into_iter().chain(crabs_nets).collect(),
    })
}

impl Table {
    /// The table as Markdown: the thesis's comparison rows, then the LTU rows measured next to
    /// the thesis's.
    pub fn to_markdown(&self) -> String {
        let mut s = String::from("| model | Pima | crabs |\n|---|---|---|\n");
        let cell = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v}"));
        for (name, p, c) in THESIS_BASELINES {
            let _ = writeln!(s, "| {name} (thesis) | {} | {} |", cell(p), cell(c));
        }
        let get = |name: &str| self.summaries.iter().find(|x| x.dataset == name);
        let (p, c) = (get("pima"), get("crabs"));
        let avg = |x: Option<&Summary>| {
            x.map_or("–".into(), |x| {
                format!("{:.2} (thesis {})", x.average_test_errors, x.thesis_average)
            })
        };
        let best = |x: Option<&Summary>| {
            x.map_or("–".into(), |x| {
                format!("{} (thesis {})", x.best_test_errors, x.thesis_best)
            })
        };
        let _ = writeln!(s, "| Average LTU (measured) | {} | {} |", avg(p), avg(c));
        let _ = writeln!(s, "| Best LTU (measured) | {} | {} |", best(p), best(c));
        s
    }

    /// Writes `table_3_1.json` (everything), `table_3_1_nets.csv` (one row per network) and
    /// `table_3_1.md` into `dir`, creating it if needed.
    pub fn write_dir(&self, dir: &Path) -> Result<()> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| LtuError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let json = dir.join("table_3_1.json");
        let text = serde_json::to_string_pretty(self).map_err(|e| LtuError::Io {
            path: json.display().to_string(),
            source: std::io::Error::other(e),
        })?;
        occam_io::write(&json, text.as_bytes()).map_err(io(&json))?;
        let csv_path = dir.join("table_3_1_nets.csv");
        let mut csv = String::from(
            "dataset,c,hidden,init,seed,train_errors,test_errors,best_round,smo_capped,icm_unconverged\n",
        );
        for r in &self.nets {
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{},{},{},{}",
                r.dataset,
                r.c,
                r.hidden,
                r.init,
                r.seed,
                r.train_errors,
                r.test_errors,
                r.best_round,
                r.smo_capped,
                r.icm_unconverged
            );
        }
        occam_io::write(&csv_path, csv.as_bytes()).map_err(io(&csv_path))?;
        let md = dir.join("table_3_1.md");
        occam_io::write(&md, self.to_markdown().as_bytes()).map_err(io(&md))?;
        Ok(())
    }
}
