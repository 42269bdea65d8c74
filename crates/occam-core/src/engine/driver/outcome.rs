//! What a run is asked and what it gives back: [`RunOptions`], the outcome ([`Fit`], [`Stop`],
//! typed [`Warning`]s) and the [`Observer`] called after every sweep.

use std::time::Duration;

use super::super::Vmp;
use crate::error::RunError;
use crate::graph::NodeId;
use crate::network::Init;

/// When to stop and how strict to be.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Maximum number of full sweeps (per restart, and again for the pruning stage).
    pub max_iter: usize,
    /// Stop when the bound's change over a sweep, per observed value, is at most `tol` nats:
    /// |ΔL| ≤ `tol` · n, with n the number of observed values ([`Vmp::observed_values`], at
    /// least 1). Unlike a change relative to |L|, this does not loosen as |L| grows with the data.
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
    /// deletion whenever the converged bound increases (Winn §1.8.7 footnote 8, §3.3: model order
    /// adapted by deleting components, judged by L). With a screen attached
    /// ([`Vmp::set_prune_screen`]) deletions are tried on a subsample first and only those it
    /// cannot reject get the full trial (module `prune`).
    pub prune_components: bool,
    /// Settle the first sweep: the updates that come before the first node with an informative
    /// start (a mixture index's k-means start, a random draw, given values) are repeated until
    /// the bound's change over one round of them is within `tol` (at most [`SETTLE_ROUNDS`](crate::engine::SETTLE_ROUNDS)
    /// rounds), and only then is that node updated. From a k-means start, the parameters of a
    /// mean-field mixture (q(μ_k) q(Λ_k)) otherwise take the first sweeps to find each other:
    /// the first update of μ_k sees Λ_k at its prior. The rounds read the index's cached sums
    /// and cost little next to a sweep over the data.
    pub settle: bool,
    /// Run a mixture from several candidate starts and keep the best: where a mixture index
    /// starts from its default k-means labels, the model is also started from random labels
    /// (twice, `RANDOM_STARTS`, seeded from the restart's seed),
    /// and the state with the highest bound goes on (to pruning, if asked). A random start that
    /// cannot reach the best bound so far ends early. Costs the other starts' sweeps (counted in
    /// [`Fit::iterations`], shown to the observer as [`Stage::Candidate`]); the fit's trace is
    /// the kept start's. See `driver/candidates.rs` for the data where each start loses.
    pub candidate_starts: bool,
    /// Run exactly `max_iter` sweeps, never stopping on `tol` (benchmarks that need a fit to keep
    /// sweeping, e.g. the view's responsiveness at a thousand sweeps a second; the run ends
    /// with [`StopReason::MaxIter`] and its not-converged warning, as any run that hits the limit).
    pub fixed_sweeps: bool,
}

/// The most rounds of a settled first sweep ([`RunOptions::settle`]). From a prior start the
/// coupling of a mean-field pair such as q(μ_k) q(Λ_k) shrinks by about 1/N_k per round (N_k
/// the points of component k): three rounds leave it at round-off for every component with
/// more than a few points (on the issue-2 GMM cases, 2 rounds gave 3 sweeps, 3 rounds 2 sweeps
/// and the same bound), while a mostly empty component's slower coupling is left to the sweeps,
/// where the rounds would cost more than they save (40 components of dimension 10).
pub const SETTLE_ROUNDS: usize = 3;

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
            settle: false,
            candidate_starts: false,
            fixed_sweeps: false,
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
        /// The tolerance (nats per observed value).
        tol: f64,
    },
}

/// Why a run's sweeps stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The bound's change per observed value reached the tolerance.
    Converged,
    /// The iteration limit came first.
    MaxIter,
    /// The observer stopped the run (a callback, Ctrl-C); the state is the last sweep's.
    Interrupted,
}

/// Why the kept restart stopped, with the convergence criterion's last value.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Stop {
    /// Converged or out of iterations.
    pub reason: StopReason,
    /// |ΔL| / n over the last sweep (nats per observed value); `None` after a single sweep.
    pub change_per_value: Option<f64>,
    /// The tolerance it was held to.
    pub tol: f64,
    /// n: the number of observed values (at least 1).
    pub observed_values: usize,
    /// The iteration limit.
    pub max_iter: usize,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let change = match self.change_per_value {
            Some(c) => format!("{c:.3e}"),
            None => "unknown".into(),
        };
        match self.reason {
            StopReason::Converged => write!(
                f,
                "converged: |ΔL| per observed value {change} ≤ tol {:e} (n = {})",
                self.tol, self.observed_values
            ),
            StopReason::MaxIter => write!(
                f,
                "stopped at the iteration limit {}: |ΔL| per observed value {change} > tol {:e} (n = {})",
                self.max_iter, self.tol, self.observed_values
            ),
            StopReason::Interrupted => write!(
                f,
                "interrupted: |ΔL| per observed value {change}, not yet at tol {:e} (n = {})",
                self.tol, self.observed_values
            ),
        }
    }
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
            Warning::NotConverged { max_iter, tol } => write!(
                f,
                "did not converge in {max_iter} iterations (tolerance {tol:e} per observed value)"
            ),
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
    /// Why the kept restart's last stage stopped.
    pub stop: Stop,
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
    /// Full pruning trials run (deletions and relabellings; a deletion the screen rejects has
    /// none).
    pub prune_trials: usize,
    /// What the pruning screen did, when one is attached ([`Vmp::set_prune_screen`]).
    pub prune_screen: Option<super::super::ScreenCounts>,
    /// Final bound of every restart.
    pub restart_bounds: Vec<f64>,
    /// Mixture components in use at the end of every restart, summed over the mixture indices
    /// (see [`Vmp::components_in_use`]).
    pub restart_components: Vec<usize>,
    /// Index of the kept restart.
    pub best_restart: usize,
    /// Seed of the kept restart's initialisation.
    pub seed: u64,
    /// What the start offered by the caller did ([`Vmp::offer_start`]), when it was tried (in
    /// restart 0: its state is the one left in the model only if that restart is kept).
    pub offered: Option<Offered>,
}

/// One more candidate start, offered by the caller for the next run ([`Vmp::offer_start`]):
/// the plate sweep's warm start from the previous size's fit.
#[derive(Clone, Debug)]
pub struct OfferedStart {
    /// The nodes that start otherwise, each from its `Init` (a mixture index from given
    /// moments); every other node starts as it does in the run's first start.
    pub starts: Vec<(NodeId, Init)>,
    /// How much higher than the best other start's its converged bound must be for it to be
    /// kept (nats; a tie keeps the other).
    pub margin: f64,
    /// Whether to try it, asked of the model in the best other start's converged state.
    pub when: fn(&Vmp) -> bool,
}

/// What an offered start did ([`Fit::offered`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Offered {
    /// The bound of its last sweep: converged, or where it ended early (NaN when it failed).
    pub bound: f64,
    /// The converged bound of the best other start, which it was judged against (before
    /// the pruning stage, as the other starts are).
    pub against: f64,
    /// Whether its state is the one kept (its bound above `against` by more than the margin).
    pub kept: bool,
    /// Whether it ended before converging, unable to pass `against` by the margin.
    pub ended_early: bool,
    /// Its sweeps.
    pub sweeps: usize,
    /// Why its run failed (a numerical error; the best other start is kept), if it did.
    pub failed: Option<String>,
}

/// Which part of a run a sweep belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Sweeps from the initialisation to convergence.
    Sweeps,
    /// Re-convergence and trial sweeps while deleting mixture components.
    Pruning,
    /// Sweeps from a further candidate start ([`RunOptions::candidate_starts`]), compared with
    /// the first start's by the converged bound.
    Candidate,
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

    /// Called after every sweep's node updates, before its bound is computed: a step that changes
    /// q without lowering the bound (a parameter-expansion rotation, `occam::latent::rotation`).
    /// The default does nothing.
    fn after_updates(&mut self, _vmp: &mut Vmp) -> Result<(), RunError> {
        Ok(())
    }
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
