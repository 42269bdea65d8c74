//! Data utilities: lag windows, z-scores, PCA preprocessing, fixed splits, NMSE and RMSE, linear
//! least squares, and the two bundled data sets (yearly sunspots and Tecator, see `data/README.md`).
//!
//! Matrices are row-major `Vec<f64>` with an explicit column count, the layout the networks use.

use occam_core::linalg::{least_squares, LinalgError};
use serde::{Deserialize, Serialize};

/// Errors of the data utilities.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DataError {
    /// A row-major matrix whose length is not rows × cols, or two arrays of different lengths.
    #[error("shape mismatch: {what} (expected {expected}, got {got})")]
    Shape {
        /// What was being checked.
        what: &'static str,
        /// The expected length.
        expected: usize,
        /// The length found.
        got: usize,
    },
    /// Too few rows for the requested operation.
    #[error("too few rows: {what} needs at least {need}, got {got}")]
    TooFew {
        /// What needs the rows.
        what: &'static str,
        /// Rows needed.
        need: usize,
        /// Rows present.
        got: usize,
    },
    /// A column with zero spread cannot be standardised.
    #[error("column {col} has zero variance")]
    ZeroVariance {
        /// The column index.
        col: usize,
    },
    /// A request larger than a documented limit.
    #[error("too large: {what} exceeds the limit of {limit}")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// A column whose mean or spread overflows double precision.
    #[error("column {col}'s values are too large: their mean or standard deviation overflows double precision")]
    Overflow {
        /// The column index.
        col: usize,
    },
    /// A value that is not finite.
    #[error("non-finite value in {what} at index {index}")]
    NonFinite {
        /// Which array.
        what: &'static str,
        /// Position of the value.
        index: usize,
    },
    /// A bundled CSV that could not be parsed (a packaging error).
    #[error("bundled data {file}: row {row}: {why}")]
    Parse {
        /// The file.
        file: &'static str,
        /// The 1-based data row.
        row: usize,
        /// What went wrong.
        why: String,
    },
    /// A linear system that is singular.
    #[error("singular system in {what}")]
    Singular {
        /// Which solve.
        what: &'static str,
    },
}

impl From<LinalgError> for DataError {
    fn from(e: LinalgError) -> Self {
        match e {
            LinalgError::Shape {
                what,
                expected,
                got,
            } => DataError::Shape {
                what,
                expected,
                got,
            },
            LinalgError::TooFew { what, need, got } => DataError::TooFew { what, need, got },
            LinalgError::NonFinite { what, index } => DataError::NonFinite { what, index },
            LinalgError::Singular { what } => DataError::Singular { what },
        }
    }
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), DataError> {
    if expected == got {
        Ok(())
    } else {
        Err(DataError::Shape {
            what,
            expected,
            got,
        })
    }
}

fn check_finite(what: &'static str, x: &[f64]) -> Result<(), DataError> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(DataError::NonFinite { what, index }),
        None => Ok(()),
    }
}

/// A regression data set: inputs `x` (row-major n × d) and targets `t` (n).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// Row-major inputs, n × d.
    pub x: Vec<f64>,
    /// Number of input columns d.
    pub d: usize,
    /// Targets, length n.
    pub t: Vec<f64>,
}

impl Dataset {
    /// Checks the shapes and that every value is finite.
    pub fn new(x: Vec<f64>, d: usize, t: Vec<f64>) -> Result<Self, DataError> {
        check_len("inputs (n × d)", t.len() * d, x.len())?;
        check_finite("inputs", &x)?;
        check_finite("targets", &t)?;
        Ok(Dataset { x, d, t })
    }

    /// Number of rows.
    pub fn n(&self) -> usize {
        self.t.len()
    }

    /// Row `i` of the inputs.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// The rows with the given indices, in that order.
    pub fn select(&self, rows: &[usize]) -> Dataset {
        let mut x = Vec::with_capacity(rows.len() * self.d);
        let mut t = Vec::with_capacity(rows.len());
        for &i in rows {
            x.extend_from_slice(self.row(i));
            t.push(self.t[i]);
        }
        Dataset { x, d: self.d, t }
    }
}

/// The most values a lag-window matrix may hold ((len − lags) × lags), 2 GiB of numbers.
pub const MAX_LAG_VALUES: usize = 1 << 28;

/// Lag windows of a series: row n holds `(s[n−1], s[n−2], …, s[n−lags])` and its target is `s[n]`, for
/// n = lags … len−1 (the first input column is the most recent lag).
pub fn lag_windows(series: &[f64], lags: usize) -> Result<Dataset, DataError> {
    if series.len() <= lags || lags == 0 {
        return Err(DataError::TooFew {
            what: "lag windows (lags ≥ 1 and len > lags)",
            need: lags.saturating_add(1).max(2),
            got: series.len(),
        });
    }
    let values = (series.len() - lags).checked_mul(lags);
    if values.is_none_or(|v| v > MAX_LAG_VALUES) {
        return Err(DataError::TooLarge {
            what: "lag windows ((len − lags) × lags values)",
            limit: MAX_LAG_VALUES,
        });
    }
    let mut x = Vec::with_capacity((series.len() - lags) * lags);
    let mut t = Vec::with_capacity(series.len() - lags);
    for n in lags..series.len() {
        x.extend((1..=lags).map(|l| series[n - l]));
        t.push(series[n]);
    }
    Dataset::new(x, lags, t)
}

/// Per-column z-score transform x → (x − mean)/sd, with the population standard deviation (÷ n).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZScore {
    /// Column means.
    pub mean: Vec<f64>,
    /// Column standard deviations (÷ n).
    pub sd: Vec<f64>,
}

impl ZScore {
    /// Fits the transform to a row-major n × d matrix.
    pub fn fit(x: &[f64], d: usize) -> Result<Self, DataError> {
        if d == 0 || !x.len().is_multiple_of(d) {
            return Err(DataError::Shape {
                what: "matrix length divisible by columns",
                expected: d.max(1) * (x.len() / d.max(1)),
                got: x.len(),
            });
        }
        let n = x.len() / d;
        if n < 2 {
            return Err(DataError::TooFew {
                what: "z-score",
                need: 2,
                got: n,
            });
        }
        check_finite("z-score input", x)?;
        let mut mean = vec![0.0; d];
        let mut sd = vec![0.0; d];
        for row in x.chunks_exact(d) {
            for (m, v) in mean.iter_mut().zip(row) {
                *m += v / n as f64;
            }
        }
        for row in x.chunks_exact(d) {
            for ((s, v), m) in sd.iter_mut().zip(row).zip(&mean) {
                *s += (v - m) * (v - m) / n as f64;
            }
        }
        for (col, s) in sd.iter_mut().enumerate() {
            *s = s.sqrt();
            if !s.is_finite() || !mean[col].is_finite() {
                return Err(DataError::Overflow { col });
            }
            if *s <= 0.0 {
                return Err(DataError::ZeroVariance { col });
            }
        }
        Ok(ZScore { mean, sd })
    }

    /// Applies the transform to a row-major matrix with the same number of columns.
    pub fn apply(&self, x: &[f64]) -> Vec<f64> {
        let d = self.mean.len();
        x.iter()
            .enumerate()
            .map(|(i, v)| (v - self.mean[i % d]) / self.sd[i % d])
            .collect()
    }

    /// Maps standardised values of column `col` back to the original units.
    pub fn invert(&self, col: usize, z: &[f64]) -> Vec<f64> {
        z.iter()
            .map(|v| v * self.sd[col] + self.mean[col])
            .collect()
    }
}

/// Principal-component projection: the one definition lives in [`occam_core::linalg`].
pub use occam_core::linalg::PrincipalAxes as Pca;

/// Mean squared error.
pub fn mse(pred: &[f64], target: &[f64]) -> Result<f64, DataError> {
    check_len("predictions vs targets", target.len(), pred.len())?;
    if target.is_empty() {
        return Err(DataError::TooFew {
            what: "MSE",
            need: 1,
            got: 0,
        });
    }
    Ok(pred
        .iter()
        .zip(target)
        .map(|(p, t)| (p - t) * (p - t))
        .sum::<f64>()
        / target.len() as f64)
}

/// Root mean squared error.
pub fn rmse(pred: &[f64], target: &[f64]) -> Result<f64, DataError> {
    mse(pred, target).map(f64::sqrt)
}

/// Normalised MSE: the MSE divided by the population variance (÷ n) of the **targets passed in**
/// (for a test set, the test-set variance; this is the denominator used for every NMSE this crate
/// reports). Invariant to an affine rescaling of predictions and targets together.
pub fn nmse(pred: &[f64], target: &[f64]) -> Result<f64, DataError> {
    let m = mse(pred, target)?;
    let n = target.len() as f64;
    let mean = target.iter().sum::<f64>() / n;
    let var = target.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / n;
    if var <= 0.0 {
        return Err(DataError::ZeroVariance { col: 0 });
    }
    Ok(m / var)
}

/// Ordinary least squares with an intercept: returns (intercept, coefficients), by
/// [`occam_core::linalg::least_squares`] on the design [1, x].
pub fn linear_regression(data: &Dataset) -> Result<(f64, Vec<f64>), DataError> {
    let d = data.d + 1;
    if data.n() < d {
        return Err(DataError::TooFew {
            what: "least squares (rows ≥ columns + 1)",
            need: d,
            got: data.n(),
        });
    }
    let design: Vec<f64> = (0..data.n())
        .flat_map(|i| std::iter::once(1.0).chain(data.row(i).iter().copied()))
        .collect();
    let beta = least_squares(&design, d, &data.t)?;
    Ok((beta[0], beta[1..].to_vec()))
}

/// Predictions of a linear model from [`linear_regression`].
pub fn linear_predict(model: &(f64, Vec<f64>), x: &[f64]) -> Vec<f64> {
    let d = model.1.len();
    x.chunks_exact(d)
        .map(|row| model.0 + row.iter().zip(&model.1).map(|(a, b)| a * b).sum::<f64>())
        .collect()
}

/// Spearman rank correlation (average ranks for ties).
pub fn spearman(a: &[f64], b: &[f64]) -> Result<f64, DataError> {
    check_len("spearman pairs", a.len(), b.len())?;
    if a.len() < 2 {
        return Err(DataError::TooFew {
            what: "spearman",
            need: 2,
            got: a.len(),
        });
    }
    let rank = |v: &[f64]| -> Vec<f64> {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        let mut r = vec![0.0; v.len()];
        let mut i = 0;
        while i < idx.len() {
            let mut j = i;
            while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
                j += 1;
            }
            for &k in &idx[i..=j] {
                r[k] = 0.5 * (i + j) as f64;
            }
            i = j + 1;
        }
        r
    };
    let (ra, rb) = (rank(a), rank(b));
    let n = a.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma) * (x - ma)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb) * (y - mb)).sum();
    if va == 0.0 || vb == 0.0 {
        return Err(DataError::ZeroVariance {
            col: if va == 0.0 { 0 } else { 1 },
        });
    }
    Ok(cov / (va * vb).sqrt())
}

mod bundled;
pub use bundled::{
    sunspot_year, sunspots_protocol, sunspots_protocol_scaled, tecator, tecator_protocol, Split,
    SunspotScaling, Tecator,
};

#[cfg(test)]
mod tests;
