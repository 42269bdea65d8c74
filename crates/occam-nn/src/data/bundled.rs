//! The bundled data sets (copied from R's `datasets::sunspot.year` and `modeldata::meats`, see
//! `crates/occam-nn/data/README.md`) and the fixed train/test protocols of the papers.

use super::{lag_windows, DataError, Dataset, Pca, ZScore};
use serde::{Deserialize, Serialize};

const SUNSPOT_CSV: &str = include_str!("../../data/sunspot_year.csv");
const TECATOR_CSV: &str = include_str!("../../data/tecator_meats.csv");

fn parse_rows(file: &'static str, text: &str, cols: usize) -> Result<Vec<Vec<f64>>, DataError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().skip(1).enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != cols {
            return Err(DataError::Parse {
                file,
                row: i + 1,
                why: format!("{} fields, expected {cols}", fields.len()),
            });
        }
        let mut row = Vec::with_capacity(cols);
        for f in fields {
            let f = f.trim().trim_matches('"');
            row.push(f.parse::<f64>().map_err(|e| DataError::Parse {
                file,
                row: i + 1,
                why: format!("{f:?}: {e}"),
            })?);
        }
        rows.push(row);
    }
    Ok(rows)
}

/// The yearly mean sunspot numbers 1700–1988 (version-1 series) as (year, value).
pub fn sunspot_year() -> Result<Vec<(i32, f64)>, DataError> {
    Ok(parse_rows("sunspot_year.csv", SUNSPOT_CSV, 3)?
        .into_iter()
        .map(|r| (r[1] as i32, r[2]))
        .collect())
}

/// The 215 Tecator meat samples: 100-channel absorbance spectra and the three analytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tecator {
    /// Row-major 215 × 100 absorbances (850–1050 nm).
    pub spectra: Vec<f64>,
    /// Moisture (water) content, %.
    pub water: Vec<f64>,
    /// Fat content, %.
    pub fat: Vec<f64>,
    /// Protein content, %.
    pub protein: Vec<f64>,
}

/// Loads the bundled Tecator data (rows in StatLib order: the first 172 are the training set).
pub fn tecator() -> Result<Tecator, DataError> {
    let rows = parse_rows("tecator_meats.csv", TECATOR_CSV, 104)?;
    let mut t = Tecator {
        spectra: Vec::with_capacity(rows.len() * 100),
        water: Vec::with_capacity(rows.len()),
        fat: Vec::with_capacity(rows.len()),
        protein: Vec::with_capacity(rows.len()),
    };
    for r in rows {
        t.spectra.extend_from_slice(&r[1..101]);
        t.water.push(r[101]);
        t.fat.push(r[102]);
        t.protein.push(r[103]);
    }
    Ok(t)
}

/// A fixed train/test split with standardised targets (inputs are already preprocessed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Split {
    /// Training set (targets standardised).
    pub train: Dataset,
    /// Test set (targets standardised with the training statistics).
    pub test: Dataset,
    /// Mean used to standardise the targets.
    pub target_mean: f64,
    /// Standard deviation used to standardise the targets.
    pub target_sd: f64,
}

impl Split {
    /// Maps standardised predictions back to the original units.
    pub fn unscale(&self, z: &[f64]) -> Vec<f64> {
        z.iter()
            .map(|v| v * self.target_sd + self.target_mean)
            .collect()
    }
}

/// How the sunspot series is scaled before windowing. Both papers say only "normalised to have a zero
/// mean and unit variance" (committee paper §4.2; thesis §5.5), not with which years' statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SunspotScaling {
    /// z-score with the mean and sd of the training years 1700–1920 (the default).
    TrainZ,
    /// z-score with the mean and sd of the whole series 1700–1979.
    SeriesZ,
    /// Divided by the training years' maximum (Weigend et al.'s [0, 1] scaling; not what the seeds
    /// state, measured only to rule it in or out).
    TrainMax,
}

/// Sunspots, Weigend et al.'s protocol as used by Lawrence (Table 5.1) and the committee paper: the
/// series is standardised with the mean and sd of 1700–1920, inputs are the previous `lags` years,
/// training targets are 1700+lags … 1920 (209 patterns for 12 lags) and test targets 1921–1979 (59
/// patterns, whose inputs reach back into the training years).
pub fn sunspots_protocol(lags: usize) -> Result<Split, DataError> {
    sunspots_protocol_scaled(lags, SunspotScaling::TrainZ)
}

/// [`sunspots_protocol`] with the series scaled by `scaling`; `target_mean`/`target_sd` of the
/// result map predictions back to sunspot numbers (for `TrainMax`, mean 0 and sd = the maximum).
pub fn sunspots_protocol_scaled(lags: usize, scaling: SunspotScaling) -> Result<Split, DataError> {
    let years = sunspot_year()?;
    let values: Vec<f64> = years.iter().map(|y| y.1).collect();
    let n_train = years.iter().filter(|y| y.0 <= 1920).count();
    let n_1979 = years.iter().filter(|y| y.0 <= 1979).count();
    let z = match scaling {
        SunspotScaling::TrainZ => ZScore::fit(&values[..n_train], 1)?,
        SunspotScaling::SeriesZ => ZScore::fit(&values[..n_1979], 1)?,
        SunspotScaling::TrainMax => ZScore {
            mean: vec![0.0],
            sd: vec![values[..n_train].iter().cloned().fold(f64::MIN, f64::max)],
        },
    };
    let series = z.apply(&values);
    let all = lag_windows(&series, lags)?;
    let target_year = |i: usize| years[i + lags].0;
    let train: Vec<usize> = (0..all.n()).filter(|&i| target_year(i) <= 1920).collect();
    let test: Vec<usize> = (0..all.n())
        .filter(|&i| (1921..=1979).contains(&target_year(i)))
        .collect();
    Ok(Split {
        train: all.select(&train),
        test: all.select(&test),
        target_mean: z.mean[0],
        target_sd: z.sd[0],
    })
}

/// Tecator fat prediction (Thodberg 1996): PCA fitted on the 172 training spectra, the first
/// `components` scores as inputs (each standardised with its training sd when `standardise`), the
/// fat target standardised with the training mean and sd; test = the last 43 samples.
pub fn tecator_protocol(components: usize, standardise: bool) -> Result<Split, DataError> {
    let t = tecator()?;
    let n_train = 172;
    let pca = Pca::fit(&t.spectra[..n_train * 100], 100, components)?;
    let mut x_train = pca.transform(&t.spectra[..n_train * 100]);
    let mut x_test = pca.transform(&t.spectra[n_train * 100..]);
    if standardise {
        let zs = ZScore::fit(&x_train, components)?;
        x_train = zs.apply(&x_train);
        x_test = zs.apply(&x_test);
    }
    let zt = ZScore::fit(&t.fat[..n_train], 1)?;
    Ok(Split {
        train: Dataset::new(x_train, components, zt.apply(&t.fat[..n_train]))?,
        test: Dataset::new(x_test, components, zt.apply(&t.fat[n_train..]))?,
        target_mean: zt.mean[0],
        target_sd: zt.sd[0],
    })
}
