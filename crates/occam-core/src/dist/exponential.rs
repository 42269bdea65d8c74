//! Exponential(x | λ) with a Gamma parent for the rate λ (Winn Table 2.1): the Gamma with shape 1.
//!
//! u = [x, ln x] (the Gamma's moments, so an Exponential can be a parent wherever a Gamma can, e.g.
//! a Poisson rate or a precision), φ = [−λ, 0] in the prior, f = 0, and with φ = [−b, a − 1] in
//! general (children add to φ₂, so the posterior is a Gamma): A(φ) = ln Γ(a) − a ln b.
//! Prior: ⟨A⟩ = −⟨ln λ⟩. Message to λ (u = [λ, ln λ]): [−⟨x⟩, 1].

use super::gamma::{usual_shape_rate, Gamma};
use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::Rng;
use rand::Rng as _;

/// Exponential distribution.
#[derive(Clone, Debug, Default)]
pub struct Exponential;

/// The Gamma it is: moments, observations, messages, samples and modes are the Gamma's with shape 1.
const SHAPE_ONE: Gamma = Gamma { shape: 1.0 };

impl ExpFamily for Exponential {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Exponential",
        aliases: &[],
        value: ValueKind::Positive,
        event: EventShape::Scalar,
        slots: &[SlotSpec {
            name: "rate",
            aliases: &["lambda"],
            kinds: &[ValueKind::Positive],
            constant: ConstDomain::Positive,
            shape: SlotShape::Scalar,
            expects: "Gamma-distributed (or a positive constant)",
        }],
        params: &["shape", "rate"],
        summary: "exponential, i.e. Gamma with shape 1",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(Exponential.into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        usual_shape_rate(phi)
    }
    fn free_params(&self) -> usize {
        1
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gamma
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gamma)
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi[0] = -pa[0][0];
        phi[1] = 0.0;
        -pa[0][1]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        SHAPE_ONE.moments(phi, u)
    }
    fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        SHAPE_ONE.centred_at(phi, x, out)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        SHAPE_ONE.observe_value(x, u)
    }
    fn message_to(&self, slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        SHAPE_ONE.message_to(slot, u, w, pa, m)
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        SHAPE_ONE.sample(phi, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        // (a − 1)/b; for the Exponential itself (a = 1) the mode is at 0.
        SHAPE_ONE.mode(phi, x)
    }
    fn test_instances() -> Vec<Self> {
        vec![Exponential]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        // Mostly the Exponential itself (φ₂ = 0); sometimes a posterior that children moved.
        let shape_shift = if rng.random::<f64>() < 0.5 {
            0.0
        } else {
            3.0 * rng.random::<f64>() - 0.5
        };
        vec![-(0.1 + 3.0 * rng.random::<f64>()), shape_shift]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::digamma;

    #[test]
    fn prior_is_the_gamma_with_shape_one() {
        // With a fixed rate λ: ⟨A⟩ = −ln λ = A(φ) and ⟨x⟩ = 1/λ, ⟨ln x⟩ = ψ(1) − ln λ.
        let lam = 2.5f64;
        let mut phi = [0.0; 2];
        let a = Exponential.prior(&[&[lam, lam.ln()]], &mut phi);
        let mut u = [0.0; 2];
        let a2 = Exponential.moments(&phi, &mut u).unwrap();
        assert!((a + lam.ln()).abs() < 1e-14 && (a2 - a).abs() < 1e-14);
        assert!((u[0] - 1.0 / lam).abs() < 1e-14);
        assert!((u[1] - (digamma(1.0) - lam.ln())).abs() < 1e-14);
    }
}
