//! Fitting a Bayesian network to a data file and predicting with the saved network: what
//! `occam nn fit` and `occam nn predict` call (and the Python `occam.nn` module, with arrays).
//!
//! A data file is a table (CSV with a header, `.npy`, `.npz`; see [`crate::data`]). The target is
//! one column (by header name, or by position counted from 0; default: the last), the inputs the others
//! (or a named list). With `lags = K` the target column is a time series and the inputs of row n
//! are its K previous values (the most recent first), as in the sunspot protocol. A saved network
//! is JSON holding the spec, the column names, the standardisation and the posterior.

use std::path::Path;

use occam_nn::data::{lag_windows, Dataset};
use occam_nn::net::{fit_network, NetSpec, Predictions, TrainedNet};
use serde::{Deserialize, Serialize};

use crate::data::{self, Table};
use crate::error::{Error, Result};

/// Which columns of a table feed a network.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Columns {
    /// The target column (name or position counted from 0); default: the last column.
    pub target: Option<String>,
    /// The input columns; default: every column but the target.
    pub inputs: Option<Vec<String>>,
    /// Use the target's `lags` previous values as the inputs (a time series).
    pub lags: Option<usize>,
}

/// A fitted network with the names of the columns it reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedNetwork {
    /// Format marker and version.
    pub format: String,
    /// The target column's name.
    pub target: String,
    /// The input columns' names (empty with `lags`).
    pub inputs: Vec<String>,
    /// Lag order, for a time-series network.
    pub lags: Option<usize>,
    /// The network.
    pub net: TrainedNet,
}

const FORMAT: &str = "occam-nn-network/1";

fn column_names(t: &Table) -> Vec<String> {
    match &t.header {
        Some(h) => h.clone(),
        None => (1..=t.cols).map(|c| format!("column {c}")).collect(),
    }
}

/// The index of column `r`: a header name (or the `column N` name of a table without one, as
/// saved networks name them), else a position counted from 0 as in `--data x=FILE:COLUMNS`.
fn column(t: &Table, r: &str) -> Result<usize> {
    if let Some(i) = column_names(t).iter().position(|n| n == r) {
        return Ok(i);
    }
    match t.column_positions(&[r.to_string()], "")?.as_slice() {
        [c] => Ok(*c),
        _ => Err(Error::Usage(format!(
            "{}: `{r}` is several columns; give one",
            t.file
        ))),
    }
}

/// The indices of columns `list`: names, positions from 0 and `A..B` ranges.
fn columns(t: &Table, list: &[String]) -> Result<Vec<usize>> {
    let names = column_names(t);
    let mut out = Vec::new();
    for r in list {
        match names.iter().position(|n| n == r) {
            Some(i) => out.push(i),
            None => out.extend(t.column_positions(std::slice::from_ref(r), "")?),
        }
    }
    Ok(out)
}

/// The values of column `c`, every cell present.
fn column_values(t: &Table, c: usize) -> Result<Vec<f64>> {
    (0..t.rows)
        .map(|r| {
            let i = r * t.cols + c;
            if t.present[i] {
                Ok(t.values[i])
            } else {
                Err(t.error_at(i, "missing value (networks need every cell)"))
            }
        })
        .collect()
}

/// Inputs (and targets, when the table has the target column) of a table under `cols`; returns
/// the data set (targets empty when absent), the target's name and the inputs' names.
fn assemble(
    t: &Table,
    cols: &Columns,
    need_target: bool,
) -> Result<(Dataset, String, Vec<String>)> {
    let names = column_names(t);
    if t.rows == 0 || t.cols == 0 {
        return Err(Error::DataFile {
            file: t.file.clone(),
            message: "no data rows".into(),
        });
    }
    let target = match &cols.target {
        Some(r) => column(t, r)?,
        None => t.cols - 1,
    };
    let bad = |e: occam_nn::data::DataError| Error::DataFile {
        file: t.file.clone(),
        message: e.to_string(),
    };
    if let Some(k) = cols.lags {
        let series = column_values(t, target)?;
        if k == 0 || k >= series.len() {
            return Err(Error::Usage(format!(
                "--lags {k}: the series `{}` in {} has {} values; lags must be between 1 and {}",
                names[target],
                t.file,
                series.len(),
                series.len().saturating_sub(1)
            )));
        }
        let d = lag_windows(&series, k).map_err(bad)?;
        return Ok((d, names[target].clone(), Vec::new()));
    }
    let inputs: Vec<usize> = match &cols.inputs {
        Some(list) => columns(t, list)?,
        None => (0..t.cols).filter(|&c| c != target).collect(),
    };
    if inputs.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no input columns (the table has only the target `{}`)",
            t.file, names[target]
        )));
    }
    let per_col: Vec<Vec<f64>> = inputs
        .iter()
        .map(|&c| column_values(t, c))
        .collect::<Result<_>>()?;
    let x: Vec<f64> = (0..t.rows)
        .flat_map(|r| per_col.iter().map(move |c| c[r]))
        .collect();
    let targets = if need_target {
        column_values(t, target)?
    } else {
        Vec::new()
    };
    let d = if need_target {
        Dataset::new(x, inputs.len(), targets).map_err(bad)?
    } else {
        Dataset {
            x,
            d: inputs.len(),
            t: Vec::new(),
        }
    };
    Ok((
        d,
        names[target].clone(),
        inputs.iter().map(|&c| names[c].clone()).collect(),
    ))
}

fn net_error(e: occam_nn::bnn::network::NetError) -> Error {
    match e {
        occam_nn::bnn::network::NetError::Setting { .. }
        | occam_nn::bnn::network::NetError::InputDim { .. }
        | occam_nn::bnn::network::NetError::EmptyArchitecture { .. }
        | occam_nn::bnn::network::NetError::NoData => Error::Usage(e.to_string()),
        other => Error::Run(other.to_string()),
    }
}

/// Fits a network to in-memory arrays: `x` row-major with `d` columns, targets `t`.
pub fn fit_arrays(x: Vec<f64>, d: usize, t: Vec<f64>, spec: &NetSpec) -> Result<TrainedNet> {
    let data = Dataset::new(x, d, t).map_err(|e| Error::DataFile {
        file: "<arrays>".into(),
        message: e.to_string(),
    })?;
    fit_network(&data, spec).map_err(net_error)
}

/// Predictions of a network for in-memory inputs: `x` row-major with `d` columns, which must be
/// the network's input count.
pub fn predict_arrays(net: &TrainedNet, x: &[f64], d: usize) -> Result<Predictions> {
    if d != net.inputs {
        return Err(net_error(occam_nn::bnn::network::NetError::InputDim {
            expected: net.inputs,
            got: d,
        }));
    }
    net.predict(x).map_err(net_error)
}

/// A spec from JSON text (every field optional, unknown fields rejected).
pub fn spec_from_json(text: &str) -> Result<NetSpec> {
    serde_json::from_str(text).map_err(|e| Error::Usage(format!("network spec: {e}")))
}

/// Checks what the standardisation needs of the training data, naming the file and column: at
/// least two rows, and every column (inputs and target) with a finite, non-zero spread.
fn check_training(file: &str, d: &Dataset, target: &str, inputs: &[String]) -> Result<()> {
    let bad = |message: String| Error::DataFile {
        file: file.to_string(),
        message,
    };
    if d.n() < 2 {
        return Err(bad(format!(
            "{} training row(s); a network needs at least 2 (the inputs and target are standardised by their spread)",
            d.n()
        )));
    }
    let name = |c: usize| match inputs.get(c) {
        Some(n) => format!("input column `{n}`"),
        None if inputs.is_empty() => format!("lag {} of `{target}`", c + 1),
        None => format!("input {}", c + 1),
    };
    let describe = |e: occam_nn::data::DataError, what: String| {
        match e {
        occam_nn::data::DataError::ZeroVariance { .. } => {
            bad(format!("{what} is constant; a network needs every column to vary (drop it with --inputs)"))
        }
        occam_nn::data::DataError::Overflow { .. } => bad(format!(
            "{what} holds values so large that their spread overflows double precision (rescale the column)"
        )),
        e => bad(format!("{what}: {e}")),
    }
    };
    occam_nn::data::ZScore::fit(&d.t, 1)
        .map_err(|e| describe(e, format!("target column `{target}`")))?;
    if let Err(e) = occam_nn::data::ZScore::fit(&d.x, d.d) {
        let col = match &e {
            occam_nn::data::DataError::ZeroVariance { col }
            | occam_nn::data::DataError::Overflow { col } => *col,
            _ => 0,
        };
        return Err(describe(e, name(col)));
    }
    Ok(())
}

/// Fits a network to a table.
pub fn fit_table(t: &Table, cols: &Columns, spec: &NetSpec) -> Result<SavedNetwork> {
    let (d, target, inputs) = assemble(t, cols, true)?;
    check_training(&t.file, &d, &target, &inputs)?;
    let net = fit_network(&d, spec).map_err(net_error)?;
    Ok(SavedNetwork {
        format: FORMAT.into(),
        target,
        inputs,
        lags: cols.lags,
        net,
    })
}

/// Fits a network to a data file.
pub fn fit_file(path: &Path, cols: &Columns, spec: &NetSpec) -> Result<SavedNetwork> {
    fit_table(&data::read("data", path)?, cols, spec)
}

/// Fits a network to `FILE` or `FILE:COLUMNS@ROWS` (see [`data::split_selection`]).
pub fn fit_spec(file: &str, cols: &Columns, spec: &NetSpec) -> Result<SavedNetwork> {
    fit_table(&data::read_spec("data", file)?, cols, spec)
}

/// Reads a spec file (JSON; every field optional).
pub fn read_spec(path: &Path) -> Result<NetSpec> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
}

impl SavedNetwork {
    /// Writes the network as JSON, atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string(self).map_err(|e| Error::Run(e.to_string()))?;
        crate::atomic::write(path, text.as_bytes())
    }

    /// Reads a network written by [`SavedNetwork::save`].
    pub fn load(path: &Path) -> Result<SavedNetwork> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let s: SavedNetwork = serde_json::from_str(&text)
            .map_err(|e| Error::Input(format!("{}: not a saved network: {e}", path.display())))?;
        if s.format != FORMAT {
            return Err(Error::Input(format!(
                "{}: format `{}`, expected `{FORMAT}`",
                path.display(),
                s.format
            )));
        }
        s.net
            .check_saved()
            .map_err(|e| Error::Input(format!("{}: not a saved network: {e}", path.display())))?;
        Ok(s)
    }

    /// Predictions for a table holding the network's input columns (found by name; for a
    /// time-series network, the target column, one prediction per row from row `lags + 1`).
    pub fn predict_table(&self, t: &Table) -> Result<Predictions> {
        let cols = Columns {
            target: Some(self.target.clone()).filter(|_| self.lags.is_some()),
            inputs: Some(self.inputs.clone()).filter(|_| self.lags.is_none()),
            lags: self.lags,
        };
        let (d, _, _) = assemble(t, &cols, false)?;
        self.net.predict(&d.x).map_err(|e| match net_error(e) {
            Error::Usage(m) => Error::Usage(format!("{}: {m}", t.file)),
            other => other,
        })
    }

    /// Predictions for a data file.
    pub fn predict_file(&self, path: &Path) -> Result<Predictions> {
        self.predict_table(&data::read("data", path)?)
    }

    /// The data row (0-based, header excluded) of the first prediction: a time-series network
    /// predicts each row from the `lags` rows before it, so from row `lags` on.
    pub fn first_row(&self) -> usize {
        self.lags.unwrap_or(0)
    }

    /// Predictions for a data file, with the row each one is for and, given `time` (a column
    /// name or position counted from 0), that column's value in the row.
    pub fn predict_rows(&self, path: &Path, time: Option<&str>) -> Result<PredictedRows> {
        self.predict_rows_table(&data::read("data", path)?, time)
    }

    /// [`SavedNetwork::predict_rows`] for a table, e.g. chosen rows of a file
    /// ([`data::read_spec`]): each prediction's row is the file's own data row.
    pub fn predict_rows_table(&self, t: &Table, time: Option<&str>) -> Result<PredictedRows> {
        let p = self.predict_table(t)?;
        let first = self.first_row();
        let local: Vec<usize> = (first..first + p.mean.len()).collect();
        let rows: Vec<usize> = local.iter().map(|&r| t.source_row(r)).collect();
        let time = match time {
            Some(r) => {
                let c = column(t, r)?;
                let values = local
                    .iter()
                    .map(|&row| {
                        let i = row * t.cols + c;
                        if t.present[i] {
                            Ok(t.values[i])
                        } else {
                            Err(t.error_at(i, "missing time value"))
                        }
                    })
                    .collect::<Result<Vec<f64>>>()?;
                Some((column_names(t)[c].clone(), values))
            }
            None => None,
        };
        Ok(PredictedRows {
            rows,
            time,
            predictions: p,
        })
    }
}

/// Predictions with the data row each is for (and a time column's value in it).
#[derive(Clone, Debug)]
pub struct PredictedRows {
    /// Data row (0-based, header excluded) of each prediction.
    pub rows: Vec<usize>,
    /// The time column's name and its value in each predicted row, if asked for.
    pub time: Option<(String, Vec<f64>)>,
    /// The predictions.
    pub predictions: Predictions,
}

/// Predictions as CSV text: `row` (the data row each is for, 0-based), the time column when
/// asked for, `mean`, then `sd_function` and `sd_total` when the method gives them.
pub fn predicted_rows_csv(p: &PredictedRows) -> String {
    let mut header = vec!["row".to_string()];
    let mut cols: Vec<Vec<f64>> = vec![p.rows.iter().map(|&r| r as f64).collect()];
    if let Some((name, values)) = &p.time {
        header.push(name.clone());
        cols.push(values.clone());
    }
    let (more, values) = prediction_columns(&p.predictions);
    header.extend(more);
    cols.extend(values);
    let n = p.rows.len();
    let values: Vec<f64> = (0..n)
        .flat_map(|r| cols.iter().map(move |c| c[r]))
        .collect();
    data::to_csv(&header, n, &values)
}

/// The prediction columns' names and values: `mean`, then `sd_function` and `sd_total` when
/// the method gives them.
fn prediction_columns(p: &Predictions) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut header = vec!["mean".to_string()];
    let mut cols: Vec<Vec<f64>> = vec![p.mean.clone()];
    for (name, v) in [("sd_function", &p.var_function), ("sd_total", &p.var_total)] {
        if let Some(v) = v {
            header.push(name.into());
            cols.push(v.iter().map(|x| x.sqrt()).collect());
        }
    }
    (header, cols)
}

/// Predictions as CSV text: `mean`, then `sd_function` and `sd_total` when the method gives them.
pub fn predictions_csv(p: &Predictions) -> String {
    let (header, cols) = prediction_columns(p);
    let n = p.mean.len();
    let values: Vec<f64> = (0..n)
        .flat_map(|r| cols.iter().map(move |c| c[r]))
        .collect();
    data::to_csv(&header, n, &values)
}

#[cfg(test)]
mod tests;
