//! The sunspot protocol study: the committee paper's Table 1 (§4.2) does not state its NMSE
//! denominator, which test years the error averages over, or which years' statistics normalise the
//! series. This table measures the VB fits under every reading the seed text allows, so that the
//! gap to the paper's 0.14 / 0.11 can be located (or ruled out) with numbers.
//!
//! For each scaling of the series ([`SunspotScaling`]) and each M ∈ {1, 3}, the fits are run with
//! the paper's schedule (pre-training, 5 × 500 L-BFGS iterations + hyper-parameter update) and
//! again run on to 20 cycles (converged); the best by the bound over the restarts is scored, in
//! sunspot numbers, over 1921–1979, 1921–1955 and 1956–1979 with three denominators: the variance of
//! the scored targets, of the whole series 1700–1979 (Weigend's "average relative variance") and of
//! the training years 1700–1920. A least-squares AR(12) on the same split is scored the same way.

use super::{sunspot_vb_options, Options, ReproError, Row, Table};
use crate::bnn::vb::{best_by_bound, fit_vb_restarts, VbOptions};
use crate::data::{
    linear_predict, linear_regression, mse, spearman, sunspot_year, sunspots_protocol_scaled,
    Split, SunspotScaling,
};

/// The test periods: (label, first index, end index) into the 59 test targets 1921–1979.
const PERIODS: [(&str, usize, usize); 3] = [
    ("1921-1979", 0, 59),
    ("1921-1955", 0, 35),
    ("1956-1979", 35, 59),
];

fn variance(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n
}

/// Variances of the raw series 1700–1979 and 1700–1920.
fn series_variances() -> Result<(f64, f64), ReproError> {
    let y = sunspot_year()?;
    let all: Vec<f64> = y.iter().filter(|r| r.0 <= 1979).map(|r| r.1).collect();
    let train: Vec<f64> = y.iter().filter(|r| r.0 <= 1920).map(|r| r.1).collect();
    Ok((variance(&all), variance(&train)))
}

/// Pushes the NMSE rows of one set of standardised test predictions.
fn score_rows(
    t: &mut Table,
    label: &str,
    s: &Split,
    pred_z: &[f64],
    paper: Option<f64>,
) -> Result<(), ReproError> {
    let (var_all, var_train) = series_variances()?;
    let pred = s.unscale(pred_z);
    let target = s.unscale(&s.test.t);
    for (period, a, b) in PERIODS {
        let m = mse(&pred[a..b], &target[a..b])?;
        let own = variance(&target[a..b]);
        // The paper's value is put against the 1921-1979 row with the test-set variance only: the
        // other readings are for locating the gap, not alternative targets.
        let p = if a == 0 && b == 59 { paper } else { None };
        t.push(Row::new(
            &format!("{label}, {period}, MSE / var(scored targets)"),
            m / own,
            p,
        ));
        t.push(Row::new(
            &format!("{label}, {period}, MSE / var(1700-1979)"),
            m / var_all,
            None,
        ));
        t.push(Row::new(
            &format!("{label}, {period}, MSE / var(1700-1920)"),
            m / var_train,
            None,
        ));
    }
    Ok(())
}

/// The scalings the study runs, with their labels.
pub const STUDY_SCALINGS: [(SunspotScaling, &str); 3] = [
    (SunspotScaling::TrainZ, "z-score 1700-1920"),
    (SunspotScaling::SeriesZ, "z-score 1700-1979"),
    (SunspotScaling::TrainMax, "/ max 1700-1920"),
];

/// Runs the study over every scaling of [`STUDY_SCALINGS`] (`opts.full`: the paper's 10 restarts
/// with its 5 × 500 schedule and 3 restarts run on to 20 cycles; else 2 restarts and short
/// schedules, for a smoke run).
pub fn sunspot_protocols(opts: &Options) -> Result<Table, ReproError> {
    let mut t = Table::new(
        "sunspot_protocols",
        "committee paper Table 1 under every reading of its protocol: scaling x schedule x test period x NMSE denominator",
    );
    for (scaling, _) in STUDY_SCALINGS {
        let part = sunspot_protocol_part(opts, scaling)?;
        t.rows.extend(part.rows);
        t.note = part.note;
    }
    Ok(t)
}

/// The study's rows for one scaling of the series.
pub fn sunspot_protocol_part(opts: &Options, scaling: SunspotScaling) -> Result<Table, ReproError> {
    let mut t = Table::new(
        "sunspot_protocols",
        "committee paper Table 1 under every reading of its protocol: scaling x schedule x test period x NMSE denominator",
    );
    let name = STUDY_SCALINGS
        .iter()
        .find(|s| s.0 == scaling)
        .map(|s| s.1)
        .unwrap_or("?");
    {
        let s = sunspots_protocol_scaled(12, scaling)?;
        let lin = linear_regression(&s.train)?;
        score_rows(
            &mut t,
            &format!("[{name}] linear AR(12)"),
            &s,
            &linear_predict(&lin, &s.test.x),
            Some(0.141),
        )?;
        for (m, paper) in [(1usize, 0.14), (3, 0.11)] {
            for (sched, cycles, restarts) in [
                ("5x500", opts.scale(5, 2), opts.scale(10, 2)),
                ("20x500", opts.scale(20, 4), opts.scale(3, 2)),
            ] {
                let o = VbOptions {
                    cycles,
                    ..sunspot_vb_options(opts, m)
                };
                let fits = fit_vb_restarts(&s.train, &o, restarts)?;
                let best = &fits[best_by_bound(&fits)];
                let label = format!("[{name}] VB M = {m}, {sched}");
                score_rows(
                    &mut t,
                    &label,
                    &s,
                    &best.predict_mean(&s.test.x)?,
                    Some(paper),
                )?;
                t.push(Row::new(&format!("{label}, bound"), best.bound.total, None));
                if let [.., a, b] = best.trace[..] {
                    t.push(Row::new(
                        &format!("{label}, bound gain in the last cycle"),
                        b - a,
                        None,
                    ));
                }
                let (mut bs, mut es) = (Vec::new(), Vec::new());
                let mut per_period = vec![Vec::new(); PERIODS.len()];
                let target = s.unscale(&s.test.t);
                for f in &fits {
                    bs.push(f.bound.total);
                    let pred = s.unscale(&f.predict_mean(&s.test.x)?);
                    es.push(mse(&pred, &target)?);
                    for (e, (_, a, b)) in per_period.iter_mut().zip(PERIODS) {
                        e.push(mse(&pred[a..b], &target[a..b])?);
                    }
                }
                for (e, (period, _, _)) in per_period.iter().zip(PERIODS) {
                    t.push(Row::new(
                        &format!(
                            "{label}, Spearman rho(bound, NMSE {period}) over {restarts} restarts"
                        ),
                        spearman(&bs, e)?,
                        None,
                    ));
                }
                let (lo, hi) = es
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(l, h), e| (l.min(*e), h.max(*e)));
                let v = variance(&target);
                t.push(Row::new(
                    &format!("{label}, lowest test NMSE over the restarts"),
                    lo / v,
                    None,
                ));
                t.push(Row::new(
                    &format!("{label}, highest test NMSE over the restarts"),
                    hi / v,
                    None,
                ));
            }
        }
    }
    t.note = format!(
        "<g^2> form {:?}; best of the restarts by the bound; NMSE rows give MSE in sunspot numbers over the named years divided by the named variance (population, / n)",
        opts.form
    );
    Ok(t)
}
