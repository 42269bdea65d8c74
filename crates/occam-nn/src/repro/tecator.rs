//! Tecator (committee paper §4.3, Table 2): fat from the first 10 principal components of the
//! 100-channel spectra (PCA fitted on the 172 training samples; scores standardised), H = 3, test
//! RMSE in % fat on the last 43 samples; linear principal-component regression as the anchor.
//! The committee's candidates are the paper's random restarts plus one mixture grown from the
//! best single Gaussian ([`fit_committee`]), so its bound is never below the M = 1 bound.

use super::baselines::{baseline_rows, PaperBaselines};
use super::{Options, ReproError, Row, Table};
use crate::bnn::prior::PriorKind;
use crate::bnn::vb::{best_by_bound, fit_committee, fit_vb_restarts, VbOptions};
use crate::data::{linear_predict, linear_regression, rmse, tecator_protocol};

/// Runs the reproduction.
pub fn tecator(opts: &Options) -> Result<Table, ReproError> {
    let s = tecator_protocol(10, true)?;
    let truth = s.unscale(&s.test.t);
    let mut t = Table::new(
        "tecator",
        "committee paper Table 2: Tecator fat, 10 PCs, H = 3 (test RMSE, % fat)",
    );
    let lin = linear_regression(&s.train)?;
    t.push(Row::new(
        "linear regression on 10 PCs, test RMSE",
        rmse(&s.unscale(&linear_predict(&lin, &s.test.x)), &truth)?,
        Some(2.78),
    ));
    let restarts = opts.scale(10, 3);
    let vb = |m: usize| VbOptions {
        form: opts.form,
        seed: opts.seed,
        pretrain_iters: opts.scale(100, 30),
        cycles: opts.scale(5, 3),
        iters_per_cycle: opts.scale(500, 150),
        ..VbOptions::committee_paper(3, m)
    };
    let singles = fit_vb_restarts(&s.train, &vb(1), restarts)?;
    let committee = fit_committee(&s.train, &vb(3), restarts, &singles, 0.01)?;
    for (all, m, paper) in [(&singles, 1usize, 0.56), (&committee, 3, 0.54)] {
        let best = &all[best_by_bound(all)];
        let label = if m == 1 {
            "VB diagonal (M = 1)"
        } else {
            "VB committee (M = 3)"
        };
        let pred = s.unscale(&best.predict_mean(&s.test.x)?);
        t.push(Row::new(
            &format!("{label}, test RMSE"),
            rmse(&pred, &truth)?,
            Some(paper),
        ));
        t.push(Row::new(&format!("{label}, bound"), best.bound.total, None));
        if m > 1 {
            t.committee_rows(label, all);
        }
    }
    let score = |p: &[f64]| -> Result<f64, ReproError> { Ok(rmse(&s.unscale(p), &truth)?) };
    let paper = PaperBaselines {
        evidence: Some(0.60),
        committee3: Some(0.57),
        committee10: Some(0.57),
        hmc: Some(0.59),
        early: Some(0.65),
    };
    for r in baseline_rows(&s, 3, PriorKind::Single, opts, &paper, &score)? {
        t.push(r);
    }
    t.note = format!(
        "<g^2> form {:?}; {} restarts per model, the committee's plus one grown from the best single Gaussian, best by bound; Q(m) = 1/M fixed",
        opts.form, restarts
    );
    Ok(t)
}
