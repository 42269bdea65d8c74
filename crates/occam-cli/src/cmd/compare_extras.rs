//! What `occam compare --method ...` adds after the table: Bayesian model averaging of new
//! rows' predictions (`--average METHOD --predict NAME=FILE --predict-out FILE`) and the SVG of
//! evidence against complexity (`--plot FILE`). Both are the library's, shared with Python's
//! `occam.compare(..., average=)` and `Comparison.plot()`.

use occam::evidence::{average_rows, EvidenceRow, Method};
use occam::DataSet;

use super::compare::CompareArgs;
use crate::error::{Error, Result};

/// `--average METHOD`: every model's predictive of the `--predict` rows, averaged with the
/// posterior model probabilities under METHOD ([`occam::evidence::average_rows`]), written to
/// `--predict-out`; the weights on stderr.
pub fn average(a: &CompareArgs, rows: &[EvidenceRow], methods: &[Method]) -> Result<()> {
    let Some(name) = &a.average else {
        return Ok(());
    };
    let m = Method::parse(name).map_err(|e| Error::Usage(format!("--average: {e}")))?;
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
    let avg = average_rows(rows, methods, m, &new, &opts).map_err(|e| match e {
        Error::Usage(m) if m.starts_with("average") => Error::Usage(format!("--{m}")),
        e => e,
    })?;
    for (r, w) in rows.iter().zip(&avg.weights) {
        eprintln!(
            "average by {}: {} weight {}",
            m.name(),
            r.fitted.loaded().file_name,
            super::compare::probability(*w)
        );
    }
    super::predict::write_predictions(&avg.predictions, a.predict_out.as_deref(), false)
}

/// `--plot FILE`: one series per method, ln p(D) (± se) against the models' free parameters
/// ([`occam_report::evidence::evidence_plot`]), written atomically.
pub fn plot(a: &CompareArgs, rows: &[EvidenceRow], methods: &[Method]) -> Result<()> {
    let Some(path) = &a.plot else {
        return Ok(());
    };
    let svg = occam_report::evidence::evidence_plot(rows, methods);
    occam::atomic::write(path, svg.as_bytes())?;
    Ok(())
}
