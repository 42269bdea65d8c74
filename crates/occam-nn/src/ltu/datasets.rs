//! The data sets of Table 3.1: Ripley's Pima Indians split and the Leptograpsus crabs.
//!
//! Both are embedded from `crates/occam-nn/data/` (see its README for provenance: R's MASS
//! `Pima.tr`, `Pima.te` and `crabs`). As in the thesis (§3.8) inputs are shifted to zero mean and
//! scaled to lie in [−1, 1], using training-set statistics only; labels are ±1.
//!
//! **Crabs split.** Ripley's 80/120 partition of the crabs is not published with the data, so we
//! fix a stratified one: within each species × sex group of 50 (MASS's `index` column runs 1–50,
//! in order of size), the crabs with `index mod 5 ∈ {1, 3}` train — 20 per group, spread evenly
//! over the size range — and the other 30 per group test: 80 train, 120 test, 40 of each sex in
//! training.

use serde::{Deserialize, Serialize};

use super::error::{check_bipolar, check_finite, check_len, LtuError, Result};

/// Inputs and ±1 targets, row-major.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// Name used in reports.
    pub name: String,
    /// Number of patterns.
    pub n: usize,
    /// Number of inputs.
    pub d: usize,
    /// Number of outputs.
    pub k: usize,
    /// Inputs, `n × d`.
    pub x: Vec<f64>,
    /// ±1 targets, `n × k`.
    pub y: Vec<f64>,
}

impl Dataset {
    /// Checks shapes, finiteness and ±1 targets.
    pub fn new(name: &str, d: usize, k: usize, x: Vec<f64>, y: Vec<f64>) -> Result<Self> {
        if d == 0 || k == 0 {
            return Err(LtuError::InvalidOption {
                name: "dataset shape",
                why: format!("need at least one input and output, got d = {d}, k = {k}"),
            });
        }
        let n = x.len() / d;
        check_len("dataset inputs", n * d, x.len())?;
        check_len("dataset targets", n * k, y.len())?;
        check_finite("dataset inputs", &x)?;
        check_bipolar("dataset targets", &y)?;
        Ok(Self {
            name: name.to_string(),
            n,
            d,
            k,
            x,
            y,
        })
    }

    /// Inputs of pattern `p`.
    pub fn input(&self, p: usize) -> &[f64] {
        &self.x[p * self.d..(p + 1) * self.d]
    }

    /// Targets of pattern `p`.
    pub fn target(&self, p: usize) -> &[f64] {
        &self.y[p * self.k..(p + 1) * self.k]
    }
}

/// A training and a test set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    /// Training set.
    pub train: Dataset,
    /// Test set.
    pub test: Dataset,
}

const PIMA_TRAIN: &str = include_str!("../../data/pima_train.csv");
const PIMA_TEST: &str = include_str!("../../data/pima_test.csv");
const CRABS: &str = include_str!("../../data/crabs.csv");

const PIMA_INPUTS: [&str; 7] = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"];
const CRABS_INPUTS: [&str; 5] = ["FL", "RW", "CL", "CW", "BD"];

/// Reads a CSV with a header into rows of named string fields.
fn read_csv(file: &str, text: &str, columns: &[&str]) -> Result<Vec<Vec<String>>> {
    let data_err = |record: usize, why: String| LtuError::Data {
        file: file.to_string(),
        record,
        why,
    };
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| data_err(0, e.to_string()))?
        .clone();
    let idx = columns
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| h == *c)
                .ok_or_else(|| data_err(0, format!("missing column `{c}`")))
        })
        .collect::<Result<Vec<_>>>()?;
    reader
        .records()
        .enumerate()
        .map(|(r, rec)| {
            let rec = rec.map_err(|e| data_err(r + 1, e.to_string()))?;
            idx.iter()
                .map(|&i| {
                    rec.get(i)
                        .map(str::to_string)
                        .ok_or_else(|| data_err(r + 1, "short record".into()))
                })
                .collect()
        })
        .collect()
}

fn parse_f64(file: &str, record: usize, s: &str) -> Result<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| LtuError::Data {
            file: file.to_string(),
            record,
            why: format!("`{s}` is not a finite number"),
        })
}

fn label(file: &str, record: usize, s: &str, positive: &str, negative: &str) -> Result<f64> {
    match s.trim() {
        v if v == positive => Ok(1.0),
        v if v == negative => Ok(-1.0),
        v => Err(LtuError::Data {
            file: file.to_string(),
            record,
            why: format!("label `{v}` is neither `{positive}` nor `{negative}`"),
        }),
    }
}

/// Shifts every input to zero training mean and scales it by its largest absolute training
/// deviation, so the training inputs lie in [−1, 1] (thesis §3.8); the test set is transformed
/// with the training statistics. (A sibling of z-scoring; should sit beside `crate::data::zscore`
/// after the merge.)
fn scale_zero_mean_unit_max(train: &mut [f64], test: &mut [f64], d: usize) {
    let n = train.len() / d;
    for j in 0..d {
        let mean = (0..n).map(|p| train[p * d + j]).sum::<f64>() / n as f64;
        let scale = (0..n)
            .map(|p| (train[p * d + j] - mean).abs())
            .fold(0.0, f64::max);
        let scale = if scale > 0.0 { scale } else { 1.0 };
        for v in train.iter_mut().skip(j).step_by(d) {
            *v = (*v - mean) / scale;
        }
        for v in test.iter_mut().skip(j).step_by(d) {
            *v = (*v - mean) / scale;
        }
    }
}

fn pima_part(file: &str, text: &str) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut cols = PIMA_INPUTS.to_vec();
    cols.push("type");
    let rows = read_csv(file, text, &cols)?;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (r, row) in rows.iter().enumerate() {
        for v in &row[..7] {
            x.push(parse_f64(file, r + 1, v)?);
        }
        y.push(label(file, r + 1, &row[7], "Yes", "No")?);
    }
    Ok((x, y))
}

/// Pima Indians diabetes from CSV text in MASS's `Pima.tr` / `Pima.te` layout (7 inputs; target
/// `type`, Yes = +1).
pub fn pima_from_csv(train_csv: &str, test_csv: &str) -> Result<Split> {
    let (mut xtr, ytr) = pima_part("pima_train.csv", train_csv)?;
    let (mut xte, yte) = pima_part("pima_test.csv", test_csv)?;
    scale_zero_mean_unit_max(&mut xtr, &mut xte, 7);
    Ok(Split {
        train: Dataset::new("pima", 7, 1, xtr, ytr)?,
        test: Dataset::new("pima", 7, 1, xte, yte)?,
    })
}

/// Ripley's Pima split (200 train, 332 test), scaled.
pub fn pima() -> Result<Split> {
    pima_from_csv(PIMA_TRAIN, PIMA_TEST)
}

/// Whether a crab with MASS's within-group `index` (1–50) is in the fixed training set.
pub fn crabs_in_train(index: usize) -> bool {
    matches!(index % 5, 1 | 3)
}

/// The crabs from CSV text in MASS's `crabs` layout (inputs FL, RW, CL, CW, BD; target `sex`,
/// M = +1), split by [`crabs_in_train`], scaled.
pub fn crabs_from_csv(csv_text: &str) -> Result<Split> {
    let file = "crabs.csv";
    let mut cols = CRABS_INPUTS.to_vec();
    cols.extend(["sex", "index"]);
    let rows = read_csv(file, csv_text, &cols)?;
    let (mut xtr, mut ytr, mut xte, mut yte) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (r, row) in rows.iter().enumerate() {
        let index = parse_f64(file, r + 1, &row[6])?;
        let (x, y) = if crabs_in_train(index as usize) {
            (&mut xtr, &mut ytr)
        } else {
            (&mut xte, &mut yte)
        };
        for v in &row[..5] {
            x.push(parse_f64(file, r + 1, v)?);
        }
        y.push(label(file, r + 1, &row[5], "M", "F")?);
    }
    scale_zero_mean_unit_max(&mut xtr, &mut xte, 5);
    Ok(Split {
        train: Dataset::new("crabs", 5, 1, xtr, ytr)?,
        test: Dataset::new("crabs", 5, 1, xte, yte)?,
    })
}

/// The crabs with the fixed stratified 80/120 split, scaled.
pub fn crabs() -> Result<Split> {
    crabs_from_csv(CRABS)
}
