//! `occam.compare(..., methods=..., plate=...)`: every model fitted, then each evidence
//! estimator of `occam::evidence` run on each fit (the GIL released), with the posterior model
//! probabilities per method; a plate sweep expands one model into a family. With `average=`,
//! the Bayesian model average of new rows' predictions, and the SVG of evidence against
//! complexity: the library's functions behind `occam compare --average` and `--plot`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use occam::evidence::{
    average_rows, estimate, set_probabilities, AisMoves, Evidence, EvidenceRow, Method, Options,
};

use crate::errors::{raise, IntoPy};
use crate::fitted::PyFitted;
use crate::model::{settings, PyModel};

/// Fits every model (or the plate sweep `plate = (NAME, SIZES)` of the one model) and runs
/// `methods` on each; returns `([(fitted, name, [per-method dict])], svg, average, margins)`, each dict
/// with `method` and either `kind`, `log_evidence`, `se`, `ess`, `seconds`, `note`,
/// `probability` or `not_applicable`; `svg` the plot of every method's ln p(D) against the
/// models' free parameters (`occam compare --plot`); `average` `None`, or with `average =
/// METHOD` and the new rows `predict`, `{"method", "weights", "predictions"}`
/// ([`occam::evidence::average_rows`], as `occam compare --average`, seeded by `seed`);
/// `margins` per method `None` or `{"best", "runner_up", "nats", "se", "weak"}`
/// ([`occam::evidence::Margin`]: `weak` says why the win is weak, or is `None`). The
/// caller ranks the fits' bounds: of different kinds (exact, lower bound, approximate) they
/// are refused unless `mixed_bounds`.
#[pyfunction]
#[pyo3(signature = (models, data=None, priors=None, methods=None, plate=None, samples=20000, widen=2.0, max_assignments=4194304, temperatures=1000, chains=64, ais_moves="auto".to_string(), folds=5, seed=0, restarts=1, max_iter=1000, tol=1e-6, prune=true, strict=false, mixed_bounds=false, average=None, predict=None))]
#[allow(clippy::too_many_arguments)]
pub fn compare_evidence<'py>(
    py: Python<'py>,
    models: Vec<PyRef<'py, PyModel>>,
    data: Option<&Bound<'py, PyDict>>,
    priors: Option<Vec<f64>>,
    methods: Option<Vec<String>>,
    plate: Option<(String, Vec<u64>)>,
    samples: usize,
    widen: f64,
    max_assignments: u64,
    temperatures: usize,
    chains: usize,
    ais_moves: String,
    folds: usize,
    seed: u64,
    restarts: usize,
    max_iter: usize,
    tol: f64,
    prune: bool,
    strict: bool,
    mixed_bounds: bool,
    average: Option<String>,
    predict: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyTuple>> {
    crate::errors::guard(py, || {
        let usage = |m: String| raise(py, "UsageError", m);
        let mut loaded = Vec::with_capacity(models.len());
        for m in &models {
            loaded.push(m.model_with_data(py, data)?);
        }
        if let Some((name, sizes)) = &plate {
            if loaded.len() != 1 {
                return Err(usage(format!(
                    "plate: sweeps one model, got {}",
                    loaded.len()
                )));
            }
            if sizes.is_empty() {
                return Err(usage("plate: give at least one size".into()));
            }
            let one = loaded.remove(0);
            for &k in sizes {
                loaded.push(one.with_plate(name, k).py_err(py)?);
            }
        }
        if loaded.is_empty() {
            return Err(usage("compare: give at least one model".into()));
        }
        let priors = priors.unwrap_or_default();
        if !priors.is_empty()
            && (priors.len() != loaded.len() || priors.iter().any(|p| !(p.is_finite() && *p > 0.0)))
        {
            return Err(usage(format!(
                "priors: give {} positive numbers, one per model",
                loaded.len()
            )));
        }
        let methods = methods
            .unwrap_or_else(|| vec!["vb".into()])
            .iter()
            .map(|m| Method::parse(m))
            .collect::<occam::Result<Vec<_>>>()
            .py_err(py)?;
        let opts = Options {
            samples,
            seed,
            widen,
            max_assignments,
            temperatures,
            chains,
            ais_moves: AisMoves::parse(&ais_moves).py_err(py)?,
            folds,
            ..Options::default()
        };
        opts.validate().py_err(py)?;
        let s = settings(seed, restarts, max_iter, tol, prune, strict, None, None);
        // Cross-validation refits with the comparison's own settings.
        let opts = Options {
            refit: Some(s.clone()),
            ..opts
        };
        let swept = plate.as_ref().map(|(name, _)| name.trim().to_string());
        let mut rows: Vec<(PyFitted, String, Vec<Evidence>)> = Vec::with_capacity(loaded.len());
        for model in &loaded {
            let start = std::time::Instant::now();
            // A plate sweep's warm start from the previous size is one more candidate start of
            // the fit, as in `occam compare --plate`; the fit runs with the GIL released.
            let previous = rows.last().map(|r| r.0.inner());
            let (f, warm) = py
                .allow_threads(|| {
                    occam::evidence::fit_swept(model, previous, swept.as_deref(), &s, &mut ())
                })
                .py_err(py)?;
            let f = PyFitted::new(f);
            let fit_seconds = start.elapsed().as_secs_f64();
            let ev: Vec<Evidence> = py.allow_threads(|| {
                methods
                    .iter()
                    .map(|&m| match estimate(f.inner(), m, &opts) {
                        Evidence::Estimate(mut e) => {
                            // The bound's cost is the fit's.
                            if m == Method::Vb {
                                e.seconds = fit_seconds;
                            }
                            if let Some(w) = &warm {
                                w.annotate(m, &mut e.note);
                            }
                            Evidence::Estimate(e)
                        }
                        e => e,
                    })
                    .collect()
            });
            rows.push((f, model.name().to_string(), ev));
        }
        // Python's compare ranks the bounds whatever the methods.
        let fits: Vec<&occam::Fitted> = rows.iter().map(|r| r.0.inner()).collect();
        occam::check_kinds(&fits, mixed_bounds).py_err(py)?;
        let mut names = Vec::with_capacity(rows.len());
        let mut rows: Vec<EvidenceRow> = rows
            .into_iter()
            .map(|(f, name, evidence)| {
                names.push(name);
                EvidenceRow {
                    fitted: f.into_inner(),
                    probability: vec![None; evidence.len()],
                    evidence,
                }
            })
            .collect();
        // The posterior model probabilities of `occam compare --method` (none for a held-out
        // score), the plot of `--plot` and the average of `--average`.
        set_probabilities(&mut rows, &priors);
        let svg = occam_report::evidence::evidence_plot(&rows, &methods);
        // Per method, how clearly the best model beats the runner-up (`occam compare`'s
        // "best by" lines).
        let margins = PyDict::new(py);
        for (m, g) in methods
            .iter()
            .zip(occam_report::evidence::row_margins(&rows, &methods))
        {
            let Some(g) = g else {
                margins.set_item(m.name(), py.None())?;
                continue;
            };
            let d = PyDict::new(py);
            d.set_item("best", &names[g.best])?;
            d.set_item("runner_up", &names[g.runner_up])?;
            d.set_item("nats", g.nats)?;
            d.set_item("se", g.se)?;
            d.set_item("weak", g.weak())?;
            margins.set_item(m.name(), d)?;
        }
        let averaged = match average {
            None => None,
            Some(by) => {
                let by = Method::parse(&by).py_err(py)?;
                let new = crate::arrays::dataset(py, predict)?;
                if new.tables.is_empty() {
                    return Err(usage(
                        "average: give the new rows with predict={NAME: rows}".into(),
                    ));
                }
                let popts = occam::predict::PredictOptions {
                    seed,
                    ..Default::default()
                };
                let avg = py
                    .allow_threads(|| average_rows(&rows, &methods, by, &new, &popts))
                    .py_err(py)?;
                let d = PyDict::new(py);
                d.set_item("method", avg.method.name())?;
                d.set_item("weights", avg.weights)?;
                d.set_item(
                    "predictions",
                    crate::arrays::predictions(py, avg.predictions)?,
                )?;
                Some(d)
            }
        };
        let out = PyList::empty(py);
        for (r, name) in rows.into_iter().zip(names) {
            let list = PyList::empty(py);
            let (f, ev) = (r.fitted, r.evidence);
            for (j, e) in ev.iter().enumerate() {
                let d = PyDict::new(py);
                d.set_item("method", e.method().name())?;
                match e {
                    Evidence::Estimate(e) => {
                        d.set_item("kind", e.kind.label())?;
                        d.set_item("log_evidence", e.log_evidence)?;
                        d.set_item("se", e.se)?;
                        d.set_item("ess", e.ess)?;
                        d.set_item("seconds", e.seconds)?;
                        d.set_item("note", &e.note)?;
                        d.set_item("probability", r.probability[j])?;
                    }
                    Evidence::NotApplicable { reason, .. } => {
                        d.set_item("not_applicable", reason)?;
                    }
                }
                list.append(d)?;
            }
            out.append((Py::new(py, PyFitted::new(f))?, name, list))?;
        }
        PyTuple::new(
            py,
            [
                out.into_any(),
                svg.into_pyobject(py)?.into_any(),
                averaged.into_pyobject(py)?.into_any(),
                margins.into_any(),
            ],
        )
    })
}
