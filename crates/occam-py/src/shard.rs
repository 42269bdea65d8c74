//! One shard of a data-parallel fit (`occam::shard::Shard`) for `occam.distributed`: a model
//! compiled on one block of rows, kept where it was built (a Dask worker); what crosses processes
//! is bytes — the summed messages to a global, the globals' or a start's state — and floats.

use std::borrow::Cow;

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::arrays::dataset;
use crate::errors::IntoPy;

/// A model compiled on one shard of its data (see `occam.distributed`).
#[pyclass(name = "Shard", module = "occam._occam")]
pub struct PyShard {
    inner: occam::shard::Shard,
}

#[pymethods]
impl PyShard {
    /// Compiles `source` (named `name` in messages) on the shard's `data` (`{name: float64
    /// array}`), split along `plate` (default: inferred from the observed data).
    #[new]
    #[pyo3(signature = (source, data, name="model.occam", plate=None))]
    fn new(
        py: Python<'_>,
        source: &str,
        data: &Bound<'_, PyDict>,
        name: &str,
        plate: Option<&str>,
    ) -> PyResult<PyShard> {
        crate::errors::guard(py, || {
            let data = dataset(py, Some(data))?;
            let inner = py
                .allow_threads(|| occam::shard::Shard::new(name, source, &data, plate))
                .py_err(py)?;
            Ok(PyShard { inner })
        })
    }

    /// The names of the data arrays along the data plate (the model's: its variables whose
    /// outermost plate is the data plate); a minibatch of rows cuts these and no other.
    fn along_plate(&self) -> Vec<String> {
        self.inner.along_plate()
    }

    /// This shard's `(bound round-off, importance-sampled variance)`, its part of the sharded
    /// decrease allowance (`check_decrease`).
    fn bound_noise(&self) -> (f64, f64) {
        self.inner.bound_noise()
    }

    /// `(data plate, its size on this shard)`.
    fn plate(&self) -> (String, usize) {
        let (p, n) = self.inner.plate();
        (p.to_string(), n)
    }

    /// The default schedule: `[(node, is_local)]`.
    fn schedule(&self) -> Vec<(String, bool)> {
        self.inner.schedule()
    }

    /// The number of observed values on this shard.
    fn observed_values(&self) -> usize {
        self.inner.observed_values()
    }

    /// Starts every latent q from `seed`.
    fn initialize(&mut self, py: Python<'_>, seed: u64) -> PyResult<()> {
        self.inner.initialize(seed).py_err(py)
    }

    /// Updates the local nodes `names`, in order.
    fn update(&mut self, py: Python<'_>, names: Vec<String>) -> PyResult<()> {
        let inner = &mut self.inner;
        py.allow_threads(|| names.iter().try_for_each(|n| inner.update(n)))
            .py_err(py)
    }

    /// This shard's messages to global `name` from its local children (f64 bytes).
    fn local_messages<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &self.inner;
        let m = py.allow_threads(|| inner.local_messages(name)).py_err(py)?;
        Ok(PyBytes::new(py, &occam::shard::to_bytes(&m)))
    }

    /// Updates global `name` from `summed`, the sum over every shard of its local messages (f64
    /// bytes).
    fn update_global(&mut self, py: Python<'_>, name: &str, summed: &[u8]) -> PyResult<()> {
        let values = occam::shard::from_bytes(summed).py_err(py)?;
        let inner = &mut self.inner;
        py.allow_threads(|| inner.update_global(name, values))
            .py_err(py)
    }

    /// A stochastic VB step on global `name`: its update from `summed` (f64 bytes: a
    /// minibatch's messages scaled by N/|B|) blended with step size `rho` ∈ (0, 1].
    fn step_global(&mut self, py: Python<'_>, name: &str, summed: &[u8], rho: f64) -> PyResult<()> {
        let values = occam::shard::from_bytes(summed).py_err(py)?;
        let inner = &mut self.inner;
        py.allow_threads(|| inner.step_global(name, values, rho))
            .py_err(py)
    }

    /// Optimises the local q given the globals (stochastic VB's local step): the updates of
    /// the local nodes `names` once when there is one, else until the local bound stops
    /// increasing.
    fn optimise_locals(&mut self, py: Python<'_>, names: Vec<String>) -> PyResult<()> {
        let inner = &mut self.inner;
        py.allow_threads(|| inner.optimise_locals(&names))
            .py_err(py)
    }

    /// The bound's `(local terms, global terms)` on this shard.
    fn split_bound(&self) -> (f64, f64) {
        self.inner.split_bound()
    }

    /// The globals' state (bytes).
    fn global_state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.global_state())
    }

    /// The state of rows `start..stop` (bytes): the start of the shard holding them.
    fn rows_state<'py>(
        &self,
        py: Python<'py>,
        start: usize,
        stop: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.inner.rows_state(start, stop).py_err(py)?;
        Ok(PyBytes::new(py, &b))
    }

    /// Puts a `global_state` or `rows_state` into this shard.
    fn set_state(&mut self, py: Python<'_>, state: Cow<'_, [u8]>) -> PyResult<()> {
        self.inner.set_state(&state).py_err(py)
    }

    /// Posterior moments of node `name` on this shard (flat, row-major).
    fn moments<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let m = self.inner.moments(name).py_err(py)?;
        Ok(PyArray1::from_vec(py, m))
    }

    /// The posterior of variable `name` on this shard: `{"name", "distribution", "role",
    /// "plates", "params"}` as `Fitted.posterior` gives it.
    fn posterior<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        crate::fitted::posterior_dict(py, self.inner.posterior(name).py_err(py)?)
    }
}

/// The order in which stochastic VB visits `minibatches` minibatches, from `seed`: the engine's
/// (`occam::shard::EpochOrder`), so `occam.distributed.fit(method="svi", seed=s)` visits the
/// shards as `occam fit --shards ... --vb svi --seed s` does.
#[pyclass(name = "EpochOrder", module = "occam._occam")]
pub struct PyEpochOrder {
    inner: occam::shard::EpochOrder,
}

#[pymethods]
impl PyEpochOrder {
    #[new]
    fn new(seed: u64, minibatches: usize) -> PyEpochOrder {
        PyEpochOrder {
            inner: occam::shard::EpochOrder::new(seed, minibatches),
        }
    }

    /// The next epoch's order: a permutation of `range(minibatches)`.
    fn next_epoch(&mut self) -> Vec<usize> {
        self.inner.next_epoch().to_vec()
    }

    /// The next epoch's minibatches of rows, for an order over N rows (`minibatches` = N): the
    /// next permutation cut, in its order, into lists of `batch` rows (the last may be smaller),
    /// each sorted — the engine's `EpochOrder::next_minibatches`, as `occam fit --shards ...
    /// --batch-rows` cuts them.
    fn next_minibatches(&mut self, batch: usize) -> Vec<Vec<usize>> {
        self.inner.next_minibatches(batch)
    }
}

/// The engine's decrease test of a sharded sweep (`occam::shard::check_decrease`): the bound went
/// from `prev` to `now` at sweep `iteration`; `noise()` returns every shard's `bound_noise()`
/// (called only when the bound fell by more than 1e-9 of |L|). Returns None, or the warning's
/// text for a decrease; in `strict` mode a decrease raises `RunError`.
#[pyfunction]
pub fn check_decrease(
    py: Python<'_>,
    prev: f64,
    now: f64,
    noise: &Bound<'_, PyAny>,
    iteration: usize,
    strict: bool,
) -> PyResult<Option<String>> {
    crate::errors::guard(py, || {
        let mut failed = None;
        let parts = || match noise.call0().and_then(|v| v.extract::<Vec<(f64, f64)>>()) {
            Ok(v) => v,
            Err(e) => {
                failed = Some(e);
                // No allowance: the decrease is reported, and the callback's error raised.
                Vec::new()
            }
        };
        let r = occam::shard::check_decrease(prev, now, parts, iteration, strict);
        if let Some(e) = failed {
            return Err(e);
        }
        r.py_err(py)
    })
}
