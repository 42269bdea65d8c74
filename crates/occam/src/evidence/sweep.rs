//! The plate sweep of `compare --plate K=...` fits each size K twice and keeps the higher bound
//! (Winn §2.5.1: the bound judges between the local optima that different starts reach, as
//! between restarts). The first fit is the default one, exactly as a separate `fit` of that K.
//! The second is a warm start from the previous size's fit: every mixture index over the swept
//! plate starts from the previous fit's q(z), with its most used component split in two along
//! the principal axis of the data it explains, and the fit runs from there with one restart.
//!
//! The split is the split move of split-and-merge EM (Ueda, Nakano, Ghahramani & Hinton 2000):
//! the rows of the most used component c* go to the new component where their values lie on
//! the positive side of c*'s weighted principal axis, through c*'s weighted mean. No random
//! number is drawn, so a sweep's results depend on its seed alone. Since the warm fit is kept
//! only where its bound is higher, no size's reported bound is below its default fit's.
//!
//! The warm start is tried only where it is defined and can help: the sizes rise (K after a
//! smaller K), the default fit uses every component of every mixture index (where it leaves one
//! empty, VB has already declined a component it had), the model has a mixture index whose
//! components are the swept plate, and that index selects the components of an observed child
//! whose rows are the index's elements, every value present.
//! Chains (`MarkovChain` states over K) keep the default fit alone.

use occam_core::prelude::Observer;
use occam_lang::ir::Node;

use crate::driver::Settings;
use crate::error::Result;
use crate::fitted::{Fitted, Model};
use crate::model::Loaded;

/// What the warm start of one size of a plate sweep did.
#[derive(Clone, Debug, PartialEq)]
pub struct WarmStart {
    /// The size the warm start came from (the previous model's).
    pub from: u64,
    /// The bound of the default fit.
    pub default_bound: f64,
    /// The bound of the warm-started fit.
    pub warm_bound: f64,
    /// Whether the warm-started fit is the one kept (its bound is higher by more than
    /// `tolerance`).
    pub kept: bool,
    /// How far apart two bounds may be and count as one optimum: the fit's stopping tolerance
    /// in nats (`Settings::tol` times the observed values).
    pub tolerance: f64,
    /// Why the warm-started fit failed (a numerical error of its run), if it did: the default
    /// fit is kept then, and `warm_bound` is NaN.
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
        } else if self.warm_bound < self.default_bound - self.tolerance {
            "below"
        } else {
            "reaching the same optimum as"
        };
        write!(
            f,
            "warm start from K = {} ({:.4}) {how} the default start ({:.4})",
            self.from, self.warm_bound, self.default_bound
        )
    }
}

impl WarmStart {
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
/// (the fit of the size before it in the sweep): the default fit, and where the module doc says,
/// the warm-started fit too; the warm fit is returned only where its bound is higher by more than
/// the fits' stopping tolerance (`same_optimum`), with what the warm start did.
pub fn fit_swept(
    model: &Model,
    previous: Option<&Fitted>,
    plate: Option<&str>,
    settings: &Settings,
    observer: &mut dyn Observer,
) -> Result<(Fitted, Option<WarmStart>)> {
    let fitted = model.fit_observed(settings, observer)?;
    warm_swept(fitted, model, previous, plate, settings)
}

/// The second half of [`fit_swept`], for a caller that made the default fit itself (Python's
/// `compare`, which fits with the GIL released): `fitted` is `model`'s default fit; returns it,
/// or the warm-started fit where that is higher, with what the warm start did.
pub fn warm_swept(
    fitted: Fitted,
    model: &Model,
    previous: Option<&Fitted>,
    plate: Option<&str>,
    settings: &Settings,
) -> Result<(Fitted, Option<WarmStart>)> {
    let (Some(plate), Some(previous)) = (plate, previous) else {
        return Ok((fitted, None));
    };
    // Where the default fit already leaves a component empty, VB has declined a component it
    // had; the split would offer it one more, and costs a fit (galaxies, K = 4..8: the warm
    // starts reached the same optima at 1.35× the sweep's CPU time).
    if fitted
        .outcome()
        .components
        .iter()
        .any(|c| c.in_use < c.total)
    {
        return Ok((fitted, None));
    }
    let (Some(from), Some(to)) = (size(previous.loaded(), plate), size(model.loaded(), plate))
    else {
        return Ok((fitted, None));
    };
    if from >= to {
        return Ok((fitted, None));
    }
    let Some(starts) = warm_starts(previous, model, plate, (to - from) as usize) else {
        return Ok((fitted, None));
    };
    let once = Settings {
        restarts: 1,
        ..settings.clone()
    };
    let tolerance = same_optimum(settings, &fitted);
    let warm = match model.fit_started(&once, &starts, &mut ()) {
        Ok(warm) => warm,
        // An interrupt stops the sweep; any other failure of the optional warm fit leaves the
        // default fit, which succeeded, as this size's result, and says so.
        Err(e @ crate::Error::Interrupted(_)) => return Err(e),
        Err(e) => {
            let report = WarmStart {
                from,
                default_bound: fitted.bound(),
                warm_bound: f64::NAN,
                kept: false,
                tolerance,
                failed: Some(e.to_string()),
            };
            return Ok((fitted, Some(report)));
        }
    };
    let report = WarmStart {
        from,
        default_bound: fitted.bound(),
        warm_bound: warm.bound(),
        kept: warm.bound() > fitted.bound() + tolerance,
        tolerance,
        failed: None,
    };
    Ok((if report.kept { warm } else { fitted }, Some(report)))
}

/// How much higher the warm fit's bound must be to be kept: the fit's own stopping rule,
/// `tol` per observed value (`Settings::tol`), below which two fits count as having reached
/// the same optimum. A tie keeps the default fit, so a sweep reports today's fit wherever the
/// warm start finds nothing better.
fn same_optimum(settings: &Settings, fitted: &Fitted) -> f64 {
    settings.tol * fitted.compiled().vmp.observed_values().max(1) as f64
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
