//! `occam._occam.linear_fit`: scikit-learn's `BayesianRidge` and `ARDRegression` algorithms
//! (the facade's `occam::regression::scikit`) on NumPy arrays, GIL released; the fitted
//! attributes come back as a dict of floats and arrays for `occam.sklearn`.

use std::borrow::Cow;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use occam::regression::{ard_regression, bayesian_ridge, Design, SkOptions};

use crate::errors::{raise, IntoPy};

/// Fits `kind` ("ridge" or "ard") to rows `x` (n × d float64) and targets `y` (n float64).
#[pyfunction]
#[pyo3(signature = (x, y, kind, fit_intercept, max_iter, tol, alpha_1, alpha_2, lambda_1,
    lambda_2, alpha_init, lambda_init, compute_score, threshold_lambda))]
#[allow(clippy::too_many_arguments)]
pub fn linear_fit<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    kind: &str,
    fit_intercept: bool,
    max_iter: usize,
    tol: f64,
    alpha_1: f64,
    alpha_2: f64,
    lambda_1: f64,
    lambda_2: f64,
    alpha_init: Option<f64>,
    lambda_init: Option<f64>,
    compute_score: bool,
    threshold_lambda: f64,
) -> PyResult<Bound<'py, PyDict>> {
    crate::errors::guard(py, || {
        let ard = match kind {
            "ridge" => false,
            "ard" => true,
            _ => {
                return Err(raise(
                    py,
                    "UsageError",
                    format!("kind must be 'ridge' or 'ard', got {kind:?}"),
                ))
            }
        };
        let (n, d) = (x.shape()[0], x.shape()[1]);
        // Straight from the buffer when it is C-ordered (row-major), else one copy.
        let xs: Cow<'_, [f64]> = match x.as_slice() {
            Ok(s) if x.is_c_contiguous() => Cow::Borrowed(s),
            _ => Cow::Owned(x.as_array().iter().copied().collect()),
        };
        let ys: Cow<'_, [f64]> = match y.as_slice() {
            Ok(s) => Cow::Borrowed(s),
            _ => Cow::Owned(y.as_array().iter().copied().collect()),
        };
        let o = SkOptions {
            max_iter,
            tol,
            alpha_1,
            alpha_2,
            lambda_1,
            lambda_2,
            alpha_init,
            lambda_init,
            compute_score,
            threshold_lambda,
        };
        let (xr, yr): (&[f64], &[f64]) = (&xs, &ys);
        let fit = py
            .allow_threads(|| {
                let design = Design::new(xr, n, d, yr, fit_intercept)?;
                let fit = if ard {
                    ard_regression(&design, &o)
                } else {
                    bayesian_ridge(&design, &o)
                }?;
                Ok::<_, occam::Error>((fit, design.x_offset().to_vec()))
            })
            .py_err(py)?;
        let (fit, x_offset) = fit;
        let out = PyDict::new(py);
        out.set_item("coef", PyArray1::from_vec(py, fit.coef))?;
        out.set_item("intercept", fit.intercept)?;
        out.set_item("alpha", fit.alpha)?;
        out.set_item("lambda", PyArray1::from_vec(py, fit.lambda))?;
        let k = fit.sigma_dim;
        out.set_item("sigma", PyArray1::from_vec(py, fit.sigma).reshape([k, k])?)?;
        out.set_item("scores", PyArray1::from_vec(py, fit.scores))?;
        out.set_item("n_iter", fit.n_iter)?;
        out.set_item("x_offset", PyArray1::from_vec(py, x_offset))?;
        Ok(out)
    })
}
