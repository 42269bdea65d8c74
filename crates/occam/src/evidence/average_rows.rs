//! The Bayesian model average of a comparison ([`super::compare_evidence`]'s rows): every
//! model's predictive of new rows, weighted by the posterior model probabilities under one of
//! the comparison's evidence methods ([`super::average`]). `occam compare --average` and
//! Python's `occam.compare(..., average=)` both call [`average_rows`], so their numbers are one.

use super::{average, weights, Evidence, EvidenceRow, Method};
use crate::error::{Error, Result};
use crate::predict::{PredictOptions, Predictive};
use crate::DataSet;

/// A model average: the method whose posterior model probabilities weight it, the weights (one
/// per row, in the rows' order) and the averaged predictive of every predicted variable.
pub struct Averaged {
    /// The method whose posterior model probabilities are the weights.
    pub method: Method,
    /// P(m | D) under `method`, one per model compared.
    pub weights: Vec<f64>,
    /// The averaged predictive, per variable ([`super::average`]).
    pub predictions: Vec<Predictive>,
}

/// Averages the rows' predictives of the new rows `new` with the posterior model probabilities
/// under `by`, which must be one of `methods` (the comparison's methods, in the rows' order) and
/// give a log evidence for every row; `opts` are each model's predictive options and its seed
/// also chooses the average's draws. Usage errors start with `average`.
pub fn average_rows(
    rows: &[EvidenceRow],
    methods: &[Method],
    by: Method,
    new: &DataSet,
    opts: &PredictOptions,
) -> Result<Averaged> {
    let j = methods.iter().position(|x| *x == by).ok_or_else(|| {
        Error::Usage(format!(
            "average {}: give it in the methods too (the weights are its posterior model \
             probabilities)",
            by.name()
        ))
    })?;
    let held_out = rows
        .iter()
        .any(|r| matches!(&r.evidence[j], Evidence::Estimate(e) if !e.kind.is_log_evidence()));
    if held_out {
        return Err(Error::Usage(format!(
            "average {}: a held-out score is not ln p(D | m), so it gives no posterior model \
             probabilities to weight by; average by an evidence (e.g. is or vbsym)",
            by.name()
        )));
    }
    let w = weights(rows, j).ok_or_else(|| {
        Error::Usage(format!(
            "average {}: it does not apply to every model (see the table's n/a)",
            by.name()
        ))
    })?;
    let per_model = rows
        .iter()
        .map(|r| r.fitted.predict(new, &Default::default(), opts))
        .collect::<Result<Vec<_>>>()?;
    let predictions = average(&per_model, &w, opts.seed)?;
    if predictions.is_empty() {
        return Err(Error::Usage(
            "average: the models predict no variable for these rows (name the predicted \
             variable with `observe`)"
                .into(),
        ));
    }
    Ok(Averaged {
        method: by,
        weights: w,
        predictions,
    })
}
