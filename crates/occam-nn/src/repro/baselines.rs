//! The baseline rows shared by the sunspot and Tecator tables: evidence procedure (best by evidence
//! and committees of the best k), hybrid Monte Carlo started at the best evidence mode, early
//! stopping.

use super::{Options, ReproError, Row};
use crate::baselines::early_stopping::{early_stopping, EarlyStoppingOptions};
use crate::baselines::evidence::{committee_predict, fit_evidence_restarts, EvidenceOptions};
use crate::baselines::hmc::{hmc, HmcOptions};
use crate::bnn::prior::{Gamma, PriorKind};
use crate::data::Split;

/// Paper values for one data set: (evidence, evidence committee of 3, evidence committee of 10,
/// HMC, early stopping); `None` where the paper has no such row.
pub struct PaperBaselines {
    /// Evidence procedure.
    pub evidence: Option<f64>,
    /// Evidence committee (3 best).
    pub committee3: Option<f64>,
    /// Evidence committee (10).
    pub committee10: Option<f64>,
    /// Hybrid Monte Carlo.
    pub hmc: Option<f64>,
    /// Early stopping.
    pub early: Option<f64>,
}

/// A metric of standardised test predictions.
pub type Score<'a> = &'a dyn Fn(&[f64]) -> Result<f64, ReproError>;

/// Runs the baselines with `hidden` units and `prior`, scoring test predictions with `score`
/// (standardised predictions in, metric out).
pub fn baseline_rows(
    s: &Split,
    hidden: usize,
    prior: PriorKind,
    opts: &Options,
    paper: &PaperBaselines,
    score: Score<'_>,
) -> Result<Vec<Row>, ReproError> {
    baseline_rows_scored(s, hidden, prior, opts, paper, &[("", score)])
}

/// [`baseline_rows`] with several metrics: each method's row appears once per `(suffix, score)`,
/// labelled with the suffix appended; every row carries the paper's value.
pub fn baseline_rows_scored(
    s: &Split,
    hidden: usize,
    prior: PriorKind,
    opts: &Options,
    paper: &PaperBaselines,
    scores: &[(&str, Score<'_>)],
) -> Result<Vec<Row>, ReproError> {
    let scored = |rows: &mut Vec<Row>, label: &str, pred: &[f64], p: Option<f64>| {
        for (suffix, score) in scores {
            rows.push(Row::new(&format!("{label}{suffix}"), score(pred)?, p));
        }
        Ok::<(), ReproError>(())
    };
    let mut rows = Vec::new();
    let restarts = opts.scale(10, 3);
    let ev_opts = EvidenceOptions {
        prior,
        seed: opts.seed,
        cycles: opts.scale(5, 3),
        iters_per_cycle: opts.scale(500, 150),
        ..EvidenceOptions::paper(hidden)
    };
    let ev = fit_evidence_restarts(&s.train, &ev_opts, restarts)?;
    scored(
        &mut rows,
        "evidence (best by evidence)",
        &ev[0].predict(&s.test.x),
        paper.evidence,
    )?;
    scored(
        &mut rows,
        "evidence committee (3 best)",
        &committee_predict(&ev, 3, &s.test.x),
        paper.committee3,
    )?;
    if opts.full {
        scored(
            &mut rows,
            "evidence committee (10)",
            &committee_predict(&ev, 10, &s.test.x),
            paper.committee10,
        )?;
    }
    let h_opts = HmcOptions {
        prior,
        seed: opts.seed,
        samples: opts.scale(300, 60),
        burn_in: opts.scale(100, 20),
        leapfrog: opts.scale(50, 20),
        persistence: 0.0,
        alpha_prior: Gamma { a: 3e-4, b: 1e-4 },
        beta_prior: Gamma { a: 0.05, b: 1e-4 },
        ..HmcOptions::paper(hidden)
    };
    let run = hmc(&s.train, &h_opts, &ev[0].w, &ev[0].alpha, ev[0].beta)?;
    scored(
        &mut rows,
        "hybrid Monte Carlo",
        &run.predict(&s.test.x),
        paper.hmc,
    )?;
    rows.push(Row::new(
        "hybrid Monte Carlo acceptance rate",
        run.acceptance,
        None,
    ));
    let es = early_stopping(
        &s.train,
        &EarlyStoppingOptions {
            hidden,
            validation: (s.train.n() / 10).max(1),
            networks: opts.scale(10, 3),
            max_iters: opts.scale(1000, 200),
            check_every: 10,
            seed: opts.seed,
        },
    )?;
    scored(
        &mut rows,
        "early stopping (best of networks by validation)",
        &es.predict(&s.test.x),
        paper.early,
    )?;
    Ok(rows)
}
