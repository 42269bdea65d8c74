//! Python bindings of Occam: the extension module `occam._occam` behind the pure-Python package
//! `occam` (`python/occam/`). A model is a file or source text; fitting takes NumPy arrays
//! (float64, NaN marks a missing value), releases the GIL while the engine runs and checks for
//! Ctrl-C from the per-sweep observer; posteriors come back as NumPy arrays shaped by the
//! variable's plates. Every library error becomes an exception of `occam`'s hierarchy
//! (`python/occam/_errors.py`) carrying the message the command line prints.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod arrays;
mod data;
mod errors;
mod evidence;
mod fitted;
mod latent;
mod model;
mod nn;
mod observe;
mod regression;
mod shard;
mod view;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _occam(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::PyModel>()?;
    m.add_class::<fitted::PyFitted>()?;
    m.add_class::<shard::PyShard>()?;
    m.add_class::<shard::PyEpochOrder>()?;
    m.add_function(wrap_pyfunction!(shard::check_decrease, m)?)?;
    m.add_class::<view::PyView>()?;
    m.add_function(wrap_pyfunction!(view::view_fitted, m)?)?;
    m.add_function(wrap_pyfunction!(model::compare, m)?)?;
    m.add_function(wrap_pyfunction!(evidence::compare_evidence, m)?)?;
    m.add_function(wrap_pyfunction!(fitted::probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(data::read_data, m)?)?;
    m.add_function(wrap_pyfunction!(data::select_rows, m)?)?;
    m.add_function(wrap_pyfunction!(data::lag_windows, m)?)?;
    m.add_class::<nn::PyNetwork>()?;
    m.add_function(wrap_pyfunction!(nn::nn_fit, m)?)?;
    m.add_class::<latent::PyMbpca>()?;
    m.add_function(wrap_pyfunction!(latent::mbpca_fit, m)?)?;
    m.add_function(wrap_pyfunction!(latent::digits_study, m)?)?;
    m.add_function(wrap_pyfunction!(regression::linear_fit, m)?)?;
    Ok(())
}
