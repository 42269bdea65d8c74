//! Poisson counts with a Gaussian log-rate η — `y ~ Poisson(exp(η))`, Poisson regression with
//! the log link.
//!
//! The family is the Poisson's in its natural parameter: u = [y], φ = ⟨η⟩, f(y) = −ln y!,
//! A(η) = e^η. Under a Gaussian η ~ N(μ, v) the expectation is closed form,
//! ⟨A⟩ = ⟨e^η⟩ = e^{μ + v/2} (the log-normal mean), so the bound term ⟨y η − e^η⟩ − ln y! is the
//! ELBO's own expectation, exactly.
//!
//! **Messages (non-conjugate VMP, Knowles & Minka 2011, eq. (6)):** with v = ⟨η²⟩ − ⟨η⟩², the
//! gradient of Σ_i w_i[y_i⟨η⟩ − e^{μ+v/2}] in the moments u_η = [η, η²] is
//! [y − w e^{μ+v/2}(1 − μ), −w e^{μ+v/2}/2]. The term is not linear in u_η, so a Gaussian parent's
//! update from it is a natural-gradient step that can overshoot; the engine's `noncj` block checks
//! the bound after it and halves the step until the bound does not decrease.

use super::{BoundQuality, Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::Rng;
use rand::Rng as _;

/// Largest exponent μ + v/2 evaluated: beyond it e^x overflows; such a q has a bound term near
/// −10³⁰⁴, which the engine's step check rejects before it is ever kept.
const MAX_EXPONENT: f64 = 700.0;

/// ⟨e^η⟩ = e^{μ + v/2} for the moments (⟨η⟩, ⟨η²⟩).
fn lognormal_mean(pa: &[f64]) -> f64 {
    let (mean, var) = (pa[0], (pa[1] - pa[0] * pa[0]).max(0.0));
    (mean + 0.5 * var).min(MAX_EXPONENT).exp()
}

/// Poisson(y | e^η) with a Gaussian log-rate η (module docs).
#[derive(Clone, Debug, Default)]
pub struct PoissonLog;

impl ExpFamily for PoissonLog {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "PoissonLog",
        aliases: &[],
        value: ValueKind::Count,
        event: EventShape::Scalar,
        slots: &[SlotSpec {
            name: "log_rate",
            aliases: &["eta", "log_mean"],
            kinds: &[ValueKind::Real],
            constant: ConstDomain::Real,
            shape: SlotShape::Scalar,
            expects: "Gaussian-distributed (or a sum or dot product of Gaussians, or a constant)",
        }],
        params: &[],
        summary: "Poisson counts with rate exp(log_rate): `Poisson(exp(x))`; ⟨e^x⟩ = e^{μ+v/2} \
                  in closed form (exact), non-conjugate update with a checked step",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(PoissonLog.into())
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
        phi[0] = pa[0][0];
        lognormal_mean(pa[0])
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        super::Poisson.moments(phi, u)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        super::Poisson.observe_value(x, u)
    }
    // ∂/∂⟨η⟩ and ∂/∂⟨η²⟩ of Σ_i w_i[y_i⟨η⟩ − e^{μ+v/2}] (module docs).
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        let e = lognormal_mean(pa[0]);
        m[0] = u[0] - w * e * (1.0 - pa[0][0]);
        m[1] = -0.5 * w * e;
    }
    fn expected_base_measure(&self, phi: &[f64], u: &[f64]) -> f64 {
        super::Poisson.expected_base_measure(phi, u)
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        super::Poisson.sample(phi, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        super::Poisson.mode(phi, x)
    }
    fn test_instances() -> Vec<Self> {
        vec![PoissonLog]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![3.0 * rng.random::<f64>() - 1.0]
    }
}
