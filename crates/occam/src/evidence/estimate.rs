//! [`estimate`]: each method of the table in the module docs of `evidence`, run on a fitted
//! model, with its kind, cost and flags.

use std::time::Instant;

use super::*;

/// The estimate of `method` for a fitted model.
pub fn estimate(fitted: &Fitted, method: Method, opts: &Options) -> Evidence {
    let start = Instant::now();
    let na = |reason: String| Evidence::NotApplicable { method, reason };
    let done = |kind: Kind, v: f64, se: Option<f64>, ess: Option<f64>, note: String| {
        Evidence::Estimate(Estimate {
            method,
            kind,
            log_evidence: v,
            se,
            ess,
            seconds: start.elapsed().as_secs_f64(),
            unreliable: false,
            note,
        })
    };
    if method == Method::Vb {
        let o = fitted.outcome();
        // The bound is a lower bound on ln p(D) unless a term is importance sampled.
        let kind = match o.bound_quality {
            crate::quality::BoundQuality::Approximate => Kind::Approximate,
            _ => Kind::LowerBound,
        };
        let mut e = done(kind, o.bound, None, None, String::new());
        if let Evidence::Estimate(e) = &mut e {
            e.seconds = f64::NAN;
        }
        return e;
    }
    if let Err(e) = opts.validate() {
        return na(format!("options: {e}"));
    }
    let flat = match flat::recognise(fitted.loaded()) {
        Ok(f) => f,
        Err(why) => return na(format!("not a recognised model: {why}")),
    };
    match method {
        Method::Vb => unreachable!("handled above"),
        Method::VbSym => match relabel::relabellings(&flat, fitted) {
            Ok(r) => done(
                Kind::SeparatedBound,
                fitted.bound() + r.log_count,
                None,
                None,
                format!("+{:.4} nats; {}", r.log_count, r.note),
            ),
            Err(why) => na(why.to_string()),
        },
        Method::Exact if flat.chain.is_some() => match hmm::exact(&flat, opts) {
            Ok(v) => done(
                Kind::Exact,
                v,
                None,
                None,
                format!("{}^{} state paths", flat.k, flat.n * hmm::steps(&flat)),
            ),
            Err(why) => na(why.to_string()),
        },
        Method::Exact => match exact::exact(&flat, opts) {
            Ok(v) => {
                let how = if flat.weights.is_some() {
                    format!("{}^{} assignments", flat.k, flat.n)
                } else {
                    "closed form".into()
                };
                done(Kind::Exact, v, None, None, how)
            }
            Err(why) => na(why.to_string()),
        },
        Method::Laplace => match q_mean(&flat, fitted).and_then(|t| laplace::laplace(&flat, &t)) {
            Ok(l) => {
                let mut note = format!(
                    "ln p(D,θ*) = {:.4}, ln|A| = {:.4}, d = {}, max|∇| {:.1e}, mode {:.1} sd from \
                     q's mean",
                    l.log_joint, l.log_det, l.dim, l.gradient, l.moved
                );
                if let Some(r) = &l.relabel {
                    note += &format!("; +{:.4} nats relabelling, {}", r.log_count, r.note);
                }
                if !l.positive_definite {
                    note += &format!(
                        "; {UNRELIABLE}: the Hessian of ln p(D, θ) at the mode is not negative \
                         definite (a saddle or a flat direction; ln|A| from |eigenvalues|)"
                    );
                }
                flag(
                    done(Kind::SecondOrder, l.log_evidence, None, None, note),
                    !l.positive_definite,
                )
            }
            Err(why) => na(why.to_string()),
        },
        Method::Bic => {
            let theta = q_mean(&flat, fitted);
            match theta {
                Ok(t) => {
                    let d = flat.dimension();
                    let ll = density::log_lik(&flat, &t);
                    // A chain's N counts its steps (hmmlearn's n_samples).
                    let n = flat.n * hmm::steps(&flat);
                    let v = ll - 0.5 * d as f64 * (n as f64).ln();
                    done(
                        Kind::Asymptotic,
                        v,
                        None,
                        None,
                        format!("ln p(D|θ̂) = {ll:.4} at q's mean, d = {d}, N = {n}"),
                    )
                }
                Err(why) => na(why.to_string()),
            }
        }
        Method::Cv if flat.chain.is_some() => {
            na("cross-validation of a hidden Markov chain is not implemented".into())
        }
        Method::Cs if flat.chain.is_some() => {
            match q_mean(&flat, fitted).and_then(|t| hmm_cs::cheeseman_stutz(&flat, &t)) {
                Ok(v) => done(
                    Kind::Asymptotic,
                    v,
                    None,
                    None,
                    "expected statistics of the paths by forward–backward at θ̂ = q's mean".into(),
                ),
                Err(why) => na(why.to_string()),
            }
        }
        Method::Cs => {
            match q_mean(&flat, fitted).and_then(|t| cs::cheeseman_stutz(&flat, fitted, &t)) {
                Ok(v) => done(
                    Kind::Asymptotic,
                    v,
                    None,
                    None,
                    "expected statistics of q, θ̂ = q's mean".into(),
                ),
                Err(why) => na(why.to_string()),
            }
        }
        Method::Is => match proposal::Proposal::new(&flat, fitted, opts.widen, opts.defensive) {
            Ok(q) => {
                let s = importance::importance(&flat, &q, opts.samples, opts.seed);
                let note = format!(
                    "{} draws ({:.0}% from the prior), ESS {:.0}{}",
                    opts.samples,
                    100.0 * opts.defensive,
                    s.ess,
                    if flat.has_states() {
                        ", proposal symmetric under relabelling"
                    } else {
                        ""
                    }
                );
                let few = (s.ess < RELIABLE_ESS).then_some(
                    "ESS < 100 (q is far from the posterior; the se understates the error)",
                );
                let (note, unreliable) = flagged(fitted, &s, note, few);
                flag(
                    done(Kind::Estimate, s.log_z, Some(s.se), Some(s.ess), note),
                    unreliable,
                )
            }
            Err(why) => na(why.to_string()),
        },
        Method::Cv => {
            let settings = opts.refit.clone().unwrap_or(crate::driver::Settings {
                seed: opts.seed,
                ..Default::default()
            });
            match cv::cross_validate(
                fitted,
                &flat,
                opts.folds,
                opts.samples,
                opts.seed,
                &settings,
            ) {
                Ok(h) => done(
                    Kind::HeldOut,
                    h.total,
                    Some(h.se),
                    None,
                    format!(
                        "{} folds of {} rows, {} draws from each fold's q; N × expected log \
                         predictive density, not ln p(D); se across rows",
                        opts.folds, h.rows, opts.samples
                    ),
                ),
                Err(why) => na(why.to_string()),
            }
        }
        Method::Ais => match ais_run::check(&flat) {
            Ok(()) => {
                let moves = match opts.ais_moves {
                    AisMoves::Auto if vague(&flat) => AisMoves::Gibbs,
                    AisMoves::Auto => AisMoves::Hmc,
                    m => m,
                };
                let (s, how) = match moves {
                    AisMoves::Gibbs | AisMoves::Auto => {
                        // A mixture under vague component priors: half the chains from q
                        // (module `ais_q`); where q lacks a part, all from the prior, saying why.
                        let base = ais_q::wanted(&flat).then(|| ais_q::Base::new(&flat, fitted));
                        let (s, prior_share) = ais_run::ais(
                            &flat,
                            base.as_ref().and_then(|b| b.as_ref().ok()),
                            opts.temperatures,
                            opts.chains,
                            opts.seed,
                        );
                        let how = match (&base, ais_run::annealed_concentration(&flat)) {
                            _ if flat.chain.is_some() => "from the prior, Gibbs sweeps (state \
                                                          paths by forward filtering, backward \
                                                          sampling)"
                                .to_string(),
                            (Some(Ok(b)), _) => format!(
                                "in two strata: {} from q to q's region (its {} distinct \
                                 components; +{:.4} nats relabelling, exact whether or not the \
                                 modes are separated) and {} from the prior to the rest ({:.2e} \
                                 of the estimate), Gibbs sweeps",
                                opts.chains / 2,
                                b.distinct,
                                b.ln_modes,
                                opts.chains - opts.chains / 2,
                                prior_share.unwrap_or(f64::NAN)
                            ),
                            (Some(Err(why)), _) => {
                                format!("from the prior (no base from q: {why}), Gibbs sweeps")
                            }
                            (None, Some(a)) => format!(
                                "from the prior, Gibbs sweeps, the weights' concentration \
                                 annealed 1 → {a}"
                            ),
                            (None, None) => "from the prior, Gibbs sweeps".to_string(),
                        };
                        (s, how)
                    }
                    AisMoves::Hmc => {
                        let c = collapsed::Collapsed::new(&flat);
                        let a = ais_hmc::ais_hmc(&c, opts.temperatures, opts.chains, opts.seed);
                        let how = format!(
                            "from the prior, z summed out, HMC ({} leapfrog, acceptance {:.2}){}",
                            ais_hmc::LEAPFROG,
                            a.acceptance,
                            if flat.has_states() {
                                format!(" and re-seeding ({:.1} per chain)", a.reseeds)
                            } else {
                                String::new()
                            }
                        );
                        (a.sampled, how)
                    }
                };
                let note = format!(
                    "{} chains × {} temperatures {how}, ESS {:.0}",
                    opts.chains, opts.temperatures, s.ess
                );
                let few = (s.ess < RELIABLE_ESS.min(opts.chains as f64 / 4.0)).then_some(
                    "the chains' weights are dominated by a few (more temperatures, or more \
                     chains)",
                );
                let (note, unreliable) = flagged(fitted, &s, note, few);
                flag(
                    done(Kind::Estimate, s.log_z, Some(s.se), Some(s.ess), note),
                    unreliable,
                )
            }
            Err(why) => na(why.to_string()),
        },
    }
}

/// A sampling estimate's note with its flags, and whether it has any: `few` when its weights are
/// carried by too few draws or chains, and when it lies more than 3 standard errors below the
/// fit's VB bound, which is a lower bound on ln p(D) (Winn (1.8)): the sampler missed most of the
/// posterior mass (for AIS, chains that did not mix between the modes of a mixture), whatever
/// its standard error says.
fn flagged(
    fitted: &Fitted,
    s: &importance::Sampled,
    mut note: String,
    few: Option<&str>,
) -> (String, bool) {
    let l = fitted.bound();
    let gap = l - s.log_z;
    let below = (gap > 3.0 * s.se + 1e-9 * l.abs().max(1.0)).then(|| {
        format!(
            "{gap:.4} nats below the VB lower bound {l:.4} (the sampler missed most of the \
             posterior mass)"
        )
    });
    let flags: Vec<String> = few.map(String::from).into_iter().chain(below).collect();
    for f in &flags {
        note += &format!("; {UNRELIABLE}: {f}");
    }
    (note, !flags.is_empty())
}

/// Whether a prior has a Gamma shape or a Beta or Dirichlet concentration below 1 (see
/// [`AisMoves::Auto`]).
fn vague(flat: &flat::Flat) -> bool {
    flat.params.iter().any(|p| match p.prior {
        flat::Prior::Gamma { shape, .. } => shape < 1.0,
        flat::Prior::Beta { a, b } => a.min(b) < 1.0,
        flat::Prior::Dirichlet { alpha, .. } => alpha < 1.0,
        flat::Prior::Gaussian { .. } | flat::Prior::NormalGamma { .. } => false,
    })
}

/// `e` with its [`Estimate::unreliable`] flag set to `unreliable`.
fn flag(mut e: Evidence, unreliable: bool) -> Evidence {
    if let Evidence::Estimate(x) = &mut e {
        x.unreliable = unreliable;
    }
    e
}

/// The number of free parameters of a recognised model (BIC's d), or `None` for a model the
/// estimators do not recognise.
pub fn free_parameters(fitted: &Fitted) -> Option<usize> {
    flat::recognise(fitted.loaded()).ok().map(|f| f.dimension())
}

/// q's mean of every parameter (BIC's plug-in θ̂).
fn q_mean(
    flat: &flat::Flat,
    fitted: &Fitted,
) -> std::result::Result<density::Theta, NotApplicable> {
    flat.params
        .iter()
        .map(|p| {
            let post = fitted
                .posterior(&p.name)
                .map_err(|e| NotApplicable::Other(e.to_string()))?;
            let mean = post
                .param("mean")
                .ok_or_else(|| NotApplicable::part(&p.name, "q has no mean"))?;
            Ok(match p.prior {
                // A Beta's mean is reported for both categories: keep the first.
                flat::Prior::Beta { .. } => mean.values.iter().step_by(2).copied().collect(),
                _ => mean.values.clone(),
            })
        })
        .collect()
}
