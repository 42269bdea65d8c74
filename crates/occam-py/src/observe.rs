//! The per-sweep observer of a fit run with the GIL released: it takes the GIL back to call the
//! user's callback `callback(iteration, bound, elapsed_seconds)` after every sweep (returning
//! `False` stops the fit) and, at most every 100 ms, to check for signals so that Ctrl-C stops the
//! run and raises `KeyboardInterrupt`. A Python error inside the observer stops the run and is
//! raised once the engine has returned.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use occam::{Flow, Observer, Progress};
use pyo3::prelude::*;

/// How often the GIL is taken back only to look for signals.
pub const SIGNAL_EVERY: Duration = Duration::from_millis(100);

/// The observer; `error` holds the Python exception that stopped the run, if any.
pub struct PyObserver {
    callback: Option<PyObject>,
    last_check: Instant,
    /// The exception raised by the callback or by a signal handler.
    pub error: Option<PyErr>,
    /// Whether the callback asked to stop (returned `False`).
    pub stopped_by_callback: bool,
    /// Set by the main thread when a signal handler raised while the fit ran on another thread
    /// (where Python does not run signal handlers): the next sweep stops.
    pub interrupt: Arc<AtomicBool>,
}

impl PyObserver {
    /// An observer calling `callback` (if any).
    pub fn new(callback: Option<PyObject>) -> PyObserver {
        PyObserver {
            callback,
            last_check: Instant::now(),
            error: None,
            stopped_by_callback: false,
            interrupt: Arc::new(AtomicBool::new(false)),
        }
    }

    fn visit(&mut self, py: Python<'_>, p: &Progress) -> PyResult<Flow> {
        py.check_signals()?;
        // The other candidate starts of a mixture (`Stage::Candidate`) are not shown: the
        // callback sees the sweeps of the default start and the pruning stage, as before.
        if p.stage == occam::Stage::Candidate {
            return Ok(Flow::Continue);
        }
        if let Some(cb) = &self.callback {
            let r = cb.call1(py, (p.iteration, p.bound, p.elapsed.as_secs_f64()))?;
            // `None` (no return statement) goes on; anything falsy otherwise stops.
            if !r.is_none(py) && !r.is_truthy(py)? {
                self.stopped_by_callback = true;
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }
}

impl Observer for PyObserver {
    fn observe(&mut self, p: &Progress) -> Flow {
        if self.interrupt.load(Ordering::Relaxed) {
            return Flow::Stop;
        }
        if self.callback.is_none() && self.last_check.elapsed() < SIGNAL_EVERY {
            return Flow::Continue;
        }
        self.last_check = Instant::now();
        match Python::with_gil(|py| self.visit(py, p)) {
            Ok(flow) => flow,
            Err(e) => {
                self.error = Some(e);
                Flow::Stop
            }
        }
    }
}
