//! One variable's predictive as arrays: mean, standard deviation, quantiles and the draws, and
//! its CSV table.

use super::PredictOptions;
use crate::data::format_number;

/// The predictive distribution of one observed variable over its rows.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Predictive {
    /// The variable.
    pub name: String,
    /// Rows (the size of its first plate).
    pub rows: usize,
    /// Values per row (its other plates and event dimensions, row-major).
    pub cols: usize,
    /// Predictive mean of every value, `rows × cols` row-major.
    pub mean: Vec<f64>,
    /// Predictive standard deviation of every value.
    pub sd: Vec<f64>,
    /// Whether `mean` and `sd` are exact (closed form) rather than the draws' moments.
    pub exact: bool,
    /// The quantiles: probability, then one value per entry.
    pub quantiles: Vec<(f64, Vec<f64>)>,
    /// Number of draws.
    pub draws: usize,
    /// The draws, `draws × rows × cols` (draw-major).
    pub samples: Vec<f64>,
    /// For the missing entries of a fitted variable: which entries were missing (the others hold
    /// their data, with sd 0). `None` for new rows.
    pub missing: Option<Vec<bool>>,
}

/// The type-7 quantile (linear interpolation between order statistics, R's and NumPy's default)
/// of sorted values.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * p;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

impl Predictive {
    /// Summarises `samples` (`opts.draws` draws of `rows × cols` values), taking the mean and
    /// variance from `exact` when given.
    pub(super) fn new(
        name: &str,
        rows: usize,
        samples: Vec<f64>,
        opts: &PredictOptions,
        exact: Option<Vec<(f64, f64)>>,
    ) -> Predictive {
        let draws = opts.draws;
        let n = samples.len() / draws.max(1);
        let cols = n / rows.max(1);
        let mut column = vec![0.0; draws];
        let mut mean = vec![0.0; n];
        let mut sd = vec![0.0; n];
        let mut quantiles: Vec<(f64, Vec<f64>)> =
            opts.quantiles.iter().map(|&p| (p, vec![0.0; n])).collect();
        for j in 0..n {
            for (d, x) in column.iter_mut().enumerate() {
                *x = samples[d * n + j];
            }
            let m = column.iter().sum::<f64>() / draws as f64;
            let var =
                column.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (draws.max(2) - 1) as f64;
            mean[j] = m;
            sd[j] = var.sqrt();
            column.sort_by(f64::total_cmp);
            for (p, q) in &mut quantiles {
                q[j] = quantile(&column, *p);
            }
        }
        let is_exact = exact.as_ref().is_some_and(|e| e.len() == n);
        if let Some(e) = exact.filter(|e| e.len() == n) {
            for (j, (m, v)) in e.into_iter().enumerate() {
                mean[j] = m;
                sd[j] = v.sqrt();
            }
        }
        Predictive {
            name: name.to_string(),
            rows,
            cols,
            mean,
            sd,
            exact: is_exact,
            quantiles,
            draws,
            samples,
            missing: None,
        }
    }

    /// Marks the missing entries (`present` false) and gives the others their data: sd 0 and
    /// every quantile at the datum.
    pub(super) fn keep_missing(&mut self, present: &[bool]) {
        if present.len() != self.mean.len() {
            return;
        }
        for (j, &p) in present.iter().enumerate() {
            if p {
                self.sd[j] = 0.0;
                let x = self.samples[j];
                self.mean[j] = x;
                for (_, q) in &mut self.quantiles {
                    q[j] = x;
                }
            }
        }
        self.missing = Some(present.iter().map(|p| !p).collect());
    }

    /// The entries' column names: `y` for one value per row, else `y_1`, `y_2`, ….
    pub fn columns(&self) -> Vec<String> {
        if self.cols == 1 {
            vec![self.name.clone()]
        } else {
            (1..=self.cols)
                .map(|j| format!("{}_{j}", self.name))
                .collect()
        }
    }

    /// The table as CSV text: a `row` column (0-based), then for every entry its mean, sd and
    /// quantiles (`y_mean`, `y_sd`, `y_q0.025`, …).
    pub fn to_csv(&self) -> String {
        let mut header = vec!["row".to_string()];
        for c in self.columns() {
            header.push(format!("{c}_mean"));
            header.push(format!("{c}_sd"));
            for (p, _) in &self.quantiles {
                header.push(format!("{c}_q{p}"));
            }
        }
        let mut out = header.join(",");
        out.push('\n');
        for r in 0..self.rows {
            let mut line = vec![r.to_string()];
            for k in 0..self.cols {
                let j = r * self.cols + k;
                line.push(format_number(self.mean[j]));
                line.push(format_number(self.sd[j]));
                for (_, q) in &self.quantiles {
                    line.push(format_number(q[j]));
                }
            }
            out.push_str(&line.join(","));
            out.push('\n');
        }
        out
    }

    /// The draws as CSV text: `draw,row` then the entries' columns, one line per draw and row.
    pub fn samples_csv(&self) -> String {
        let mut out = format!("draw,row,{}\n", self.columns().join(","));
        let n = self.rows * self.cols;
        for d in 0..self.draws {
            for r in 0..self.rows {
                let vals: Vec<String> = (0..self.cols)
                    .map(|k| format_number(self.samples[d * n + r * self.cols + k]))
                    .collect();
                out.push_str(&format!("{d},{r},{}\n", vals.join(",")));
            }
        }
        out
    }
}
