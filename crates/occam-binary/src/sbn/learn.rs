//! Learning SBN parameters by batch gradient ascent on a bound (or the exact likelihood)
//! of the weighted data log-likelihood Σ_n w_n ln P(v_n) (Lawrence §2.4.1: per pattern, inference
//! then "a simple gradient ascent algorithm"; Leisink & Kappen (45)). Per-pattern variational
//! states are
//! warm-started from the previous step. Patterns are processed in parallel (rayon) and the
//! results are summed in pattern order, so the result does not depend on the thread count.

use super::error::{Result, SbnError};
use super::exact;
use super::mf::{self, MfInit, MfOptions, MfState};
use super::mixture::{self, MixInit, MixOptions, MixState};
use super::model::{Evidence, Sbn};
use super::third::{self, LkOptions, PmParams};
use rayon::prelude::*;

/// Which objective is maximised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// Exact ln P(v) by enumeration.
    Exact,
    /// Saul mean-field bound.
    MeanField,
    /// Mixture of mean field with M components.
    Mixture(usize),
    /// Leisink–Kappen third-order bound (μ from the first-order mean field, ξ optimised).
    ThirdOrder,
}

impl Method {
    /// Parses "exact", "mf", "mixture:M" or "third".
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || SbnError::Option {
            name: "method".into(),
            why: format!("unknown method '{s}' (use exact, mf, mixture:M, third, chain)"),
        };
        match s {
            "exact" => Ok(Method::Exact),
            "mf" | "meanfield" => Ok(Method::MeanField),
            "third" | "third-order" => Ok(Method::ThirdOrder),
            _ => {
                let m = s.strip_prefix("mixture:").ok_or_else(bad)?;
                let k: usize = m.parse().map_err(|_| bad())?;
                if k == 0 {
                    return Err(bad());
                }
                Ok(Method::Mixture(k))
            }
        }
    }
}

/// Parameterisation in which the gradient steps are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// Steps on (w, b) of the 0/1 coding (Lawrence).
    ZeroOne,
    /// Steps on (θ^{ij}, θ^i) of the ±1 coding (Leisink & Kappen).
    PlusMinus,
}

/// A weighted data set over a fixed list of visible units.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Visible units (columns).
    pub visible: Vec<usize>,
    /// Patterns, one 0/1 row per pattern over `visible`.
    pub patterns: Vec<Vec<bool>>,
    /// Weight of each pattern (e.g. 1/N, or exact probabilities).
    pub weights: Vec<f64>,
}

impl Dataset {
    /// Equal weights 1/N.
    pub fn uniform(visible: Vec<usize>, patterns: Vec<Vec<bool>>) -> Self {
        let n = patterns.len().max(1) as f64;
        let weights = vec![1.0 / n; patterns.len()];
        Dataset {
            visible,
            patterns,
            weights,
        }
    }

    /// Evidence of pattern k for a network with n units.
    pub fn evidence(&self, n: usize, k: usize) -> Result<Evidence> {
        let pairs: Vec<(usize, bool)> = self
            .visible
            .iter()
            .copied()
            .zip(self.patterns[k].iter().copied())
            .collect();
        Evidence::from_pairs(n, &pairs)
    }

    fn check(&self, sbn: &Sbn) -> Result<()> {
        if self.weights.len() != self.patterns.len() {
            return Err(SbnError::Length {
                what: "pattern weights".into(),
                expected: self.patterns.len(),
                got: self.weights.len(),
            });
        }
        for (k, p) in self.patterns.iter().enumerate() {
            if p.len() != self.visible.len() {
                return Err(SbnError::Length {
                    what: format!("pattern {k}"),
                    expected: self.visible.len(),
                    got: p.len(),
                });
            }
        }
        for &u in &self.visible {
            if u >= sbn.n_units() {
                return Err(SbnError::UnitOutOfRange {
                    what: "visible unit of the data".into(),
                    unit: u,
                    n: sbn.n_units(),
                });
            }
        }
        Ok(())
    }
}

/// Options of [`learn`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearnOptions {
    /// Objective.
    pub method: Method,
    /// Number of gradient steps.
    pub steps: usize,
    /// Learning rate.
    pub rate: f64,
    /// Coding of the gradient steps.
    pub coding: Coding,
    /// Adapt biases/thresholds too.
    pub learn_biases: bool,
    /// Inner sweeps (mean field / mixture) or rounds (first order) per step.
    pub inner: usize,
    /// L-BFGS iterations of the third-order ξ per step.
    pub third_iters: usize,
    /// Seed of the variational initialisations.
    pub seed: u64,
}

impl Default for LearnOptions {
    fn default() -> Self {
        LearnOptions {
            method: Method::MeanField,
            steps: 100,
            rate: 0.1,
            coding: Coding::ZeroOne,
            learn_biases: true,
            inner: 10,
            third_iters: 20,
            seed: 0,
        }
    }
}

/// Outcome of [`learn`].
#[derive(Debug, Clone, PartialEq)]
pub struct LearnResult {
    /// The trained network.
    pub sbn: Sbn,
    /// Objective (weighted bound or exact log-likelihood) before each step.
    pub objective: Vec<f64>,
}

#[derive(Clone)]
enum PState {
    None,
    Mf(MfState),
    Mix(MixState),
    Lk {
        m: Vec<f64>,
        xi_first: third::XiParams,
        xi_third: third::XiParams,
    },
}

fn pattern_step(
    sbn: &Sbn,
    ev: &Evidence,
    st: &PState,
    o: &LearnOptions,
    k: usize,
) -> Result<(f64, Vec<f64>, PState)> {
    let np = sbn.n_edges() + sbn.n_units();
    let mut g = vec![0.0; np];
    let seed = o.seed.wrapping_mul(0x9e37_79b9).wrapping_add(k as u64);
    let mfo = MfOptions {
        init: MfInit::Uniform(seed),
        max_sweeps: o.inner,
        tol: 1e-10,
    };
    match o.method {
        Method::Exact => {
            let (l, gg) = exact::log_likelihood_grad(sbn, ev)?;
            Ok((l, gg, PState::None))
        }
        Method::MeanField => {
            let fit = match st {
                PState::Mf(s) => mf::fit_from(sbn, ev, s.clone(), &mfo)?,
                _ => mf::fit(
                    sbn,
                    ev,
                    &MfOptions {
                        max_sweeps: 200,
                        ..mfo
                    },
                )?,
            };
            mf::grad_params(sbn, &fit.state, 1.0, &mut g);
            Ok((fit.bound, g, PState::Mf(fit.state)))
        }
        Method::ThirdOrder => {
            // μ from the first-order (mean-field, full ξ) solution, then ξ for the third order;
            // both warm-started from the previous step (Saul mean field seeds the first step).
            let lko = LkOptions {
                rounds: o.inner,
                lbfgs: super::optim::LbfgsOptions {
                    max_iter: o.third_iters,
                    ..Default::default()
                },
                ..Default::default()
            };
            let (m0, xf0, xt0) = match st {
                PState::Lk {
                    m,
                    xi_first,
                    xi_third,
                } => (m.clone(), xi_first.clone(), Some(xi_third.clone())),
                _ => {
                    let fit = mf::fit(
                        sbn,
                        ev,
                        &MfOptions {
                            max_sweeps: 200,
                            ..mfo
                        },
                    )?;
                    let (m, xi) = third::from_saul(sbn, ev, &fit.state);
                    (m, xi, None)
                }
            };
            let first = third::fit_first_order(sbn, ev, m0, xf0, &lko)?;
            let xt0 = xt0.unwrap_or_else(|| first.xi.clone());
            let th3 = third::fit_third_order(sbn, ev, &first.m, xt0, &lko)?;
            let th = PmParams::from_sbn(sbn);
            let (val, d) = third::third_order(sbn, ev, &th, &th3.xi, &th3.m, lko.engine, true)?;
            if let Some((_, dth)) = d {
                third::pm_grad_to_01(sbn, &dth, 1.0, &mut g);
            }
            Ok((
                val.bound,
                g,
                PState::Lk {
                    m: first.m,
                    xi_first: first.xi,
                    xi_third: th3.xi,
                },
            ))
        }
        Method::Mixture(m) => {
            let fit = match st {
                PState::Mix(s) => mixture::run(sbn, ev, s.clone(), o.inner, 1e-10),
                _ => mixture::fit(
                    sbn,
                    ev,
                    &MixOptions {
                        components: m,
                        init: MixInit::Random(seed),
                        max_sweeps: 200,
                        tol: 1e-10,
                        mf: mfo,
                    },
                )?,
            };
            mixture::grad_params(sbn, &fit.state, 1.0, &mut g);
            Ok((fit.bound, g, PState::Mix(fit.state)))
        }
    }
}

/// The largest number of gradient steps of one learning run (the objective of each is kept).
pub const MAX_STEPS: usize = 10_000_000;

/// Batch gradient ascent from the given network.
pub fn learn(init: &Sbn, data: &Dataset, o: &LearnOptions) -> Result<LearnResult> {
    data.check(init)?;
    if !(o.rate.is_finite() && o.rate > 0.0) {
        return Err(SbnError::Option {
            name: "rate".into(),
            why: format!("must be a positive number, got {}", o.rate),
        });
    }
    if o.steps > MAX_STEPS {
        return Err(SbnError::Option {
            name: "steps".into(),
            why: format!("{} is more than the limit of {MAX_STEPS}", o.steps),
        });
    }
    let n = init.n_units();
    let ne = init.n_edges();
    let evs: Vec<Evidence> = (0..data.patterns.len())
        .map(|k| data.evidence(n, k))
        .collect::<Result<_>>()?;
    let mut sbn = init.clone();
    let mut states = vec![PState::None; evs.len()];
    let mut objective = Vec::with_capacity(o.steps);
    let mut pm = PmParams::from_sbn(&sbn);
    for _ in 0..o.steps {
        let res: Vec<Result<(f64, Vec<f64>, PState)>> = evs
            .par_iter()
            .zip(states.par_iter())
            .enumerate()
            .map(|(k, (ev, st))| pattern_step(&sbn, ev, st, o, k))
            .collect();
        let mut obj = 0.0;
        let mut g = vec![0.0; ne + n];
        for (k, r) in res.into_iter().enumerate() {
            let (l, gk, st) = r?;
            obj += data.weights[k] * l;
            for (a, b) in g.iter_mut().zip(&gk) {
                *a += data.weights[k] * b;
            }
            states[k] = st;
        }
        if !obj.is_finite() {
            return Err(SbnError::Option {
                name: "rate".into(),
                why: "the objective became non-finite; lower the learning rate".into(),
            });
        }
        objective.push(obj);
        match o.coding {
            Coding::ZeroOne => {
                let mut p = sbn.params();
                for e in 0..ne {
                    p[e] += o.rate * g[e];
                }
                if o.learn_biases {
                    for i in 0..n {
                        p[ne + i] += o.rate * g[ne + i];
                    }
                }
                sbn.set_params(&p)?;
                pm = PmParams::from_sbn(&sbn);
            }
            Coding::PlusMinus => {
                // w_e = 4θ_e, b_i = 2θ^i − 2Σ_e θ_e ⇒ ∂/∂θ_e = 4∂/∂w_e − 2∂/∂b_child, ∂/∂θ^i = 2∂/∂b_i
                for e in 0..ne {
                    pm.theta_e[e] += o.rate * (4.0 * g[e] - 2.0 * g[ne + sbn.edge_child(e)]);
                }
                if o.learn_biases {
                    for i in 0..n {
                        pm.theta_b[i] += o.rate * 2.0 * g[ne + i];
                    }
                }
                sbn = to_sbn(&sbn, &pm)?;
            }
        }
    }
    Ok(LearnResult { sbn, objective })
}

/// Network with the structure of `like` and the given ±1 parameters.
pub fn to_sbn(like: &Sbn, pm: &PmParams) -> Result<Sbn> {
    let n = like.n_units();
    let ne = like.n_edges();
    let mut p = vec![0.0; ne + n];
    for (pe, t) in p.iter_mut().zip(&pm.theta_e) {
        *pe = 4.0 * t;
    }
    for i in 0..n {
        p[ne + i] =
            2.0 * pm.theta_b[i] - 2.0 * like.parent_edges(i).map(|e| pm.theta_e[e]).sum::<f64>();
    }
    let mut s = like.clone();
    s.set_params(&p)?;
    Ok(s)
}

/// Weighted objective Σ_n w_n ln P(v_n) computed exactly.
pub fn exact_objective(sbn: &Sbn, data: &Dataset) -> Result<f64> {
    data.check(sbn)?;
    let mut s = 0.0;
    for k in 0..data.patterns.len() {
        s += data.weights[k] * exact::log_likelihood(sbn, &data.evidence(sbn.n_units(), k)?)?;
    }
    Ok(s)
}
