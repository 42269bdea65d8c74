//! The entry points of annealed importance sampling with Gibbs moves (module `ais`): which
//! models it applies to, and the estimate from the chains — one population from the prior, or
//! for a mixture under vague component priors two strata, half the chains from q to q's region
//! and half from the prior to the rest (module `ais_q`), their estimates summed.

use rand::rngs::StdRng;
use rand::SeedableRng;
use rayon::prelude::*;

use super::ais::Chain;
use super::ais_q::Base;
use super::flat::{Flat, Lik, Prior, Slot};
use super::importance::{block_seed, summarise, Sampled};
use super::not_applicable::NotApplicable;

/// Checks that every parameter is (semi-)conjugate to what reads it, so each Gibbs conditional
/// has a closed form, and that a chain's observations hold one value per step
/// ([`super::ais_chain::check_layout`]); the reason otherwise.
pub(crate) fn check(flat: &Flat) -> Result<(), NotApplicable> {
    super::ais_chain::check_layout(flat)?;
    let prior = |p: usize| &flat.params[p].prior;
    let not_a = |p: usize, family: &str| NotApplicable::Variable {
        var: flat.params[p].name.clone(),
        why: format!("is not a {family}"),
    };
    let part = |p: usize, obs: &str, slot: &str, family: &str| NotApplicable::Part {
        var: obs.to_string(),
        why: format!("its {slot} `{}` is not {family}", flat.params[p].name),
    };
    for o in &flat.obs {
        match o.lik {
            Lik::Gaussian { mean, precision } => {
                if let Slot::Param(m) = mean {
                    if !matches!(prior(m), Prior::Gaussian { .. } | Prior::NormalGamma { .. }) {
                        return Err(part(m, &o.name, "mean", "a Gaussian"));
                    }
                }
                if let Slot::Param(t) = precision {
                    if !matches!(prior(t), Prior::Gamma { .. }) {
                        return Err(part(t, &o.name, "precision", "a Gamma"));
                    }
                }
            }
            Lik::Bernoulli(Slot::Param(p)) => {
                if !matches!(prior(p), Prior::Beta { .. }) {
                    return Err(not_a(p, "Beta"));
                }
            }
            Lik::Poisson(Slot::Param(p)) => {
                if !matches!(prior(p), Prior::Gamma { .. }) {
                    return Err(not_a(p, "Gamma"));
                }
            }
            Lik::Categorical(Slot::Param(p)) => {
                if !matches!(prior(p), Prior::Dirichlet { .. }) {
                    return Err(not_a(p, "Dirichlet"));
                }
            }
            Lik::Categorical(Slot::Const(_)) => {
                return Err(NotApplicable::Variable {
                    var: o.name.clone(),
                    why: "has constant category probabilities".into(),
                });
            }
            Lik::Bernoulli(Slot::Const(_)) | Lik::Poisson(Slot::Const(_)) => {}
        }
    }
    if let Some(w) = flat.weights {
        if !matches!(prior(w), Prior::Dirichlet { .. }) {
            return Err(NotApplicable::Model(
                "mixture weights without a Dirichlet prior",
            ));
        }
    }
    Ok(())
}

/// The mixture weights' Dirichlet concentration α where the chains anneal it from 1 (α < 1),
/// for the estimate's note.
pub(crate) fn annealed_concentration(flat: &Flat) -> Option<f64> {
    match flat.params[flat.weights?].prior {
        Prior::Dirichlet { alpha, .. } if alpha < 1.0 && flat.chain.is_none() => Some(alpha),
        _ => None,
    }
}

/// The AIS estimate from `chains` chains of `steps` temperatures: from the prior, or for a
/// mixture with a `base` (module `ais_q`) the first half from q to p on q's region and the
/// others from the prior to p off it, and the prior's share of the estimate.
pub(crate) fn ais(
    flat: &Flat,
    base: Option<&Base>,
    steps: usize,
    chains: usize,
    seed: u64,
) -> (Sampled, Option<f64>) {
    // One chain cannot be split: then the prior's path alone, over everything.
    let from_q = if base.is_some() { chains / 2 } else { 0 };
    let base = base.filter(|_| from_q > 0);
    let ln_w: Vec<f64> = (0..chains)
        .into_par_iter()
        .map(|c| {
            let mut rng = StdRng::seed_from_u64(block_seed(seed, c as u64));
            let (start, region) = if c < from_q {
                (base, None)
            } else {
                (None, base)
            };
            let w = Chain::new(flat, start, region, &mut rng).run(steps, &mut rng, None);
            if w.is_nan() {
                f64::NEG_INFINITY
            } else {
                w
            }
        })
        .collect();
    if from_q == 0 {
        return (summarise(&ln_w), None);
    }
    let (q, prior) = (stratum(&ln_w[..from_q]), stratum(&ln_w[from_q..]));
    let log_z = q.log_z.max(prior.log_z)
        + ((q.log_z - q.log_z.max(prior.log_z)).exp()
            + (prior.log_z - q.log_z.max(prior.log_z)).exp())
        .ln();
    // The relative variance of the sum of the halves' means.
    let rel = |s: &Sampled| s.se * (s.log_z - log_z).exp();
    let se = (rel(&q).powi(2) + rel(&prior).powi(2)).sqrt();
    let n = chains as f64;
    let sampled = Sampled {
        log_z,
        se,
        // As (Σ w)² / Σ w² ≈ n / (1 + cv²) of one sample: n / (1 + n se²).
        ess: n / (1.0 + n * se * se),
    };
    (sampled, Some((prior.log_z - log_z).exp()))
}

/// [`summarise`] of one stratum's log weights, ln 0 with no error where every weight is 0.
fn stratum(ln_w: &[f64]) -> Sampled {
    if ln_w.iter().all(|w| *w == f64::NEG_INFINITY) {
        Sampled {
            log_z: f64::NEG_INFINITY,
            se: 0.0,
            ess: 0.0,
        }
    } else {
        summarise(ln_w)
    }
}
