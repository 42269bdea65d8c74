//! The one run loop of Occam — Winn Algorithm 1.1: sweeps of node updates until the bound
//! converges, restarts from seeded initialisations that keep the best state by snapshot, greedy
//! pruning of surplus mixture components (Winn §1.8.7 footnote 8), detection of a decreasing
//! bound (an error in strict mode, a typed warning with its size otherwise), and an [`Observer`]
//! called after every sweep (iteration, bound, elapsed time) that may stop the run.
//!
//! The facade library (`occam`), its Python package and the CLI all run inference through
//! [`Vmp::run_observed`]; they add only reporting.

use std::time::Instant;

use super::qblock::QBlock;
use super::{NodeState, Vmp};
use crate::error::RunError;
use crate::graph::NodeId;

mod candidates;
mod outcome;
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
            let mut fit = self.one_run(opts, &order, &mut watch, fresh.then_some(seed))?;
            fit.seed = seed;
            fit.best_restart = r;
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
        Ok(fit)
    }

    /// One restart: sweeps to convergence (from each candidate start when the restart was
    /// initialised from `seed`, [`RunOptions::candidate_starts`]), then (if asked) the pruning
    /// stage.
    fn one_run(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        seed: Option<u64>,
    ) -> Result<Fit, RunError> {
        let (first, other) = self.candidate_sweeps(opts, order, watch, seed)?;
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

    /// [`Vmp::sweeps`] for a trial judged against `floor` (a pruning trial, a further candidate
    /// start): it ends early once its bound cannot reach it ([`Watch::floor`]).
    pub(super) fn sweeps_above(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        floor: Option<f64>,
    ) -> Result<Sweeps, RunError> {
        watch.floor = floor;
        let run = self.sweeps(opts, order, watch);
        watch.floor = None;
        run
    }

    /// Sweeps until the bound's change per observed value is at most `tol`, or `max_iter` sweeps.
    pub(super) fn sweeps(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
    ) -> Result<Sweeps, RunError> {
        if !self.initialized {
            self.initialize(opts.seed)?;
        }
        let mut trace: Vec<f64> = Vec::new();
        let mut warnings = Vec::new();
        let observed_values = self.observed_values().max(1);
        let mut stop = Stop {
            reason: StopReason::MaxIter,
            change_per_value: None,
            tol: opts.tol,
            observed_values,
            max_iter: opts.max_iter,
        };
        let mut last = f64::NEG_INFINITY;
        for iteration in 1..=opts.max_iter {
            let mut order = order;
            if iteration == 1 && opts.settle {
                let (settling, rest) = order.split_at(self.uninformed_prefix(order));
                self.settle(settling, opts, observed_values, &mut warnings)?;
                order = rest;
            }
            for &id in order {
                self.update(id)?;
                // Until every factor has been updated once, initial moments (e.g. a one-hot draw) need
                // not be consistent with φ, so L is only a bound from the second sweep on.
                if opts.check_every_update && iteration > 1 {
                    let l = self.bound();
                    self.check_decrease(last, l, iteration, id, opts, &mut warnings)?;
                    last = l;
                }
            }
            watch.observer.after_updates(self)?;
            let l = self.bound();
            if !l.is_finite() {
                // Name the node whose term is not finite (a prior so vague its ln p overflows,
                // e.g. a precision of 1e-310), so the error points at a variable of the model.
                let terms = self.node_bounds();
                let (node, what) = match terms.iter().position(|t| !t.is_finite()) {
                    Some(i) => (
                        self.nodes[i].name.clone(),
                        format!(
                            "its term of the bound is {} (the bound is {l}): a parameter too extreme for double precision?",
                            terms[i]
                        ),
                    ),
                    None => ("(bound)".into(), format!("bound is {l}")),
                };
                return Err(RunError::Numerical {
                    node,
                    element: 0,
                    what,
                });
            }
            let prev = trace.last().copied();
            if let Some(prev) = prev {
                let after = *order.last().unwrap_or(&NodeId(0));
                self.check_decrease(prev, l, iteration, after, opts, &mut warnings)?;
            }
            trace.push(l);
            last = l;
            let flow = watch.observer.observe(&Progress {
                restart: watch.restart,
                restarts: watch.restarts,
                iteration,
                max_iter: opts.max_iter,
                bound: l,
                change: prev.map(|p| l - p),
                elapsed: watch.start.elapsed(),
                stage: watch.stage,
            });
            if flow == Flow::Stop {
                return Err(RunError::Interrupted { iteration });
            }
            if let Some(prev) = prev {
                let change = (l - prev).abs() / observed_values as f64;
                stop.change_per_value = Some(change);
                if change <= opts.tol && !opts.fixed_sweeps {
                    stop.reason = StopReason::Converged;
                    break;
                }
            }
            if let (Some(floor), [.., a, b, c]) = (watch.floor, trace.as_slice()) {
                let (before, last) = (b - a, c - b);
                if last >= 0.0 && 2.0 * last <= before && c + PRUNE_REACH * last < floor {
                    break;
                }
            }
        }
        Ok(Sweeps {
            trace,
            warnings,
            stop,
        })
    }

    /// The length of the leading part of `order` whose nodes start from their priors (see
    /// [`RunOptions::settle`]); 0 when no node of `order` has an informative start.
    fn uninformed_prefix(&self, order: &[NodeId]) -> usize {
        order
            .iter()
            .position(|id| !matches!(*self.start(id.0), super::Init::Prior))
            .unwrap_or(0)
    }

    /// Rounds of the updates `prefix` until the bound's change over a round is at most `tol`
    /// per observed value, or [`SETTLE_ROUNDS`]. The nodes after the prefix keep their starting
    /// moments throughout, so the bound's change over a round is the change the prefix made (a
    /// sum of coordinate-ascent steps, never negative, checked as every sweep is).
    fn settle(
        &mut self,
        prefix: &[NodeId],
        opts: &RunOptions,
        observed_values: usize,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), RunError> {
        if prefix.is_empty() {
            return Ok(());
        }
        let mut last = f64::NEG_INFINITY;
        for round in 1..=SETTLE_ROUNDS {
            for &id in prefix {
                self.update(id)?;
            }
            if round == SETTLE_ROUNDS {
                break;
            }
            let l = self.bound();
            if !l.is_finite() {
                break;
            }
            if round > 1 {
                let after = *prefix.last().expect("a non-empty prefix");
                self.check_decrease(last, l, 1, after, opts, warnings)?;
                if (l - last).abs() / observed_values as f64 <= opts.tol {
                    break;
                }
            }
            last = l;
        }
        Ok(())
    }

    fn check_decrease(
        &self,
        prev: f64,
        now: f64,
        iteration: usize,
        after: NodeId,
        opts: &RunOptions,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), RunError> {
        // A decrease is reported when it exceeds both 10⁻⁹ of |L| and what round-off can move the
        // two bounds compared (each by up to `bound_roundoff`, measured at the current state; it
        // costs about one bound evaluation, so only when the first test fails).
        // With importance-sampled nodes (Winn §4.4) the bound holds their ln Ẑ estimates: the
        // draws are keyed by pass, not sweep, so each sweep reuses the same normals, but the
        // proposal moves with the parents and a sweep can lower the estimate by Monte Carlo
        // noise alone. Decreases within 4 standard errors of the difference of two estimates
        // (each ≈ √Σ(1/S_eff − 1/S), sampled `estimate`) are that noise and not reported.
        if prev.is_finite()
            && now < prev - 1e-9 * (1.0 + prev.abs())
            && prev - now > 2.0 * self.bound_roundoff()
            && prev - now > self.sampling_noise()
        {
            let node = self.nodes[after.0].name.clone();
            if opts.decrease_is_error {
                return Err(RunError::BoundDecreased {
                    iteration,
                    by: prev - now,
                    node,
                });
            }
            warnings.push(Warning::BoundDecreased {
                iteration,
                by: prev - now,
                node,
            });
        }
        Ok(())
    }

    /// 4 standard errors of the difference of two bounds from the importance-sampled nodes'
    /// ln Ẑ estimates: 4 √(2 Σ (1/S_eff − 1/S)) over their latent elements; 0 without them.
    fn sampling_noise(&self) -> f64 {
        let var: f64 = self
            .sampled_nodes()
            .iter()
            .flat_map(|n| n.samples.iter().zip(&n.s_eff))
            .map(|(&s, &s_eff)| (1.0 / s_eff - 1.0 / s as f64).max(0.0))
            .sum();
        4.0 * (2.0 * var).sqrt()
    }

    /// Every node's state (φ, u, A), to restore later: each block's snapshot of its members
    /// (`QBlock::snapshot`), and the moments of deterministic nodes and constants.
    pub(crate) fn snapshot(&self) -> Vec<NodeState> {
        (0..self.nodes.len())
            .map(|i| match self.block_of(i) {
                Some(block) => block.snapshot(self, i),
                None => self.nodes[i].q.clone(),
            })
            .collect()
    }

    /// Puts back a snapshot and drops every cached product.
    pub(crate) fn restore(&mut self, mut state: Vec<NodeState>) {
        self.put_back(&mut state, false);
    }

    /// [`Vmp::snapshot`] into `buf`, reusing its buffers, for trials repeated from one state
    /// (pruning): a fresh snapshot per trial allocated and faulted in a copy of every state,
    /// 15% of the time of a GMM fit at N = 10⁶. Fully observed nodes, whose state no update
    /// changes (an observed node is never MAP), are not copied.
    pub(crate) fn snapshot_into(&self, buf: &mut Vec<NodeState>) {
        buf.resize_with(self.nodes.len(), NodeState::default);
        for (i, out) in buf.iter_mut().enumerate() {
            if self.fully_observed(i) {
                continue;
            }
            match self.block_of(i) {
                Some(block) => block.snapshot_into(self, i, out),
                None => out.copy_from(&self.nodes[i].q),
            }
        }
    }

    /// Puts back a snapshot of [`Vmp::snapshot_into`] by swapping (`buf` then holds the replaced
    /// states, whose buffers the next snapshot reuses) and drops every cached product.
    pub(crate) fn restore_swap(&mut self, buf: &mut [NodeState]) {
        self.put_back(buf, true);
    }

    /// Swaps `buf` in as every node's state (each block's `QBlock::restore_swap`) but, when
    /// `skip_observed`, fully observed nodes (which [`Vmp::snapshot_into`] leaves out).
    fn put_back(&mut self, buf: &mut [NodeState], skip_observed: bool) {
        let blocks = self.blocks.clone();
        for (i, s) in buf.iter_mut().enumerate() {
            if skip_observed && self.fully_observed(i) {
                continue;
            }
            match self.block_of[i] {
                Some(b) => blocks[b as usize].restore_swap(self, i, s),
                None => {
                    let n = &mut self.nodes[i];
                    std::mem::swap(&mut n.q, s);
                    // Per-element moments formed on request (`Vmp::moments`) belong to the old
                    // state.
                    n.lazy = Default::default();
                }
            }
        }
        self.changed_all();
    }

    /// Whether node `i` is a stochastic node with every element observed: its state (u(x), f(x))
    /// is set with the data and never updated.
    fn fully_observed(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        matches!(n.body, crate::network::Body::Stochastic(_)) && n.observed.is_all()
    }

    pub(crate) fn refresh_dependents(&mut self, i: usize) {
        let after = if matches!(self.nodes[i].body, crate::network::Body::Deterministic(_)) {
            let mut mark = vec![usize::MAX; self.nodes.len()];
            super::compile::deterministic_descendants(&self.nodes, i, &mut mark)
        } else {
            self.refresh_after[i].clone()
        };
        for j in after {
            self.refresh(j);
        }
    }
}

#[cfg(test)]
mod tests;
