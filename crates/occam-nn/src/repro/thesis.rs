//! Lawrence's thesis Tables 5.1/5.2 (diagonal and mixture VB, evidence, HMC, early stopping) and
//! 6.1/6.2 (single, grouped, ARD and NRD priors; HMC with grouped and ARD priors) on sunspots
//! (12 lags, H = 8, test NMSE) and Tecator (10 PCs, H = 8, test RMSE), with the thesis's settings:
//! hyper-priors a_α = 3e-4, b_α = 1e-3, a_β = 0.02, b_β = 1e-4; initial α = 0.3, β = 200.

use super::baselines::{baseline_rows, PaperBaselines};
use super::{Options, ReproError, Row, Table};
use crate::baselines::evidence::{fit_evidence_restarts, EvidenceOptions};
use crate::baselines::hmc::{hmc, HmcOptions};
use crate::bnn::prior::{Gamma, PriorKind};
use crate::bnn::structure::structure_em;
use crate::bnn::vb::{best_by_bound, fit_vb_restarts, mixture_from, VbOptions};
use crate::data::{nmse, rmse, sunspots_protocol, tecator_protocol, Split};
use serde::{Deserialize, Serialize};

/// Which data set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThesisData {
    /// Sunspots (test NMSE, test-set variance).
    Sunspots,
    /// Tecator (test RMSE, % fat).
    Tecator,
}

fn setup(data: ThesisData) -> Result<(Split, &'static str), ReproError> {
    Ok(match data {
        ThesisData::Sunspots => (sunspots_protocol(12)?, "test NMSE"),
        ThesisData::Tecator => (tecator_protocol(10, true)?, "test RMSE"),
    })
}

fn scorer(data: ThesisData, s: &Split) -> impl Fn(&[f64]) -> Result<f64, ReproError> + '_ {
    move |p: &[f64]| match data {
        ThesisData::Sunspots => Ok(nmse(p, &s.test.t)?),
        ThesisData::Tecator => Ok(rmse(&s.unscale(p), &s.unscale(&s.test.t))?),
    }
}

fn thesis_vb(opts: &Options, prior: PriorKind) -> VbOptions {
    VbOptions {
        prior,
        form: opts.form,
        seed: opts.seed,
        alpha_prior: Gamma { a: 3e-4, b: 1e-3 },
        beta_prior: Gamma { a: 0.02, b: 1e-4 },
        init_alpha: 0.3,
        init_beta: 200.0,
        cycles: opts.scale(5, 3),
        iters_per_cycle: opts.scale(200, 100),
        ..VbOptions::committee_paper(8, 1)
    }
}

/// Table 5.1 (sunspots) or 5.2 (Tecator): diagonal VB (grouped prior, 5 restarts, best by bound), a
/// 5-component mixture started from it (10 × (50 iterations, Q(m) update, hyper update)), and the
/// baselines.
pub fn thesis_table5(opts: &Options, data: ThesisData) -> Result<Table, ReproError> {
    let (s, metric) = setup(data)?;
    let score = scorer(data, &s);
    let (name, paper) = match data {
        ThesisData::Sunspots => ("thesis_table_5_1", [0.178, 0.172, 0.171, 0.131, 0.262]),
        ThesisData::Tecator => ("thesis_table_5_2", [0.526, 0.519, 0.55, 0.481, 0.65]),
    };
    let mut t = Table::new(
        name,
        &format!(
            "thesis Table {}: H = 8, {metric}",
            name[13..].replace('_', ".")
        ),
    );
    let vb = thesis_vb(opts, PriorKind::Grouped);
    let diags = fit_vb_restarts(&s.train, &vb, opts.scale(5, 2))?;
    let diag = &diags[best_by_bound(&diags)];
    t.push(Row::new(
        "variational (diagonal)",
        score(&diag.predict_mean(&s.test.x)?)?,
        Some(paper[0]),
    ));
    let mix_opts = VbOptions {
        components: 5,
        update_mixing: true,
        cycles: opts.scale(10, 3),
        iters_per_cycle: opts.scale(50, 30),
        ..vb
    };
    let mix = mixture_from(&s.train, diag, &mix_opts, 0.01)?;
    t.push(Row::new(
        "variational (mixture, 5 components)",
        score(&mix.predict_mean(&s.test.x)?)?,
        Some(paper[1]),
    ));
    t.push(Row::new(
        "mixture mutual-information term",
        mix.bound.mutual_information,
        None,
    ));
    let pb = PaperBaselines {
        evidence: Some(paper[2]),
        committee3: None,
        committee10: None,
        hmc: Some(paper[3]),
        early: Some(paper[4]),
    };
    for r in baseline_rows(&s, 8, PriorKind::Grouped, opts, &pb, &score)? {
        if !r.label.starts_with("evidence committee") {
            t.push(r);
        }
    }
    t.note = format!(
        "<g^2> form {:?}; grouped prior (4 groups); sunspot NMSE denominator: test-set variance",
        opts.form
    );
    Ok(t)
}

/// Table 6.1 (sunspots) or 6.2 (Tecator): diagonal VB under single, grouped, ARD and NRD priors (NRD
/// with structure EM), and HMC under grouped and ARD priors.
pub fn thesis_table6(opts: &Options, data: ThesisData) -> Result<Table, ReproError> {
    let (s, metric) = setup(data)?;
    let score = scorer(data, &s);
    let (name, paper) = match data {
        ThesisData::Sunspots => (
            "thesis_table_6_1",
            [0.190, 0.194, 0.153, 0.163, 0.131, 0.132],
        ),
        ThesisData::Tecator => (
            "thesis_table_6_2",
            [0.549, 0.540, 0.539, 0.532, 0.481, 0.471],
        ),
    };
    let mut t = Table::new(
        name,
        &format!(
            "thesis Table {}: priors, H = 8, {metric}",
            name[13..].replace('_', ".")
        ),
    );
    let restarts = opts.scale(5, 2);
    for (kind, label, p) in [
        (PriorKind::Single, "VB single", paper[0]),
        (PriorKind::Grouped, "VB grouped", paper[1]),
        (PriorKind::Ard, "VB ARD", paper[2]),
    ] {
        let fits = fit_vb_restarts(&s.train, &thesis_vb(opts, kind), restarts)?;
        let best = &fits[best_by_bound(&fits)];
        t.push(Row::new(
            label,
            score(&best.predict_mean(&s.test.x)?)?,
            Some(p),
        ));
    }
    let nrd = structure_em(
        &s.train,
        &thesis_vb(opts, PriorKind::Nrd),
        opts.scale(20, 2),
    )?;
    t.push(Row::new(
        "VB NRD (structure EM)",
        score(&nrd.predict_mean(&s.test.x, s.test.d)?)?,
        Some(paper[3]),
    ));
    t.push(Row::new(
        "NRD inputs kept",
        nrd.inputs.len() as f64,
        Some(if data == ThesisData::Sunspots {
            5.0
        } else {
            10.0
        }),
    ));
    t.push(Row::new(
        "NRD hidden units kept",
        nrd.fit.arch.hidden as f64,
        Some(3.0),
    ));
    for (kind, label, p) in [
        (PriorKind::Grouped, "HMC grouped", paper[4]),
        (PriorKind::Ard, "HMC ARD", paper[5]),
    ] {
        let ev = fit_evidence_restarts(
            &s.train,
            &EvidenceOptions {
                prior: kind,
                seed: opts.seed,
                cycles: opts.scale(5, 2),
                iters_per_cycle: opts.scale(500, 100),
                ..EvidenceOptions::paper(8)
            },
            opts.scale(5, 2),
        )?;
        let h = HmcOptions {
            prior: kind,
            seed: opts.seed,
            samples: opts.scale(300, 60),
            burn_in: opts.scale(100, 20),
            leapfrog: opts.scale(50, 20),
            persistence: if opts.full { 0.95 } else { 0.0 },
            alpha_prior: Gamma { a: 3e-4, b: 1e-3 },
            beta_prior: Gamma { a: 0.02, b: 1e-4 },
            ..HmcOptions::paper(8)
        };
        let run = hmc(&s.train, &h, &ev[0].w, &ev[0].alpha, ev[0].beta)?;
        t.push(Row::new(label, score(&run.predict(&s.test.x))?, Some(p)));
    }
    t.note = format!(
        "<g^2> form {:?}; HMC started at the best evidence mode, Gibbs hyper-parameter updates",
        opts.form
    );
    Ok(t)
}
