//! The one run loop of Occam — Winn Algorithm 1.1: sweeps of node updates until the bound
//! converges, restarts from seeded initialisations that keep the best state by snapshot, greedy
//! pruning of surplus mixture components (Winn §1.8.7 footnote 8), detection of a decreasing
//! bound (an error in strict mode, a typed warning with its size otherwise), and an [`Observer`]
//! called after every sweep (iteration, bound, elapsed time) that may stop the run.
//!
//! The facade library (`occam`), its Python package and the CLI all run inference through
//! [`Vmp::run_observed`]; they add only reporting.
//!
//! Files: this one runs restarts and a restart's stages; `sweeps` runs the sweeps of a stage
//! (and the settling of an uninformed prefix); `decrease` is the one test of a decreasing bound,
//! which sharded and streamed fits call too; `snapshot` saves and restores every node's state;
//! `candidates` runs a mixture's candidate starts; `outcome` holds what a run is asked and gives.

use std::time::Instant;

use super::{NodeState, Vmp};
use crate::error::RunError;
use crate::graph::NodeId;

mod candidates;
mod decrease;
mod outcome;
mod snapshot;
mod sweeps;
pub use decrease::{check_decrease, sampling_allowance};
pub use outcome::*;

/// Where a stage's sweeps report to.
pub(super) struct Watch<'a> {
    observer: &'a mut dyn Observer,
    restart: usize,
    restarts: usize,
    start: Instant,
    stage: Stage,
    /// A pruning trial's acceptance threshold: the sweeps end (and the trial is rejected) once
    /// the bound, with [`PRUNE_REACH`] times its last change added, stays below it while the
    /// changes shrink at least twofold per sweep.
    pub(super) floor: Option<f64>,
}

/// How many times its last change a pruning trial's bound is allowed to rise further when it is
/// judged against its acceptance threshold ([`Watch::floor`]). With changes shrinking at least
/// twofold per sweep the rest of a geometric run is at most one last change; 10 leaves room for
/// slower tails.
pub(super) const PRUNE_REACH: f64 = 10.0;

/// One stage's sweeps: the trace, warnings and why they stopped.
pub(super) struct Sweeps {
    pub(super) trace: Vec<f64>,
    pub(super) warnings: Vec<Warning>,
    pub(super) stop: Stop,
}

impl Vmp {
    /// Runs VMP to convergence — Winn Algorithm 1.1 — from `opts.restarts` seeded initialisations,
    /// keeps the state with the highest bound, then, if asked, prunes surplus mixture components.
    pub fn run(&mut self, opts: &RunOptions) -> Result<Fit, RunError> {
        self.run_observed(opts, &mut ())
    }

    /// [`Vmp::run`] with an observer called after every sweep. With one restart, a model that
    /// has already been initialised (or run) continues from its state; every further restart
    /// starts from `initialize(seed + r)`. The kept restart's state is restored from a snapshot,
    /// so the model ends exactly as a single run from the kept seed would leave it.
    pub fn run_observed(
        &mut self,
        opts: &RunOptions,
        observer: &mut dyn Observer,
    ) -> Result<Fit, RunError> {
        let restarts = opts.restarts.max(1);
        let order = self.schedule(opts)?;
        let start = Instant::now();
        let mut best: Option<(Fit, Vec<NodeState>)> = None;
        let mut bounds = Vec::new();
        let mut components = Vec::new();
        // The caller's offered start (`candidates`) joins restart 0's starts, once.
        let offered = self.offered.take();
        let mut tried = None;
        for r in 0..restarts {
            let seed = opts.seed.wrapping_add(r as u64);
            let fresh = r > 0 || !self.initialized;
            if fresh {
                self.initialize(seed)?;
            }
            let mut watch = Watch {
                observer: &mut *observer,
                restart: r,
                restarts,
                start,
                stage: Stage::Sweeps,
                floor: None,
            };
            let offer = offered.as_ref().filter(|_| r == 0);
            let mut fit = self.one_run(opts, &order, &mut watch, fresh.then_some(seed), offer)?;
            fit.seed = seed;
            fit.best_restart = r;
            if r == 0 {
                tried = fit.offered.take();
            }
            bounds.push(fit.bound);
            components.push(self.components_in_use().iter().map(|c| c.1).sum());
            if best.as_ref().is_none_or(|(b, _)| fit.bound > b.bound) {
                let state = if restarts > 1 {
                    self.snapshot()
                } else {
                    Vec::new()
                };
                best = Some((fit, state));
            }
        }
        let (mut fit, state) = best.expect("at least one restart");
        if restarts > 1 {
            self.restore(state);
        }
        fit.restart_bounds = bounds;
        fit.restart_components = components;
        fit.offered = tried;
        Ok(fit)
    }

    /// One restart: sweeps to convergence (from each candidate start when the restart was
    /// initialised from `seed`, [`RunOptions::candidate_starts`], and from the `offered` one,
    /// [`Vmp::offer_start`]), then (if asked) the pruning stage.
    fn one_run(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        seed: Option<u64>,
        offered: Option<&OfferedStart>,
    ) -> Result<Fit, RunError> {
        let (first, other, offered) = self.candidate_sweeps(opts, order, watch, seed, offered)?;
        let mut trace = first.trace;
        let mut warnings = first.warnings;
        let mut stop = first.stop;
        let mut iterations = trace.len() + other;
        let mut prune_start = None;
        let mut pruned = 0;
        let mut prune_trials = 0;
        let mut prune_screen = None;
        if opts.prune_components && self.has_mixture_index() {
            // The pruning stage re-converges from the state reached (a sweep or two), then tries
            // each deletion; every accepted deletion appends its converged bound.
            prune_start = Some(trace.len());
            watch.stage = Stage::Pruning;
            let again = self.sweeps(opts, order, watch)?;
            iterations += again.trace.len();
            trace.extend(&again.trace);
            warnings.extend(again.warnings);
            stop = again.stop;
            let p = self.prune(
                opts,
                order,
                watch,
                *trace.last().unwrap_or(&f64::NEG_INFINITY),
            )?;
            pruned = p.deleted;
            iterations += p.sweeps;
            warnings.extend(p.warnings);
            prune_trials = p.trials;
            prune_screen = p.screen;
            for (b, c) in p.kept {
                trace.push(b);
                stop = c;
            }
        }
        let converged = stop.reason == StopReason::Converged;
        if !converged {
            warnings.push(Warning::NotConverged {
                max_iter: opts.max_iter,
                tol: opts.tol,
            });
        }
        let terms = self.node_bounds();
        Ok(Fit {
            bound: trace.last().copied().unwrap_or(f64::NAN),
            iterations,
            converged,
            stop,
            bound_trace: trace,
            prune_start,
            node_bounds: self
                .nodes
                .iter()
                .zip(terms)
                .map(|(n, t)| (n.name.clone(), t))
                .collect(),
            warnings,
            pruned_components: pruned,
            prune_trials,
            prune_screen,
            restart_bounds: Vec::new(),
            restart_components: Vec::new(),
            best_restart: 0,
            seed: opts.seed,
            offered,
        })
    }

    /// The update order: `opts.order` checked against the latent nodes, or the default.
    fn schedule(&self, opts: &RunOptions) -> Result<Vec<NodeId>, RunError> {
        let Some(o) = &opts.order else {
            return Ok(self.default_order());
        };
        for id in o {
            if !self.nodes[id.0].has_latent() {
                return Err(RunError::Schedule(format!(
                    "`{}` has no latent elements to update",
                    self.nodes[id.0].name
                )));
            }
        }
        for id in self.default_order() {
            if !o.contains(&id) {
                return Err(RunError::Schedule(format!(
                    "latent node `{}` is missing from the order",
                    self.nodes[id.0].name
                )));
            }
        }
        Ok(o.clone())
    }

    /// Number of observed values: observed elements of stochastic nodes times the values each
    /// holds (a D-vector counts D). The tolerance is per observed value.
    pub fn observed_values(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| n.observed.count(n.n) * n.kind.value_len())
            .sum()
    }
}

#[cfg(test)]
mod tests;
