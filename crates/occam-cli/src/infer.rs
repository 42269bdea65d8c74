//! Running VMP for the commands: restarts, convergence, progress, component pruning, and mapping
//! run errors back to the model.

use std::io::IsTerminal;

use occam_core::prelude::*;

use crate::error::{CliError, Result};
use crate::lower::Compiled;
use crate::model::Loaded;

/// How to run inference.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Seed of the first restart (restart r uses seed + r).
    pub seed: u64,
    /// Number of restarts; the best bound is kept.
    pub restarts: usize,
    /// Relative tolerance on the bound change per sweep.
    pub tol: f64,
    /// Maximum number of sweeps per restart.
    pub max_iter: usize,
    /// Update order by node name (`None`: parents before children).
    pub order: Option<Vec<String>>,
    /// Delete surplus mixture components when that raises the bound.
    pub prune: bool,
    /// A decreasing bound is an error (exit 1) rather than a warning.
    pub strict: bool,
    /// Show a progress bar (only drawn when stderr is a terminal).
    pub progress: bool,
}

/// The outcome of a fit.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Outcome {
    /// Final lower bound (nats).
    pub bound: f64,
    /// Sweeps performed by the kept restart (including pruning).
    pub iterations: usize,
    /// Whether the tolerance was reached.
    pub converged: bool,
    /// Bound after every sweep of the kept restart.
    pub bound_trace: Vec<f64>,
    /// Index in `bound_trace` where the component-pruning stage starts (its sweeps restart from
    /// the state after a deletion, so the trace may jump there); `None` without pruning.
    pub prune_start: Option<usize>,
    /// Final bound of every restart.
    pub restart_bounds: Vec<f64>,
    /// Index of the kept restart.
    pub best_restart: usize,
    /// The seed of the kept restart.
    pub seed: u64,
    /// Warnings (a decreasing bound, no convergence).
    pub warnings: Vec<String>,
    /// Per-node bound terms.
    pub node_bounds: Vec<(String, f64)>,
}

/// Maps a run error to a CLI error naming the model place of the node.
pub fn run_error(loaded: &Loaded, c: &Compiled, e: &RunError) -> CliError {
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
            CliError::Run(format!("{e}{}", place(node)))
        }
        RunError::Schedule(_) => CliError::Usage(e.to_string()),
    }
}

fn order(c: &Compiled, names: &Option<Vec<String>>) -> Result<Option<Vec<NodeId>>> {
    let Some(names) = names else { return Ok(None) };
    names
        .iter()
        .map(|n| {
            c.vmp.node(n).ok_or_else(|| {
                CliError::Usage(format!(
                    "--order: no node named `{n}` (nodes: {})",
                    c.vmp.names().join(", ")
                ))
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// One restart from `seed`; `bar` shows progress.
fn one_run(
    loaded: &Loaded,
    c: &mut Compiled,
    s: &Settings,
    seed: u64,
    order: &Option<Vec<NodeId>>,
    label: &str,
) -> Result<Outcome> {
    let bar = if s.progress && std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(s.max_iter as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
        {
            b.set_style(style.progress_chars("=> "));
        }
        b.set_prefix(label.to_string());
        Some(b)
    } else {
        None
    };
    c.vmp
        .initialize(seed)
        .map_err(|e| run_error(loaded, c, &e))?;
    let step = RunOptions {
        max_iter: 1,
        tol: s.tol,
        order: order.clone(),
        seed,
        decrease_is_error: false,
        check_every_update: false,
        prune_components: false,
    };
    let mut trace: Vec<f64> = Vec::new();
    let mut warnings = Vec::new();
    let mut converged = false;
    let mut node_bounds = Vec::new();
    for it in 1..=s.max_iter {
        let f = c.vmp.run(&step).map_err(|e| run_error(loaded, c, &e))?;
        let l = f.bound;
        node_bounds = f.node_bounds;
        if let Some(&prev) = trace.last() {
            if l < prev - 1e-9 * (1.0 + prev.abs()) {
                let msg = format!(
                    "the lower bound decreased by {:e} at iteration {it}",
                    prev - l
                );
                if s.strict {
                    return Err(CliError::Run(msg));
                }
                warnings.push(msg);
            }
        }
        trace.push(l);
        if let Some(b) = &bar {
            let change = if trace.len() > 1 {
                l - trace[trace.len() - 2]
            } else {
                f64::NAN
            };
            b.set_position(it as u64);
            b.set_message(format!("bound {l:.6} change {change:.3e}"));
        }
        if trace.len() > 1 {
            let prev = trace[trace.len() - 2];
            if (l - prev).abs() <= s.tol * l.abs() {
                converged = true;
                break;
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut prune_start = None;
    if s.prune && c.has_mixture {
        prune_start = Some(trace.len());
        let f = c
            .vmp
            .run(&RunOptions {
                max_iter: s.max_iter,
                tol: s.tol,
                order: order.clone(),
                seed,
                decrease_is_error: s.strict,
                check_every_update: false,
                prune_components: true,
            })
            .map_err(|e| run_error(loaded, c, &e))?;
        trace.extend(&f.bound_trace);
        warnings.extend(f.warnings);
        converged = f.converged;
        node_bounds = f.node_bounds;
    }
    if !converged {
        warnings.push(format!(
            "did not converge in {} iterations (tolerance {:e})",
            s.max_iter, s.tol
        ));
    }
    let bound = trace.last().copied().unwrap_or(f64::NAN);
    Ok(Outcome {
        bound,
        iterations: trace.len(),
        converged,
        bound_trace: trace,
        prune_start,
        restart_bounds: Vec::new(),
        best_restart: 0,
        seed,
        warnings,
        node_bounds,
    })
}

/// Runs `s.restarts` restarts and leaves the model in the state of the best one.
pub fn fit(loaded: &Loaded, c: &mut Compiled, s: &Settings) -> Result<Outcome> {
    let order = order(c, &s.order)?;
    let restarts = s.restarts.max(1);
    let mut best: Option<Outcome> = None;
    let mut bounds = Vec::with_capacity(restarts);
    for r in 0..restarts {
        let seed = s.seed.wrapping_add(r as u64);
        let label = if restarts > 1 {
            format!("restart {}/{restarts}", r + 1)
        } else {
            "fit".to_string()
        };
        let mut out = one_run(loaded, c, s, seed, &order, &label)?;
        out.best_restart = r;
        bounds.push(out.bound);
        if best.as_ref().is_none_or(|b| out.bound > b.bound) {
            best = Some(out);
        }
    }
    let mut best = best.expect("at least one restart");
    if best.best_restart + 1 != restarts {
        // Re-run the kept restart to leave its state in the model (runs are deterministic per seed).
        let again = one_run(loaded, c, s, best.seed, &order, "best restart")?;
        best.bound_trace = again.bound_trace;
        best.prune_start = again.prune_start;
        best.bound = again.bound;
        best.node_bounds = again.node_bounds;
    }
    best.restart_bounds = bounds;
    Ok(best)
}
