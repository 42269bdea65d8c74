//! Bernoulli and Binomial observations whose log-odds η is a Gaussian-moment expression —
//! `y ~ Bernoulli(sigmoid(η))` — with the Jaakkola–Jordan local bound (Jaakkola & Jordan 2000,
//! "Bayesian parameter estimation via variational methods", eqs. (4)–(6); the ξ bound of
//! Lawrence's thesis §2.2 in its quadratic form).
//!
//! The family is the Bernoulli's (Binomial's) in its natural parameter: u = [y], φ = η,
//! f(y) = ln C(n, y), A(η) = n ln(1 + e^η). The expectation ⟨A⟩ under a Gaussian η has no closed
//! form; it is bounded above, for every ξ, by the tangent of ln σ in η² (J&J eq. (4)):
//!
//! ln σ(η) ≥ ln σ(ξ) + (η − ξ)/2 − λ(ξ)(η² − ξ²),   λ(ξ) = tanh(ξ/2)/(4ξ),
//!
//! so that, with ln(1 + e^η) = η − ln σ(η),
//!
//! ⟨A⟩ ≤ n [⟨η⟩/2 − ln σ(ξ) + ξ/2 + λ(ξ)(⟨η²⟩ − ξ²)],
//!
//! and the expected log-likelihood ⟨φ⟩y − ⟨A⟩ + f(y) is bounded below by
//! n ln σ(ξ) + (y − n/2)⟨η⟩ − nξ/2 − nλ(ξ)(⟨η²⟩ − ξ²) + f(y): a true lower bound, quadratic in
//! η, so its messages to η are conjugate Gaussian messages: [y − n/2, −nλ(ξ)] in the basis
//! u_η = [η, η²].
//!
//! **The local parameter ξ.** Its optimum is closed form: ∂/∂ξ of the bound is
//! −nλ′(ξ)(⟨η²⟩ − ξ²), zero at ξ² = ⟨η²⟩ (J&J eq. (6)). The family does not keep ξ: every bound
//! term and every message takes ξ = √⟨η²⟩ from the current moments of η, which is the closed-form
//! ξ update run just before each use. The bound is then max_ξ L(q, ξ), still a lower bound on
//! the evidence, and VMP stays coordinate ascent: the update of a Gaussian parent of η maximises
//! L(q, ξ_old) with ξ_old optimal for the old q, and re-optimising ξ can only raise it further.
//! The message is also the exact derivative of max_ξ L with respect to u_η (the envelope theorem:
//! ∂L/∂ξ = 0 at the optimum), which the shared law tests check by finite differences.
//!
//! For a point-mass η (ξ = |η|) the bound is exact: the tangent touches at ±ξ.

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::special::log_sigmoid;
use crate::Rng;
use rand::Rng as _;

/// λ(ξ) = tanh(ξ/2)/(4ξ) (J&J eq. (4)); its limit 1/8 − ξ²/96 near 0, where the ratio loses
/// digits. Even in ξ.
pub fn jj_lambda(xi: f64) -> f64 {
    let xi = xi.abs();
    if xi < 1e-4 {
        0.125 - xi * xi / 96.0
    } else {
        (0.5 * xi).tanh() / (4.0 * xi)
    }
}

/// The Jaakkola–Jordan lower bound on ⟨ln σ(η)⟩ + (y − 1)⟨η⟩ for one trial, i.e. on the
/// expected log-likelihood of y ∈ {0, 1} given log-odds η with moments ⟨η⟩ = `m1`,
/// ⟨η²⟩ = `m2`, at local parameter `xi`: ln σ(ξ) + (y − ½)⟨η⟩ − ξ/2 − λ(ξ)(⟨η²⟩ − ξ²).
pub fn jj_bound(y: f64, m1: f64, m2: f64, xi: f64) -> f64 {
    log_sigmoid(xi) + (y - 0.5) * m1 - 0.5 * xi - jj_lambda(xi) * (m2 - xi * xi)
}

/// The optimal local parameter ξ = √⟨η²⟩ (J&J eq. (6)).
pub fn jj_xi(m2: f64) -> f64 {
    m2.max(0.0).sqrt()
}

/// The bound on ⟨ln(1 + e^η)⟩ at the optimal ξ: ⟨η⟩/2 − ln σ(ξ) + ξ/2 (the λ term vanishes at
/// ξ² = ⟨η²⟩), and λ(ξ) for the messages.
pub(super) fn softplus_bound(pa: &[f64]) -> (f64, f64) {
    let xi = jj_xi(pa[1]);
    let lambda = jj_lambda(xi);
    (
        0.5 * pa[0] - log_sigmoid(xi) + 0.5 * xi + lambda * (pa[1] - xi * xi),
        lambda,
    )
}

/// The log-odds slot: a Gaussian-moment expression.
pub(super) const LOGIT_SLOT: SlotSpec = SlotSpec {
    name: "logit",
    aliases: &["eta", "log_odds"],
    kinds: &[ValueKind::Real],
    constant: ConstDomain::Real,
    shape: SlotShape::Scalar,
    expects: "Gaussian-distributed (or a sum or dot product of Gaussians, or a constant)",
};

/// Bernoulli(y | σ(η)) with a Gaussian log-odds η, by the Jaakkola–Jordan bound (module docs);
/// what `y ~ Bernoulli(sigmoid(η))` becomes.
#[derive(Clone, Debug, Default)]
pub struct BernoulliLogit;

impl ExpFamily for BernoulliLogit {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "BernoulliLogit",
        aliases: &[],
        value: ValueKind::Binary,
        event: EventShape::Scalar,
        slots: &[LOGIT_SLOT],
        params: &[],
        summary: "0 or 1 with probability sigmoid(logit): `Bernoulli(sigmoid_jj(x))`; \
                  Jaakkola–Jordan bound (a true lower bound)",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(BernoulliLogit.into())
    }
    fn free_params(&self) -> usize {
        1
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Scalar
    }
    fn bound_quality(&self) -> super::BoundQuality {
        super::BoundQuality::LowerBound
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: 1 })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi[0] = pa[0][0];
        softplus_bound(pa[0]).0
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        super::Bernoulli.moments(phi, u)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        super::Bernoulli.observe_value(x, u)
    }
    // ∂/∂⟨η⟩ and ∂/∂⟨η²⟩ of Σ_i w_i [⟨η⟩y_i − ⟨A⟩] at fixed ξ (J&J eq. (5)): y − w/2 and −wλ(ξ).
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        let (_, lambda) = softplus_bound(pa[0]);
        m[0] = u[0] - 0.5 * w;
        m[1] = -w * lambda;
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        super::Bernoulli.sample(phi, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        super::Bernoulli.mode(phi, x)
    }
    fn test_instances() -> Vec<Self> {
        vec![BernoulliLogit]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![6.0 * rng.random::<f64>() - 3.0]
    }
}

#[cfg(test)]
#[path = "logistic_tests.rs"]
mod tests;
