//! Comparing models by their bounds: [`compare`] fits every model with the same settings and
//! ranks them by posterior model probability ([`probabilities`], Winn §1.8.3); [`check_kinds`]
//! refuses to rank bounds of different kinds (exact, lower bound, approximate) unless asked
//! (both in module `rank`, which the evidence table uses too). The other estimates of the
//! evidence are module `evidence`'s.

use occam_core::prelude::Observer;

use crate::driver::Settings;
use crate::error::{Error, Result};
use crate::fitted::{Fitted, Model};
use crate::rank::{check_kinds, probabilities};

/// One row of a comparison.
pub struct Compared {
    /// The fitted model.
    pub fitted: Fitted,
    /// Bound minus the best bound (≤ 0).
    pub difference: f64,
    /// Posterior model probability.
    pub probability: f64,
    /// Wall-clock seconds of the model's fit (all its restarts, and a sweep's warm start).
    pub seconds: f64,
    /// What the warm start of a plate sweep did for this model (`None`: none was tried).
    pub warm: Option<crate::evidence::WarmStart>,
}

/// Fits every model with the same settings and compares their bounds; `priors` are prior
/// weights, one per model (they need not sum to 1), or empty for equal weights.
pub fn compare(models: &[Model], settings: &Settings, priors: &[f64]) -> Result<Vec<Compared>> {
    compare_observed(
        models,
        settings,
        priors,
        &mut |_: usize| -> Box<dyn Observer> { Box::new(()) },
    )
}

/// [`compare`] with an observer per model (`observer(i)` for model i).
pub fn compare_observed(
    models: &[Model],
    settings: &Settings,
    priors: &[f64],
    observer: &mut dyn FnMut(usize) -> Box<dyn Observer>,
) -> Result<Vec<Compared>> {
    compare_kinds(models, settings, priors, false, observer)
}

/// [`compare_observed`] that ranks bounds of different kinds (exact, lower bound, approximate)
/// when `mixed_bounds`, and otherwise refuses them ([`check_kinds`]).
pub fn compare_kinds(
    models: &[Model],
    settings: &Settings,
    priors: &[f64],
    mixed_bounds: bool,
    observer: &mut dyn FnMut(usize) -> Box<dyn Observer>,
) -> Result<Vec<Compared>> {
    compare_swept(models, settings, priors, mixed_bounds, None, observer)
}

/// [`compare_kinds`] of the models of a sweep of plate `plate` (`compare --plate`; `None`: not
/// a sweep): each size after a smaller one is fitted from a warm start too, and the higher
/// bound kept ([`crate::evidence::fit_swept`]; what it did is [`Compared::warm`]).
pub fn compare_swept(
    models: &[Model],
    settings: &Settings,
    priors: &[f64],
    mixed_bounds: bool,
    plate: Option<&str>,
    observer: &mut dyn FnMut(usize) -> Box<dyn Observer>,
) -> Result<Vec<Compared>> {
    if !priors.is_empty()
        && (priors.len() != models.len() || priors.iter().any(|p| !(p.is_finite() && *p > 0.0)))
    {
        return Err(Error::Usage(format!(
            "priors: give {} positive numbers, one per model",
            models.len()
        )));
    }
    let mut fitted: Vec<Fitted> = Vec::with_capacity(models.len());
    let mut seconds = Vec::with_capacity(models.len());
    let mut warm = Vec::with_capacity(models.len());
    for (i, m) in models.iter().enumerate() {
        let mut obs = observer(i);
        let start = std::time::Instant::now();
        let (f, w) = crate::evidence::fit_swept(m, fitted.last(), plate, settings, obs.as_mut())?;
        fitted.push(f);
        warm.push(w);
        seconds.push(start.elapsed().as_secs_f64());
    }
    check_kinds(&fitted.iter().collect::<Vec<_>>(), mixed_bounds)?;
    let bounds: Vec<f64> = fitted.iter().map(Fitted::bound).collect();
    let probs = probabilities(&bounds, priors);
    let best = bounds.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Ok(fitted
        .into_iter()
        .zip(probs)
        .zip(seconds)
        .zip(warm)
        .map(|(((f, p), seconds), warm)| Compared {
            difference: f.bound() - best,
            probability: p,
            fitted: f,
            seconds,
            warm,
        })
        .collect())
}
