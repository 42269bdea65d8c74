//! Sunspots (committee paper §4.2, Table 1, Fig. 2): 12 lags, H = 8, train 1700–1920; VB with one
//! diagonal Gaussian and with a 3-component committee, each the best of its fits by the bound.
//! NMSE = MSE / variance of the scored targets (÷ n) throughout.
//!
//! Every method is scored twice. The reproduction scores 1921–1955, the reading under which the
//! paper's claims reproduce (Weigend's first test set; see `docs/guide/10-reproductions.md`
//! and the protocol study); the paper's text says 1921–1979 (59 points), and those numbers are
//! rows of the same table, labelled "stated protocol". The fits themselves do not depend on the
//! reading: training is 1700–1920 either way.
//!
//! The committee's candidates are the paper's random restarts plus one mixture grown from the
//! best single Gaussian ([`fit_committee`]), so its bound is never below the M = 1 bound.

use super::baselines::{baseline_rows_scored, PaperBaselines};
use super::{Figure, Options, ReproError, Row, Table};
use crate::bnn::prior::PriorKind;
use crate::bnn::vb::{best_by_bound, fit_committee, fit_vb_restarts, VbFit, VbOptions};
use crate::data::{
    linear_predict, linear_regression, mse, nmse, spearman, sunspot_year, sunspots_protocol, Split,
};

/// The settings of the VB fits for `components` components under `opts`.
pub fn sunspot_vb_options(opts: &Options, components: usize) -> VbOptions {
    VbOptions {
        form: opts.form,
        seed: opts.seed,
        pretrain_iters: opts.scale(100, 30),
        cycles: opts.scale(5, 3),
        iters_per_cycle: opts.scale(500, 100),
        ..VbOptions::committee_paper(8, components)
    }
}

/// Test targets 1921–1955: the first 35 of the 59 (1921–1979).
pub const REPRODUCED_YEARS: usize = 35;

/// Test NMSE of `fit` over the first `n` test years.
fn test_nmse(fit: &VbFit, s: &Split, n: usize) -> Result<f64, ReproError> {
    let p = fit.predict_mean(&s.test.x)?;
    Ok(nmse(&p[..n], &s.test.t[..n])?)
}

/// Runs the reproduction.
pub fn sunspots(opts: &Options) -> Result<Table, ReproError> {
    let s = sunspots_protocol(12)?;
    let restarts = opts.scale(10, 3);
    let mut t = Table::new(
        "sunspots",
        "committee paper Table 1 / Fig. 2: sunspots, 12 lags, H = 8 (test NMSE over 1921-1955, the reproduction, and over 1921-1979, the stated protocol)",
    );
    let lin = linear_regression(&s.train)?;
    let lin_pred = linear_predict(&lin, &s.test.x);
    t.push(Row::new(
        "linear AR(12), test NMSE (calibration)",
        nmse(&lin_pred, &s.test.t)?,
        Some(0.141),
    ));
    // The other denominator in use for sunspots (Weigend's "average relative variance" divides by
    // the variance of the whole series): the same linear predictions over the 1700-1979 variance.
    let series: Vec<f64> = sunspot_year()?
        .iter()
        .filter(|y| y.0 <= 1979)
        .map(|y| (y.1 - s.target_mean) / s.target_sd)
        .collect();
    let mean = series.iter().sum::<f64>() / series.len() as f64;
    let var_all = series.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / series.len() as f64;
    t.push(Row::new(
        "linear AR(12), test MSE / variance of 1700-1979",
        mse(&lin_pred, &s.test.t)? / var_all,
        Some(0.226),
    ));
    t.push(Row::new(
        "linear AR(12), test NMSE 1921-1955",
        nmse(&lin_pred[..REPRODUCED_YEARS], &s.test.t[..REPRODUCED_YEARS])?,
        None,
    ));
    let n = REPRODUCED_YEARS;
    let singles = fit_vb_restarts(&s.train, &sunspot_vb_options(opts, 1), restarts)?;
    let committee = fit_committee(
        &s.train,
        &sunspot_vb_options(opts, 3),
        restarts,
        &singles,
        0.01,
    )?;
    let fits = [singles, committee];
    for (all, m, paper) in [(&fits[0], 1usize, 0.14), (&fits[1], 3, 0.11)] {
        let best = &all[best_by_bound(all)];
        let label = if m == 1 {
            "VB diagonal (M = 1)"
        } else {
            "VB committee (M = 3)"
        };
        let p = best.predict_mean(&s.test.x)?;
        t.push(Row::new(
            &format!("{label}, test NMSE 1921-1955"),
            nmse(&p[..n], &s.test.t[..n])?,
            Some(paper),
        ));
        t.push(Row::new(
            &format!("{label}, test NMSE 1921-1979 (stated protocol)"),
            nmse(&p, &s.test.t)?,
            Some(paper),
        ));
        t.push(Row::new(
            &format!("{label}, test NMSE 1956-1979"),
            nmse(&p[n..], &s.test.t[n..])?,
            None,
        ));
        t.push(Row::new(&format!("{label}, bound"), best.bound.total, None));
        if let [.., a, b] = best.trace[..] {
            t.push(Row::new(
                &format!("{label}, bound gain in the schedule's last cycle"),
                b - a,
                None,
            ));
        }
        if m > 1 {
            t.committee_rows(label, all);
        }
    }
    if opts.full {
        // The paper's 5 × 500 schedule stops while the bound is still rising; run on to a fixed
        // point (every restart reaches the same one) to see what the converged posterior predicts.
        let o = VbOptions {
            cycles: 20,
            ..sunspot_vb_options(opts, 1)
        };
        let conv = crate::bnn::vb::fit_vb(&s.train, &o)?;
        t.push(Row::new(
            "VB diagonal (M = 1) run to 20 cycles, test NMSE 1921-1955",
            test_nmse(&conv, &s, n)?,
            Some(0.14),
        ));
        t.push(Row::new(
            "VB diagonal (M = 1) run to 20 cycles, test NMSE 1921-1979 (stated protocol)",
            test_nmse(&conv, &s, s.test.t.len())?,
            Some(0.14),
        ));
        t.push(Row::new(
            "VB diagonal (M = 1) run to 20 cycles, bound",
            conv.bound.total,
            None,
        ));
        if let [.., a, b] = conv.trace[..] {
            t.push(Row::new(
                "VB diagonal (M = 1) run to 20 cycles, bound gain in the last cycle",
                b - a,
                None,
            ));
        }
    }
    // Fig. 2: bound vs test error over the fits of both models (the paper: a "strong
    // correlation" between bound and generalisation, i.e. a negative rank correlation with the
    // error).
    let (mut b, mut e, mut e_all) = (Vec::new(), Vec::new(), Vec::new());
    for f in fits.iter().flatten() {
        b.push(f.bound.total);
        e.push(test_nmse(f, &s, n)?);
        e_all.push(test_nmse(f, &s, s.test.t.len())?);
    }
    t.push(Row::new(
        "Spearman rho(bound, test NMSE 1921-1955) over all fits",
        spearman(&b, &e)?,
        None,
    ));
    t.push(Row::new(
        "Spearman rho(bound, test NMSE 1921-1979) over all fits (stated protocol)",
        spearman(&b, &e_all)?,
        None,
    ));
    let n1 = fits[0].len();
    t.figures.push(Figure {
        name: "sunspots_fig2".into(),
        title: "Fig. 2: training-set bound vs test NMSE 1921-1955, one point per fit".into(),
        x_label: "lower bound on ln p(D)".into(),
        y_label: "test NMSE 1921-1955".into(),
        series: vec![
            (
                "M = 1".into(),
                b[..n1]
                    .iter()
                    .zip(&e[..n1])
                    .map(|(x, y)| [*x, *y])
                    .collect(),
            ),
            (
                "M = 3".into(),
                b[n1..]
                    .iter()
                    .zip(&e[n1..])
                    .map(|(x, y)| [*x, *y])
                    .collect(),
            ),
        ],
        scatter: true,
    });
    let best3 = &fits[1][best_by_bound(&fits[1])];
    let pred = best3.predict(&s.test.x)?;
    let year = |i: usize| 1921.0 + i as f64;
    let orig = |z: f64| z * s.target_sd + s.target_mean;
    t.figures.push(Figure {
        name: "sunspots_fig3".into(),
        title: "Fig. 3: committee (M = 3) one-step predictions, +-1 sd (function), test years"
            .into(),
        x_label: "year".into(),
        y_label: "sunspot number".into(),
        series: vec![
            (
                "target".into(),
                s.test
                    .t
                    .iter()
                    .enumerate()
                    .map(|(i, v)| [year(i), orig(*v)])
                    .collect(),
            ),
            (
                "mean".into(),
                pred.iter()
                    .enumerate()
                    .map(|(i, p)| [year(i), orig(p.mean)])
                    .collect(),
            ),
            (
                "mean + sd".into(),
                pred.iter()
                    .enumerate()
                    .map(|(i, p)| [year(i), orig(p.mean + p.var_function.sqrt())])
                    .collect(),
            ),
            (
                "mean - sd".into(),
                pred.iter()
                    .enumerate()
                    .map(|(i, p)| [year(i), orig(p.mean - p.var_function.sqrt())])
                    .collect(),
            ),
        ],
        scatter: false,
    });
    let target = &s.test.t;
    let period =
        |k: usize| move |p: &[f64]| -> Result<f64, ReproError> { Ok(nmse(&p[..k], &target[..k])?) };
    let (short, whole) = (period(n), period(target.len()));
    let paper = PaperBaselines {
        evidence: Some(0.18),
        committee3: Some(0.14),
        committee10: None,
        hmc: Some(0.09),
        early: Some(0.22),
    };
    for r in baseline_rows_scored(
        &s,
        8,
        PriorKind::Single,
        opts,
        &paper,
        &[
            (", 1921-1955", &short),
            (", 1921-1979 (stated protocol)", &whole),
        ],
    )? {
        t.push(r);
    }
    t.note = format!(
        "NMSE denominator: variance of the scored test targets; reproduction 1921-1955, stated protocol 1921-1979; <g^2> form {:?}; {} restarts per model, the committee's plus one grown from the best single Gaussian; Q(m) = 1/M fixed; early stopping holds out 10% (20 points; the paper 22)",
        opts.form, restarts
    );
    Ok(t)
}
