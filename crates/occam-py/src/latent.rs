//! `occam._occam.Mbpca`: mixtures of Bayesian PCA (Winn ch. 3) from Python — the bound-driven
//! order search of `occam latent mbpca` (GIL released), then the fitted mixture's parameters,
//! responsibilities and predictive log-densities as NumPy arrays.

use numpy::{
    PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use occam::latent::mbpca::search::{search, SearchOptions, Searched};
use occam::latent::synth::Matrix;

use crate::errors::{raise, IntoPy};

/// A fitted mixture of Bayesian PCA.
#[pyclass(name = "Mbpca", module = "occam._occam", frozen)]
pub struct PyMbpca {
    inner: Searched,
}

fn matrix(py: Python<'_>, name: &str, x: &PyReadonlyArray2<'_, f64>) -> PyResult<Matrix> {
    let (rows, cols) = (x.shape()[0], x.shape()[1]);
    let values: Vec<f64> = match x.as_slice() {
        Ok(s) if x.is_c_contiguous() => s.to_vec(),
        _ => x.as_array().iter().copied().collect(),
    };
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(raise(
            py,
            "DataError",
            format!(
                "{name}: row {}, column {} is {}; a mixture of Bayesian PCA needs finite values",
                i / cols.max(1),
                i % cols.max(1),
                values[i]
            ),
        ));
    }
    Ok(Matrix { rows, cols, values })
}

fn array2<'py>(py: Python<'py>, v: &[f64], rows: usize, cols: usize) -> Bound<'py, PyArray2<f64>> {
    let rows_v: Vec<Vec<f64>> = v.chunks(cols.max(1)).map(<[f64]>::to_vec).collect();
    if rows == 0 || cols == 0 {
        return PyArray2::zeros(py, [rows, cols], false);
    }
    PyArray2::from_vec2(py, &rows_v).expect("rows of equal length")
}

/// Fits a mixture of Bayesian PCA to the rows of `x` by the bound-driven search (splits of the
/// worst-fitting component and deletions kept only when the bound rises), from `start_k`
/// components up to `max_k`, each with `q` latent dimensions (default d − 1).
#[pyfunction]
#[pyo3(signature = (x, q=None, max_k=30, start_k=1, seed=0, max_iter=None, tol=None))]
#[allow(clippy::too_many_arguments)]
pub fn mbpca_fit(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    q: Option<usize>,
    max_k: usize,
    start_k: usize,
    seed: u64,
    max_iter: Option<usize>,
    tol: Option<f64>,
) -> PyResult<PyMbpca> {
    crate::errors::guard(py, || {
        let t = matrix(py, "x", &x)?;
        let mut o = SearchOptions::new(q.unwrap_or(t.cols.saturating_sub(1)));
        o.max_k = max_k;
        o.start_k = start_k;
        o.seed = seed;
        if let Some(m) = max_iter {
            o.max_iter = m;
        }
        if let Some(v) = tol {
            o.tol = v;
        }
        let searched = py.allow_threads(|| search(&t, &o));
        Ok(PyMbpca {
            inner: searched.py_err(py)?,
        })
    })
}

#[pymethods]
impl PyMbpca {
    /// The converged lower bound (nats).
    #[getter]
    fn bound(&self) -> f64 {
        self.inner.bound
    }

    /// Number of components K of the kept model.
    #[getter]
    fn components(&self) -> usize {
        self.inner.model.k
    }

    /// Latent dimension q of every component.
    #[getter]
    fn q(&self) -> usize {
        self.inner.model.q
    }

    /// Components holding at least `min_count` expected points.
    #[pyo3(signature = (min_count=1.0))]
    fn effective_components(&self, min_count: f64) -> usize {
        self.inner.effective_components(min_count)
    }

    /// The shared effective dimension (relevances 1/⟨α⟩ above a quarter of the largest).
    #[getter]
    fn effective_dimension(&self) -> usize {
        self.inner.effective_dimension()
    }

    /// Each component's effective dimension.
    #[getter]
    fn component_dimensions(&self) -> Vec<usize> {
        self.inner.component_dimensions()
    }

    /// The shared relevances 1/⟨α_i⟩ (length q).
    #[getter]
    fn relevance<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.inner.model.relevance())
    }

    /// Expected number of points of each component (length K).
    #[getter]
    fn counts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.inner.model.counts())
    }

    /// Posterior mean mixing weights ⟨π⟩ (length K).
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let total: f64 = self.inner.model.u.iter().sum();
        PyArray1::from_vec(py, self.inner.model.u.iter().map(|u| u / total).collect())
    }

    /// Component means ⟨μ_m⟩ (K × d).
    #[getter]
    fn means<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let m = &self.inner.model;
        array2(py, &m.mu, m.k, m.d)
    }

    /// Loadings ⟨W_m⟩ (K × d × q).
    #[getter]
    fn loadings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f64>>> {
        crate::errors::guard(py, || {
            let m = &self.inner.model;
            let nested: Vec<Vec<Vec<f64>>> =
                m.w.chunks(m.d * m.q)
                    .map(|c| c.chunks(m.q).map(<[f64]>::to_vec).collect())
                    .collect();
            PyArray3::from_vec3(py, &nested)
                .map_err(|e| raise(py, "OccamError", format!("loadings: {e}")))
        })
    }

    /// Noise standard deviation 1/√⟨τ⟩.
    #[getter]
    fn noise_std(&self) -> f64 {
        let m = &self.inner.model;
        (m.tau_rate / m.tau_shape).sqrt()
    }

    /// Responsibilities q(s_n = m) of the training points (N × K).
    #[getter]
    fn responsibilities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let m = &self.inner.model;
        array2(py, &m.r, m.r.len() / m.k.max(1), m.k)
    }

    /// Posterior means of the scores ⟨x_n⟩ under the most responsible component (N × q): the
    /// projection of the training points onto their component's principal subspace.
    #[getter]
    fn projections<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let m = &self.inner.model;
        let n = m.r.len() / m.k.max(1);
        let mut out = Vec::with_capacity(n * m.q);
        for i in 0..n {
            let r = &m.r[i * m.k..(i + 1) * m.k];
            let best = (0..m.k).max_by(|&a, &b| r[a].total_cmp(&r[b])).unwrap_or(0);
            out.extend_from_slice(&m.x[(i * m.k + best) * m.q..(i * m.k + best + 1) * m.q]);
        }
        array2(py, &out, n, m.q)
    }

    /// ln p(t_n | data) of every row of `x` by the moment-matched predictive density.
    fn log_predictive<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        crate::errors::guard(py, || {
            let t = matrix(py, "x", &x)?;
            if t.cols != self.inner.model.d {
                return Err(raise(
                    py,
                    "DataShapeError",
                    format!(
                        "x has {} columns; the mixture was fitted to {}",
                        t.cols, self.inner.model.d
                    ),
                ));
            }
            let v = py.allow_threads(|| self.inner.model.log_predictive(&t));
            Ok(PyArray1::from_vec(py, v.py_err(py)?))
        })
    }

    /// The moves of the order search: dicts with `action`, `component`, `k`, `bound`, `kept`.
    #[getter]
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        crate::errors::guard(py, || {
            self.inner
                .steps
                .iter()
                .map(|s| {
                    let d = PyDict::new(py);
                    d.set_item("action", &s.action)?;
                    d.set_item("component", s.component)?;
                    d.set_item("k", s.k)?;
                    d.set_item("bound", s.bound)?;
                    d.set_item("kept", s.kept)?;
                    Ok(d)
                })
                .collect()
        })
    }
}

/// The digits study of `occam latent digits` (Winn §3.4.4 on scikit-learn's 8×8 digits): one
/// mixture of Bayesian PCA per digit and the ML PPCA baseline on the file's fixed split (or its
/// first `subset = (train, test)` images of each digit). Returns one dict per method: `method`,
/// `error`, `predictions`, `confusion` (10 × 10, `[true, predicted]`), `components`, `dimensions`.
#[pyfunction]
#[pyo3(signature = (path, subset=None, q=None, max_k=8))]
pub fn digits_study<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    subset: Option<(usize, usize)>,
    q: Option<usize>,
    max_k: usize,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    crate::errors::guard(py, || {
        use occam_studies::digits::{self, Digits};
        let run = || -> occam::Result<_> {
            let mut data = Digits::read(&path)?;
            if let Some((train, test)) = subset {
                data = data.subset(train, test);
            }
            digits::study(&data, q, max_k)
        };
        let (bayes, ml) = py.allow_threads(run).py_err(py)?;
        [bayes, ml]
            .into_iter()
            .map(|o| {
                let d = PyDict::new(py);
                d.set_item("method", &o.method)?;
                d.set_item("error", o.error)?;
                d.set_item("predictions", PyArray1::from_vec(py, o.predictions))?;
                let n = o.confusion.len();
                let flat: Vec<usize> = o.confusion.into_iter().flatten().collect();
                d.set_item("confusion", PyArray1::from_vec(py, flat).reshape([n, n])?)?;
                d.set_item("components", o.components)?;
                d.set_item("dimensions", o.dimensions)?;
                Ok(d)
            })
            .collect()
    })
}
