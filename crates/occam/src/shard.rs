//! Data-parallel fits (the engine's `shard` module): a model compiled on one shard of the rows of
//! its data, addressed by variable names, for the surfaces that run the shards — the `occam fit
//! --shards` loop in one process ([`fit_shards`]) and `occam.distributed` on Dask (each worker
//! holds its shards; only messages to globals, the globals' state and bound terms travel, as
//! little-endian f64 bytes).

use occam_core::engine::Observer;
pub use occam_core::engine::{EpochOrder, ShardRunOptions, SviOptions};
use occam_core::engine::{GlobalState, MakeBatch, Sharded, Split, SplitError, Vmp};
use occam_core::error::RunError;
use occam_core::graph::NodeId;

use crate::data::DataSet;
use crate::error::{Error, Result};
use crate::fitted::Model;
use crate::lower::Compiled;
use crate::posterior::{self, Posterior};

/// A model compiled on one shard of its data, split along its data plate.
pub struct Shard {
    model: Model,
    compiled: Compiled,
    split: Split,
}

/// A split error located at the variable it names (`file:line:column: ...`).
fn split_error(model: &Model, c: &Compiled, e: SplitError) -> Error {
    let located = match &e {
        SplitError::Node { node, .. } => c
            .owner
            .get(node)
            .map(|&v| format!("{}: {e}", model.loaded().location(v))),
        _ => None,
    };
    Error::Input(located.unwrap_or_else(|| format!("{}: {e}", model.name())))
}

fn run_error(e: RunError) -> Error {
    match e {
        RunError::Interrupted { .. } => Error::Interrupted(e.to_string()),
        _ => Error::Run(e.to_string()),
    }
}

/// Values as little-endian f64 bytes.
pub fn to_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian f64 bytes as values.
pub fn from_bytes(bytes: &[u8]) -> Result<Vec<f64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(Error::Input(format!(
            "{} bytes are not a whole number of f64 values",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

impl Shard {
    /// Compiles `model` (source text, with `name` as diagnostics print it) on one shard's data,
    /// split along `plate` (default: the inferred data plate).
    pub fn new(name: &str, source: &str, data: &DataSet, plate: Option<&str>) -> Result<Shard> {
        let model = Model::from_source(name, source, data)?;
        let compiled = model.loaded().compile(true)?;
        let split = compiled
            .vmp
            .split(plate)
            .map_err(|e| split_error(&model, &compiled, e))?;
        Ok(Shard {
            model,
            compiled,
            split,
        })
    }

    fn id(&self, name: &str) -> Result<NodeId> {
        self.compiled
            .vmp
            .node(name)
            .ok_or_else(|| Error::UnknownName(format!("no node `{name}` in the model")))
    }

    /// The compiled model.
    pub(crate) fn vmp(&self) -> &occam_core::engine::Vmp {
        &self.compiled.vmp
    }

    /// The compiled model, to update.
    pub(crate) fn vmp_mut(&mut self) -> &mut occam_core::engine::Vmp {
        &mut self.compiled.vmp
    }

    /// The names of the data arrays along the data plate (a minibatch of rows cuts these; any
    /// other array is the same on every shard): `crate::minibatch::along_plate`.
    pub fn along_plate(&self) -> Vec<String> {
        crate::minibatch::along_plate(self.model.loaded(), self.split.plate())
    }

    /// This shard's part of a decrease allowance: `(bound round-off, importance-sampled
    /// variance)` ([`check_decrease`] sums them over the shards).
    pub fn bound_noise(&self) -> (f64, f64) {
        let v = &self.compiled.vmp;
        (v.bound_roundoff(), v.sampling_variance())
    }

    /// The data plate and its size on this shard.
    pub fn plate(&self) -> (&str, usize) {
        let p = self.split.plate();
        (p, self.compiled.vmp.plate_size(p))
    }

    /// The default schedule: each updated node's name and whether it is local (has the data
    /// plate, so it is updated on every shard) or global (one reduction over the shards).
    pub fn schedule(&self) -> Vec<(String, bool)> {
        let v = &self.compiled.vmp;
        v.default_order()
            .into_iter()
            .map(|id| (v.names()[id.index()].to_string(), self.split.is_local(id)))
            .collect()
    }

    /// The number of observed values on this shard (the tolerance is per observed value).
    pub fn observed_values(&self) -> usize {
        self.compiled.vmp.observed_values()
    }

    /// Starts every latent q from `seed` (Winn §2.5.1).
    pub fn initialize(&mut self, seed: u64) -> Result<()> {
        self.compiled.vmp.initialize(seed).map_err(run_error)
    }

    /// Updates local node `name` on this shard.
    pub fn update(&mut self, name: &str) -> Result<()> {
        let id = self.id(name)?;
        self.compiled.vmp.update(id).map_err(run_error)
    }

    /// Optimises this shard's local q given its globals: the updates of the local nodes `names`
    /// once when there is one, else until the local bound terms stop increasing
    /// (`occam_core::engine::Vmp::optimise_locals`; stochastic VB's local step).
    pub fn optimise_locals(&mut self, names: &[String]) -> Result<()> {
        let ids = names
            .iter()
            .map(|n| self.id(n))
            .collect::<Result<Vec<_>>>()?;
        self.compiled
            .vmp
            .optimise_locals(&self.split, &ids)
            .map_err(run_error)
    }

    /// This shard's messages to global `name` from its local children.
    pub fn local_messages(&self, name: &str) -> Result<Vec<f64>> {
        Ok(self
            .compiled
            .vmp
            .local_messages(&self.split, self.id(name)?))
    }

    /// A stochastic VB step on global `name` (`occam_core::engine::Vmp::step_global`): its
    /// update from `summed` (a minibatch's messages, already scaled by N/|B|), blended with step
    /// size `rho` ∈ (0, 1] with its current natural parameters.
    pub fn step_global(&mut self, name: &str, summed: Vec<f64>, rho: f64) -> Result<()> {
        let id = self.id(name)?;
        self.compiled
            .vmp
            .step_global(&self.split, id, summed, rho)
            .map_err(run_error)
    }

    /// Updates global `name` from the sum over every shard of [`Shard::local_messages`].
    pub fn update_global(&mut self, name: &str, summed: Vec<f64>) -> Result<()> {
        let id = self.id(name)?;
        self.compiled
            .vmp
            .update_global(&self.split, id, summed)
            .map_err(run_error)
    }

    /// The bound's local terms (this shard's rows) and global terms.
    pub fn split_bound(&self) -> (f64, f64) {
        self.compiled.vmp.split_bound(&self.split)
    }

    /// The globals' state as bytes.
    pub fn global_state(&self) -> Vec<u8> {
        self.compiled.vmp.global_state(&self.split).to_bytes()
    }

    /// The state of rows `from..to` (globals and those rows of the locals) as bytes: a start for
    /// the shard holding those rows (see [`Shard::set_state`]).
    pub fn rows_state(&self, from: usize, to: usize) -> Result<Vec<u8>> {
        let s = self.compiled.vmp.rows_state(&self.split, from, to);
        Ok(s.map_err(|e| split_error(&self.model, &self.compiled, e))?
            .to_bytes())
    }

    /// Puts a [`Shard::global_state`] or [`Shard::rows_state`] into this shard.
    pub fn set_state(&mut self, bytes: &[u8]) -> Result<()> {
        let state = GlobalState::from_bytes(bytes).map_err(|e| Error::Input(e.to_string()))?;
        let (model, c) = (&self.model, &mut self.compiled);
        c.vmp
            .set_state(&self.split, &state)
            .map_err(|e| Error::Input(format!("{}: {e}", model.name())))
    }

    /// The posterior moments of node `name` on this shard (row-major over its elements).
    pub fn moments(&self, name: &str) -> Result<Vec<f64>> {
        Ok(self.compiled.vmp.moments(self.id(name)?).to_vec())
    }

    /// The posterior of variable `name` on this shard (a global's is the fit's).
    pub fn posterior(&self, name: &str) -> Result<Posterior> {
        let loaded = self.model.loaded();
        let v = loaded
            .model
            .variables
            .iter()
            .position(|v| v.name == name)
            .ok_or_else(|| Error::UnknownName(format!("no variable `{name}` in the model")))?;
        Ok(posterior::of(loaded, &self.compiled, v))
    }
}

/// The split of a compiled model along `plate` (default: the inferred data plate): the plate's
/// name and, for every variable of the model, whether it is local (has the plate); a located
/// error if the model cannot be updated shard by shard.
pub fn split_of(
    model: &Model,
    c: &Compiled,
    plate: Option<&str>,
) -> Result<(String, Vec<(String, bool)>)> {
    let split = c.vmp.split(plate).map_err(|e| split_error(model, c, e))?;
    let vars = model
        .loaded()
        .model
        .variables
        .iter()
        .zip(&c.var_nodes)
        .map(|(v, &id)| (v.name.clone(), split.is_local(id)))
        .collect();
    Ok((split.plate().to_string(), vars))
}

/// The engine's decrease test of a sweep over shards run elsewhere (`occam.distributed`): the
/// bound went from `prev` to `now` at sweep `iteration`; `noise()` gives every shard's
/// [`Shard::bound_noise`] (asked only when the bound fell by more than 10⁻⁹ of |L|), summed into
/// the sharded allowance (`occam_core::engine::shards_allowance`). `Ok(None)`: no decrease;
/// `Ok(Some(text))`: a decrease, to warn of; in `strict` mode a decrease is an error.
pub fn check_decrease(
    prev: f64,
    now: f64,
    noise: impl FnOnce() -> Vec<(f64, f64)>,
    iteration: usize,
    strict: bool,
) -> Result<Option<String>> {
    let mut warnings = Vec::new();
    occam_core::engine::check_decrease(
        prev,
        now,
        || occam_core::engine::shards_allowance(noise()),
        iteration,
        || "(sharded sweep)".into(),
        strict,
        &mut warnings,
    )
    .map_err(run_error)?;
    Ok(warnings.first().map(|w| w.to_string()))
}

/// A fit over shards in one process.
pub struct ShardedFitted {
    /// The shards after the fit (the globals alike on each); of a fit over a file read in
    /// chunks, the one replica of the globals (on chunk 0).
    pub shards: Vec<Shard>,
    /// The rows of each shard or chunk.
    pub rows: Vec<usize>,
    /// The bound after each sweep.
    pub bound_trace: Vec<f64>,
    /// Whether the bound's change per observed value fell to the tolerance.
    pub converged: bool,
    /// The f64 values that travel between the shards and the reduction per sweep.
    pub values_per_sweep: usize,
    /// For stochastic VB, the epoch of each entry of `bound_trace` (empty otherwise).
    pub epochs: Vec<usize>,
    /// The minibatch steps taken (stochastic VB; 0 otherwise).
    pub steps: u64,
    /// The final bound of every restart.
    pub restart_bounds: Vec<f64>,
    /// The kept restart (0-based): the highest final bound.
    pub best_restart: usize,
    /// The kept restart's seed (restart r uses seed + r).
    pub seed: u64,
    /// What a user should know (a decrease of the bound without strict mode).
    pub warnings: Vec<crate::Warning>,
}

/// How a sharded fit updates: batch sweeps, memoized VB or stochastic VB (the engine's
/// `ShardMethod`).
pub use occam_core::engine::ShardMethod as Method;

impl ShardedFitted {
    /// The bound reached.
    pub fn bound(&self) -> f64 {
        self.bound_trace.last().copied().unwrap_or(f64::NAN)
    }

    /// The global variables of the model (replicated on every shard), in model order.
    pub fn globals(&self) -> Vec<String> {
        let s = &self.shards[0];
        let vars = &s.model.loaded().model.variables;
        vars.iter()
            .zip(&s.compiled.var_nodes)
            .filter(|(_, &id)| !s.split.is_local(id))
            .map(|(v, _)| v.name.clone())
            .collect()
    }
}

/// Fits `source` on the shards `data` (consecutive row blocks of one data set) as `o` says
/// (method, restarts from the sharded start of the engine, `Sharded::fit`; strict mode; at most
/// `max_iter` sweeps, passes or epochs per restart, until the bound's change per observed value is
/// at most `tol`), with the default schedule; `observer` sees every sweep.
pub fn fit_shards(
    name: &str,
    source: &str,
    data: &[DataSet],
    plate: Option<&str>,
    o: &ShardRunOptions,
    observer: &mut dyn Observer,
) -> Result<ShardedFitted> {
    o.check().map_err(|e| Error::Usage(e.to_string()))?;
    let mut parts = Vec::with_capacity(data.len());
    let mut vmps = Vec::with_capacity(data.len());
    for d in data {
        let Shard {
            model,
            compiled,
            split,
        } = Shard::new(name, source, d, plate)?;
        let Compiled {
            vmp,
            var_nodes,
            owner,
            has_mixture,
        } = compiled;
        vmps.push(vmp);
        parts.push((model, var_nodes, owner, has_mixture, split));
    }
    let mut sharded = Sharded::new(vmps, plate, None).map_err(|e| Error::Input(e.to_string()))?;
    // Stochastic VB over minibatches of random rows: each compiled from the rows gathered from
    // the shards' data (`crate::minibatch`).
    let sizes = data_rows(&sharded);
    let along = match parts.first() {
        Some((model, ..)) => crate::minibatch::along_plate(model.loaded(), sharded.split().plate()),
        None => Vec::new(),
    };
    let make: &mut MakeBatch = &mut |rows: &[usize]| -> std::result::Result<Vmp, RunError> {
        crate::minibatch::same_lines_per_row(data, &sizes, &along).map_err(RunError::Schedule)?;
        let batch = crate::minibatch::gather(data, &sizes, rows, &along);
        Shard::new(name, source, &batch, plate)
            .map(|s| s.compiled.vmp)
            .map_err(|e| RunError::Schedule(format!("a minibatch of {} rows: {e}", rows.len())))
    };
    let run = sharded
        .fit_with(o, observer, Some(make))
        .map_err(run_error)?;
    let values_per_sweep = sharded.values_per_sweep();
    let rows = data_rows(&sharded);
    let shards = sharded
        .into_shards()
        .into_iter()
        .zip(parts)
        .map(
            |(vmp, (model, var_nodes, owner, has_mixture, split))| Shard {
                model,
                compiled: Compiled {
                    vmp,
                    var_nodes,
                    owner,
                    has_mixture,
                },
                split,
            },
        )
        .collect();
    Ok(ShardedFitted {
        shards,
        rows,
        bound_trace: run.bound_trace,
        converged: run.converged,
        values_per_sweep,
        epochs: run.epochs,
        steps: run.steps,
        restart_bounds: run.restart_bounds,
        best_restart: run.best_restart,
        seed: run.seed,
        warnings: run.warnings.into_iter().map(crate::Warning::Run).collect(),
    })
}

/// The rows of each shard along the data plate.
fn data_rows(s: &Sharded) -> Vec<usize> {
    let plate = s.split().plate();
    s.shards().iter().map(|v| v.plate_size(plate)).collect()
}
