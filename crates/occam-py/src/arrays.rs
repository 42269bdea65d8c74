//! NumPy arrays in and out. In: a dict of float64 arrays with one or two dimensions (the Python
//! layer has already turned masked arrays into NaN and checked dtypes with clear messages), copied
//! once into the data set — straight from the buffer when it is C-contiguous; the model and its
//! graph share that copy (`occam::data::Values`), and the fitted result keeps it, which is why it
//! is a copy and not a view of NumPy's buffer (Python may write to or free the array while the
//! result lives, and reading it without the GIL would need unsafe code) — or of data file
//! paths, read as `--data NAME=FILE:COLUMNS@ROWS` reads them. Out: row-major
//! values reshaped to the parameter's dimensions.

use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use occam::DataSet;

use crate::errors::{raise, IntoPy};

/// One array → `(rows, cols, values)`: a vector is one column, a scalar one cell.
fn table(
    py: Python<'_>,
    name: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<(usize, usize, Vec<f64>)> {
    let array: PyReadonlyArrayDyn<'_, f64> = value.extract().map_err(|_| {
        raise(
            py,
            "DataTypeError",
            format!("data `{name}`: expected a float64 NumPy array"),
        )
    })?;
    let shape = array.shape().to_vec();
    let (rows, cols) = match shape.as_slice() {
        [] => (1, 1),
        [n] => (*n, 1),
        [r, c] => (*r, *c),
        _ => {
            return Err(raise(
                py,
                "DataShapeError",
                format!(
                "data `{name}`: arrays must have 1 or 2 dimensions; this one has shape {shape:?}"
            ),
            ))
        }
    };
    // `as_slice` also accepts a Fortran-ordered buffer: only a C-ordered one is row-major.
    let values = match array.as_slice() {
        Ok(s) if array.is_c_contiguous() => s.to_vec(),
        _ => array.as_array().iter().copied().collect(),
    };
    Ok((rows, cols, values))
}

/// The data set of a `{name: array}` dict.
pub fn dataset(py: Python<'_>, data: Option<&Bound<'_, PyDict>>) -> PyResult<DataSet> {
    let mut set = DataSet::new();
    let Some(data) = data else { return Ok(set) };
    for (k, v) in data.iter() {
        let name: String = k.extract().map_err(|_| {
            raise(
                py,
                "DataTypeError",
                format!("data names must be strings, got {k}"),
            )
        })?;
        // A file (`"f.csv"`, or `"f.csv:a,b@..200"` as `--data` takes it) is read as the
        // command line reads it, so its messages name the file's own lines and columns.
        if let Ok(spec) = v.extract::<String>() {
            let t = occam::data::read_spec(&name, &spec).py_err(py)?;
            set.tables.insert(name, t);
            continue;
        }
        let (rows, cols, values) = table(py, &name, &v)?;
        set.insert_array(&name, rows, cols, values, None)
            .py_err(py)?;
    }
    Ok(set)
}

/// A NumPy array of `values` with dimensions `shape` (row-major).
pub fn shaped<'py>(
    py: Python<'py>,
    values: Vec<f64>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    PyArray1::from_vec(py, values).reshape(shape.to_vec())
}

/// Predictives as `Result.predict` returns them: `{name: {"mean", "sd" (rows, cols),
/// "quantiles": {p: (rows, cols)}, "samples" (draws, rows, cols), "exact", "missing"}}`.
pub fn predictions<'py>(
    py: Python<'py>,
    preds: Vec<occam::predict::Predictive>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    use pyo3::types::PyDict;
    let out = PyDict::new(py);
    for p in preds {
        let (r, c) = (p.rows, p.cols);
        let d = PyDict::new(py);
        d.set_item("mean", shaped(py, p.mean, &[r, c])?)?;
        d.set_item("sd", shaped(py, p.sd, &[r, c])?)?;
        let q = PyDict::new(py);
        for (prob, values) in p.quantiles {
            q.set_item(prob, shaped(py, values, &[r, c])?)?;
        }
        d.set_item("quantiles", q)?;
        d.set_item("samples", shaped(py, p.samples, &[p.draws, r, c])?)?;
        d.set_item("exact", p.exact)?;
        d.set_item("missing", p.missing)?;
        out.set_item(p.name, d)?;
    }
    Ok(out)
}
