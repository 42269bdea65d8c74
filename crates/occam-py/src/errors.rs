//! Library errors → Python exceptions of the package's hierarchy (`occam._errors`), whose message
//! is the text the command line prints ([`occam::Error::render_plain`], without the trailing
//! newline): `file:line:column` for the model, `file:row:column` for data.

use pyo3::prelude::*;

/// The Python exception class `name` from `occam._errors`, raised with `message`.
pub fn raise(py: Python<'_>, class: &str, message: String) -> PyErr {
    let made = py
        .import("occam._errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((message.clone(),)));
    match made {
        Ok(e) => PyErr::from_value(e),
        // The package is not importable (the extension used on its own): a plain RuntimeError.
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(message),
    }
}

/// The exception class for a library error.
fn class_of(e: &occam::Error) -> &'static str {
    match e {
        occam::Error::Usage(_) => "UsageError",
        occam::Error::UnknownName(_) => "UnknownNameError",
        occam::Error::Io { .. } => "FileError",
        occam::Error::Model(_) => "ModelError",
        occam::Error::Data { .. } | occam::Error::DataFile { .. } | occam::Error::Input(_) => {
            "DataError"
        }
        occam::Error::Run(_) => "RunError",
        occam::Error::Interrupted(_) => "Interrupted",
    }
}

/// Converts a library error.
pub fn to_py(py: Python<'_>, e: &occam::Error) -> PyErr {
    let text = e.render_plain();
    raise(py, class_of(e), text.trim_end().to_string())
}

/// `Result` → `PyResult`.
pub trait IntoPy<T> {
    /// Converts the error, if any.
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for occam::Result<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}

/// Runs the body of an entry point, turning a Rust panic into `occam.InternalError` (an
/// `OccamError`) instead of pyo3's `PanicException`, which derives from `BaseException` and slips
/// past `except Exception`. Every `#[pyfunction]` and `#[pymethods]` entry point that does work
/// runs its body through this.
pub fn guard<T>(py: Python<'_>, body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(raise(
                py,
                "InternalError",
                format!("internal error: {what}; this is a bug in occam, please report it"),
            ))
        }
    }
}
