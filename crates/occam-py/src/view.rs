//! `occam._occam.View`: `occam view`'s page on a fit made from Python (`Result.view()`), served
//! on 127.0.0.1 from a thread of this process until [`PyView::stop`].

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use pyo3::prelude::*;

use crate::errors::to_py;
use crate::fitted::PyFitted;

/// A running view of one fit.
#[pyclass(name = "View", module = "occam._occam", frozen)]
pub struct PyView {
    url: String,
    /// The view and its serving thread, until [`PyView::stop`] drops them (which closes the
    /// listening socket).
    running: Mutex<Option<(Arc<occam_view::View>, JoinHandle<()>)>>,
}

#[pymethods]
impl PyView {
    /// The page's address, with its token.
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops serving and closes the port (the requests in hand are answered first); a second
    /// call does nothing.
    fn stop(&self, py: Python<'_>) {
        let running = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((view, thread)) = running {
            view.stop();
            py.allow_threads(|| {
                let _ = thread.join();
            });
        }
    }
}

/// Serves the view of `fitted` on 127.0.0.1 (`port` 0: a free one) with a fresh 128-bit token;
/// the page's editor re-fits with the default settings.
#[pyfunction]
#[pyo3(signature = (fitted, port = 0))]
pub fn view_fitted(py: Python<'_>, fitted: &PyFitted, port: u16) -> PyResult<PyView> {
    // A copy of the fit through its saved form (bit-identical, as a pickle's).
    let copy = occam::Fitted::from_saved(&fitted.inner().saved()).map_err(|e| to_py(py, &e))?;
    let session = occam_view::session::Session::from_fitted(
        copy,
        fitted.inner().outcome(),
        occam::Settings::default(),
    );
    let opts = occam_view::Options {
        port,
        ..occam_view::Options::default()
    };
    let view =
        Arc::new(occam_view::View::bind(Arc::new(session), &opts).map_err(|e| to_py(py, &e))?);
    let serving = Arc::clone(&view);
    let thread = std::thread::spawn(move || serving.serve());
    Ok(PyView {
        url: view.url(),
        running: Mutex::new(Some((view, thread))),
    })
}
