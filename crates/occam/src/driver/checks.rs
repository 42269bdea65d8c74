//! What the driver checks after a run, beyond the engine's own warnings: mixture components or
//! chain states that never separated, a run stopped on a slow crawl, and a posterior with a
//! non-finite moment.

use crate::error::{Error, Result};
use crate::lower::Compiled;
use crate::model::Loaded;
use crate::warning::Warning;

/// A warning for every mixture index or discrete chain whose selected variables ended with all
/// components identical (see [`Warning::IdenticalComponents`]): for each reference `v[z]` in the
/// model, the posterior moments of `v` along the plate `z` selects agree to 1e-9 (relative) in
/// every component.
pub(super) fn identical_components(loaded: &Loaded, c: &Compiled) -> Vec<Warning> {
    use occam_lang::ir::{Expr, ExprOp, Node};
    let model = &loaded.model;
    // (index variable, selected variables, components)
    let mut found: Vec<(usize, Vec<usize>, usize)> = Vec::new();
    let mut visit = |e: &Expr| {
        e.visit(|e| {
            let ExprOp::Var(r) = &e.op else { return };
            for (axis, ix) in r.index.iter().enumerate() {
                let Some(by) = &ix.by else { continue };
                let Some(k) = selected_identical(loaded, c, r.var, axis) else {
                    continue;
                };
                match found.iter_mut().find(|(z, _, _)| *z == by.var) {
                    Some((_, vs, _)) if !vs.contains(&r.var) => vs.push(r.var),
                    Some(_) => {}
                    None => found.push((by.var, vec![r.var], k)),
                }
            }
        })
    };
    for v in &model.variables {
        match &v.node {
            Node::Stochastic { args, .. } => args.iter().for_each(|a| visit(&a.value)),
            Node::Deterministic { expr } => visit(expr),
            Node::Data => {}
        }
    }
    found
        .into_iter()
        .map(|(z, vs, k)| Warning::IdenticalComponents {
            index: model.variables[z].name.clone(),
            selected: vs
                .iter()
                .map(|&v| model.variables[v].name.clone())
                .collect(),
            components: k,
        })
        .collect()
}

/// `Some(K)` when latent variable `v`'s posterior moments are the same (to 1e-9 relative) in all
/// K ≥ 2 elements of its plate number `axis`, for every position on its other plates.
fn selected_identical(loaded: &Loaded, c: &Compiled, v: usize, axis: usize) -> Option<usize> {
    let var = &loaded.model.variables[v];
    if var.observed || !matches!(var.node, occam_lang::ir::Node::Stochastic { .. }) {
        return None;
    }
    let node = *c.var_nodes.get(v)?;
    let sizes: Vec<usize> = var
        .plates
        .iter()
        .map(|&p| usize::try_from(loaded.model.plates[p].size).ok())
        .collect::<Option<_>>()?;
    let k = *sizes.get(axis)?;
    let n: usize = sizes.iter().product();
    let u = c.vmp.moments(node);
    if k < 2 || n == 0 || u.is_empty() || !u.len().is_multiple_of(n) {
        return None;
    }
    let len = u.len() / n;
    // Row-major over the plates: `outer` positions before the axis, `inner` values after it.
    let inner = sizes[axis + 1..].iter().product::<usize>() * len;
    let outer = n / (k * (inner / len));
    let same = (0..outer).all(|o| {
        let base = o * k * inner;
        let first = &u[base..base + inner];
        (1..k).all(|j| {
            u[base + j * inner..base + (j + 1) * inner]
                .iter()
                .zip(first)
                .all(|(a, b)| (a - b).abs() <= 1e-9 * (1.0 + b.abs()))
        })
    });
    same.then_some(k)
}

/// Sweeps whose changes [`still_rising`] reads: all must be rises.
const CREEP_WINDOW: usize = 20;
/// The last ratios of successive changes whose median is the pace at the end.
const CREEP_RATIOS: usize = 5;
/// The projected gain (nats) above which a stopped run is said to be still rising.
const CREEP_NATS: f64 = 0.1;
/// The ratio of successive changes from which they shrink too slowly to call the run settled: at
/// 0.99 what is left is 99 times the last change (a run converging geometrically at a healthy
/// rate has ratios well below; ARD's crawl shrinks like 1/t, ratios 1 − 1/t).
const CREEP_RATIO: f64 = 0.99;

/// A warning when the bound's last [`CREEP_WINDOW`] changes are all positive and shrink so
/// slowly (median of the last [`CREEP_RATIOS`] ratios of successive changes at least
/// [`CREEP_RATIO`]) that their geometric
/// continuation would add more than [`CREEP_NATS`]: the tolerance stopped the run on a crawl,
/// not at an optimum.
pub(super) fn still_rising(trace: &[f64]) -> Option<Warning> {
    if trace.len() < CREEP_WINDOW + 1 {
        return None;
    }
    let tail = &trace[trace.len() - CREEP_WINDOW - 1..];
    let changes: Vec<f64> = tail.windows(2).map(|w| w[1] - w[0]).collect();
    if !changes.iter().all(|&d| d > 0.0) {
        return None;
    }
    // The pace at the end: the median of the last few ratios (earlier ones may belong to a climb
    // that accelerated before it settled).
    let mut ratios: Vec<f64> = changes[changes.len() - CREEP_RATIOS - 1..]
        .windows(2)
        .map(|w| w[1] / w[0])
        .collect();
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    let last_change = changes[changes.len() - 1];
    let projected = if ratio < 1.0 {
        last_change * ratio / (1.0 - ratio)
    } else {
        f64::INFINITY
    };
    (ratio >= CREEP_RATIO && projected > CREEP_NATS).then_some(Warning::StillRising {
        last_change,
        ratio,
        projected,
    })
}

/// An error when a latent variable's posterior has a non-finite moment (an infinite mean or
/// variance): a prior parameter so extreme that q overflows (e.g. a Gamma rate of 1e-310, whose
/// mean shape/rate is infinite) must not be reported as a result.
pub(super) fn non_finite_posterior(loaded: &Loaded, c: &Compiled) -> Result<()> {
    for (v, var) in loaded.model.variables.iter().enumerate() {
        // Observed values may have infinite statistics of their own (ln 0 of a known table).
        if var.observed || !matches!(var.node, occam_lang::ir::Node::Stochastic { .. }) {
            continue;
        }
        let Some(&node) = c.var_nodes.get(v) else {
            continue;
        };
        let u = c.vmp.moments(node);
        if let Some(e) = u.iter().position(|x| !x.is_finite()) {
            let len = (u.len() / c.vmp.elements(node).max(1)).max(1);
            return Err(Error::Run(format!(
                "the posterior of `{}` ({}) has a non-finite moment ({} in element {} of {}): a prior parameter is too extreme for double precision (e.g. a rate near 1e-308, whose mean shape/rate overflows); rescale it",
                var.name,
                loaded.location(v),
                u[e],
                e / len,
                c.vmp.elements(node)
            )));
        }
    }
    Ok(())
}
