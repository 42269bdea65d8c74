//! The one run loop of Occam — Winn Algorithm 1.1: sweeps of node updates until the bound
//! converges, restarts from seeded initialisations that keep the best state by snapshot, greedy
//! pruning of surplus mixture components (Winn §2.5.1 footnote 8), detection of a decreasing
//! bound (an error in strict mode, a typed warning with its size otherwise), and an [`Observer`]
//! called after every sweep (iteration, bound, elapsed time) that may stop the run.
//!
//! The facade library (`occam`), its Python package and the CLI all run inference through
//! [`Vmp::run_observed`]; they add only reporting.

use std::time::{Duration, Instant};

use super::{Role, State, Vmp};
use crate::error::RunError;
use crate::graph::NodeId;
use crate::moments::MomentKind;

/// When to stop and how strict to be.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Maximum number of full sweeps (per restart, and again for the pruning stage).
    pub max_iter: usize,
    /// Stop when the bound's change over a sweep is below `tol · |L|`.
    pub tol: f64,
    /// Update order (latent nodes); `None`: parents before children, as added.
    pub order: Option<Vec<NodeId>>,
    /// Seed of the first restart's initialisation; restart r uses `seed + r`.
    pub seed: u64,
    /// Number of restarts (at least 1); the state with the highest bound is kept.
    pub restarts: usize,
    /// A decrease of the bound is an error (tests, `--strict`) rather than a warning (users).
    pub decrease_is_error: bool,
    /// Compute the bound after every node update, not only after every sweep (slower; for tests).
    pub check_every_update: bool,
    /// After convergence, try deleting each used mixture component (smallest first) and keep a
    /// deletion whenever the converged bound increases (Winn §2.5.1 footnote 8, §3.3: model order
    /// adapted by deleting components, judged by L).
    pub prune_components: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_iter: 1000,
            tol: 1e-6,
            order: None,
            seed: 0,
            restarts: 1,
            decrease_is_error: false,
            check_every_update: false,
            prune_components: false,
        }
    }
}

/// Something a user should know about a run that nevertheless finished.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The bound decreased (VMP updates never decrease it: a bug or round-off), by `by` nats.
    BoundDecreased {
        /// Iteration (1-based, within its stage).
        iteration: usize,
        /// Size of the decrease.
        by: f64,
        /// The last node updated.
        node: String,
    },
    /// The tolerance was not reached within the iteration limit.
    NotConverged {
        /// The iteration limit.
        max_iter: usize,
        /// The tolerance.
        tol: f64,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::BoundDecreased {
                iteration,
                by,
                node,
            } => write!(
                f,
                "the lower bound decreased by {by:e} at iteration {iteration} (after updating `{node}`)"
            ),
            Warning::NotConverged { max_iter, tol } => {
                write!(f, "did not converge in {max_iter} iterations (tolerance {tol:e})")
            }
        }
    }
}

/// The outcome of a run (of the kept restart, whose state is left in the model).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Fit {
    /// Final lower bound (nats).
    pub bound: f64,
    /// Sweeps performed by the kept restart (including the pruning stage's trial sweeps).
    pub iterations: usize,
    /// Whether the tolerance was reached.
    pub converged: bool,
    /// Bound after every sweep of the kept restart; with pruning, then the pruning stage's
    /// re-convergence sweeps and one entry per accepted deletion (its converged bound).
    pub bound_trace: Vec<f64>,
    /// Index in `bound_trace` where the pruning stage starts; `None` without pruning.
    pub prune_start: Option<usize>,
    /// Per-node bound terms at the end, by name.
    pub node_bounds: Vec<(String, f64)>,
    /// Warnings of the kept restart (a bound decrease and its size, no convergence).
    pub warnings: Vec<Warning>,
    /// Mixture components deleted by pruning.
    pub pruned_components: usize,
    /// Final bound of every restart.
    pub restart_bounds: Vec<f64>,
    /// Index of the kept restart.
    pub best_restart: usize,
    /// Seed of the kept restart's initialisation.
    pub seed: u64,
}

/// Which part of a run a sweep belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Sweeps from the initialisation to convergence.
    Sweeps,
    /// Re-convergence and trial sweeps while deleting mixture components.
    Pruning,
}

/// What an [`Observer`] sees after every sweep.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Restart (0-based) and how many there are.
    pub restart: usize,
    /// Number of restarts.
    pub restarts: usize,
    /// Sweep within the stage (1-based).
    pub iteration: usize,
    /// Iteration limit of the stage.
    pub max_iter: usize,
    /// The bound after the sweep.
    pub bound: f64,
    /// The bound's change over the sweep (`None` after the first).
    pub change: Option<f64>,
    /// Time since the run started.
    pub elapsed: Duration,
    /// The stage.
    pub stage: Stage,
}

/// Whether a run goes on after an observer call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Continue,
    /// Stop now: the run ends with [`RunError::Interrupted`].
    Stop,
}

/// Called after every sweep: drives progress bars, Python callbacks, interruption.
pub trait Observer {
    /// Sees one sweep's progress; returns whether to go on.
    fn observe(&mut self, p: &Progress) -> Flow;
}

/// Observes nothing.
impl Observer for () {
    fn observe(&mut self, _: &Progress) -> Flow {
        Flow::Continue
    }
}

impl<F: FnMut(&Progress) -> Flow> Observer for F {
    fn observe(&mut self, p: &Progress) -> Flow {
        self(p)
    }
}

/// Where a stage's sweeps report to.
struct Watch<'a> {
    observer: &'a mut dyn Observer,
    restart: usize,
    restarts: usize,
    start: Instant,
    stage: Stage,
}

/// One stage's sweeps: the trace, warnings and whether they converged.
struct Sweeps {
    trace: Vec<f64>,
    warnings: Vec<Warning>,
    converged: bool,
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
        let mut best: Option<(Fit, Vec<State>)> = None;
        let mut bounds = Vec::new();
        for r in 0..restarts {
            let seed = opts.seed.wrapping_add(r as u64);
            if r > 0 || !self.initialized {
                self.initialize(seed)?;
            }
            let mut watch = Watch {
                observer: &mut *observer,
                restart: r,
                restarts,
                start,
                stage: Stage::Sweeps,
            };
            let mut fit = self.one_run(opts, &order, &mut watch)?;
            fit.seed = seed;
            fit.best_restart = r;
            bounds.push(fit.bound);
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
        Ok(fit)
    }

    /// One restart: sweeps to convergence, then (if asked) the pruning stage.
    fn one_run(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
    ) -> Result<Fit, RunError> {
        let first = self.sweeps(opts, order, watch)?;
        let mut trace = first.trace;
        let mut warnings = first.warnings;
        let mut converged = first.converged;
        let mut iterations = trace.len();
        let mut prune_start = None;
        let mut pruned = 0;
        if opts.prune_components && self.has_mixture_index() {
            // The pruning stage re-converges from the state reached (a sweep or two), then tries
            // each deletion; every accepted deletion appends its converged bound.
            prune_start = Some(trace.len());
            watch.stage = Stage::Pruning;
            let again = self.sweeps(opts, order, watch)?;
            iterations += again.trace.len();
            trace.extend(&again.trace);
            warnings.extend(again.warnings);
            converged = again.converged;
            let (kept, n, extra) = self.prune(
                opts,
                order,
                watch,
                *trace.last().unwrap_or(&f64::NEG_INFINITY),
            )?;
            pruned = n;
            iterations += extra.0;
            warnings.extend(extra.1);
            for (b, c) in kept {
                trace.push(b);
                converged = c;
            }
        }
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
            restart_bounds: Vec::new(),
            best_restart: 0,
            seed: opts.seed,
        })
    }

    /// Whether some latent Categorical node selects mixture components (pruning applies).
    fn has_mixture_index(&self) -> bool {
        (0..self.nodes.len()).any(|i| self.is_mixture_index(i))
    }

    fn is_mixture_index(&self, i: usize) -> bool {
        self.nodes[i]
            .children
            .iter()
            .any(|(_, r)| matches!(r, Role::Selector(_)))
            && self.nodes[i].has_latent()
            && matches!(self.nodes[i].kind, MomentKind::Categorical { .. })
            && !matches!(self.nodes[i].body, super::Body::Chain(_))
    }

    /// Greedy component deletion: for each mixture index, empty its used components one at a time
    /// (smallest total responsibility first), re-converge, and keep the change if L rises. Returns
    /// the (bound, converged) of each accepted deletion, their number, and the trial sweeps'
    /// count and warnings.
    #[allow(clippy::type_complexity)]
    fn prune(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        mut best: f64,
    ) -> Result<(Vec<(f64, bool)>, usize, (usize, Vec<Warning>)), RunError> {
        let indices: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.is_mixture_index(i))
            .collect();
        let mut kept = Vec::new();
        let mut sweeps = 0;
        let mut warnings = Vec::new();
        for i in indices {
            let MomentKind::Categorical { k } = self.nodes[i].kind else {
                continue;
            };
            'outer: loop {
                let n = &self.nodes[i];
                let mut used: Vec<(f64, usize)> = (0..k)
                    .map(|j| ((0..n.n).map(|e| n.u[e * k + j]).sum::<f64>(), j))
                    .filter(|(w, _)| *w > 0.5)
                    .collect();
                if used.len() <= 1 {
                    break;
                }
                used.sort_by(|a, b| a.0.total_cmp(&b.0));
                for &(_, j) in &used {
                    let saved = self.snapshot();
                    let node = &mut self.nodes[i];
                    for e in 0..node.n {
                        let row = &mut node.u[e * k..(e + 1) * k];
                        row[j] = 0.0;
                        let total: f64 = row.iter().sum();
                        if total > 0.0 {
                            row.iter_mut().for_each(|v| *v /= total);
                        } else {
                            row.iter_mut().enumerate().for_each(|(c, v)| {
                                *v = if c == j { 0.0 } else { 1.0 / (k - 1) as f64 }
                            });
                        }
                    }
                    self.changed(i);
                    self.refresh_dependents(i);
                    let trial = self.sweeps(opts, order, watch)?;
                    sweeps += trial.trace.len();
                    let bound = *trial.trace.last().unwrap_or(&f64::NEG_INFINITY);
                    if bound > best + opts.tol.max(1e-12) * best.abs() {
                        warnings.extend(trial.warnings);
                        kept.push((bound, trial.converged));
                        best = bound;
                        continue 'outer;
                    }
                    self.restore(saved);
                }
                break;
            }
        }
        let n = kept.len();
        Ok((kept, n, (sweeps, warnings)))
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

    /// Sweeps until the bound's change is below `tol · |L|` or `max_iter` sweeps.
    fn sweeps(
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
        let mut converged = false;
        let mut last = f64::NEG_INFINITY;
        for iteration in 1..=opts.max_iter {
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
            let l = self.bound();
            if !l.is_finite() {
                return Err(RunError::Numerical {
                    node: "(bound)".into(),
                    element: 0,
                    what: format!("bound is {l}"),
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
                if (l - prev).abs() <= opts.tol * l.abs() {
                    converged = true;
                    break;
                }
            }
        }
        Ok(Sweeps {
            trace,
            warnings,
            converged,
        })
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
        if prev.is_finite() && now < prev - 1e-9 * (1.0 + prev.abs()) {
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

    /// Every node's (φ, u, A), to restore later.
    pub(crate) fn snapshot(&self) -> Vec<State> {
        self.nodes
            .iter()
            .map(|n| (n.phi.clone(), n.u.clone(), n.a.clone()))
            .collect()
    }

    /// Puts back a snapshot and drops every cached product.
    pub(crate) fn restore(&mut self, state: Vec<State>) {
        for (n, (phi, u, a)) in self.nodes.iter_mut().zip(state) {
            n.phi = phi;
            n.u = u;
            n.a = a;
        }
        self.changed_all();
    }

    pub(crate) fn refresh_dependents(&mut self, i: usize) {
        for j in self.refresh_after[i].clone() {
            self.refresh(j);
        }
    }
}
