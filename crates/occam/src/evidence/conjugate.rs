//! Closed-form marginal likelihoods of one conjugate group of observations: the ratio of the
//! normaliser of the conjugate prior updated by the group's sufficient statistics to the prior's
//! own, Z(s_p + Σ s(x_i), n_p + N) / Z(s_p, n_p) (Sahani, "Integrals again"; the slide's
//! Z(s_p, p) is a misprint for Z(s_p, n_p)), times the base measure Π h(x_i).

use super::NotApplicable;
use std::f64::consts::PI;

use occam_core::special::{ln_beta, ln_gamma};

use super::flat::{Flat, Lik, Param, Prior, Slot};

/// One conjugate pair, with its prior's hyperparameters.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Conjugate {
    /// Gaussian observations of known precision `tau`, mean ~ N(m0, 1/p0).
    KnownPrecision { m0: f64, p0: f64, tau: f64 },
    /// Gaussian observations of known mean `mu`, precision ~ Gamma(a, b).
    KnownMean { mu: f64, a: f64, b: f64 },
    /// Normal–Gamma: precision τ ~ Gamma(a, b), mean ~ N(m0, 1/(κ τ)).
    NormalGamma { m0: f64, kappa: f64, a: f64, b: f64 },
    /// Bernoulli observations, probability ~ Beta(a, b).
    BetaBernoulli { a: f64, b: f64 },
    /// Poisson observations, rate ~ Gamma(a, b).
    GammaPoisson { a: f64, b: f64 },
    /// Categorical observations over `width` values, probabilities ~ Dirichlet(alpha).
    DirichletCategorical { alpha: f64, width: usize },
    /// No parameter: the log-likelihood of each row under a fixed distribution.
    Fixed(Lik),
}

impl Conjugate {
    /// Length of the sufficient statistics.
    pub fn len(&self) -> usize {
        match self {
            Conjugate::DirichletCategorical { width, .. } => *width,
            Conjugate::Fixed(_) => 1,
            _ => 3,
        }
    }

    /// Adds the statistics of one value to `out`; an error for a value outside the support.
    pub fn add(&self, x: f64, out: &mut [f64]) -> Result<(), NotApplicable> {
        match self {
            Conjugate::KnownPrecision { .. }
            | Conjugate::KnownMean { .. }
            | Conjugate::NormalGamma { .. } => {
                out[0] += 1.0;
                out[1] += x;
                out[2] += x * x;
            }
            Conjugate::BetaBernoulli { .. } => {
                if x != 0.0 && x != 1.0 {
                    return Err(NotApplicable::Other(format!("a Bernoulli value {x}")));
                }
                out[0] += 1.0;
                out[1] += x;
            }
            Conjugate::GammaPoisson { .. } => {
                if !(x >= 0.0 && x.fract() == 0.0) {
                    return Err(NotApplicable::Other(format!("a Poisson value {x}")));
                }
                out[0] += 1.0;
                out[1] += x;
                out[2] += ln_gamma(x + 1.0);
            }
            Conjugate::DirichletCategorical { width, .. } => {
                if !(x >= 0.0 && x.fract() == 0.0 && (x as usize) < *width) {
                    return Err(NotApplicable::Other(format!(
                        "a Categorical value {x} (values are 0 to {})",
                        width.saturating_sub(1)
                    )));
                }
                out[x as usize] += 1.0;
            }
            Conjugate::Fixed(lik) => out[0] += fixed(lik, x)?,
        }
        Ok(())
    }

    /// ln p(values) of a group with statistics `s`.
    pub fn log_marginal(&self, s: &[f64]) -> f64 {
        let half_ln_2pi = 0.5 * (2.0 * PI).ln();
        match *self {
            Conjugate::KnownPrecision { m0, p0, tau } => {
                let (n, s1, s2) = (s[0], s[1], s[2]);
                let pn = p0 + n * tau;
                let mn = (p0 * m0 + tau * s1) / pn;
                0.5 * (p0 / pn).ln() + 0.5 * n * tau.ln()
                    - n * half_ln_2pi
                    - 0.5 * (tau * s2 + p0 * m0 * m0 - pn * mn * mn)
            }
            Conjugate::KnownMean { mu, a, b } => {
                let (n, s1, s2) = (s[0], s[1], s[2]);
                let an = a + 0.5 * n;
                let bn = b + 0.5 * (s2 - 2.0 * mu * s1 + n * mu * mu);
                a * b.ln() - ln_gamma(a) + ln_gamma(an) - an * bn.ln() - n * half_ln_2pi
            }
            Conjugate::NormalGamma { m0, kappa, a, b } => {
                let (n, s1, s2) = (s[0], s[1], s[2]);
                let kn = kappa + n;
                let mn = (kappa * m0 + s1) / kn;
                let an = a + 0.5 * n;
                let bn = b + 0.5 * (s2 + kappa * m0 * m0 - kn * mn * mn);
                a * b.ln() - ln_gamma(a) + ln_gamma(an) - an * bn.ln() + 0.5 * (kappa / kn).ln()
                    - n * half_ln_2pi
            }
            Conjugate::BetaBernoulli { a, b } => {
                let (n, n1) = (s[0], s[1]);
                ln_beta(a + n1, b + n - n1) - ln_beta(a, b)
            }
            Conjugate::GammaPoisson { a, b } => {
                let (n, sx, lf) = (s[0], s[1], s[2]);
                a * b.ln() - ln_gamma(a) + ln_gamma(a + sx) - (a + sx) * (b + n).ln() - lf
            }
            Conjugate::DirichletCategorical { alpha, width } => {
                dirichlet_multinomial(alpha, width, s)
            }
            Conjugate::Fixed(_) => s[0],
        }
    }
}

/// ln of the Dirichlet-multinomial probability of one sequence with category counts `counts`
/// under a symmetric Dirichlet(alpha) over `width` categories.
pub(crate) fn dirichlet_multinomial(alpha: f64, width: usize, counts: &[f64]) -> f64 {
    let total: f64 = counts.iter().sum();
    let a0 = alpha * width as f64;
    ln_gamma(a0) - ln_gamma(a0 + total)
        + counts
            .iter()
            .map(|&c| {
                if c == 0.0 {
                    0.0
                } else {
                    ln_gamma(alpha + c) - ln_gamma(alpha)
                }
            })
            .sum::<f64>()
}

/// ln f(x) under a distribution whose slots are all constants.
fn fixed(lik: &Lik, x: f64) -> Result<f64, NotApplicable> {
    let c = |s: Slot| match s {
        Slot::Const(v) => v,
        Slot::Param(_) => f64::NAN,
    };
    Ok(match *lik {
        Lik::Gaussian { mean, precision } => {
            let (m, t) = (c(mean), c(precision));
            0.5 * (t / (2.0 * PI)).ln() - 0.5 * t * (x - m) * (x - m)
        }
        Lik::Bernoulli(p) => {
            let p = c(p);
            if x == 1.0 {
                p.ln()
            } else {
                (1.0 - p).ln()
            }
        }
        Lik::Poisson(r) => {
            let r = c(r);
            x * r.ln() - r - ln_gamma(x + 1.0)
        }
        Lik::Categorical(_) => {
            return Err(NotApplicable::Model(
                "a Categorical with constant probabilities",
            ))
        }
    })
}

/// The conjugate pair an observation's distribution forms with its parameters, with the
/// parameters it uses; an error if the pair is not conjugate.
pub(crate) fn pair(flat: &Flat, lik: &Lik) -> Result<(Conjugate, Vec<usize>), NotApplicable> {
    let p = |i: usize| -> &Param { &flat.params[i] };
    let name = |i: usize| flat.params[i].name.clone();
    Ok(match *lik {
        Lik::Gaussian {
            mean: Slot::Param(m),
            precision: Slot::Const(tau),
        } => match p(m).prior {
            Prior::Gaussian { mean, precision } => (
                Conjugate::KnownPrecision {
                    m0: mean,
                    p0: precision,
                    tau,
                },
                vec![m],
            ),
            _ => {
                return Err(NotApplicable::variable(
                    &name(m),
                    "is not a Gaussian with a fixed precision",
                ))
            }
        },
        Lik::Gaussian {
            mean: Slot::Const(mu),
            precision: Slot::Param(t),
        } => match p(t).prior {
            Prior::Gamma { shape, rate } => (
                Conjugate::KnownMean {
                    mu,
                    a: shape,
                    b: rate,
                },
                vec![t],
            ),
            _ => return Err(NotApplicable::variable(&name(t), "is not a Gamma")),
        },
        Lik::Gaussian {
            mean: Slot::Param(m),
            precision: Slot::Param(t),
        } => match (&p(m).prior, &p(t).prior) {
            (Prior::NormalGamma { mean, kappa, tau }, Prior::Gamma { shape, rate })
                if *tau == t =>
            {
                (
                    Conjugate::NormalGamma {
                        m0: *mean,
                        kappa: *kappa,
                        a: *shape,
                        b: *rate,
                    },
                    vec![m, t],
                )
            }
            _ => {
                return Err(NotApplicable::IndependentPriors {
                    mean: name(m).to_string(),
                    precision: name(t).to_string(),
                })
            }
        },
        Lik::Bernoulli(Slot::Param(q)) => match p(q).prior {
            Prior::Beta { a, b } => (Conjugate::BetaBernoulli { a, b }, vec![q]),
            _ => return Err(NotApplicable::variable(&name(q), "is not a Beta")),
        },
        Lik::Poisson(Slot::Param(q)) => match p(q).prior {
            Prior::Gamma { shape, rate } => {
                (Conjugate::GammaPoisson { a: shape, b: rate }, vec![q])
            }
            _ => return Err(NotApplicable::variable(&name(q), "is not a Gamma")),
        },
        Lik::Categorical(Slot::Param(q)) => match p(q).prior {
            Prior::Dirichlet { alpha, width } => {
                (Conjugate::DirichletCategorical { alpha, width }, vec![q])
            }
            _ => return Err(NotApplicable::variable(&name(q), "is not a Dirichlet")),
        },
        Lik::Gaussian {
            mean: Slot::Const(_),
            precision: Slot::Const(_),
        }
        | Lik::Bernoulli(Slot::Const(_))
        | Lik::Poisson(Slot::Const(_))
        | Lik::Categorical(Slot::Const(_)) => (Conjugate::Fixed(*lik), vec![]),
    })
}
