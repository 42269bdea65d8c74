//! Annealed importance sampling (Neal 2001) along the power posteriors of the collapsed joint,
//!
//!   π_β(η) ∝ exp F_β(η) = p(θ(η)) |∂θ/∂η| p(D | θ(η))^β,   0 = β_0 < … < β_T = 1,
//!
//! the mixture index summed out row by row (module `collapsed`): Z_0 = 1, Z_1 = p(D). A chain
//! starts from a prior draw of η and its log weight is Σ_t (β_t − β_{t−1}) ln p(D | θ(η_{t−1})),
//! η_{t−1} having been moved by transitions that leave π_{β_{t−1}} invariant; the mean weight is
//! unbiased for p(D) and is summarised as importance sampling's ([`super::importance::summarise`]).
//!
//! With z summed out the chain moves every component at once, through the likelihood's
//! responsibilities, instead of Gibbs's alternation between z given θ and θ given z, which pins
//! a component to the rows it holds (module `ais`; on the 82 galaxy velocities its chains'
//! weights were carried by 1 to 15 of 64 and missed the posterior by 2 nats at K = 3).
//!
//! Transitions at each temperature:
//! - **re-seeding** (mixtures): for each component k, an independence proposal that redraws k's
//!   parameters from their prior, accepted with probability min(1, e^{β(ℓ' − ℓ)}) (the prior
//!   factor of π_β cancels against the proposal). Near the prior it moves a component from one
//!   region of the data to another across the barriers gradient moves cannot cross; near β = 1
//!   it is rarely accepted and costs one likelihood each. (A permutation of the labels is
//!   useless here: π_β is invariant under it and so is every weight.)
//! - **Hamiltonian Monte Carlo**: [`LEAPFROG`] leapfrog steps of size ε_t (jittered ×U(0.8, 1.2))
//!   with a diagonal mass matrix 1/s_{t,j}², accepted by Metropolis on the Hamiltonian.
//!
//! The step sizes ε_t and scales s_t come from a **pilot** of [`PILOT`] chains run first in lock
//! step, from a generator of its own: s_{t,j} is the median over the pilot chains of
//! |∂²F_β/∂η_j²|^(−½) (central differences of the gradient, every [`CURVATURE_EVERY`]
//! temperatures), and ε moves by e^{acc − 0.7} after each temperature (acc the pilot's mean
//! acceptance). The main chains then run with that fixed schedule, so each transition is a fixed
//! kernel that leaves π_{β_t} invariant and the estimate stays unbiased (adapting each chain to
//! its own history would not).
//!
//! Chain c (main or pilot) draws from its own generator seeded by (seed, c); the pilot's
//! per-temperature summaries are reduced in chain order, so the estimate is the same bits for a
//! seed on any thread count. Temperatures follow β_t = (t/T)^4, as module `ais`.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rayon::prelude::*;

use super::ais::beta;
use super::ais_draw::ln_gamma_draw;
use super::collapsed::Collapsed;
use super::flat::Prior;
use super::importance::{block_seed, summarise, Sampled};

/// Leapfrog steps per Hamiltonian move.
pub(crate) const LEAPFROG: usize = 10;

/// Chains of the pilot run that sets the step sizes and scales.
pub(crate) const PILOT: usize = 16;

/// The pilot measures curvatures every this many temperatures.
pub(crate) const CURVATURE_EVERY: usize = 8;

/// Salt of the pilot's generators.
const PILOT_SALT: u64 = 0x005E_ED0F_A15A_u64;

/// What the annealing saw, for the estimate's note.
#[derive(Clone, Debug)]
pub(crate) struct Annealed {
    /// The estimate.
    pub sampled: Sampled,
    /// Mean acceptance of the Hamiltonian moves over chains and temperatures.
    pub acceptance: f64,
    /// Accepted re-seedings per chain.
    pub reseeds: f64,
}

/// The step size and scales of one temperature.
#[derive(Clone, Debug)]
struct Step {
    eps: f64,
    scale: Vec<f64>,
}

/// One chain's state: η, F_β(η), ∇F_β(η) at the current β, and ℓ = ln p(D | θ(η)).
#[derive(Clone)]
struct State {
    eta: Vec<f64>,
    f: f64,
    grad: Vec<f64>,
    lik: f64,
    beta: f64,
}

impl State {
    fn at(c: &Collapsed, eta: Vec<f64>, beta: f64) -> State {
        let mut grad = vec![0.0; eta.len()];
        let (f, lik) = c.tempered(&eta, beta, &mut grad);
        State {
            eta,
            f,
            grad,
            lik,
            beta,
        }
    }

    /// Re-evaluates F and ∇F at inverse temperature `beta` (the prior part does not change).
    fn retemper(&mut self, c: &Collapsed, beta: f64) {
        let (f, lik) = c.tempered(&self.eta, beta, &mut self.grad);
        (self.f, self.lik, self.beta) = (f, lik, beta);
    }
}

/// Draws η's elements from the prior into `eta`: every element, or with `only` = Some(k) those
/// of component k's parameters (Normal–Gamma means after their precisions).
fn prior_draw(c: &Collapsed, eta: &mut [f64], only: Option<usize>, rng: &mut StdRng) {
    let flat = c.flat();
    let ng = |i: usize| matches!(flat.params[i].prior, Prior::NormalGamma { .. });
    let order = (0..flat.params.len())
        .filter(|&i| !ng(i))
        .chain((0..flat.params.len()).filter(|&i| ng(i)));
    for i in order {
        let p = &flat.params[i];
        if only.is_some() && (!p.by_k || flat.weights == Some(i)) {
            continue;
        }
        for e in 0..flat.elements(i) {
            if only.is_some_and(|k| e / p.cols != k) {
                continue;
            }
            let j = c.coord(i, e);
            let z: f64 = rng.sample(StandardNormal);
            match p.prior {
                Prior::Gaussian { mean, precision } => eta[j] = mean + z / precision.sqrt(),
                Prior::NormalGamma { mean, kappa, tau } => {
                    let ln_prec = kappa.ln() + eta[c.coord(tau, e)];
                    eta[j] = mean + z * (-0.5 * ln_prec).exp();
                }
                Prior::Gamma { shape, rate } => eta[j] = ln_gamma_draw(shape, rate, rng),
                Prior::Beta { a, b } => {
                    eta[j] = ln_gamma_draw(a, 1.0, rng) - ln_gamma_draw(b, 1.0, rng)
                }
                Prior::Dirichlet { alpha, width } => {
                    let last = ln_gamma_draw(alpha, 1.0, rng);
                    for l in 0..width - 1 {
                        eta[j + l] = ln_gamma_draw(alpha, 1.0, rng) - last;
                    }
                }
            }
        }
    }
}

/// The transitions at inverse temperature `beta` (module doc); returns (HMC accepted,
/// re-seedings accepted).
fn transition(
    c: &Collapsed,
    s: &mut State,
    beta: f64,
    step: &Step,
    rng: &mut StdRng,
) -> (bool, usize) {
    if s.beta != beta {
        s.retemper(c, beta);
    }
    let flat = c.flat();
    let mut reseeds = 0;
    if flat.has_states() {
        for k in 0..flat.k {
            let mut eta = s.eta.clone();
            prior_draw(c, &mut eta, Some(k), rng);
            let lik = c.log_lik(&eta);
            let u: f64 = rng.random();
            if lik.is_finite() && u.ln() < beta * (lik - s.lik) {
                *s = State::at(c, eta, beta);
                reseeds += 1;
            }
        }
    }
    (hmc(c, s, step, rng), reseeds)
}

/// One Hamiltonian move of `s` (module doc); whether it was accepted.
fn hmc(c: &Collapsed, s: &mut State, step: &Step, rng: &mut StdRng) -> bool {
    let d = s.eta.len();
    let eps = step.eps * rng.random_range(0.8..1.2);
    let s2: Vec<f64> = step.scale.iter().map(|v| v * v).collect();
    // Momentum p_j ~ N(0, 1/s_j²); kinetic energy ½ Σ s_j² p_j².
    let mut p: Vec<f64> = step
        .scale
        .iter()
        .map(|sj| rng.sample::<f64, _>(StandardNormal) / sj)
        .collect();
    let kinetic = |p: &[f64]| 0.5 * p.iter().zip(&s2).map(|(p, v)| v * p * p).sum::<f64>();
    let h0 = -s.f + kinetic(&p);
    let mut eta = s.eta.clone();
    let mut grad = s.grad.clone();
    let (mut f, mut lik) = (s.f, s.lik);
    for _ in 0..LEAPFROG {
        for j in 0..d {
            p[j] += 0.5 * eps * grad[j];
            eta[j] += eps * s2[j] * p[j];
        }
        (f, lik) = c.tempered(&eta, s.beta, &mut grad);
        if !f.is_finite() {
            return false;
        }
        for j in 0..d {
            p[j] += 0.5 * eps * grad[j];
        }
    }
    let h1 = -f + kinetic(&p);
    let u: f64 = rng.random();
    if h1.is_finite() && u.ln() < h0 - h1 {
        (s.eta, s.grad, s.f, s.lik) = (eta, grad, f, lik);
        true
    } else {
        false
    }
}

/// |∂²F_β/∂η_j²|^(−½) per coordinate at `s`, by central differences of the gradient.
fn scales(c: &Collapsed, s: &State) -> Vec<f64> {
    let d = s.eta.len();
    let (mut gp, mut gm) = (vec![0.0; d], vec![0.0; d]);
    let mut x = s.eta.clone();
    (0..d)
        .map(|j| {
            let h = 1e-4 * (1.0 + s.eta[j].abs());
            x[j] = s.eta[j] + h;
            c.tempered(&x, s.beta, &mut gp);
            x[j] = s.eta[j] - h;
            c.tempered(&x, s.beta, &mut gm);
            x[j] = s.eta[j];
            let curv = ((gp[j] - gm[j]) / (2.0 * h)).abs();
            if curv.is_finite() && curv > 0.0 {
                curv.clamp(1e-12, 1e12).recip().sqrt()
            } else {
                f64::NAN
            }
        })
        .collect()
}

/// The median of the finite values, or `None`.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// The pilot: step sizes and scales for temperatures 1..T−1 (index t − 1).
fn pilot(c: &Collapsed, steps: usize, seed: u64) -> Vec<Step> {
    let mut chains: Vec<(State, StdRng)> = (0..PILOT)
        .map(|i| {
            let mut rng = StdRng::seed_from_u64(block_seed(seed ^ PILOT_SALT, i as u64));
            let mut eta = vec![0.0; c.dim];
            prior_draw(c, &mut eta, None, &mut rng);
            (State::at(c, eta, 0.0), rng)
        })
        .collect();
    let mut step = Step {
        eps: 0.5,
        scale: vec![1.0; c.dim],
    };
    let mut out = Vec::with_capacity(steps.saturating_sub(1));
    for t in 1..steps {
        let b = beta(t, steps);
        if (t - 1) % CURVATURE_EVERY == 0 {
            let per: Vec<Vec<f64>> = chains
                .par_iter_mut()
                .map(|(s, _)| {
                    s.retemper(c, b);
                    scales(c, s)
                })
                .collect();
            for j in 0..c.dim {
                if let Some(m) = median(per.iter().map(|v| v[j]).collect()) {
                    step.scale[j] = m;
                }
            }
        }
        let acc: Vec<bool> = chains
            .par_iter_mut()
            .map(|(s, rng)| transition(c, s, b, &step, rng).0)
            .collect();
        out.push(step.clone());
        let rate = acc.iter().filter(|a| **a).count() as f64 / acc.len() as f64;
        step.eps = (step.eps * (rate - 0.7).exp()).clamp(1e-4, 2.0);
    }
    out
}

/// The AIS estimate from `chains` chains of `steps` temperatures.
pub(crate) fn ais_hmc(c: &Collapsed, steps: usize, chains: usize, seed: u64) -> Annealed {
    let schedule = pilot(c, steps, seed);
    let runs: Vec<(f64, usize, usize)> = (0..chains)
        .into_par_iter()
        .map(|i| {
            let mut rng = StdRng::seed_from_u64(block_seed(seed, i as u64));
            let mut eta = vec![0.0; c.dim];
            prior_draw(c, &mut eta, None, &mut rng);
            let mut s = State::at(c, eta, 0.0);
            let (mut ln_w, mut acc, mut reseeds) = (0.0, 0, 0);
            for t in 1..=steps {
                ln_w += (beta(t, steps) - beta(t - 1, steps)) * s.lik;
                if t < steps {
                    let (a, r) = transition(c, &mut s, beta(t, steps), &schedule[t - 1], &mut rng);
                    acc += a as usize;
                    reseeds += r;
                }
            }
            (
                if ln_w.is_nan() {
                    f64::NEG_INFINITY
                } else {
                    ln_w
                },
                acc,
                reseeds,
            )
        })
        .collect();
    let ln_w: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let moves = (chains * steps.saturating_sub(1)).max(1) as f64;
    Annealed {
        sampled: summarise(&ln_w),
        acceptance: runs.iter().map(|r| r.1).sum::<usize>() as f64 / moves,
        reseeds: runs.iter().map(|r| r.2).sum::<usize>() as f64 / chains as f64,
    }
}
