//! Out-of-core fits on one machine: the shard loop over chunks of one `.npy` file read a block of
//! rows at a time (`occam_io::data::NpyChunks`), or of a CSV file a block of lines at a time
//! (`occam_io::data::CsvChunks`), or of a Parquet file from the row groups that hold a block
//! (`occam_io::data::ParquetChunks`), so a file larger than memory fits. No chunk's
//! state is kept: a chunk is read, compiled, given the globals and its local q optimised given
//! them (`Vmp::optimise_locals`) each time it is visited, and dropped; one replica (on chunk 0)
//! holds the globals. Memory: two chunks' compiled models, whatever the file's size.
//!
//! - **Batch**: for each global of the schedule in turn, one pass over the chunks sums their
//!   messages to it and the replica updates it from the sum (`Vmp::update_global`, Winn
//!   (2.19)); after the globals, one more pass sums every chunk's local bound terms — Winn
//!   (2.31) — at locals optimised given the new globals. Each step is a coordinate step on the
//!   bound (locals given globals, then one global given the rest), so the bound never decreases
//!   and the fit reaches the in-memory batch optimum. Reads per sweep: globals + 1. The sums
//!   are exact, rounded once (`occam_core::exactsum`), as `--shards` and `occam.distributed`
//!   sum them.
//! - **Stochastic** (`occam_core::engine::Svi`): one chunk per step, read once per epoch in a
//!   random order (seeded), messages scaled by the number of chunks; the full bound (one pass)
//!   every `bound_every` epochs.
//!
//! Memoized VB needs each chunk's statistics kept between visits, which this loop does not keep.

use std::path::Path;

use std::cell::Cell;

use occam_core::engine::{
    check_decrease, sampling_allowance, Flow, Observer, SeeSweep, ShardRunOptions, Split, Svi, Vmp,
    Warning,
};
use occam_core::error::RunError;
use occam_core::exactsum::{ExactSum, ExactSums, NotASum};
use occam_core::graph::NodeId;

use crate::data::DataSet;
use crate::error::{Error, Result};
use crate::shard::{Method, Shard, ShardedFitted};
use occam_io::data::{CsvChunks, NpyChunks, ParquetChunks, Selection};

/// The file a stream reads: `.npy` by seek and read of a block of rows, Parquet by the row
/// groups that hold a block, CSV by block of lines.
enum Source {
    Npy(NpyChunks),
    Parquet(ParquetChunks),
    Csv(CsvChunks),
}

/// The chunks of one data file: the rows `from..to` of each.
struct Chunks {
    name: String,
    file: Source,
    bounds: Vec<(usize, usize)>,
    /// The columns chosen (`FILE:COLUMNS`), or all.
    columns: Selection,
    /// Of a Parquet file, the columns read (the others, maybe text, are never decoded).
    keep: Option<Vec<bool>>,
}

impl Chunks {
    /// The chunks of `path` (`.npy`, `.parquet`, or else CSV), `chunk_rows` rows each, of the
    /// columns `columns` chooses.
    fn open(name: &str, path: &Path, chunk_rows: usize, columns: &Selection) -> Result<Chunks> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let (file, rows) = if ext == "npy" {
            let f = NpyChunks::open(path)?;
            let rows = f.rows;
            (Source::Npy(f), rows)
        } else if ext == "parquet" {
            let f = ParquetChunks::open(path)?;
            let rows = f.rows;
            (Source::Parquet(f), rows)
        } else {
            let f = CsvChunks::open(path, chunk_rows)?;
            let rows = f.rows;
            (Source::Csv(f), rows)
        };
        let keep = match (&file, &columns.columns) {
            (Source::Parquet(f), Some(w)) => Some(f.keep(w, &context(columns))?),
            _ => None,
        };
        Ok(Chunks {
            name: name.to_string(),
            columns: columns.clone(),
            keep,
            file,
            bounds: (0..rows)
                .step_by(chunk_rows)
                .map(|a| (a, (a + chunk_rows).min(rows)))
                .collect(),
        })
    }

    fn data(&self, c: usize) -> Result<DataSet> {
        let (from, to) = self.bounds[c];
        let mut d = DataSet::new();
        match &self.file {
            Source::Npy(f) => {
                let values = f.read(from, to)?;
                d.insert_array(&self.name, to - from, f.cols, values, None)?;
            }
            Source::Parquet(f) => {
                let t = f.read_columns(&self.name, from, to, self.keep.as_deref())?;
                d.tables.insert(self.name.clone(), t);
            }
            Source::Csv(f) => {
                let wanted = self.columns.columns.as_deref();
                let context = context(&self.columns);
                let t = f.read_columns(&self.name, c, wanted.map(|w| (w, context.as_str())))?;
                d.tables.insert(self.name.clone(), t);
            }
        }
        if self.columns.columns.is_some() {
            let t = d.tables[&self.name].select(&self.columns)?;
            d.tables.insert(self.name.clone(), t);
        }
        Ok(d)
    }
}

/// `` in --stream `x=f.csv:a` `` for messages, or nothing.
fn context(sel: &Selection) -> String {
    if sel.arg.is_empty() {
        String::new()
    } else {
        format!(" in {}", sel.arg)
    }
}

fn run_error(e: RunError) -> Error {
    match e {
        RunError::Interrupted { .. } => Error::Interrupted(e.to_string()),
        _ => Error::Run(e.to_string()),
    }
}

/// One restart's run: its bound trace, whether it converged, the epochs of the trace and the
/// steps (stochastic VB), its warnings.
struct Run {
    trace: Vec<f64>,
    converged: bool,
    epochs: Vec<usize>,
    steps: u64,
    warnings: Vec<Warning>,
}

/// Fits `source` to the `.npy` or CSV file `path` (data `data_name`, rows along the data plate) read in
/// chunks of `chunk_rows` rows, by batch or stochastic VB (module docs) as `o` says: restart r
/// from the sharded start of chunk 0 with seed `o.seed + r`, at most `o.max_iter` sweeps (epochs)
/// each, until the bound's change per observed value is at most `o.tol`; the highest final bound
/// is kept (re-run from its seed unless it was the last, as `Sharded::fit` does); a decrease of
/// the bound is an error in strict mode, else a warning; `observer` sees every sweep (bound
/// evaluation). The result holds the replica with the final globals.
pub fn fit_stream(
    name: &str,
    source: &str,
    data_name: &str,
    path: &Path,
    chunk_rows: usize,
    o: &ShardRunOptions,
    observer: &mut dyn Observer,
) -> Result<ShardedFitted> {
    let all = Selection::default();
    fit_stream_columns(name, source, data_name, path, &all, chunk_rows, o, observer)
}

/// [`fit_stream`] of the columns `columns` chooses (`FILE:COLUMNS`; its rows must be all): only
/// they must hold numbers, so a text column left out of a CSV or Parquet file is skipped (a
/// Parquet column left out is never read), as `--data FILE:COLUMNS` skips it.
#[allow(clippy::too_many_arguments)]
pub fn fit_stream_columns(
    name: &str,
    source: &str,
    data_name: &str,
    path: &Path,
    columns: &Selection,
    chunk_rows: usize,
    o: &ShardRunOptions,
    observer: &mut dyn Observer,
) -> Result<ShardedFitted> {
    if columns.rows.is_some() {
        return Err(Error::Usage(format!(
            "{}: a file read in chunks is read whole: choose columns (FILE:COLUMNS), not rows",
            columns.arg
        )));
    }
    o.check().map_err(|e| Error::Usage(e.to_string()))?;
    if o.method == Method::Memoized {
        return Err(Error::Usage(
            "memoized VB keeps every chunk's statistics between visits: use --shards, or \
             batch or svi on a file read in chunks"
                .into(),
        ));
    }
    if matches!(o.method, Method::Stochastic(s) if s.batch_rows > 0) {
        return Err(Error::Usage(
            "minibatches of random rows (--batch-rows) are drawn from data in memory: use \
             --shards, or --chunk-rows (each chunk a minibatch) with --stream"
                .into(),
        ));
    }
    if chunk_rows == 0 {
        return Err(Error::Usage("chunks of 0 rows: give 1 or more".into()));
    }
    let chunks = Chunks::open(data_name, path, chunk_rows, columns)?;
    if chunks.bounds.is_empty() {
        return Err(Error::Usage(format!("{}: no rows", path.display())));
    }
    // The replica of the globals: chunk 0, started as `Sharded::start` starts shard 0.
    let mut home = Shard::new(name, source, &chunks.data(0)?, None)?;
    let (split, order) = {
        let v = home.vmp();
        let split = v.split(None).map_err(|e| Error::Run(e.to_string()))?;
        (split, v.default_order())
    };
    let (locals, globals): (Vec<NodeId>, Vec<NodeId>) =
        order.iter().partition(|&&id| split.is_local(id));
    // A chunk's locals restart at every visit. One local node's update given the globals is its
    // exact optimum, so each pass is a coordinate step and the bound cannot fall; with several,
    // the passes may end at different local optima and batch's promise would not hold.
    if matches!(o.method, Method::Batch) && locals.len() > 1 {
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
    let stream = Stream {
        name,
        source,
        chunks: &chunks,
        split: &split,
        order: &order,
        locals: &locals,
        globals: &globals,
    };
    let (run, finals, best) = o.run_restarts(
        observer,
        |run: &Run| run.trace.last().copied().unwrap_or(f64::NAN),
        |r, see| stream.run(&mut home, o, r, see),
    )?;
    let count = chunks.bounds.len();
    let values_per_sweep = 2
        * count
        * globals
            .iter()
            .map(|&g| home.vmp().moments(g).len())
            .sum::<usize>();
    Ok(ShardedFitted {
        shards: vec![home],
        rows: chunks.bounds.iter().map(|(a, b)| b - a).collect(),
        bound_trace: run.trace,
        converged: run.converged,
        values_per_sweep,
        epochs: run.epochs,
        steps: run.steps,
        restart_bounds: finals,
        best_restart: best,
        seed: o.seed.wrapping_add(best as u64),
        warnings: run.warnings.into_iter().map(crate::Warning::Run).collect(),
    })
}

/// What every restart of a streamed fit shares.
struct Stream<'a> {
    name: &'a str,
    source: &'a str,
    chunks: &'a Chunks,
    split: &'a Split,
    order: &'a [NodeId],
    locals: &'a [NodeId],
    globals: &'a [NodeId],
}

impl Stream<'_> {
    /// Restart r: the replica `home` started from seed `o.seed + r`, then batch or stochastic VB.
    fn run(
        &self,
        home: &mut Shard,
        o: &ShardRunOptions,
        r: usize,
        see: &mut SeeSweep<'_>,
    ) -> Result<Run> {
        let (split, locals, globals) = (self.split, self.locals, self.globals);
        home.initialize(o.seed.wrapping_add(r as u64))?;
        for &g in globals {
            home.vmp_mut().update(g).map_err(run_error)?;
        }
        let compile = |c: usize| -> Result<Shard> {
            Shard::new(self.name, self.source, &self.chunks.data(c)?, None)
        };
        let count = self.chunks.bounds.len();
        let observed = Cell::new(0usize);
        // The importance-sampled variance of the last pass's local terms (for the decrease test's
        // Monte Carlo allowance; the chunks are dropped, so their round-off is not measured).
        let variance = Cell::new(0.0);
        // One pass: every chunk's local q optimised given `home`'s globals, then `visit`.
        let pass = |home: &Vmp, visit: &mut dyn FnMut(&mut Vmp) -> Result<()>| -> Result<()> {
            let state = home.global_state(split);
            observed.set(0);
            variance.set(0.0);
            for c in 0..count {
                let mut s = compile(c)?;
                let v = s.vmp_mut();
                v.set_global_state(split, &state)
                    .map_err(|e| Error::Run(e.to_string()))?;
                v.optimise_locals(split, locals).map_err(run_error)?;
                observed.set(observed.get() + v.observed_values());
                variance.set(variance.get() + v.sampling_variance());
                visit(v)?;
            }
            Ok(())
        };
        let mut run = Run {
            trace: Vec::new(),
            converged: false,
            epochs: Vec::new(),
            steps: 0,
            warnings: Vec::new(),
        };
        match o.method {
            Method::Batch => {
                for sweep in 1..=o.max_iter {
                    for &g in globals {
                        // Summed exactly, rounded once (as `--shards` and `occam.distributed`).
                        let mut total: Option<ExactSums> = None;
                        let no_sum =
                            |e: NotASum| run_error(e.messages_to(home.vmp().names()[g.index()]));
                        pass(home.vmp(), &mut |v| {
                            let m = v.local_messages(split, g);
                            total
                                .get_or_insert_with(|| ExactSums::new(m.len()))
                                .add(&m)
                                .map_err(no_sum)
                        })?;
                        let total = total
                            .expect("one chunk at least")
                            .rounded()
                            .map_err(no_sum)?;
                        home.vmp_mut()
                            .update_global(split, g, total)
                            .map_err(run_error)?;
                    }
                    let mut local = ExactSum::new();
                    pass(home.vmp(), &mut |v| {
                        local.add(v.split_bound(split).0);
                        Ok(())
                    })?;
                    let local = local.rounded().unwrap_or(f64::NAN);
                    let bound = local + home.vmp().split_bound(split).1;
                    let prev = run.trace.last().copied();
                    run.trace.push(bound);
                    if see(sweep, bound, prev.map(|p| bound - p)) == Flow::Stop {
                        return Err(run_error(RunError::Interrupted { iteration: sweep }));
                    }
                    let Some(prev) = prev else { continue };
                    check_decrease(
                        prev,
                        bound,
                        || sampling_allowance(variance.get()),
                        sweep,
                        || "(streamed sweep)".into(),
                        o.decrease_is_error,
                        &mut run.warnings,
                    )
                    .map_err(run_error)?;
                    if (bound - prev).abs() / observed.get().max(1) as f64 <= o.tol {
                        run.converged = true;
                        break;
                    }
                }
            }
            Method::Stochastic(options) => {
                let mut svi = Svi::new(
                    home.vmp(),
                    split.clone(),
                    Some(self.order.to_vec()),
                    options,
                )
                .map_err(run_error)?;
                // The minibatch order is the restart's too: seed + r.
                let seed = o.seed.wrapping_add(r as u64);
                let mut order = occam_core::engine::EpochOrder::new(seed, count);
                for epoch in 1..=o.max_iter {
                    for &c in order.next_epoch() {
                        let mut s = compile(c)?;
                        svi.step(s.vmp_mut(), count as f64).map_err(run_error)?;
                    }
                    if epoch % options.bound_every != 0 && epoch != o.max_iter {
                        continue;
                    }
                    home.vmp_mut()
                        .set_global_state(split, svi.globals())
                        .map_err(|e| Error::Run(e.to_string()))?;
                    let mut local = ExactSum::new();
                    pass(home.vmp(), &mut |v| {
                        local.add(v.split_bound(split).0);
                        Ok(())
                    })?;
                    let local = local.rounded().unwrap_or(f64::NAN);
                    let bound = local + home.vmp().split_bound(split).1;
                    let prev = run.trace.last().copied();
                    run.trace.push(bound);
                    run.epochs.push(epoch);
                    if see(epoch, bound, prev.map(|p| bound - p)) == Flow::Stop {
                        return Err(run_error(RunError::Interrupted { iteration: epoch }));
                    }
                    if prev
                        .is_some_and(|p| (bound - p).abs() / observed.get().max(1) as f64 <= o.tol)
                    {
                        run.converged = true;
                        break;
                    }
                }
                run.steps = svi.steps();
            }
            Method::Memoized => {
                return Err(Error::Usage("memoized VB on a file read in chunks".into()))
            }
        }
        Ok(run)
    }
}
