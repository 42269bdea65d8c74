//! `occam._occam.Fitted`: the outcome of a fit (bound, trace, restarts, warnings) and every
//! variable's posterior as NumPy arrays, computed when asked for.

use numpy::{PyArray1, PyArrayDyn, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use occam_report::FittedReport;

use crate::arrays::shaped;
use crate::errors::{raise, IntoPy};

/// A fitted model.
#[pyclass(name = "Fitted", module = "occam._occam", frozen)]
pub struct PyFitted {
    inner: occam::Fitted,
}

impl PyFitted {
    /// Wraps a library fit.
    pub fn new(inner: occam::Fitted) -> PyFitted {
        PyFitted { inner }
    }

    /// The library fit.
    pub fn inner(&self) -> &occam::Fitted {
        &self.inner
    }

    /// The library fit, unwrapped.
    pub fn into_inner(self) -> occam::Fitted {
        self.inner
    }

    /// The final bound.
    pub fn bound_value(&self) -> f64 {
        self.inner.bound()
    }
}

#[pymethods]
impl PyFitted {
    /// The final lower bound on the log evidence (nats, all constants included).
    #[getter]
    fn bound(&self) -> f64 {
        self.inner.bound()
    }

    /// Whether the tolerance was reached.
    #[getter]
    fn converged(&self) -> bool {
        self.inner.outcome().converged
    }

    /// Number of sweeps of the kept restart (pruning stage included).
    #[getter]
    fn iterations(&self) -> usize {
        self.inner.outcome().iterations
    }

    /// The bound after every sweep of the kept restart.
    #[getter]
    fn bound_trace<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.inner.outcome().bound_trace)
    }

    /// Index in `bound_trace` where the pruning stage starts, if it ran.
    #[getter]
    fn prune_start(&self) -> Option<usize> {
        self.inner.outcome().prune_start
    }

    /// Final bound of every restart.
    #[getter]
    fn restart_bounds<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.inner.outcome().restart_bounds)
    }

    /// The seed of the kept restart.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.outcome().seed
    }

    /// Warnings of the run, as text.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner
            .outcome()
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The saved fit as JSON text (format `occam-fit`, see `occam::saved`): what `save`,
    /// `load` and pickling read and write.
    fn to_json(&self) -> String {
        self.inner.saved().to_json()
    }

    /// A fit from the JSON text of a saved fit; `name` is what errors print as the file.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: String, name: String) -> PyResult<PyFitted> {
        crate::errors::guard(py, || {
            let saved = occam::saved::SavedFit::from_json(&name, &text).py_err(py)?;
            Ok(PyFitted::new(occam::Fitted::from_saved(&saved).py_err(py)?))
        })
    }

    /// The posterior predictive of every observed variable: for new rows (`data`: the new
    /// rows' covariates; `plates`: sizes of plates no new data size) or, with `missing`, for
    /// the missing entries of the fitted data. `{name: {"mean", "sd" (rows, cols),
    /// "quantiles": {p: (rows, cols)}, "samples" (draws, rows, cols), "exact", "missing"}}`.
    #[pyo3(signature = (data=None, plates=None, draws=1000, seed=0, quantiles=vec![0.025, 0.5, 0.975], missing=false))]
    #[allow(clippy::too_many_arguments)]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        data: Option<&Bound<'py, PyDict>>,
        plates: Option<std::collections::BTreeMap<String, u64>>,
        draws: usize,
        seed: u64,
        quantiles: Vec<f64>,
        missing: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard(py, || {
            let opts = occam::predict::PredictOptions {
                draws,
                seed,
                quantiles,
                ..Default::default()
            };
            let preds = if missing {
                self.inner.predict_missing(&opts).py_err(py)?
            } else {
                let new = crate::arrays::dataset(py, data)?;
                self.inner
                    .predict(&new, &plates.unwrap_or_default(), &opts)
                    .py_err(py)?
            };
            crate::arrays::predictions(py, preds)
        })
    }

    /// The filtered and `ahead`-step-ahead predictive of a chain model, of its own sequences
    /// (`data` None) or of held-out ones: `{target: {"mean", "sd" (S, T, cols), "quantiles":
    /// {p: (S, T, cols)}, "exact"}, chain: {"probabilities" (S, T, K) or "mean", "sd" (S, T,
    /// D), "lengths" (S,), "horizon" (S, T)}}`, T = the longest sequence + `ahead`, NaN (and
    /// horizon 0) past a sequence's own length + `ahead`.
    #[pyo3(signature = (data, ahead, draws=1000, seed=0, quantiles=vec![0.025, 0.5, 0.975]))]
    fn predict_ahead<'py>(
        &self,
        py: Python<'py>,
        data: Option<&Bound<'py, PyDict>>,
        ahead: usize,
        draws: usize,
        seed: u64,
        quantiles: Vec<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard(py, || {
            let opts = occam::predict::PredictOptions {
                draws,
                seed,
                quantiles,
                ..Default::default()
            };
            let new = crate::arrays::dataset(py, data)?;
            let p = self.inner.predict_ahead(&new, ahead, &opts).py_err(py)?;
            let n_seq = p.lengths.len();
            let steps = p.lengths.iter().max().map_or(0, |l| l + ahead);
            // Per sequence `(len + ahead) × width` values into (S, steps, width), NaN-padded.
            let pad = |per_seq: &[Vec<f64>], width: usize| -> Vec<f64> {
                let mut out = vec![f64::NAN; n_seq * steps * width];
                for (s, v) in per_seq.iter().enumerate() {
                    out[s * steps * width..s * steps * width + v.len()].copy_from_slice(v);
                }
                out
            };
            let out = PyDict::new(py);
            for t in &p.targets {
                let d = PyDict::new(py);
                let shape = [n_seq, steps, t.cols];
                d.set_item("mean", shaped(py, pad(&t.mean, t.cols), &shape)?)?;
                d.set_item("sd", shaped(py, pad(&t.sd, t.cols), &shape)?)?;
                let q = PyDict::new(py);
                for (prob, values) in &t.quantiles {
                    q.set_item(*prob, shaped(py, pad(values, t.cols), &shape)?)?;
                }
                d.set_item("quantiles", q)?;
                d.set_item("exact", t.exact)?;
                out.set_item(&t.name, d)?;
            }
            let k = p.states;
            let z = PyDict::new(py);
            let shape = [n_seq, steps, k];
            if p.discrete {
                z.set_item("probabilities", shaped(py, pad(&p.state, k), &shape)?)?;
            } else {
                let row = k + k * k;
                let (mut mean, mut sd) = (Vec::new(), Vec::new());
                for st in &p.state {
                    let (mut m, mut v) = (Vec::new(), Vec::new());
                    for u in st.chunks_exact(row) {
                        m.extend_from_slice(&u[..k]);
                        v.extend((0..k).map(|j| (u[k + j * k + j] - u[j] * u[j]).max(0.0).sqrt()));
                    }
                    mean.push(m);
                    sd.push(v);
                }
                z.set_item("mean", shaped(py, pad(&mean, k), &shape)?)?;
                z.set_item("sd", shaped(py, pad(&sd, k), &shape)?)?;
            }
            let lengths: Vec<f64> = p.lengths.iter().map(|&l| l as f64).collect();
            z.set_item("lengths", shaped(py, lengths, &[n_seq])?)?;
            let mut horizon = vec![0.0; n_seq * steps];
            for s in 0..n_seq {
                for t in 0..p.lengths[s] + ahead {
                    horizon[s * steps + t] = p.horizon(s, t) as f64;
                }
            }
            z.set_item("horizon", shaped(py, horizon, &[n_seq, steps])?)?;
            out.set_item(&p.chain, z)?;
            Ok(out)
        })
    }

    /// The model's variables, in model order.
    #[getter]
    fn variables(&self) -> Vec<String> {
        self.inner
            .loaded()
            .model
            .variables
            .iter()
            .map(|v| v.name.clone())
            .collect()
    }

    /// The posterior of `name`: `{"name", "distribution", "role", "plates": [(plate, size)],
    /// "params": {param: array shaped plates + event}}`.
    fn posterior<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard(py, || {
            if !self
                .inner
                .loaded()
                .model
                .variables
                .iter()
                .any(|v| v.name == name)
            {
                return Err(raise(
                    py,
                    "UnknownNameError",
                    format!(
                        "{}: no variable named `{name}` (variables: {})",
                        self.inner.loaded().file_name,
                        self.variables().join(", ")
                    ),
                ));
            }
            posterior_dict(py, self.inner.posterior(name).py_err(py)?)
        })
    }

    /// The per-step report of chain `name`: `{"name", "family", "lengths", and "marginals"
    /// (sequence plates + (T, K), NaN past a sequence's end) with "viterbi" (sequence plates +
    /// (T,), −1 past the end) for a MarkovChain, or "means" and "sds" (sequence plates + (T, D))
    /// for a GaussianMarkovChain}`.
    fn chain<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard(py, || {
            let (r, seq) = self.inner.chain(name).py_err(py)?;
            let mut shape = seq.clone();
            shape.extend([r.steps, r.states]);
            let out = PyDict::new(py);
            out.set_item("name", &r.variable)?;
            out.set_item("family", r.family)?;
            let lengths: Vec<i64> = r.lengths.iter().map(|&n| n as i64).collect();
            let mut lshape = seq.clone();
            if lshape.is_empty() {
                lshape.push(1);
            }
            out.set_item("lengths", PyArray1::from_vec(py, lengths).reshape(lshape)?)?;
            if r.is_discrete() {
                out.set_item("marginals", shaped(py, r.values.clone(), &shape)?)?;
                let mut path = vec![-1i64; r.lengths.len() * r.steps];
                for (s, p) in r.viterbi.iter().enumerate() {
                    for (t, &k) in p.iter().enumerate() {
                        path[s * r.steps + t] = k as i64;
                    }
                }
                let mut pshape = seq;
                pshape.push(r.steps);
                out.set_item("viterbi", PyArray1::from_vec(py, path).reshape(pshape)?)?;
            } else {
                out.set_item("means", shaped(py, r.values.clone(), &shape)?)?;
                out.set_item("sds", shaped(py, r.sds.clone(), &shape)?)?;
            }
            Ok(out)
        })
    }

    /// The report `occam fit --json` prints, as JSON text.
    fn report_json(&self) -> String {
        self.inner.report_json().to_string()
    }

    /// The text summary `occam fit` prints.
    fn summary(&self) -> String {
        self.inner.summary()
    }

    /// The reconstruction and projection of every PCA-type product (what `occam fit --out`
    /// writes as `reconstruction_Y.csv/.svg` and `projection_X.csv/.svg`): a list of
    /// `{"name", "columns", "values" (rows × columns), "svg" (text or None)}`.
    fn pca_outputs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        crate::errors::guard(py, || {
            let outputs = occam_report::latent::pca_outputs::outputs(
                self.inner.loaded(),
                self.inner.compiled(),
            )
            .py_err(py)?;
            outputs
                .into_iter()
                .map(|o| {
                    let d = PyDict::new(py);
                    d.set_item("name", &o.name)?;
                    let shape = [o.rows, o.columns.len()];
                    d.set_item("values", shaped(py, o.values, &shape)?)?;
                    d.set_item("columns", o.columns)?;
                    d.set_item("svg", o.svg)?;
                    Ok(d)
                })
                .collect()
        })
    }

    /// Writes what `occam fit --out DIR` writes into `out_dir` (atomically, file by file): the
    /// posterior tables, bound trace and figure, Hinton diagrams of matrix means and ARD
    /// relevances, chain tables and figures, PCA reconstructions and projections.
    #[pyo3(signature = (out_dir, include_data=false))]
    fn write(
        &self,
        py: Python<'_>,
        out_dir: std::path::PathBuf,
        include_data: bool,
    ) -> PyResult<()> {
        crate::errors::guard(py, || {
            occam::atomic::check_dir(&out_dir).py_err(py)?;
            occam_report::outputs::write_outputs(&out_dir, &self.inner, include_data).py_err(py)
        })
    }

    /// Per-node bound terms `[(node, value)]`.
    #[getter]
    fn node_bounds(&self) -> Vec<(String, f64)> {
        self.inner.outcome().node_bounds.clone()
    }

    /// What the bound is, named as the JSON report's `bound_quality`: `exact` (the ELBO),
    /// `lower_bound` (a local bound on it) or `approximate` (an estimate).
    #[getter]
    fn bound_quality(&self) -> String {
        quality_name(self.inner.outcome().bound_quality)
    }

    /// Each node's kind of bound term `[(node, kind)]`, as the JSON report's `node_qualities`.
    #[getter]
    fn node_qualities(&self) -> Vec<(String, String)> {
        self.inner
            .outcome()
            .node_qualities
            .iter()
            .map(|(n, k)| (n.clone(), quality_name(*k)))
            .collect()
    }

    /// The variables whose posterior sds a local bound understates `[(variable, why)]`, as the
    /// JSON report's `sds_understated` (Böhning's bound in softmax logits: `softmax_bohning`,
    /// or `softmax` with K > 3); empty otherwise.
    #[getter]
    fn sds_understated(&self) -> Vec<(String, String)> {
        occam::quality::understated_sds_named(self.inner.loaded(), self.inner.compiled())
    }
}

/// A bound kind's name in the JSON report (its serde name: `exact`, `lower_bound`,
/// `approximate`).
fn quality_name(q: occam::quality::BoundQuality) -> String {
    match serde_json::to_value(q) {
        Ok(serde_json::Value::String(s)) => s,
        _ => q.name().to_string(),
    }
}

/// Posterior model probabilities from bounds and optional prior weights.
#[pyfunction]
#[pyo3(signature = (bounds, priors=None))]
pub fn probabilities(
    py: Python<'_>,
    bounds: Vec<f64>,
    priors: Option<Vec<f64>>,
) -> PyResult<Vec<f64>> {
    crate::errors::guard(py, || {
        let priors = priors.unwrap_or_default();
        if bounds.is_empty() {
            return Err(raise(
                py,
                "UsageError",
                "bounds: give at least one bound".into(),
            ));
        }
        if let Some(i) = bounds.iter().position(|b| !b.is_finite()) {
            return Err(raise(
                py,
                "UsageError",
                format!("bounds[{i}] is {}, not a finite number", bounds[i]),
            ));
        }
        if !priors.is_empty() && priors.len() != bounds.len() {
            return Err(raise(
                py,
                "UsageError",
                format!(
                    "priors: give {} weights, one per bound (got {})",
                    bounds.len(),
                    priors.len()
                ),
            ));
        }
        if let Some(i) = priors.iter().position(|p| !(p.is_finite() && *p > 0.0)) {
            return Err(raise(
                py,
                "UsageError",
                format!("priors[{i}] is {}, not a positive finite number", priors[i]),
            ));
        }
        Ok(occam::probabilities(&bounds, &priors))
    })
}

/// A posterior as the Python package's dict: name, distribution, role, q_family (None where q
/// is the written family), plates and each parameter as an array shaped by the plates.
pub(crate) fn posterior_dict(
    py: Python<'_>,
    p: occam::posterior::Posterior,
) -> PyResult<Bound<'_, PyDict>> {
    let params = PyDict::new(py);
    for q in p.params {
        let a: Bound<'_, PyArrayDyn<f64>> = shaped(py, q.values, &q.shape)?;
        params.set_item(q.name, a)?;
    }
    let out = PyDict::new(py);
    out.set_item("name", p.name)?;
    out.set_item("distribution", p.distribution)?;
    out.set_item("role", p.role)?;
    out.set_item("q_family", p.q_family)?;
    out.set_item("plates", p.plates)?;
    out.set_item("params", params)?;
    Ok(out)
}
