//! Out-of-core fits on one machine: the shard loop over chunks of one `.npy` file read a block of
//! rows at a time (`occam_io::data::NpyChunks`), so a file larger than memory fits. No chunk's
//! state is kept: a chunk is read, compiled, given the globals and its local q optimised given
//! them (`Vmp::optimise_locals`) each time it is visited, and dropped; one replica (on chunk 0)
//! holds the globals. Memory: two chunks' compiled models, whatever the file's size.
//!
//! - **Batch**: for each global of the schedule in turn, one pass over the chunks sums their
//!   messages to it and the replica updates it from the sum (`Vmp::update_global`, Winn
//!   (2.19)); after the globals, one more pass sums every chunk's local bound terms — Winn
//!   (2.31) — at locals optimised given the new globals. Each step is a coordinate step on the
//!   bound (locals given globals, then one global given the rest), so the bound never decreases
//!   and the fit reaches the in-memory batch optimum. Reads per sweep: globals + 1.
//! - **Stochastic** (`occam_core::engine::Svi`): one chunk per step, read once per epoch in a
//!   random order (seeded), messages scaled by the number of chunks; the full bound (one pass)
//!   every `bound_every` epochs.
//!
//! Memoized VB needs each chunk's statistics kept between visits, which this loop does not keep.

use std::path::Path;

use std::cell::Cell;

use occam_core::engine::{Svi, Vmp};
use occam_core::graph::NodeId;

use crate::data::DataSet;
use crate::error::{Error, Result};
use crate::shard::{Method, Shard, ShardedFitted};
use occam_io::data::NpyChunks;

/// The chunks of one data file: the rows `from..to` of each.
struct Chunks {
    name: String,
    file: NpyChunks,
    bounds: Vec<(usize, usize)>,
}

impl Chunks {
    fn data(&self, c: usize) -> Result<DataSet> {
        let (from, to) = self.bounds[c];
        let values = self.file.read(from, to)?;
        let mut d = DataSet::new();
        d.insert_array(&self.name, to - from, self.file.cols, values, None)?;
        Ok(d)
    }
}

fn run_error(e: impl std::fmt::Display) -> Error {
    Error::Run(e.to_string())
}

/// Fits `source` to the `.npy` file `path` (data `data_name`, rows along the data plate) read in
/// chunks of `chunk_rows` rows, by batch or stochastic VB (module docs), from the sharded start
/// of chunk 0 (seed `seed`): at most `max_iter` sweeps (epochs), until the bound's change per
/// observed value is at most `tol`. The result holds the replica with the final globals.
#[allow(clippy::too_many_arguments)]
pub fn fit_stream(
    name: &str,
    source: &str,
    data_name: &str,
    path: &Path,
    chunk_rows: usize,
    seed: u64,
    max_iter: usize,
    tol: f64,
    method: Method,
) -> Result<ShardedFitted> {
    if chunk_rows == 0 {
        return Err(Error::Usage("chunks of 0 rows: give 1 or more".into()));
    }
    let file = NpyChunks::open(path)?;
    let bounds: Vec<(usize, usize)> = (0..file.rows)
        .step_by(chunk_rows)
        .map(|a| (a, (a + chunk_rows).min(file.rows)))
        .collect();
    if bounds.is_empty() {
        return Err(Error::Usage(format!("{}: no rows", path.display())));
    }
    let chunks = Chunks {
        name: data_name.to_string(),
        file,
        bounds,
    };
    // The replica of the globals: chunk 0, started as `Sharded::start` starts shard 0.
    let mut home = Shard::new(name, source, &chunks.data(0)?, None)?;
    let (split, order) = {
        let v = home.vmp();
        let split = v.split(None).map_err(run_error)?;
        (split, v.default_order())
    };
    let (locals, globals): (Vec<NodeId>, Vec<NodeId>) =
        order.iter().partition(|&&id| split.is_local(id));
    // A chunk's locals restart at every visit. One local node's update given the globals is its
    // exact optimum, so each pass is a coordinate step and the bound cannot fall; with several,
    // the passes may end at different local optima and batch's promise would not hold.
    if matches!(method, Method::Batch) && locals.len() > 1 {
        let all = home.vmp().names();
        let names: Vec<String> = locals
            .iter()
            .map(|id| all[id.index()].to_string())
            .collect();
        return Err(Error::Usage(format!(
            "--stream with --vb batch fits models with one local variable per row; this one has \
             {} ({}), whose optimum given the globals a chunk re-visited from its start need not \
             reach again: use --shards (which keeps each shard's state) or --vb svi",
            names.len(),
            names.join(", ")
        )));
    }
    home.initialize(seed)?;
    for &g in &globals {
        home.vmp_mut().update(g).map_err(run_error)?;
    }
    let compile = |c: usize| -> Result<Shard> { Shard::new(name, source, &chunks.data(c)?, None) };
    let count = chunks.bounds.len();
    let observed = Cell::new(0usize);
    // One pass: every chunk's local q optimised given `globals_of`'s globals, then `visit`.
    let pass = |home: &Vmp, visit: &mut dyn FnMut(&mut Vmp) -> Result<()>| -> Result<()> {
        let state = home.global_state(&split);
        observed.set(0);
        for c in 0..count {
            let mut s = compile(c)?;
            let v = s.vmp_mut();
            v.set_global_state(&split, &state).map_err(run_error)?;
            v.optimise_locals(&split, &locals).map_err(run_error)?;
            observed.set(observed.get() + v.observed_values());
            visit(v)?;
        }
        Ok(())
    };
    let mut trace: Vec<f64> = Vec::new();
    let mut epochs = Vec::new();
    let mut converged = false;
    let mut steps = 0;
    match method {
        Method::Batch => {
            for sweep in 1..=max_iter {
                for &g in &globals {
                    let mut total: Option<Vec<f64>> = None;
                    pass(home.vmp(), &mut |v| {
                        let m = v.local_messages(&split, g);
                        match &mut total {
                            Some(t) => t.iter_mut().zip(&m).for_each(|(a, b)| *a += b),
                            None => total = Some(m),
                        }
                        Ok(())
                    })?;
                    let total = total.expect("one chunk at least");
                    home.vmp_mut()
                        .update_global(&split, g, total)
                        .map_err(run_error)?;
                }
                let mut local = 0.0;
                pass(home.vmp(), &mut |v| {
                    local += v.split_bound(&split).0;
                    Ok(())
                })?;
                let bound = local + home.vmp().split_bound(&split).1;
                let prev = trace.last().copied();
                trace.push(bound);
                let Some(prev) = prev else { continue };
                if bound < prev - 1e-9 * (1.0 + prev.abs()) {
                    return Err(Error::Run(format!(
                        "the bound decreased by {:e} at sweep {sweep}",
                        prev - bound
                    )));
                }
                if (bound - prev).abs() / observed.get().max(1) as f64 <= tol {
                    converged = true;
                    break;
                }
            }
        }
        Method::Stochastic(options) => {
            let mut svi =
                Svi::new(home.vmp(), split.clone(), Some(order), options).map_err(run_error)?;
            let mut order = occam_core::engine::EpochOrder::new(options.seed, count);
            for epoch in 1..=max_iter {
                for &c in order.next_epoch() {
                    let mut s = compile(c)?;
                    svi.step(s.vmp_mut(), count as f64).map_err(run_error)?;
                }
                if epoch % options.bound_every != 0 && epoch != max_iter {
                    continue;
                }
                home.vmp_mut()
                    .set_global_state(&split, svi.globals())
                    .map_err(run_error)?;
                let mut local = 0.0;
                pass(home.vmp(), &mut |v| {
                    local += v.split_bound(&split).0;
                    Ok(())
                })?;
                let bound = local + home.vmp().split_bound(&split).1;
                let prev = trace.last().copied();
                trace.push(bound);
                epochs.push(epoch);
                if prev.is_some_and(|p| (bound - p).abs() / observed.get().max(1) as f64 <= tol) {
                    converged = true;
                    break;
                }
            }
            steps = svi.steps();
        }
        Method::Memoized => {
            return Err(Error::Usage(
                "memoized VB keeps every chunk's statistics between visits: use --shards, or \
                 batch or svi on a file read in chunks"
                    .into(),
            ))
        }
    }
    let values_per_sweep = 2
        * count
        * globals
            .iter()
            .map(|&g| home.vmp().moments(g).len())
            .sum::<usize>();
    Ok(ShardedFitted {
        shards: vec![home],
        rows: chunks.bounds.iter().map(|(a, b)| b - a).collect(),
        bound_trace: trace,
        converged,
        values_per_sweep,
        epochs,
        steps,
    })
}
