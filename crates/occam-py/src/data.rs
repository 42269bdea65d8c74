//! Data files and rows from Python as on the command line: `read_data("f.csv:a,b@..200")` (the
//! reader and the `FILE:COLUMNS@ROWS` selection of `--data`), `select_rows(n, "..80%,shuffle=1")`
//! (the same rows a `@ROWS` selection takes of n rows, for arrays), and `lag_windows`, the inputs
//! and targets `occam nn fit --lags K` builds from a series.

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::errors::{raise, IntoPy};

type Table<'py> = (Bound<'py, PyArray2<f64>>, Option<Vec<String>>, Vec<usize>);

/// `(values, header or None, the file's data row of each row)` of `FILE` or
/// `FILE:COLUMNS@ROWS`; missing cells are NaN.
#[pyfunction]
pub fn read_data<'py>(py: Python<'py>, spec: &str) -> PyResult<Table<'py>> {
    crate::errors::guard(py, || {
        let t = occam::data::read_spec("data", spec).py_err(py)?;
        let values: Vec<f64> = t
            .values
            .iter()
            .zip(&t.present)
            .map(|(&v, &p)| if p { v } else { f64::NAN })
            .collect();
        let rows: Vec<usize> = (0..t.rows).map(|r| t.source_row(r)).collect();
        let array = PyArray1::from_vec(py, values).reshape([t.rows, t.cols])?;
        Ok((array, t.header.clone(), rows))
    })
}

/// The rows (0-based, increasing) that `@ROWS` takes of `n` rows, e.g. `..80%,shuffle=1`.
#[pyfunction]
pub fn select_rows(py: Python<'_>, n: usize, rows: &str) -> PyResult<Vec<usize>> {
    crate::errors::guard(py, || {
        let spec = occam::data::parse_rows(rows, "")
            .map_err(occam::Error::from)
            .py_err(py)?;
        spec.resolve(n, "<rows>", "")
            .map_err(occam::Error::from)
            .py_err(py)
    })
}

/// Lag windows: inputs (rows × lags) and targets.
type Windows<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<f64>>);

/// `(x, t)`: row i of x holds the `lags` values before `series[lags + i]` (the most recent
/// first) and t[i] is that value, as `occam nn fit --lags` builds them.
#[pyfunction]
pub fn lag_windows<'py>(
    py: Python<'py>,
    series: PyReadonlyArray1<'_, f64>,
    lags: usize,
) -> PyResult<Windows<'py>> {
    crate::errors::guard(py, || {
        let s = series.as_array().to_vec();
        let d = occam::nn::data::lag_windows(&s, lags).map_err(|e| {
            raise(
                py,
                "DataShapeError",
                format!("lag windows of a series of {} values: {e}", s.len()),
            )
        })?;
        let n = d.t.len();
        let x = PyArray1::from_vec(py, d.x).reshape([n, lags])?;
        Ok((x, PyArray1::from_vec(py, d.t)))
    })
}
