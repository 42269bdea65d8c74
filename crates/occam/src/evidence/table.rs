//! Comparing models by several evidence estimates at once: every model fitted once, every
//! method run on each fit, posterior model probabilities per method.

use std::time::Instant;

use occam_core::prelude::Observer;

use super::{estimate, Evidence, Method, Options};
use crate::compare::probabilities;
use crate::driver::Settings;
use crate::error::{Error, Result};
use crate::fitted::{Fitted, Model};

/// One model of a comparison by several methods.
pub struct EvidenceRow {
    /// The fitted model.
    pub fitted: Fitted,
    /// One result per method, in the order asked for (`vb`'s seconds are the fit's).
    pub evidence: Vec<Evidence>,
    /// Posterior model probability under each method (`None` where the method does not apply
    /// to every model compared).
    pub probability: Vec<Option<f64>>,
}

/// Fits every model with `settings`, runs every method of `methods` on each fit and computes
/// the posterior model probabilities per method under the prior weights `priors` (equal when
/// empty); `observer(i)` watches the fit of model i.
pub fn compare_evidence(
    models: &[Model],
    settings: &Settings,
    priors: &[f64],
    methods: &[Method],
    opts: &Options,
    observer: &mut dyn FnMut(usize) -> Box<dyn Observer>,
) -> Result<Vec<EvidenceRow>> {
    if !priors.is_empty()
        && (priors.len() != models.len() || priors.iter().any(|p| !(p.is_finite() && *p > 0.0)))
    {
        return Err(Error::Usage(format!(
            "priors: give {} positive numbers, one per model",
            models.len()
        )));
    }
    if methods.is_empty() {
        return Err(Error::Usage("method: give at least one".into()));
    }
    opts.validate()?;
    let opts = &Options {
        refit: Some(opts.refit.clone().unwrap_or_else(|| settings.clone())),
        ..opts.clone()
    };
    let mut rows = Vec::with_capacity(models.len());
    for (i, m) in models.iter().enumerate() {
        let mut obs = observer(i);
        let start = Instant::now();
        let fitted = m.fit_observed(settings, obs.as_mut())?;
        let fit_seconds = start.elapsed().as_secs_f64();
        let evidence = methods
            .iter()
            .map(|&method| {
                let mut e = estimate(&fitted, method, opts);
                if let Evidence::Estimate(e) = &mut e {
                    if method == Method::Vb {
                        e.seconds = fit_seconds;
                    }
                }
                e
            })
            .collect();
        rows.push(EvidenceRow {
            fitted,
            evidence,
            probability: vec![None; methods.len()],
        });
    }
    for j in 0..methods.len() {
        // A held-out score (cv) is not ln p(D | m): softmax of it is no posterior model
        // probability, so it gets none (and cannot weight a model average). Nor do values that
        // are not finite.
        let values: Option<Vec<f64>> = rows
            .iter()
            .map(|r| match &r.evidence[j] {
                Evidence::Estimate(e) if e.kind.is_log_evidence() && e.log_evidence.is_finite() => {
                    Some(e.log_evidence)
                }
                _ => None,
            })
            .collect();
        if let Some(v) = values {
            for (r, p) in rows.iter_mut().zip(probabilities(&v, priors)) {
                r.probability[j] = Some(p);
            }
        }
    }
    Ok(rows)
}

/// The posterior model probabilities of the rows under method `j` (the order of the methods
/// given to [`compare_evidence`]), or `None` when the method does not apply to every model:
/// the weights of a Bayesian model average ([`super::average`]).
pub fn weights(rows: &[EvidenceRow], j: usize) -> Option<Vec<f64>> {
    rows.iter()
        .map(|r| r.probability.get(j).copied().flatten())
        .collect()
}
