//! What `occam compare --method ...` adds after the table: Bayesian model averaging of new
//! rows' predictions (`--average METHOD --predict NAME=FILE --predict-out FILE`) and the SVG of
//! evidence against complexity (`--plot FILE`).

use occam::evidence::{average as bma, free_parameters, weights, Evidence, EvidenceRow, Method};
use occam::DataSet;
use occam_report::figure::{line_chart, Figure, Series};

use super::compare::CompareArgs;
use crate::error::{Error, Result};

/// `--average METHOD`: every model's predictive of the `--predict` rows, averaged with the
/// posterior model probabilities under METHOD ([`occam::evidence::average`]), written to
/// `--predict-out`; the weights on stderr.
pub fn average(a: &CompareArgs, rows: &[EvidenceRow], methods: &[Method]) -> Result<()> {
    let Some(name) = &a.average else {
        return Ok(());
    };
    let m = Method::parse(name).map_err(|e| Error::Usage(format!("--average: {e}")))?;
    let j = methods.iter().position(|x| *x == m).ok_or_else(|| {
        Error::Usage(format!(
            "--average {}: give it in --method too (the weights are its posterior model \
             probabilities)",
            m.name()
        ))
    })?;
    let held_out = rows
        .iter()
        .any(|r| matches!(&r.evidence[j], Evidence::Estimate(e) if !e.kind.is_log_evidence()));
    if held_out {
        return Err(Error::Usage(format!(
            "--average {}: a held-out score is not ln p(D | m), so it gives no posterior model \
             probabilities to weight by; average by an evidence (e.g. --average is or vbsym)",
            m.name()
        )));
    }
    let w = weights(rows, j).ok_or_else(|| {
        Error::Usage(format!(
            "--average {}: it does not apply to every model (see the table's n/a)",
            m.name()
        ))
    })?;
    if a.predict.is_empty() {
        return Err(Error::Usage(
            "--average: give the new rows with --predict NAME=FILE".into(),
        ));
    }
    let new = DataSet::from_args(&a.predict)?;
    let opts = occam::predict::PredictOptions {
        seed: a.run.seed,
        ..Default::default()
    };
    let per_model = rows
        .iter()
        .map(|r| r.fitted.predict(&new, &Default::default(), &opts))
        .collect::<Result<Vec<_>>>()?;
    let avg = bma(&per_model, &w, a.run.seed)?;
    if avg.is_empty() {
        return Err(Error::Usage(
            "--average: the models predict no variable for these rows (name the predicted \
             variable with `observe`)"
                .into(),
        ));
    }
    for (r, w) in rows.iter().zip(&w) {
        eprintln!(
            "average by {}: {} weight {}",
            m.name(),
            r.fitted.loaded().file_name,
            super::compare::probability(*w)
        );
    }
    super::predict::write_predictions(&avg, a.predict_out.as_deref(), false)
}

/// `--plot FILE`: one series per method, ln p(D) (± se) against the models' free parameters.
pub fn plot(a: &CompareArgs, rows: &[EvidenceRow], methods: &[Method]) -> Result<()> {
    let Some(path) = &a.plot else {
        return Ok(());
    };
    let dims: Option<Vec<usize>> = rows.iter().map(|r| free_parameters(&r.fitted)).collect();
    let x = |i: usize| match &dims {
        Some(d) => d[i] as f64,
        None => (i + 1) as f64,
    };
    let series = methods
        .iter()
        .enumerate()
        .map(|(j, m)| {
            let points = rows
                .iter()
                .enumerate()
                .map(|(i, r)| (x(i), r.evidence[j].value().unwrap_or(f64::NAN)))
                .collect();
            let se = rows
                .iter()
                .map(|r| match &r.evidence[j] {
                    occam::evidence::Evidence::Estimate(e) => e.se.unwrap_or(0.0),
                    _ => 0.0,
                })
                .collect();
            Series::new(m.name(), points).with_errors(se)
        })
        .collect();
    let fig = Figure {
        title: "ln p(D) against complexity, by method".into(),
        x_label: if dims.is_some() {
            "free parameters d".into()
        } else {
            "model (order given)".into()
        },
        y_label: "ln p(D) (nats; cv: held-out log predictive)".into(),
        series,
        references: Vec::new(),
    };
    occam::atomic::write(path, line_chart(&fig).as_bytes())?;
    Ok(())
}
