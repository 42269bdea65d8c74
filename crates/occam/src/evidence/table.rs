//! Comparing models by several evidence estimates at once: every model fitted once, every
//! method run on each fit, posterior model probabilities per method.

use std::time::Instant;

use occam_core::prelude::Observer;

use super::{estimate, Evidence, Method, Options};
use crate::driver::Settings;
use crate::error::{Error, Result};
use crate::fitted::{Fitted, Model};
use crate::rank::probabilities;

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
/// empty); `observer(i)` watches the fit of model i. When the methods include a bound (`vb`,
/// `vbsym`), fits whose bounds are of different kinds are refused unless `opts.mixed_bounds`
/// ([`crate::check_kinds`]).
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
    let mut rows: Vec<EvidenceRow> = Vec::with_capacity(models.len());
    for (i, m) in models.iter().enumerate() {
        let mut obs = observer(i);
        let start = Instant::now();
        let previous = rows.last().map(|r| &r.fitted);
        let (fitted, warm) =
            super::fit_swept(m, previous, opts.plate.as_deref(), settings, obs.as_mut())?;
        let fit_seconds = start.elapsed().as_secs_f64();
        let evidence = methods
            .iter()
            .map(|&method| {
                let mut e = estimate(&fitted, method, opts);
                if let Evidence::Estimate(e) = &mut e {
                    if method == Method::Vb {
                        e.seconds = fit_seconds;
                    }
                    if let Some(w) = &warm {
                        w.annotate(method, &mut e.note);
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
    // The bound columns rank bounds: of one kind only, unless asked (--mixed-bounds).
    if methods
        .iter()
        .any(|m| matches!(m, Method::Vb | Method::VbSym))
    {
        let fits: Vec<&Fitted> = rows.iter().map(|r| &r.fitted).collect();
        crate::rank::check_kinds(&fits, opts.mixed_bounds)?;
    }
    set_probabilities(&mut rows, priors);
    Ok(rows)
}

/// Fills every row's `probability` from its `evidence`: per method, the posterior model
/// probabilities under the prior weights `priors` (equal when empty), where the method gives a
/// finite ln p(D | m) for every row. [`compare_evidence`] ends with it; Python's
/// `occam.compare`, which fits with the GIL released, calls it on its own rows.
pub fn set_probabilities(rows: &mut [EvidenceRow], priors: &[f64]) {
    let methods = rows.first().map_or(0, |r| r.evidence.len());
    for j in 0..methods {
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
}

/// The posterior model probabilities of the rows under method `j` (the order of the methods
/// given to [`compare_evidence`]), or `None` when the method does not apply to every model:
/// the weights of a Bayesian model average ([`super::average`]).
pub fn weights(rows: &[EvidenceRow], j: usize) -> Option<Vec<f64>> {
    rows.iter()
        .map(|r| r.probability.get(j).copied().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Kind;
    use crate::DataSet;

    /// A Gaussian model (exact bound) and a Student-t one (importance sampled, Winn §4.4):
    /// `vb` labels the second approximate, and a comparison whose methods include a bound
    /// refuses to rank them without `mixed_bounds` (Python's `occam.compare` calls
    /// [`crate::check_kinds`] the same way); one by `bic` alone ranks no bound.
    #[test]
    fn bounds_of_different_kinds_are_refused_unless_mixed() {
        let y = vec![1.2, 2.9, 2.1, 1.7, 8.0, 2.4, -4.0, 2.2];
        let mut d = DataSet::new();
        d.insert_array("y", y.len(), 1, y, None).unwrap();
        let gauss =
            "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ Gaussian(mu, 0.25)\nobserve y\n";
        let t = "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ StudentT(nu = 3, scale = 1, mean = mu)\nobserve y\n";
        let models = vec![
            Model::from_source("gauss", gauss, &d).unwrap(),
            Model::from_source("t", t, &d).unwrap(),
        ];
        let settings = Settings::default();
        let run = |methods: &[Method], mixed_bounds: bool| {
            let opts = Options {
                mixed_bounds,
                ..Options::default()
            };
            compare_evidence(&models, &settings, &[], methods, &opts, &mut |_| {
                Box::new(())
            })
        };
        let err = run(&[Method::Vb, Method::Bic], false).err().unwrap();
        let msg = err.to_string();
        assert!(msg.contains("different kinds"), "{msg}");
        assert!(msg.contains("t: approximate"), "{msg}");
        assert!(run(&[Method::Bic, Method::VbSym], false).is_err());
        let rows = run(&[Method::Vb, Method::Bic], true).unwrap();
        let kind = |i: usize| match &rows[i].evidence[0] {
            Evidence::Estimate(e) => e.kind,
            e => panic!("{e:?}"),
        };
        assert_eq!((kind(0), kind(1)), (Kind::LowerBound, Kind::Approximate));
        assert!(Kind::Approximate.is_log_evidence());
        assert!(rows[1].probability[0].is_some());
        assert!(run(&[Method::Bic], false).is_ok());
        let fits: Vec<&Fitted> = rows.iter().map(|r| &r.fitted).collect();
        assert!(crate::check_kinds(&fits, false).is_err());
        assert!(crate::check_kinds(&fits, true).is_ok());
        assert!(crate::check_kinds(&fits[1..], false).is_ok());
    }
}
