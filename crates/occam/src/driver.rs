//! Fitting a loaded model: the options a user sets, the outcome, and the mapping of run errors back
//! to the model's source. The run loop itself — tolerance stop, bound-decrease detection,
//! restarts restored from a snapshot, component pruning, the per-sweep observer — is
//! [`occam_core::engine::Vmp::run_observed`], the only one in Occam.

use occam_core::prelude::*;

use crate::warning::Warning;

use crate::error::{Error, Result};
use crate::lower::Compiled;
use crate::model::Loaded;

mod checks;
mod gated;
mod partial;
mod screen;
use checks::{identical_components, non_finite_posterior, still_rising};
pub use partial::fit_keeping_partial;
pub use screen::{PRUNE_SCREEN_FROM, SCREEN_BATCHES, SCREEN_ROWS};

/// How to run inference.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Seed of the first restart (restart r uses seed + r).
    pub seed: u64,
    /// Number of restarts; the best bound is kept.
    pub restarts: usize,
    /// Tolerance on the bound's change per sweep, in nats per observed value: the run has
    /// converged when |ΔL| / n ≤ `tol`, n the number of observed values.
    pub tol: f64,
    /// Maximum number of sweeps per restart.
    pub max_iter: usize,
    /// Update order by node name (`None`: parents before children).
    pub order: Option<Vec<String>>,
    /// Delete surplus mixture components when that raises the bound.
    pub prune: bool,
    /// A decreasing bound is an error rather than a warning.
    pub strict: bool,
    /// Rotate the two factors of every `dot(W, X)` of latent Gaussian vectors, and the state
    /// space of every linear dynamical system `dot(C, x)` (x a Gaussian Markov chain), after each
    /// sweep (parameter expansion, [`crate::rotation`]). `None` (the default): wherever
    /// the model has such a product — without them ARD's columns crawl for hundreds or thousands
    /// of sweeps and the run may stop on the crawl, at a lower bound with surplus columns on;
    /// `Some(true)`: required, a located error when the model has neither; `Some(false)`: never.
    pub rotate: Option<bool>,
    /// Settle the first sweep: repeat the updates before the first informatively started node
    /// (a mixture index's k-means start) until their change of the bound is within `tol`
    /// ([`occam_core::engine::RunOptions::settle`]).
    pub settle: bool,
    /// Run each restart of a model with a mixture index from several candidate starts — the
    /// k-means start and two random-label starts (one that cannot reach the best bound so far
    /// ends early) — and keep the best ([`occam_core::engine::RunOptions::candidate_starts`]);
    /// `false`: the k-means start alone (one start per restart, as scikit-learn's `n_init=1`).
    pub candidate_starts: bool,
    /// With `prune`, screen the deletions of a mixture along a data plate of at least this many
    /// rows on a seeded subsample first (`driver/screen.rs`, [`PRUNE_SCREEN_FROM`] by default),
    /// so that only those the subsample cannot reject get the full trial; `usize::MAX`: never.
    pub prune_screen_from: usize,
    /// Run exactly `max_iter` sweeps per restart, never stopping on `tol` (for benchmarks that
    /// need a fit to keep sweeping; [`occam_core::engine::RunOptions::fixed_sweeps`]). Not a
    /// user's option: the run reports that it did not converge.
    pub fixed_sweeps: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            seed: 0,
            restarts: 1,
            tol: 1e-6,
            max_iter: 1000,
            order: None,
            prune: true,
            strict: false,
            rotate: None,
            settle: false,
            candidate_starts: true,
            prune_screen_from: PRUNE_SCREEN_FROM,
            fixed_sweeps: false,
        }
    }
}

/// The largest number of restarts accepted (each is a full fit; more is surely a typo).
pub const MAX_RESTARTS: usize = 100_000;
/// The largest iteration limit accepted.
pub const MAX_ITER: usize = 100_000_000;

impl Settings {
    /// Checks every field's domain, naming the field and the limit.
    pub fn validate(&self) -> Result<()> {
        if !(self.tol >= 0.0 && self.tol.is_finite()) {
            return Err(Error::Usage(format!(
                "tol must be a finite number ≥ 0, got {}",
                self.tol
            )));
        }
        if !(1..=MAX_ITER).contains(&self.max_iter) {
            return Err(Error::Usage(format!(
                "max_iter must be between 1 and {MAX_ITER}, got {}",
                self.max_iter
            )));
        }
        if !(1..=MAX_RESTARTS).contains(&self.restarts) {
            return Err(Error::Usage(format!(
                "restarts must be between 1 and {MAX_RESTARTS}, got {}",
                self.restarts
            )));
        }
        Ok(())
    }
}

/// The outcome of a fit.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Outcome {
    /// Final lower bound (nats).
    pub bound: f64,
    /// Entries of `bound_trace` (sweeps of the kept restart, then the pruning stage).
    pub iterations: usize,
    /// Whether the tolerance was reached.
    pub converged: bool,
    /// Why the run stopped: converged (with the criterion's value) or the iteration limit.
    pub stop: Stop,
    /// Bound after every sweep of the kept restart.
    pub bound_trace: Vec<f64>,
    /// Index in `bound_trace` where the component-pruning stage starts (its sweeps restart from
    /// the state after a deletion, so the trace may jump there); `None` without pruning.
    pub prune_start: Option<usize>,
    /// Final bound of every restart.
    pub restart_bounds: Vec<f64>,
    /// Mixture components in use at the end of every restart (summed over mixture indices).
    pub restart_components: Vec<usize>,
    /// Every mixture index of the kept restart: its variable, the components in use (expected
    /// number of elements ≥ 1) and the number of components.
    pub components: Vec<Components>,
    /// Index of the kept restart.
    pub best_restart: usize,
    /// The seed of the kept restart.
    pub seed: u64,
    /// Warnings: the model's (ignored data, nothing observed), then the run's (a decreasing
    /// bound and its size, no convergence).
    pub warnings: Vec<Warning>,
    /// Per-node bound terms.
    pub node_bounds: Vec<(String, f64)>,
    /// What the bound is: exact (the ELBO), a lower bound on it, or approximate — the worst of
    /// the nodes' kinds ([`crate::quality`]).
    pub bound_quality: crate::quality::BoundQuality,
    /// Each node's kind of bound term.
    pub node_qualities: Vec<(String, crate::quality::BoundQuality)>,
    /// The importance-sampled nodes' S and S_eff ([`crate::sampled`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sampled: Vec<crate::sampled::SampledReport>,
    /// Full pruning trials of the kept restart (a deletion the screen rejects has none).
    #[serde(skip)]
    pub prune_trials: usize,
    /// What the pruning screen did in the kept restart (`Settings::prune_screen_from`); `None`
    /// when the fit was not screened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prune_screen: Option<occam_core::engine::ScreenCounts>,
    /// What the rotations did (`Settings::rotate`), summed over restarts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotated: Option<crate::rotation::Rotated>,
    /// What a further candidate start offered to the fit did (a plate sweep's warm start,
    /// [`crate::evidence::WarmStart`]), when one was tried in the kept restart.
    #[serde(skip)]
    pub offered: Option<occam_core::engine::Offered>,
}

/// How many of a mixture's components the fit uses.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Components {
    /// The mixture index variable.
    pub variable: String,
    /// Components whose expected number of elements is at least 1.
    pub in_use: usize,
    /// Components in the model.
    pub total: usize,
}

/// Maps a run error to a library error naming the model place of the node.
pub fn run_error(loaded: &Loaded, c: &Compiled, e: &RunError) -> Error {
    let place = |node: &str| match c.owner.get(node) {
        Some(&v) => format!(
            " (variable `{}` at {})",
            loaded.model.variables[v].name,
            loaded.location(v)
        ),
        None => String::new(),
    };
    match e {
        RunError::Numerical { node, .. } | RunError::BoundDecreased { node, .. } => {
            Error::Run(format!("{e}{}", place(node)))
        }
        RunError::Schedule(_) => Error::Usage(e.to_string()),
        RunError::Interrupted { .. } => Error::Interrupted(e.to_string()),
    }
}

fn order(c: &Compiled, names: &Option<Vec<String>>) -> Result<Option<Vec<NodeId>>> {
    let Some(names) = names else { return Ok(None) };
    names
        .iter()
        .map(|n| {
            c.vmp.node(n).ok_or_else(|| {
                Error::Usage(format!(
                    "--order: no node named `{n}` (nodes: {})",
                    c.vmp.names().join(", ")
                ))
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// Runs `s.restarts` restarts, calling `observer` after every sweep, and leaves the model in the
/// state of the best one.
pub fn fit(
    loaded: &Loaded,
    c: &mut Compiled,
    s: &Settings,
    observer: &mut dyn Observer,
) -> Result<Outcome> {
    s.validate()?;
    let opts = RunOptions {
        max_iter: s.max_iter,
        tol: s.tol,
        order: order(c, &s.order)?,
        seed: s.seed,
        restarts: s.restarts,
        decrease_is_error: s.strict,
        check_every_update: false,
        prune_components: s.prune,
        settle: s.settle,
        candidate_starts: s.candidate_starts,
        fixed_sweeps: s.fixed_sweeps,
    };
    screen::attach(loaded, c, s);
    let rotations = match s.rotate {
        Some(true) => Some(crate::rotation::detect(loaded, c)?),
        None => crate::rotation::detect(loaded, c).ok(),
        Some(false) => None,
    };
    let (run, rotated) = match rotations {
        Some(r) => {
            let mut rotating = crate::rotation::Rotating::new(observer, r);
            let run = c.vmp.run_observed(&opts, &mut rotating);
            (run, Some(rotating.report()))
        }
        None => (c.vmp.run_observed(&opts, observer), None),
    };
    c.vmp.clear_prune_screen();
    let f = run.map_err(|e| run_error(loaded, c, &e))?;
    let mut warnings: Vec<Warning> = loaded
        .warnings
        .iter()
        .cloned()
        .chain(f.warnings.into_iter().map(Warning::from))
        .collect();
    warnings.extend(zero_products(loaded, c));
    warnings.extend(uneven_restarts(&f.restart_components, s.seed));
    warnings.extend(identical_components(loaded, c));
    warnings.extend(gated::collapsed(loaded, c));
    warnings.extend(still_rising(&f.bound_trace[f.prune_start.unwrap_or(0)..]));
    non_finite_posterior(loaded, c)?;
    if f.restart_bounds.len() > 1 && !c.vmp.start_is_random() {
        warnings.push(Warning::RestartsIdentical {
            restarts: f.restart_bounds.len(),
            bound: f.bound,
        });
    }
    let components = components(loaded, c);
    let (bound_quality, node_qualities) = crate::quality::qualities(c);
    let sampled = crate::sampled::reports(c);
    warnings.extend(crate::sampled::warnings(&sampled));
    Ok(Outcome {
        bound: f.bound,
        iterations: f.bound_trace.len(),
        converged: f.converged,
        stop: f.stop,
        bound_trace: f.bound_trace,
        prune_start: f.prune_start,
        restart_bounds: f.restart_bounds,
        restart_components: f.restart_components,
        components,
        best_restart: f.best_restart,
        seed: f.seed,
        warnings,
        node_bounds: f.node_bounds,
        bound_quality,
        node_qualities,
        sampled,
        prune_trials: f.prune_trials,
        prune_screen: f.prune_screen,
        offered: f.offered,
        rotated,
    })
}

/// Every mixture index of the model in its current state: its variable, the components in use
/// and the number of components.
fn components(loaded: &Loaded, c: &Compiled) -> Vec<Components> {
    let names = c.vmp.names();
    c.vmp
        .components_in_use()
        .into_iter()
        .map(|(node, in_use, total)| {
            let name = names[node.index()];
            Components {
                variable: c.owner.get(name).map_or(name.to_string(), |&v| {
                    loaded.model.variables[v].name.clone()
                }),
                in_use,
                total,
            }
        })
        .collect()
}

/// A warning for every product of latent factors left at zero (see [`Warning::ProductAtZero`]),
/// named by the model's variables.
fn zero_products(loaded: &Loaded, c: &Compiled) -> Vec<Warning> {
    let names = c.vmp.names();
    let var_of = |node: NodeId| {
        let name = names[node.index()];
        c.owner
            .get(name)
            .map_or((name.to_string(), String::new()), |&v| {
                (loaded.model.variables[v].name.clone(), loaded.location(v))
            })
    };
    c.vmp
        .zero_products()
        .into_iter()
        .map(|(product, factors)| {
            let (variable, location) = var_of(product);
            Warning::ProductAtZero {
                variable,
                location,
                factors: factors.into_iter().map(|f| var_of(f).0).collect(),
            }
        })
        .collect()
}

/// A warning when restarts end with very different numbers of mixture components in use: some
/// restart has at most half as many as the most populated one. The fit then depends on its start
/// (a collapsed restart is a poor local optimum, or the best one is), and the kept bound is only
/// as good as the restarts tried.
fn uneven_restarts(components: &[usize], seed: u64) -> Option<Warning> {
    let most = components.iter().copied().max()?;
    let fewest = components.iter().copied().min()?;
    (most >= 2 && 2 * fewest <= most).then(|| Warning::UnevenRestarts {
        components: components.to_vec(),
        seed,
    })
}
