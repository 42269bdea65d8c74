//! One view's state: the model file and its data, the text in the editor, the current fit (run
//! on a thread of its own) and its trace.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use occam::{DataSet, Error, Fitted, Model, Outcome, Result, Settings};
use occam_report::FittedReport;
use serde_json::json;

use crate::trace::{Trace, TraceObserver};
use crate::Setup;

/// The view's model, data and fits.
pub struct Session {
    /// The model file (diagnostics name it; `NAME.csv` defaults come from its folder).
    pub path: PathBuf,
    settings: Settings,
    /// Folders the page may name data files in: the model's, and each start-up data file's.
    roots: Vec<PathBuf>,
    /// What the page's relative data paths are relative to: the working directory the view
    /// started in, as for the command line's `--data` (so the page can send back the
    /// arguments the view started with).
    base: PathBuf,
    state: Mutex<State>,
}

/// What changes as the page edits and re-fits.
pub struct State {
    /// The model text of the last check or fit.
    pub source: String,
    /// `--data` arguments of the current model.
    pub data_args: Vec<String>,
    /// The data read from them.
    pub data: DataSet,
    /// The model of the current fit (`None` if its text does not check).
    pub model: Option<Model>,
    /// The last finished fit of the current model.
    pub fitted: Option<Fitted>,
    /// The error of the current model or fit, as the check endpoint gives it.
    pub error: Option<serde_json::Value>,
    /// Counts the fits started; a fit that ends after a newer one started is dropped.
    pub generation: u64,
    /// The trace of the current fit.
    pub trace: Arc<Trace>,
}

impl Session {
    /// A session of `setup`: reads the model file and its data (a missing file or bad data is an
    /// error; a model that does not check is not, so the editor can fix it).
    pub fn new(setup: Setup) -> Result<Session> {
        if !setup.model.is_file() {
            return Err(Error::io(&setup.model, "no such model file"));
        }
        setup.settings.validate()?;
        let source = occam::model::read_text(&setup.model)?;
        let data = DataSet::from_args(&setup.data)?;
        let mut roots = vec![folder_of(&setup.model)?];
        for a in &setup.data {
            let (_, file, _) = occam::data::parse_data_arg(a)?;
            roots.push(folder_of(&file)?);
        }
        roots.sort();
        roots.dedup();
        Ok(Session {
            path: setup.model,
            settings: setup.settings,
            roots,
            base: std::env::current_dir().map_err(|e| Error::io(Path::new("."), e))?,
            state: Mutex::new(State {
                source,
                data_args: setup.data,
                data,
                model: None,
                fitted: None,
                error: None,
                generation: 0,
                trace: Arc::new(Trace::new()),
            }),
        })
    }

    /// A session showing a fit made elsewhere (Python's `Result.view()`): its model text and
    /// data, its posteriors, and its bound trace as the trace of one finished run. The page may
    /// name data files only in the model file's folder (none for a model from text); its editor
    /// re-fits with `settings`. `outcome` is the run's own (a fit read back from its saved form
    /// keeps its bound and posteriors but not its bound trace).
    pub fn from_fitted(fitted: Fitted, outcome: &Outcome, settings: Settings) -> Session {
        let loaded = fitted.loaded();
        let roots = folder_of(&loaded.path).into_iter().collect();
        let trace = Trace::new();
        let points: Vec<serde_json::Value> = outcome
            .bound_trace
            .iter()
            .enumerate()
            .map(|(i, b)| json!([0, "sweeps", i + 1, b]))
            .collect();
        trace.push("points", &serde_json::Value::Array(points));
        for w in &outcome.warnings {
            trace.push("warning", &json!({"message": w.to_string()}));
        }
        trace.end("done", &done_json(&fitted, outcome));
        Session {
            path: loaded.path.clone(),
            settings,
            roots,
            base: std::env::current_dir().unwrap_or_default(),
            state: Mutex::new(State {
                source: loaded.source.clone(),
                data_args: Vec::new(),
                data: loaded.data.clone(),
                model: Some(fitted.model()),
                fitted: Some(fitted),
                error: None,
                generation: 1,
                trace: Arc::new(trace),
            }),
        }
    }

    /// The state, locked.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `source` as the model file's text with the current data.
    pub fn model_of(&self, source: &str, data: &DataSet) -> Result<Model> {
        Model::from_edited(&self.path, source, data)
    }

    /// The data of `args` (relative paths against the working directory the view started in,
    /// as the command line's `--data`), refusing a file outside the model's folder and the
    /// start-up data's folders.
    pub fn data_of(&self, args: &[String]) -> Result<DataSet> {
        let mut resolved = Vec::new();
        for a in args {
            let (name, file, _) = occam::data::parse_data_arg(a)?;
            let full = self.resolve_path(&file)?;
            // Keep the selection after the file name (FILE:COLUMNS@ROWS).
            let rest = &a[a.find('=').map_or(0, |i| i + 1)..];
            let tail = rest
                .strip_prefix(file.to_string_lossy().as_ref())
                .unwrap_or("");
            resolved.push(format!("{name}={}{tail}", full.display()));
        }
        DataSet::from_args(&resolved)
    }

    /// `file` (relative: against the working directory the view started in) if it lies in
    /// the folders the page may read; an error that starts with "refused" otherwise.
    pub fn resolve(&self, file: &str) -> Result<PathBuf> {
        self.resolve_path(Path::new(file))
    }

    fn resolve_path(&self, file: &Path) -> Result<PathBuf> {
        let full = if file.is_absolute() {
            file.to_path_buf()
        } else {
            self.base.join(file)
        };
        let canon = full.canonicalize().map_err(|e| Error::io(&full, e))?;
        if !self.roots.iter().any(|r| canon.starts_with(r)) {
            return Err(Error::Io {
                path: file.to_path_buf(),
                message: "refused: outside the model's folder and the folders of its data".into(),
            });
        }
        // The path checked, not `full`: a symlink swapped after the check must not escape.
        Ok(canon)
    }

    /// The settings of every fit the view runs.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Whether `path` lies inside the folders the page may read.
    pub fn allowed(&self, path: &Path) -> bool {
        path.canonicalize()
            .is_ok_and(|c| self.roots.iter().any(|r| c.starts_with(r)))
    }

    /// Starts fitting `source` with `data` (given as `data_args`) on a thread of its own,
    /// cancelling a fit still running; returns the new fit's generation, or the model's error.
    pub fn refit(
        self: &Arc<Self>,
        source: String,
        data_args: Vec<String>,
        data: DataSet,
    ) -> std::result::Result<u64, Error> {
        let model = self.model_of(&source, &data);
        let mut st = self.state();
        st.trace.cancel();
        st.generation += 1;
        st.source = source;
        st.data_args = data_args;
        st.data = data;
        st.fitted = None;
        st.trace = Arc::new(Trace::new());
        let generation = st.generation;
        let model = match model {
            Ok(m) => m,
            Err(e) => {
                let diagnostics = occam_report::check::diagnostics_json(&e);
                st.trace.end("error", &json!({"diagnostics": diagnostics}));
                st.error = Some(diagnostics);
                st.model = None;
                return Err(e);
            }
        };
        st.error = None;
        st.model = Some(model.clone());
        let trace = st.trace.clone();
        drop(st);
        let me = Arc::clone(self);
        std::thread::spawn(move || me.fit(model, trace, generation));
        Ok(generation)
    }

    /// Runs one fit and publishes it (unless a newer fit started meanwhile).
    fn fit(&self, model: Model, trace: Arc<Trace>, generation: u64) {
        let result = {
            let mut observer = TraceObserver::new(&trace);
            model.fit_observed(&self.settings, &mut observer)
        };
        let mut st = self.state();
        if st.generation != generation {
            return;
        }
        match result {
            Ok(fitted) => {
                let o = fitted.outcome();
                for w in &o.warnings {
                    trace.push("warning", &json!({"message": w.to_string()}));
                }
                let done = done_json(&fitted, fitted.outcome());
                st.fitted = Some(fitted);
                trace.end("done", &done);
            }
            Err(e) => {
                let diagnostics = occam_report::check::diagnostics_json(&e);
                st.error = Some(diagnostics.clone());
                trace.end("error", &json!({"diagnostics": diagnostics}));
            }
        }
    }
}

/// The canonical folder holding `file`.
fn folder_of(file: &Path) -> Result<PathBuf> {
    let canon = file.canonicalize().map_err(|e| Error::io(file, e))?;
    Ok(canon.parent().map_or(canon.clone(), Path::to_path_buf))
}

/// The `done` event of a finished fit: its bound, iterations, components and summary.
fn done_json(fitted: &Fitted, o: &Outcome) -> serde_json::Value {
    json!({
        "bound": o.bound,
        "iterations": o.iterations,
        "converged": o.converged,
        "best_restart": o.best_restart,
        "prune_start": o.prune_start,
        "components": o.components.iter().map(|c| json!({
            "variable": c.variable, "in_use": c.in_use, "total": c.total,
        })).collect::<Vec<_>>(),
        "summary": fitted.summary(),
    })
}
