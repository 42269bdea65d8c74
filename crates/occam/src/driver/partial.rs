//! A fit the observer stopped (a Python callback returning `False`, Ctrl-C): its state is kept and
//! reported as a result whose stop reason is [`StopReason::Interrupted`], so a user who stops a
//! long fit still has its posterior, its bound (the true bound of that q, recomputed here) and its
//! trace, instead of losing the work.

use occam_core::prelude::*;

use super::{components, fit, Components, Outcome, Settings};
use crate::error::{Error, Result};
use crate::lower::Compiled;
use crate::model::Loaded;

/// Forwards to the caller's observer and records the trace of the restart in progress.
struct Recorder<'a> {
    inner: &'a mut dyn Observer,
    /// Bounds after each sweep of the current restart (every stage).
    trace: Vec<f64>,
    /// The restart in progress and its last sweep's progress.
    last: Option<Progress>,
}

impl Observer for Recorder<'_> {
    fn observe(&mut self, p: &Progress) -> Flow {
        if self.last.is_some_and(|l| l.restart != p.restart) {
            self.trace.clear();
        }
        self.trace.push(p.bound);
        self.last = Some(*p);
        self.inner.observe(p)
    }

    fn after_updates(&mut self, vmp: &mut Vmp) -> std::result::Result<(), RunError> {
        self.inner.after_updates(vmp)
    }
}

/// [`fit`], except that a run the observer stops returns the state it stopped in, with
/// `stop.reason` = [`StopReason::Interrupted`] and `converged` false. That state is the sweep's
/// last one: during pruning or a further candidate start it is that trial's q (the outcome's
/// warnings say so), whose bound is still a true lower bound.
pub fn fit_keeping_partial(
    loaded: &Loaded,
    c: &mut Compiled,
    s: &Settings,
    observer: &mut dyn Observer,
) -> Result<Outcome> {
    let mut rec = Recorder {
        inner: observer,
        trace: Vec::new(),
        last: None,
    };
    match fit(loaded, c, s, &mut rec) {
        Err(Error::Interrupted(message)) => partial(loaded, c, s, rec, message),
        r => r,
    }
}

fn partial(
    loaded: &Loaded,
    c: &mut Compiled,
    s: &Settings,
    rec: Recorder<'_>,
    message: String,
) -> Result<Outcome> {
    let Some(last) = rec.last else {
        // Stopped before any sweep finished: nothing to keep.
        return Err(Error::Interrupted(message));
    };
    let bound = c.vmp.bound();
    let terms = c.vmp.node_bounds();
    let names = c.vmp.names();
    let node_bounds = names
        .iter()
        .zip(terms)
        .map(|(n, t)| (n.to_string(), t))
        .collect();
    let components: Vec<Components> = components(loaded, c);
    let (bound_quality, node_qualities) = crate::quality::qualities(c);
    let observed_values = c.vmp.observed_values().max(1);
    let mut warnings: Vec<crate::warning::Warning> = loaded.warnings.clone();
    if last.stage != Stage::Sweeps {
        warnings.push(crate::warning::Warning::StoppedInTrial {
            stage: format!("{:?}", last.stage),
        });
    }
    Ok(Outcome {
        bound,
        iterations: rec.trace.len(),
        converged: false,
        stop: Stop {
            reason: StopReason::Interrupted,
            change_per_value: last.change.map(|d| d.abs() / observed_values as f64),
            tol: s.tol,
            observed_values,
            max_iter: s.max_iter,
        },
        bound_trace: rec.trace,
        prune_start: None,
        restart_bounds: vec![bound],
        restart_components: vec![components.iter().map(|c| c.in_use).sum()],
        components,
        best_restart: last.restart,
        seed: s.seed.wrapping_add(last.restart as u64),
        warnings,
        node_bounds,
        bound_quality,
        node_qualities,
        sampled: crate::sampled::reports(c),
        prune_trials: 0,
        prune_screen: None,
        offered: None,
        rotated: None,
    })
}
