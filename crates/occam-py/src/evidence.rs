//! `occam.compare(..., methods=..., plate=...)`: every model fitted, then each evidence
//! estimator of `occam::evidence` run on each fit (the GIL released), with the posterior model
//! probabilities per method; a plate sweep expands one model into a family.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use occam::evidence::{estimate, Evidence, Method, Options};

use crate::errors::{raise, IntoPy};
use crate::model::{fit_released, settings, PyModel};

/// Fits every model (or the plate sweep `plate = (NAME, SIZES)` of the one model) and runs
/// `methods` on each; returns `[(fitted, name, [per-method dict])]`, each dict with `method`
/// and either `kind`, `log_evidence`, `se`, `ess`, `seconds`, `note`, `probability` or
/// `not_applicable`. The caller ranks the fits' bounds: of different kinds (exact, lower bound,
/// approximate) they are refused unless `mixed_bounds`.
#[pyfunction]
#[pyo3(signature = (models, data=None, priors=None, methods=None, plate=None, samples=20000, widen=2.0, max_assignments=4194304, temperatures=1000, chains=64, folds=5, seed=0, restarts=1, max_iter=1000, tol=1e-6, prune=true, strict=false, mixed_bounds=false))]
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
    folds: usize,
    seed: u64,
    restarts: usize,
    max_iter: usize,
    tol: f64,
    prune: bool,
    strict: bool,
    mixed_bounds: bool,
) -> PyResult<Bound<'py, PyList>> {
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
        let mut rows = Vec::with_capacity(loaded.len());
        for model in &loaded {
            let start = std::time::Instant::now();
            let f = fit_released(py, model, &s, None, None)?;
            let fit_seconds = start.elapsed().as_secs_f64();
            let ev: Vec<Evidence> = py.allow_threads(|| {
                methods
                    .iter()
                    .map(|&m| match estimate(f.inner(), m, &opts) {
                        // The bound's cost is the fit's.
                        Evidence::Estimate(mut e) if m == Method::Vb => {
                            e.seconds = fit_seconds;
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
        let probs: Vec<Option<Vec<f64>>> = (0..methods.len())
            .map(|j| {
                let v: Option<Vec<f64>> = rows.iter().map(|r| r.2[j].value()).collect();
                v.map(|v| occam::probabilities(&v, &priors))
            })
            .collect();
        let out = PyList::empty(py);
        for (i, (f, name, ev)) in rows.into_iter().enumerate() {
            let list = PyList::empty(py);
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
                        d.set_item("probability", probs[j].as_ref().map(|p| p[i]))?;
                    }
                    Evidence::NotApplicable { reason, .. } => {
                        d.set_item("not_applicable", reason)?;
                    }
                }
                list.append(d)?;
            }
            out.append((Py::new(py, f)?, name, list))?;
        }
        Ok(out)
    })
}
