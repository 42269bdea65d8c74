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

impl InferMethod {
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
                Some(m) if m > 0 => Ok(InferMethod::Mixture(m)),
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
