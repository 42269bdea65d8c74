//! Bernoulli and Binomial observations with a Gaussian log-odds η whose bound term is the exact
//! expectation ⟨ln p(y | η)⟩ (up to quadrature error), not a local bound: what
//! `y ~ Bernoulli(sigmoid(η))` and `Binomial(n, sigmoid(η))` become by default.
//!
//! The family is the Bernoulli's (Binomial's) in its natural parameter, as the Jaakkola–Jordan
//! families of [`super::logistic`]: u = [y], φ = ⟨η⟩, f(y) = ln C(n, y), A(η) = n softplus(η) =
//! n ln(1 + e^η). Here ⟨A⟩ = n E[softplus(η)] under η ~ N(μ, v), μ = ⟨η⟩, v = ⟨η²⟩ − ⟨η⟩², by
//! the quadrature of [`crate::special::expect_softplus`] (≤ 2e-14 for sd ≤ 1, ≤ 1.5e-10 up to
//! sd 10): the bound term is the ELBO's own expectation, so the bound is the ELBO of q.
//!
//! **Messages (non-conjugate VMP, Knowles & Minka 2011, eq. (6)):** the term is not linear in
//! the moments u_η = [η, η²], so the message is its gradient at the current moments,
//! ∂/∂⟨η⟩ = y − wn(∂_μE − 2μ ∂_vE) and ∂/∂⟨η²⟩ = −wn ∂_vE, with ∂_μE, ∂_vE the derivatives of the
//! quadrature itself (so the law tests' finite differences reproduce them). A Gaussian parent's
//! update φ = φ_prior + Σ messages is then a natural-gradient step of length one on the bound,
//! which can overshoot; the engine's `noncj` block checks the bound after it and halves the step
//! until the bound does not decrease.

use super::logistic::LOGIT_SLOT;
use super::{BoundQuality, Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{ArgError, Args, EventShape, FamilySpec, ValueKind};
use crate::special::expect_softplus;
use crate::Rng;
use rand::Rng as _;

/// E[softplus(η)] and its gradient in the moments (⟨η⟩, ⟨η²⟩) of the log-odds (module docs).
pub(super) fn softplus_term(pa: &[f64]) -> (f64, f64, f64) {
    let mean = pa[0];
    let (e, d_mean, d_var) = expect_softplus(mean, pa[1] - mean * mean);
    (e, d_mean - 2.0 * mean * d_var, d_var)
}

/// The prior part of n trials: φ = ⟨η⟩, and the bound's n E[softplus(η)] (module docs); shared
/// by [`BernoulliLogitQuad`] (n = 1, exact: 1 · x = x) and the Binomial's quadrature family.
pub(super) fn trials_prior(n: f64, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
    phi[0] = pa[0][0];
    n * softplus_term(pa[0]).0
}

/// ∂/∂⟨η⟩ and ∂/∂⟨η²⟩ of Σ_i w_i [⟨η⟩y_i − n E softplus(η)] (module docs), for n trials.
pub(super) fn trials_message(n: f64, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
    let (_, d1, d2) = softplus_term(pa[0]);
    m[0] = u[0] - n * w * d1;
    m[1] = -n * w * d2;
}

/// Bernoulli(y | σ(η)) with a Gaussian log-odds η and the exact expected log-likelihood by
/// quadrature (module docs); what `y ~ Bernoulli(sigmoid(η))` becomes.
#[derive(Clone, Debug, Default)]
pub struct BernoulliLogitQuad;

impl ExpFamily for BernoulliLogitQuad {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "BernoulliLogitQuad",
        aliases: &[],
        value: ValueKind::Binary,
        event: EventShape::Scalar,
        slots: &[LOGIT_SLOT],
        params: &[],
        summary: "0 or 1 with probability sigmoid(logit): `Bernoulli(sigmoid(x))`; \
                  ⟨ln p⟩ by quadrature (exact), non-conjugate update with a checked step",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(BernoulliLogitQuad.into())
    }
    fn free_params(&self) -> usize {
        1
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Scalar
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: 1 })
    }
    fn non_conjugate(&self) -> bool {
        true
    }
    fn bound_quality(&self) -> BoundQuality {
        BoundQuality::Exact
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        trials_prior(1.0, pa, phi)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        super::Bernoulli.moments(phi, u)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        super::Bernoulli.observe_value(x, u)
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        trials_message(1.0, u, w, pa, m)
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        super::Bernoulli.sample(phi, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        super::Bernoulli.mode(phi, x)
    }
    fn test_instances() -> Vec<Self> {
        vec![BernoulliLogitQuad]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![6.0 * rng.random::<f64>() - 3.0]
    }
}
