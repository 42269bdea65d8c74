//! The plate sweep of `compare --plate K=...` offers each size K after a smaller one a second
//! start (Winn §2.5.1: the bound judges between the local optima that different starts reach,
//! as between restarts): a warm start from the previous size's fit, where every mixture index
//! over the swept plate starts from the previous fit's q(z), with its most used component
//! split in two along the principal axis of the data it explains.
//!
//! The split is the split move of split-and-merge EM (Ueda, Nakano, Ghahramani & Hinton 2000):
//! the rows of the most used component c* go to the new component where their values lie on
//! the positive side of c*'s weighted principal axis, through c*'s weighted mean. No random
//! number is drawn, so a sweep's results depend on its seed alone.
//!
//! The warm start is one more candidate start of the size's one fit, judged by the engine's
//! rule for candidate starts ([`occam_core::engine::Vmp::offer_start`]): after the default
//! fit's own starts (k-means and random labels), it runs from the same seed with the indices'
//! q(z) replaced, and its converged bound is compared with theirs, both before the pruning
//! stage; it is kept where it is higher by more than the fit's stopping tolerance, and ends
//! early once it cannot get there (the changes shrink at least twofold per sweep and the bound
//! plus ten times the last change stays below). The kept start alone then goes through the
//! pruning stage. Where the warm start is not kept, the fit ends exactly as a separate fit of
//! that size (the same bits); where it is, its pruned bound is reported (on the VIBES tutorial,
//! 12–21 nats above the separate fit's at K = 4, 5 and 8). One model is compiled per size, and
//! one pruning stage run, where two whole fits were before.
//!
//! The warm start is tried only where it is defined and can help: the sizes rise (K after a
//! smaller K), the default fit's best start uses every component of every mixture index (where
//! it leaves one empty, VB has already declined a component it had), the model has a mixture
//! index whose components are the swept plate, and that index selects the components of an
//! observed child whose rows are the index's elements, every value present.
//! Chains (`MarkovChain` states over K) keep the default fit alone.

use occam_core::engine::{Offered, Vmp};
use occam_core::prelude::Observer;
use occam_lang::ir::Node;

use crate::driver::Settings;
use crate::error::Result;
use crate::fitted::{Fitted, Model};
use crate::model::Loaded;

/// What the warm start of one size of a plate sweep did. Its bounds are converged bounds
/// before the pruning stage, as the engine compares candidate starts (module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct WarmStart {
    /// The size the warm start came from (the previous model's).
    pub from: u64,
    /// The converged bound of the default fit's best start, before pruning.
    pub default_bound: f64,
    /// The bound of the warm start's last sweep, before pruning: converged, or where it ended
    /// early (`ended_early`).
    pub warm_bound: f64,
    /// Whether the warm start is the one kept, pruned and reported (its bound is higher by
    /// more than `tolerance`, in the restart that is kept).
    pub kept: bool,
    /// Whether the warm start ended before converging, unable to pass the default start's
    /// bound by `tolerance`.
    pub ended_early: bool,
    /// How far apart two bounds may be and count as one optimum: the fit's stopping tolerance
    /// in nats (`Settings::tol` times the observed values).
    pub tolerance: f64,
    /// Why the warm start failed (a numerical error of its run), if it did: the default start
    /// is kept then, and `warm_bound` is NaN.
    pub failed: Option<String>,
}

impl std::fmt::Display for WarmStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(why) = &self.failed {
            return write!(
                f,
                "warm start from K = {} failed ({why}); the default start ({:.4}) is kept",
                self.from, self.default_bound
            );
        }
        let how = if self.kept {
            "kept over"
        } else if self.ended_early {
            "ended early below"
        } else if self.warm_bound < self.default_bound - self.tolerance {
            "below"
        } else {
            "reaching the same optimum as"
        };
        write!(
            f,
            "warm start from K = {} ({:.4}) {how} the default start ({:.4}), before pruning",
            self.from, self.warm_bound, self.default_bound
        )
    }
}

impl WarmStart {
    /// The report of the offered start `o` (module doc), the warm start from size `from`;
    /// `best_restart` is the fit's kept restart (the warm start is tried in restart 0) and
    /// `tolerance` the fit's stopping tolerance in nats.
    fn of(o: &Offered, from: u64, best_restart: usize, tolerance: f64) -> WarmStart {
        WarmStart {
            from,
            default_bound: o.against,
            warm_bound: o.bound,
            kept: o.kept && best_restart == 0,
            ended_early: o.ended_early,
            tolerance,
            failed: o.failed.clone(),
        }
    }

    /// Adds what the warm start did to the note of `method`'s estimate: the bound's (`vb`) note
    /// says which start was kept; `cv`'s, when the warm fit was kept, that its folds are refitted
    /// from the default start (so the two columns may come from different optima).
    pub fn annotate(&self, method: super::Method, note: &mut String) {
        let add = match method {
            super::Method::Vb => self.to_string(),
            super::Method::Cv if self.kept => format!(
                "folds refitted from the default start (the bound's fit came from the warm start from K = {})",
                self.from
            ),
            _ => return,
        };
        *note = match note.is_empty() {
            true => add,
            false => format!("{note}; {add}"),
        };
    }
}

/// The size of plate `plate` in a loaded model.
fn size(loaded: &Loaded, plate: &str) -> Option<u64> {
    let m = &loaded.model;
    m.plates.iter().find(|p| p.name == plate).map(|p| p.size)
}

/// Fits `model`, one size of a sweep of plate `plate` (`None`: not a sweep), after `previous`
/// (the fit of the size before it in the sweep): the default fit, with the warm start from
/// `previous` as one more candidate start where the module doc says; returns the fit and what
/// the warm start did (`None`: not tried).
pub fn fit_swept(
    model: &Model,
    previous: Option<&Fitted>,
    plate: Option<&str>,
    settings: &Settings,
    observer: &mut dyn Observer,
) -> Result<(Fitted, Option<WarmStart>)> {
    let Some((from, starts)) = warm_plan(model, previous, plate) else {
        return Ok((model.fit_observed(settings, observer)?, None));
    };
    let fitted = model.fit_offered(settings, &starts, uses_every_component, observer)?;
    let tolerance = settings.tol * fitted.compiled().vmp.observed_values().max(1) as f64;
    let o = fitted.outcome();
    let report = o
        .offered
        .as_ref()
        .map(|w| WarmStart::of(w, from, o.best_restart, tolerance));
    Ok((fitted, report))
}

/// A warm start's plan: the size it comes from, and its starts as `warm_starts` gives them
/// (IR variable, responsibilities).
type WarmPlan = (u64, Vec<(usize, Vec<f64>)>);

/// The size the warm start of `model` comes from and its starts (`warm_starts`), where the
/// module doc's conditions on the sizes and the model hold.
fn warm_plan(model: &Model, previous: Option<&Fitted>, plate: Option<&str>) -> Option<WarmPlan> {
    let (plate, previous) = (plate?, previous?);
    let from = size(previous.loaded(), plate)?;
    let to = size(model.loaded(), plate)?;
    if from >= to {
        return None;
    }
    let starts = warm_starts(previous, model, plate, (to - from) as usize)?;
    Some((from, starts))
}

/// Whether the best of the default fit's starts uses every component of every mixture index
/// (expected count ≥ 1): where it leaves one empty, VB has already declined a component it
/// had, and the split would offer it one more (galaxies, K = 4..8: the warm starts reached the
/// same optima at 1.35× the sweep's CPU time).
fn uses_every_component(vmp: &Vmp) -> bool {
    vmp.components_in_use()
        .iter()
        .all(|&(_, in_use, total)| in_use == total)
}

/// The starts of `model`'s mixture indices over `plate` from `previous`'s q(z), each with
/// `splits` more components made by splitting the most used one, `splits` times: (IR variable,
/// responsibilities, one row of K per element). `None` when the module doc's conditions fail.
fn warm_starts(
    previous: &Fitted,
    model: &Model,
    plate: &str,
    splits: usize,
) -> Option<Vec<(usize, Vec<f64>)>> {
    let l = model.loaded();
    let m = &l.model;
    let k_plate = m.plate_index(plate)?;
    let mut out = Vec::new();
    for (v, var) in m.variables.iter().enumerate() {
        let is_index = var.event_plates == [k_plate]
            && !var.observed
            && matches!(&var.node, Node::Stochastic { distribution, .. } if distribution == "Categorical");
        if !is_index {
            continue;
        }
        let post = previous.posterior(&var.name).ok()?;
        let mut r = post.param("probabilities")?.values.clone();
        let rows = features(model, v)?;
        let n = rows.0;
        if n == 0 || r.len() % n != 0 {
            return None;
        }
        let k = r.len() / n;
        for more in 0..splits {
            r = split(&r, n, k + more, &rows.1, rows.2);
        }
        out.push((v, r));
    }
    (!out.is_empty()).then_some(out)
}

/// The observed values that mixture index `v`'s elements select: (elements, values row-major,
/// values per element) of the first observed child with one row per element and no value
/// missing.
fn features(model: &Model, v: usize) -> Option<(usize, Vec<f64>, usize)> {
    let l = model.loaded();
    let m = &l.model;
    let rows = m.variables[v].plates.first().copied()?;
    let n = m.plates.get(rows)?.size as usize;
    m.variables.iter().enumerate().find_map(|(c, var)| {
        let child = var.observed
            && matches!(var.node, Node::Stochastic { .. })
            && var.plates.first() == Some(&rows)
            && m.parents(c).contains(&v);
        let t = l.data.tables.get(&var.name).filter(|_| child)?;
        (t.rows == n && t.cols >= 1 && t.present.iter().all(|&p| p))
            .then(|| (n, t.values.to_vec(), t.cols))
    })
}

/// Responsibilities `r` (n × k) with the most used component c* split in two (n × (k + 1)): the
/// rows on the positive side of c*'s weighted principal axis through its weighted mean give
/// their share of c* to the new last component (module doc).
fn split(r: &[f64], n: usize, k: usize, x: &[f64], d: usize) -> Vec<f64> {
    let counts: Vec<f64> = (0..k).map(|c| (0..n).map(|i| r[i * k + c]).sum()).collect();
    // The first of the most used on a tie.
    let big = (0..k).fold(0, |b, c| if counts[c] > counts[b] { c } else { b });
    let w: Vec<f64> = (0..n).map(|i| r[i * k + big]).collect();
    let axis = principal_axis(x, d, &w);
    let mean = weighted_mean(x, d, &w);
    let mut out = vec![0.0; n * (k + 1)];
    for i in 0..n {
        out[i * (k + 1)..i * (k + 1) + k].copy_from_slice(&r[i * k..(i + 1) * k]);
        let side: f64 = (0..d).map(|j| (x[i * d + j] - mean[j]) * axis[j]).sum();
        if side > 0.0 {
            out[i * (k + 1) + k] = w[i];
            out[i * (k + 1) + big] = 0.0;
        }
    }
    out
}

/// Σ_i w_i x_i / Σ_i w_i of the rows of `x` (n × d); zero when the weights are.
fn weighted_mean(x: &[f64], d: usize, w: &[f64]) -> Vec<f64> {
    let total: f64 = w.iter().sum();
    let mut m = vec![0.0; d];
    if total > 0.0 {
        for (row, &wi) in x.chunks(d).zip(w) {
            m.iter_mut()
                .zip(row)
                .for_each(|(a, b)| *a += wi * b / total);
        }
    }
    m
}

/// The leading eigenvector of the weighted scatter Σ_i w_i (x_i − m)(x_i − m)ᵀ, by power
/// iteration from the axis of largest spread (for d = 1, the axis itself).
fn principal_axis(x: &[f64], d: usize, w: &[f64]) -> Vec<f64> {
    let m = weighted_mean(x, d, w);
    let mut s = vec![0.0; d * d];
    for (row, &wi) in x.chunks(d).zip(w) {
        for a in 0..d {
            for b in 0..d {
                s[a * d + b] += wi * (row[a] - m[a]) * (row[b] - m[b]);
            }
        }
    }
    let start = (0..d).fold(0, |b, j| if s[j * d + j] > s[b * d + b] { j } else { b });
    let mut v = vec![0.0; d];
    v[start] = 1.0;
    for _ in 0..100 {
        let next: Vec<f64> = (0..d)
            .map(|a| (0..d).map(|b| s[a * d + b] * v[b]).sum())
            .collect();
        let norm = next.iter().map(|t| t * t).sum::<f64>().sqrt();
        if !(norm > 0.0 && norm.is_finite()) {
            break;
        }
        v = next.into_iter().map(|t| t / norm).collect();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_sends_one_side_of_the_largest_component_to_the_new_one() {
        // Three rows mostly in component 1 (the largest), one in component 0.
        let r = [0.9, 0.1, 0.2, 0.8, 0.0, 1.0, 0.1, 0.9];
        let x = [5.0, -1.0, 0.0, 3.0];
        let out = split(&r, 4, 2, &x, 1);
        // Component 1's weighted mean is (0.1·−1 + 1·0 + 0.9·3 + 0.8·... ) — rows above it move.
        let w = [0.1, 0.8, 1.0, 0.9];
        let mean: f64 = [5.0, -1.0, 0.0, 3.0]
            .iter()
            .zip(&w)
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / w.iter().sum::<f64>();
        for i in 0..4 {
            let row = &out[i * 3..i * 3 + 3];
            assert_eq!(row[0], r[i * 2]);
            if x[i] > mean {
                assert_eq!((row[1], row[2]), (0.0, w[i]));
            } else {
                assert_eq!((row[1], row[2]), (w[i], 0.0));
            }
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        }
    }

    #[test]
    fn the_principal_axis_of_points_on_a_line_is_the_line() {
        let x = [0.0, 0.0, 1.0, 2.0, 2.0, 4.0, -1.0, -2.0];
        let v = principal_axis(&x, 2, &[1.0; 4]);
        let want = [1.0 / 5f64.sqrt(), 2.0 / 5f64.sqrt()];
        let sign = v[0].signum();
        assert!((sign * v[0] - want[0]).abs() < 1e-12 && (sign * v[1] - want[1]).abs() < 1e-12);
    }
}
