//! A sharded fit as a normal fit runs: restarts (restart r from seed + r, the best bound kept),
//! strict mode (a decrease of the bound is an error, else a warning) and an [`Observer`] that
//! sees every sweep, pass or bound evaluation — the same flags and outputs as
//! [`Vmp::run`](crate::engine::Vmp::run) on all the data.
//!
//! The kept restart. A restart's state lives on its shards (each holds its rows' local q), so
//! keeping the best one would copy every local q. Instead every restart runs from its seed alone
//! and is deterministic, so the best one, unless it was the last, is run once more from its seed:
//! the same bits, at the cost of at most one more fit, and no local state copied (which on Dask
//! would travel to the client).

use std::time::Instant;

use super::*;

/// How a sharded fit updates (see [`Sharded::fit`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShardMethod {
    /// Every shard's locals, then each global from all of them: the single-process schedule.
    Batch,
    /// Memoized VB (Hughes & Sudderth 2013): one shard at a time, the globals from every shard.
    Memoized,
    /// Stochastic VB (Hoffman et al. 2013): each shard a minibatch; [`Sharded::fit`] draws
    /// restart r's minibatch order from its seed, seed + r (the options' own seed is not read).
    Stochastic(SviOptions),
}

impl ShardMethod {
    /// The method's name as the surfaces spell it (`batch`, `memoized`, `svi`).
    pub fn name(&self) -> &'static str {
        match self {
            ShardMethod::Batch => "batch",
            ShardMethod::Memoized => "memoized",
            ShardMethod::Stochastic(_) => "svi",
        }
    }
}

/// The options of [`Sharded::fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShardRunOptions {
    /// The method.
    pub method: ShardMethod,
    /// The seed of the first restart (restart r starts from seed + r, as a normal fit's).
    pub seed: u64,
    /// The number of restarts (≥ 1); the highest final bound is kept.
    pub restarts: usize,
    /// Sweeps (passes, epochs) per restart at most.
    pub max_iter: usize,
    /// Stop when the bound's change per observed value is at most this.
    pub tol: f64,
    /// A decrease of the bound is an error (`--strict`) rather than a warning. Stochastic VB does
    /// not promise an increase, so it refuses strict mode.
    pub decrease_is_error: bool,
}

/// What sees one restart's sweeps: `see(sweep, bound, change)`, whose [`Flow::Stop`] ends the fit.
pub type SeeSweep<'a> = dyn FnMut(usize, f64, Option<f64>) -> Flow + 'a;

impl ShardRunOptions {
    /// The restart loop of every sharded surface ([`Sharded::fit`], the CLI's file streamed in
    /// chunks): restart r = 0, 1, … by `run(r, see)`, where `see` passes each sweep to `observer`
    /// as a [`Progress`] of restart r (one clock for the whole fit); then the first of the
    /// highest final bounds (`final_bound`; a NaN bound is never kept over a number) is kept,
    /// run once more from its seed with an observer that sees nothing unless it was the last
    /// (module docs). Returns the kept run, every restart's final bound, and the kept restart.
    pub fn run_restarts<R, E>(
        &self,
        observer: &mut dyn Observer,
        final_bound: impl Fn(&R) -> f64,
        mut run: impl FnMut(usize, &mut SeeSweep<'_>) -> Result<R, E>,
    ) -> Result<(R, Vec<f64>, usize), E> {
        let clock = Instant::now();
        let mut runs = Vec::with_capacity(self.restarts);
        for r in 0..self.restarts {
            let mut see = |iteration: usize, bound: f64, change: Option<f64>| {
                observer.observe(&Progress {
                    restart: r,
                    restarts: self.restarts,
                    iteration,
                    max_iter: self.max_iter,
                    bound,
                    change,
                    elapsed: clock.elapsed(),
                    stage: Stage::Sweeps,
                })
            };
            runs.push(run(r, &mut see)?);
        }
        let bounds: Vec<f64> = runs.iter().map(&final_bound).collect();
        let best = best_restart(&bounds);
        let kept = if best + 1 == runs.len() {
            runs.pop().expect("one restart at least")
        } else {
            run(best, &mut |_, _, _| Flow::Continue)?
        };
        Ok((kept, bounds, best))
    }

    /// Why these options are not valid, if they are not.
    pub fn check(&self) -> Result<(), RunError> {
        if self.restarts == 0 {
            return Err(RunError::Schedule("0 restarts: give 1 or more".into()));
        }
        if let ShardMethod::Stochastic(o) = self.method {
            o.check()?;
            if self.decrease_is_error {
                return Err(RunError::Schedule(
                    "strict mode fails on a decrease of the bound, which stochastic VB does not \
                     promise to avoid (its steps follow a noisy gradient): use batch or memoized"
                        .into(),
                ));
            }
        }
        Ok(())
    }
}

/// The first of the highest of `bounds` (a NaN bound is never kept over a number); 0 if empty.
fn best_restart(bounds: &[f64]) -> usize {
    let mut best = 0;
    for (r, b) in bounds.iter().enumerate() {
        if *b > bounds[best] || bounds[best].is_nan() && !b.is_nan() {
            best = r;
        }
    }
    best
}

/// What [`Sharded::fit`] reached: the kept restart's run and every restart's bound.
#[derive(Clone, Debug)]
pub struct ShardedRun {
    /// The kept restart's bound after each sweep (pass; for stochastic VB each evaluation).
    pub bound_trace: Vec<f64>,
    /// Whether the kept restart's bound's change per observed value fell to the tolerance.
    pub converged: bool,
    /// Stochastic VB: the epoch of each entry of `bound_trace` (empty otherwise).
    pub epochs: Vec<usize>,
    /// Stochastic VB: the minibatch steps of the kept restart (0 otherwise).
    pub steps: u64,
    /// The final bound of every restart.
    pub restart_bounds: Vec<f64>,
    /// The kept restart (0-based).
    pub best_restart: usize,
    /// Its seed.
    pub seed: u64,
    /// What a user should know: the bound's decreases (batch, memoized, without strict mode).
    pub warnings: Vec<Warning>,
}

impl Sharded {
    /// Fits from the sharded start ([`Sharded::start`]) of every restart r = 0, 1, … (seed
    /// `seed + r`) by `o.method`, and leaves the shards in the restart with the highest final
    /// bound (module docs: re-run from its seed unless it was the last). `observer` sees every
    /// sweep (pass, bound evaluation) of every restart but the re-run; a [`Flow::Stop`] ends the
    /// fit with [`RunError::Interrupted`].
    pub fn fit(
        &mut self,
        o: &ShardRunOptions,
        observer: &mut dyn Observer,
    ) -> Result<ShardedRun, RunError> {
        self.fit_with(o, observer, None)
    }

    /// [`Sharded::fit`] whose stochastic minibatches of random rows (`batch_rows` > 0) are
    /// compiled by `make` ([`Sharded::svi_batches`]).
    pub fn fit_with(
        &mut self,
        o: &ShardRunOptions,
        observer: &mut dyn Observer,
        mut make: Option<&mut MakeBatch<'_>>,
    ) -> Result<ShardedRun, RunError> {
        o.check()?;
        let (mut run, bounds, best) = o.run_restarts(
            observer,
            |run: &ShardedRun| run.bound_trace.last().copied().unwrap_or(f64::NAN),
            |r, see| self.fit_one(o, r, make.as_deref_mut(), see),
        )?;
        run.restart_bounds = bounds;
        run.best_restart = best;
        Ok(run)
    }

    /// Restart r of [`Sharded::fit`]: its start, then its run.
    fn fit_one(
        &mut self,
        o: &ShardRunOptions,
        r: usize,
        make: Option<&mut MakeBatch<'_>>,
        see: &mut SeeSweep<'_>,
    ) -> Result<ShardedRun, RunError> {
        let seed = o.seed.wrapping_add(r as u64);
        self.start(seed)?;
        let mut run = ShardedRun {
            bound_trace: Vec::new(),
            converged: false,
            epochs: Vec::new(),
            steps: 0,
            restart_bounds: Vec::new(),
            best_restart: r,
            seed,
            warnings: Vec::new(),
        };
        match o.method {
            ShardMethod::Batch | ShardMethod::Memoized => {
                let memoized = o.method == ShardMethod::Memoized;
                let (fit, warnings) =
                    self.run_observed(o.max_iter, o.tol, memoized, o.decrease_is_error, see)?;
                run.bound_trace = fit.bound_trace;
                run.converged = fit.converged;
                run.warnings = warnings;
            }
            ShardMethod::Stochastic(options) => {
                // The minibatch order is the restart's too: seed + r.
                let options = SviOptions { seed, ..options };
                let fit = self.svi_batches(o.max_iter, o.tol, options, make, see)?;
                run.bound_trace = fit.bound_trace;
                run.converged = fit.converged;
                run.epochs = fit.epochs;
                run.steps = fit.steps;
            }
        }
        Ok(run)
    }
}
