//! `occam._occam.Model`: a model file or source text, loaded against the data given to each call
//! (`fit`, `graph_svg`, `check`, `sample`), and `compare` over several models.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use occam::{DataSet, Settings};
use occam_report::ModelReport;

use crate::arrays::{dataset, shaped};
use crate::errors::{raise, to_py, IntoPy};
use crate::fitted::PyFitted;
use crate::observe::{PyObserver, SIGNAL_EVERY};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Where the model text comes from.
#[derive(Clone)]
enum Source {
    File(PathBuf),
    Text { name: String, text: String },
}

/// A model file or model text (the Python package wraps it as `occam.Model`).
#[pyclass(name = "Model", module = "occam._occam", frozen)]
pub struct PyModel {
    source: Source,
}

impl PyModel {
    /// Loads the model with `data` (and, for a file, `NAME.csv` next to it).
    fn load(&self, data: &DataSet) -> occam::Result<occam::Model> {
        match &self.source {
            Source::File(p) => occam::Model::from_file(p, data),
            Source::Text { name, text } => occam::Model::from_source(name, text, data),
        }
    }

    /// Loads the model for drawing or checking names: with its data, or with data plates of
    /// size 1 when data are missing.
    fn load_for_drawing(&self, data: &DataSet) -> occam::Result<occam::model::Loaded> {
        match &self.source {
            Source::File(p) => occam_report::graph::load_for_drawing(p, data),
            Source::Text { name, text } => {
                match occam::model::load_source(
                    Path::new(name),
                    name.clone(),
                    text.clone(),
                    None,
                    data,
                ) {
                    Err(occam::Error::Model(_)) => occam::model::load_source_without_data(
                        Path::new(name),
                        name.clone(),
                        text.clone(),
                        data,
                        &BTreeMap::new(),
                        Some(1),
                    ),
                    other => other,
                }
            }
        }
    }

    pub(crate) fn model_with_data(
        &self,
        py: Python<'_>,
        data: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<occam::Model> {
        let set = dataset(py, data)?;
        // The library rejects data names the model does not have (UnknownNameError here).
        self.load(&set).py_err(py)
    }
}

/// Resolves a model's names without its data (data plates of size 1, no `NAME.csv` read), so that
/// `Model(...)` and `Model.from_string(...)` raise `ModelError` for errors in the text itself (an
/// unknown distribution or name) at once, as the guide says. Errors that need the data are left
/// to the calls that have it.
fn names_resolve(py: Python<'_>, name: String, text: String) -> PyResult<()> {
    let path = PathBuf::from(&name);
    match occam::model::load_source_without_data(
        &path,
        name,
        text,
        &DataSet::default(),
        &BTreeMap::new(),
        Some(1),
    ) {
        Err(e @ occam::Error::Model(_)) => Err(to_py(py, &e)),
        _ => Ok(()),
    }
}

/// The largest `threads` accepted (as the CLI's `--threads`).
const MAX_THREADS: usize = 1024;

/// The pool of `n` threads, built on first use and kept for the process: building one (spawning
/// its threads) for every fit cost a measurable share of a small fit's time (the estimator fits
/// small problems on one thread). Fits may share a pool: results do not depend on scheduling.
fn pool(n: usize) -> Result<Arc<rayon::ThreadPool>, rayon::ThreadPoolBuildError> {
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, p)) = pools.iter().find(|(m, _)| *m == n) {
        return Ok(p.clone());
    }
    let p = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(n).build()?);
    pools.push((n, p.clone()));
    Ok(p)
}

/// Runs one fit with the GIL released; a Python error raised in the observer wins. `threads`:
/// `None` runs on the global pool (all cores), `Some(n)` on a pool of n threads ([`pool`]),
/// as a job of that pool while this (main) thread waits and looks for Ctrl-C, which Python
/// delivers to the main thread only. Results do not depend on the number of threads.
pub fn fit_released(
    py: Python<'_>,
    model: &occam::Model,
    settings: &Settings,
    callback: Option<PyObject>,
    threads: Option<usize>,
) -> PyResult<PyFitted> {
    let mut obs = PyObserver::new(callback);
    let result = match threads {
        None => py.allow_threads(|| model.fit_observed_keeping_partial(settings, &mut obs)),
        Some(n) if (1..=MAX_THREADS).contains(&n) => {
            let pool = pool(n)
                .map_err(|e| raise(py, "UsageError", format!("threads: no thread pool ({e})")))?;
            let interrupt = obs.interrupt.clone();
            let (result, signal) = py.allow_threads(|| {
                // The fit runs as a job of the pool (on one of its threads, so its parallel
                // loops use that pool) while this thread waits.
                pool.in_place_scope(|s| {
                    let (done, wait) = std::sync::mpsc::channel();
                    let obs = &mut obs;
                    s.spawn(move |_| {
                        let _ = done.send(model.fit_observed_keeping_partial(settings, obs));
                    });
                    let mut signal = None;
                    loop {
                        match wait.recv_timeout(SIGNAL_EVERY) {
                            Ok(r) => break (Some(r), signal),
                            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                                if signal.is_none() {
                                    signal = Python::with_gil(|py| py.check_signals().err());
                                    if signal.is_some() {
                                        interrupt.store(true, Ordering::Relaxed);
                                    }
                                }
                            }
                            // The fit's thread ended without a result: it panicked.
                            Err(_) => break (None, signal),
                        }
                    }
                })
            });
            if let Some(e) = signal {
                return Err(e);
            }
            result.ok_or_else(|| raise(py, "RunError", "the fit's thread panicked".into()))?
        }
        Some(n) => {
            return Err(raise(
                py,
                "UsageError",
                format!("threads must be between 1 and {MAX_THREADS}, got {n}"),
            ))
        }
    };
    if let Some(e) = obs.error.take() {
        return Err(e);
    }
    match result {
        // A fit the callback stopped: `Interrupted`, carrying the state it stopped in as
        // `.result` (Python wraps it in a `Result`), so the work is not lost.
        Ok(f) if f.outcome().stop.reason == occam::StopReason::Interrupted => {
            let e = raise(
                py,
                "Interrupted",
                format!(
                    "{}: the callback stopped the fit after {} sweeps (bound {}); the state it \
                     stopped in is the exception's `result`",
                    model.name(),
                    f.outcome().iterations,
                    f.outcome().bound
                ),
            );
            e.value(py)
                .setattr("result", Py::new(py, PyFitted::new(f))?)?;
            Err(e)
        }
        Ok(f) => Ok(PyFitted::new(f)),
        Err(occam::Error::Interrupted(_)) if obs.stopped_by_callback => Err(raise(
            py,
            "Interrupted",
            format!("{}: the callback stopped the fit", model.name()),
        )),
        Err(e) => Err(to_py(py, &e)),
    }
}

/// The fit settings from keyword arguments.
#[allow(clippy::too_many_arguments)]
pub(crate) fn settings(
    seed: u64,
    restarts: usize,
    max_iter: usize,
    tol: f64,
    prune: bool,
    strict: bool,
    order: Option<Vec<String>>,
    rotate: Option<bool>,
) -> Settings {
    Settings {
        seed,
        restarts,
        tol,
        max_iter,
        order,
        prune,
        strict,
        rotate,
        settle: false,
        candidate_starts: true,
        prune_screen_from: occam::driver::PRUNE_SCREEN_FROM,
        fixed_sweeps: false,
    }
}

#[pymethods]
impl PyModel {
    /// Reads a model file; a missing file or a syntax error raises at once, errors that need
    /// the data (plates, shapes) when the model is fitted, sampled or drawn.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<PyModel> {
        crate::errors::guard(py, || {
            if !path.is_file() {
                return Err(to_py(py, &occam::Error::io(&path, "no such model file")));
            }
            let (name, text, _) = occam::model::read_source(&path).py_err(py)?;
            names_resolve(py, name, text)?;
            Ok(PyModel {
                source: Source::File(path),
            })
        })
    }

    /// A model from source text (a syntax error raises at once); `name` is what messages print
    /// as the file name.
    #[staticmethod]
    fn from_source(py: Python<'_>, source: String, name: String) -> PyResult<PyModel> {
        crate::errors::guard(py, || {
            // One parse: a syntax error is the first model error that resolving the names
            // without data meets.
            names_resolve(py, name.clone(), source.clone())?;
            Ok(PyModel {
                source: Source::Text { name, text: source },
            })
        })
    }

    /// The name messages print (the path as given, or the name of a text model).
    #[getter]
    fn name(&self) -> String {
        match &self.source {
            Source::File(p) => p.display().to_string(),
            Source::Text { name, .. } => name.clone(),
        }
    }

    /// What a pickle keeps: `(path, name, text)`, the path `None` for a text model. A file
    /// model's text is read now (it is read again at every fit), so the pickle holds the model
    /// as it is when pickled.
    fn pickle_state(&self, py: Python<'_>) -> PyResult<(Option<String>, String, String)> {
        crate::errors::guard(py, || match &self.source {
            Source::File(p) => {
                let (name, text, _) = occam::model::read_source(p).py_err(py)?;
                Ok((Some(p.display().to_string()), name, text))
            }
            Source::Text { name, text } => Ok((None, name.clone(), text.clone())),
        })
    }

    /// Fits the model to `data` (`{name: float64 array}`, NaN = missing); `order` is the update
    /// order by node name (default: parents before children); `rotate` rotates the factors of
    /// PCA-type products and the state spaces of linear dynamical systems after every sweep
    /// (`occam::rotation`; `None`, the default: wherever the model has them, `True`:
    /// required, `False`: never); `threads` the number of threads (default: the global pool, all
    /// cores); `settle` settles the first sweep (`occam::Settings::settle`).
    #[pyo3(signature = (data=None, seed=0, restarts=1, max_iter=1000, tol=1e-6, prune=true, strict=false, callback=None, order=None, rotate=None, threads=None, settle=false, candidate_starts=true))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        &self,
        py: Python<'_>,
        data: Option<&Bound<'_, PyDict>>,
        seed: u64,
        restarts: usize,
        max_iter: usize,
        tol: f64,
        prune: bool,
        strict: bool,
        callback: Option<PyObject>,
        order: Option<Vec<String>>,
        rotate: Option<bool>,
        threads: Option<usize>,
        settle: bool,
        candidate_starts: bool,
    ) -> PyResult<PyFitted> {
        crate::errors::guard(py, || {
            let model = self.model_with_data(py, data)?;
            let s = Settings {
                settle,
                candidate_starts,
                ..settings(seed, restarts, max_iter, tol, prune, strict, order, rotate)
            };
            fit_released(py, &model, &s, callback, threads)
        })
    }

    /// The Bayesian network as SVG (data plates unsized when their data are not given).
    #[pyo3(signature = (data=None))]
    fn graph_svg(&self, py: Python<'_>, data: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
        crate::errors::guard(py, || {
            let set = dataset(py, data)?;
            let l = self.load_for_drawing(&set).py_err(py)?;
            occam_report::graph::check_drawable(&l.model).py_err(py)?;
            Ok(occam_report::graph::svg(
                &l.model,
                &occam_report::graph::plate_labels(&l),
            ))
        })
    }

    /// The Bayesian network as Graphviz DOT text.
    #[pyo3(signature = (data=None))]
    fn graph_dot(&self, py: Python<'_>, data: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
        crate::errors::guard(py, || {
            let set = dataset(py, data)?;
            let l = self.load_for_drawing(&set).py_err(py)?;
            Ok(occam_report::graph::dot(
                &l.model,
                &occam_report::graph::plate_labels(&l),
            ))
        })
    }

    /// The `occam check` report (plates, variables, conjugacy of every parent slot).
    #[pyo3(signature = (data=None))]
    fn check(&self, py: Python<'_>, data: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
        crate::errors::guard(py, || self.model_with_data(py, data)?.check().py_err(py))
    }

    /// Ancestral sampling: `{observed name: array}` with rows along the first plate (one column
    /// gives a vector). Data plates take their sizes from `plates`.
    #[pyo3(signature = (plates=None, seed=0, data=None))]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        plates: Option<BTreeMap<String, u64>>,
        seed: u64,
        data: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard(py, || {
            let set = dataset(py, data)?;
            let sizes = plates.unwrap_or_default();
            if let Some((n, _)) = sizes.iter().find(|(_, &s)| s == 0) {
                return Err(raise(
                    py,
                    "UsageError",
                    format!("plate `{n}`: a plate size must be a positive integer"),
                ));
            }
            let loaded = match &self.source {
                Source::File(p) => occam::model::load_without_data(p, &set, &sizes, None),
                Source::Text { name, text } => occam::model::load_source_without_data(
                    Path::new(name),
                    name.clone(),
                    text.clone(),
                    &set,
                    &sizes,
                    None,
                ),
            }
            .py_err(py)?;
            let draws = py
                .allow_threads(|| occam::sample::draw(&loaded, seed))
                .py_err(py)?;
            let out = PyDict::new(py);
            for d in draws {
                let shape: Vec<usize> = if d.cols == 1 {
                    vec![d.rows]
                } else {
                    vec![d.rows, d.cols]
                };
                out.set_item(&d.name, shaped(py, d.values, &shape)?)?;
            }
            Ok(out)
        })
    }
}

/// Fits every model to the same data with the same settings; returns
/// `[(fitted, difference to the best bound, posterior probability)]`. Bounds of different
/// kinds (exact, lower bound, approximate) are refused unless `mixed_bounds`.
#[pyfunction]
#[pyo3(signature = (models, data=None, priors=None, seed=0, restarts=1, max_iter=1000, tol=1e-6, prune=true, strict=false, mixed_bounds=false))]
#[allow(clippy::too_many_arguments)]
pub fn compare<'py>(
    py: Python<'py>,
    models: Vec<PyRef<'py, PyModel>>,
    data: Option<&Bound<'py, PyDict>>,
    priors: Option<Vec<f64>>,
    seed: u64,
    restarts: usize,
    max_iter: usize,
    tol: f64,
    prune: bool,
    strict: bool,
    mixed_bounds: bool,
) -> PyResult<Bound<'py, PyList>> {
    crate::errors::guard(py, || {
        let priors = priors.unwrap_or_default();
        if models.is_empty() {
            return Err(raise(
                py,
                "UsageError",
                "compare: give at least one model".into(),
            ));
        }
        if !priors.is_empty()
            && (priors.len() != models.len() || priors.iter().any(|p| !(p.is_finite() && *p > 0.0)))
        {
            return Err(raise(
                py,
                "UsageError",
                format!(
                    "priors: give {} positive numbers, one per model",
                    models.len()
                ),
            ));
        }
        let s = settings(seed, restarts, max_iter, tol, prune, strict, None, None);
        let mut fitted = Vec::with_capacity(models.len());
        for m in &models {
            let model = m.model_with_data(py, data)?;
            fitted.push(fit_released(py, &model, &s, None, None)?);
        }
        let fits: Vec<&occam::Fitted> = fitted.iter().map(PyFitted::inner).collect();
        occam::check_kinds(&fits, mixed_bounds).py_err(py)?;
        let bounds: Vec<f64> = fitted.iter().map(PyFitted::bound_value).collect();
        let probs = occam::probabilities(&bounds, &priors);
        let best = bounds.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let out = PyList::empty(py);
        for ((f, b), p) in fitted.into_iter().zip(bounds).zip(probs) {
            out.append((Py::new(py, f)?, b - best, p))?;
        }
        Ok(out)
    })
}
