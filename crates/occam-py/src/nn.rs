//! `occam._occam.Network`: Lawrence's Bayesian MLPs from Python — fit to NumPy arrays with a JSON
//! spec (the facade's `occam::nn::fit_arrays`, GIL released), predict, save and load as JSON.

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

use occam::nn::net::TrainedNet;

use crate::errors::{raise, IntoPy};

/// A fitted network.
#[pyclass(name = "Network", module = "occam._occam", frozen)]
pub struct PyNetwork {
    inner: TrainedNet,
}

fn matrix(x: &PyReadonlyArray2<'_, f64>) -> (Vec<f64>, usize) {
    let cols = x.shape()[1];
    let values = match x.as_slice() {
        Ok(s) if x.is_c_contiguous() => s.to_vec(),
        _ => x.as_array().iter().copied().collect(),
    };
    (values, cols)
}

/// Fits a network: `x` (n × d float64), `t` (n float64), `spec` JSON text.
#[pyfunction]
pub fn nn_fit(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    t: PyReadonlyArray1<'_, f64>,
    spec: &str,
) -> PyResult<PyNetwork> {
    crate::errors::guard(py, || {
        let spec = occam::nn::spec_from_json(spec).py_err(py)?;
        let (values, cols) = matrix(&x);
        let targets = t.as_array().to_vec();
        if targets.len() != x.shape()[0] {
            return Err(raise(
                py,
                "DataShapeError",
                format!(
                    "x has {} rows but t has {} values",
                    x.shape()[0],
                    targets.len()
                ),
            ));
        }
        let fitted = py.allow_threads(|| occam::nn::fit_arrays(values, cols, targets, &spec));
        Ok(PyNetwork {
            inner: fitted.py_err(py)?,
        })
    })
}

type Arr<'py> = Bound<'py, PyArray1<f64>>;

#[pymethods]
impl PyNetwork {
    /// (mean, var_function or None, var_total or None) for the rows of `x`.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<(Arr<'py>, Option<Arr<'py>>, Option<Arr<'py>>)> {
        crate::errors::guard(py, || {
            let (values, cols) = matrix(&x);
            let p = occam::nn::predict_arrays(&self.inner, &values, cols).py_err(py)?;
            let arr = |v: Vec<f64>| PyArray1::from_vec(py, v);
            Ok((arr(p.mean), p.var_function.map(arr), p.var_total.map(arr)))
        })
    }

    /// The variational lower bound on ln p(D) of the standardised data (VB only).
    #[getter]
    fn bound(&self) -> Option<f64> {
        self.inner.bound
    }

    /// Training RMSE of the predictive mean, in the target's units.
    #[getter]
    fn train_rmse(&self) -> f64 {
        self.inner.train_rmse
    }

    /// Number of input columns.
    #[getter]
    fn inputs(&self) -> usize {
        self.inner.inputs
    }

    /// The spec it was fitted with, as JSON text.
    #[getter]
    fn spec(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(py, || {
            serde_json::to_string(&self.inner.spec)
                .map_err(|e| raise(py, "RunError", e.to_string()))
        })
    }

    /// The whole network as JSON text (what `occam nn fit --out` saves as `net`).
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(py, || {
            serde_json::to_string(&self.inner).map_err(|e| raise(py, "RunError", e.to_string()))
        })
    }

    /// A network from [`PyNetwork::to_json`]'s text.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<PyNetwork> {
        crate::errors::guard(py, || {
            let inner: TrainedNet = serde_json::from_str(text)
                .map_err(|e| raise(py, "DataError", format!("not a saved network: {e}")))?;
            inner
                .check_saved()
                .map_err(|e| raise(py, "DataError", format!("not a saved network: {e}")))?;
            Ok(PyNetwork { inner })
        })
    }
}
