//! One entry point for every approximation of ln P(v) of one pattern.

use super::error::{Result, SbnError};
use super::exact;
use super::mf::{self, MfInit, MfOptions};
use super::mixture::{self, MixInit, MixOptions};
use super::model::{Evidence, Sbn};
use super::third::{self, LkOptions};
use super::Approx;

/// Approximation methods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InferMethod {
    /// Exact enumeration.
    Exact,
    /// Saul mean field.
    MeanField,
    /// Mixture of mean field with M components grown from mean field.
    Mixture(usize),
    /// Markov-chain q for layered nets.
    Chain,
    /// First-order Leisink–Kappen bound (mean field with full ξ).
    FirstOrder,
    /// Third-order Leisink–Kappen bound (full ξ).
    ThirdOrder,
}

/// The most mixture components of `mixture:M` (Lawrence uses up to 10; each sweep couples every
/// pair of components).
pub const MAX_MIXTURE_COMPONENTS: usize = 1024;
/// The most M³ × n² of `mixture:M` on an n-unit network: the mixture is grown one component at a
/// time, each stage's sweeps costing M² pair terms over n units and their parents, so one pattern
/// takes about 1.2·10⁻⁶ s × M³n² (optimised build; measured 6.6 s for M = 10, n = 12 and 51 s for
/// M = 10, n = 40 on three patterns unoptimised). 2²⁴ keeps a pattern to about 20 s; Lawrence's
/// studies (M ≤ 10 on at most a few tens of units) stay far inside.
pub const MAX_MIXTURE_WORK: usize = 1 << 24;
/// The most units for the Leisink–Kappen bounds (`first`, `third`): their cost grows as the cube of
/// the units per pattern (measured 6.5 s per pattern at 64 units unoptimised; 200 units take over a
/// minute optimised), so 100 units keep a pattern to a few seconds optimised.
pub const MAX_EXPANSION_UNITS: usize = 100;

impl InferMethod {
    /// Checks that this method on an `n_units` network stays within [`MAX_MIXTURE_WORK`] and
    /// [`MAX_EXPANSION_UNITS`] (before anything is allocated).
    pub fn check_size(&self, n_units: usize) -> Result<()> {
        match *self {
            InferMethod::Mixture(m) => {
                let n = n_units.max(1);
                let work = m
                    .checked_mul(m)
                    .and_then(|v| v.checked_mul(m))
                    .and_then(|v| v.checked_mul(n))
                    .and_then(|v| v.checked_mul(n));
                if work.is_none_or(|w| w > MAX_MIXTURE_WORK) {
                    let most = (1..=MAX_MIXTURE_COMPONENTS)
                        .take_while(|&k| k * k * k * n * n <= MAX_MIXTURE_WORK)
                        .last()
                        .unwrap_or(0);
                    return Err(SbnError::Option {
                        name: "method".into(),
                        why: format!(
                            "mixture:{m} on {n_units} units: M³ × n² = {m}³ × {n_units}² is more \
                             than the limit of {MAX_MIXTURE_WORK} (its time grows so); at most \
                             mixture:{most} for {n_units} units"
                        ),
                    });
                }
            }
            InferMethod::FirstOrder | InferMethod::ThirdOrder if n_units > MAX_EXPANSION_UNITS => {
                return Err(SbnError::Option {
                    name: "method".into(),
                    why: format!(
                        "{} on {n_units} units: the Leisink–Kappen bounds take time cubic in the \
                         units and are limited to {MAX_EXPANSION_UNITS} units (use mf or mixture:M)",
                        self.name()
                    ),
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// Parses exact | mf | mixture:M | chain | first | third.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || SbnError::Option {
            name: "method".into(),
            why: format!("unknown method '{s}' (use exact, mf, mixture:M, chain, first, third)"),
        };
        match s {
            "exact" => Ok(InferMethod::Exact),
            "mf" | "meanfield" => Ok(InferMethod::MeanField),
            "chain" => Ok(InferMethod::Chain),
            "first" | "first-order" => Ok(InferMethod::FirstOrder),
            "third" | "third-order" => Ok(InferMethod::ThirdOrder),
            _ => match s
                .strip_prefix("mixture:")
                .and_then(|m| m.parse::<usize>().ok())
            {
                Some(m) if (1..=MAX_MIXTURE_COMPONENTS).contains(&m) => Ok(InferMethod::Mixture(m)),
                Some(m) if m > 0 => Err(SbnError::Option {
                    name: "method".into(),
                    why: format!("mixture:{m}: at most {MAX_MIXTURE_COMPONENTS} components"),
                }),
                _ => Err(bad()),
            },
        }
    }

    /// Canonical name.
    pub fn name(&self) -> String {
        match self {
            InferMethod::Exact => "exact".into(),
            InferMethod::MeanField => "mf".into(),
            InferMethod::Mixture(m) => format!("mixture:{m}"),
            InferMethod::Chain => "chain".into(),
            InferMethod::FirstOrder => "first".into(),
            InferMethod::ThirdOrder => "third".into(),
        }
    }
}

/// Runs one method on one pattern; `seed` drives any random initialisation.
pub fn approximate(sbn: &Sbn, ev: &Evidence, method: InferMethod, seed: u64) -> Result<Approx> {
    ev.check(sbn)?;
    method.check_size(sbn.n_units())?;
    let mfo = MfOptions {
        init: MfInit::Uniform(seed),
        ..MfOptions::default()
    };
    let name = method.name();
    match method {
        InferMethod::Exact => Ok(Approx {
            method: name,
            value: exact::log_likelihood(sbn, ev)?,
            is_lower_bound: true,
            iterations: 0,
            converged: true,
        }),
        InferMethod::MeanField => {
            let f = mf::fit(sbn, ev, &mfo)?;
            Ok(Approx {
                method: name,
                value: f.bound,
                is_lower_bound: true,
                iterations: f.trace.len(),
                converged: f.converged,
            })
        }
        InferMethod::Mixture(m) => {
            let f = mixture::fit(
                sbn,
                ev,
                &MixOptions {
                    components: m,
                    init: MixInit::Grow { seed, jitter: 1.0 },
                    max_sweeps: 500,
                    tol: 1e-10,
                    mf: mfo,
                },
            )?;
            Ok(Approx {
                method: name,
                value: f.bound,
                is_lower_bound: true,
                iterations: f.trace.len(),
                converged: f.converged,
            })
        }
        InferMethod::Chain => {
            let f = super::chain::fit(
                sbn,
                ev,
                &super::chain::ChainOptions {
                    mf: mfo,
                    ..Default::default()
                },
            )?;
            Ok(Approx {
                method: name,
                value: f.bound,
                is_lower_bound: true,
                iterations: f.iterations,
                converged: f.converged,
            })
        }
        InferMethod::FirstOrder | InferMethod::ThirdOrder => {
            let f = mf::fit(sbn, ev, &mfo)?;
            let ch = third::chain_from_mf(sbn, ev, &f, &LkOptions::default())?;
            let r = if method == InferMethod::FirstOrder {
                ch.first
            } else {
                ch.third
            };
            Ok(Approx {
                method: name,
                value: r.bound,
                is_lower_bound: true,
                iterations: r.iterations,
                converged: r.converged,
            })
        }
    }
}
