//! Exponential(x | λ) with a Gamma parent for the rate λ (Winn Table 2.1).
//!
//! u = [x], φ = −⟨λ⟩, f = 0, A(φ) = −ln(−φ) (prior: ⟨A⟩ = −⟨ln λ⟩), ⟨x⟩ = −1/φ.
//! Message to λ (u = [λ, ln λ]): [−⟨x⟩, 1].

use super::{ExpFamily, OutOfDomain, Slot, SlotInput};
use crate::moments::MomentKind;
use crate::Rng;
use rand::Rng as _;

/// Exponential distribution.
#[derive(Clone, Debug, Default)]
pub struct Exponential;

const SLOTS: &[Slot] = &[Slot {
    name: "rate",
    aliases: &["lambda"],
}];

impl ExpFamily for Exponential {
    const NAME: &'static str = "Exponential";
    const SLOTS: &'static [Slot] = SLOTS;

    fn kind(&self) -> MomentKind {
        MomentKind::Scalar
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gamma)
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi[0] = -pa[0][0];
        -pa[0][1]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        if !(phi[0] < 0.0) {
            return Err(OutOfDomain("Exponential rate must be positive"));
        }
        u[0] = -1.0 / phi[0];
        Ok(-(-phi[0]).ln())
    }
    fn observe(&self, x: &[f64], u: &mut [f64]) -> Result<f64, String> {
        if !(x[0] >= 0.0) || !x[0].is_finite() {
            return Err(format!("{} is outside the support x ≥ 0", x[0]));
        }
        u[0] = x[0];
        Ok(0.0)
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m[0] = -u[0];
        m[1] = w;
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        x[0] = rng.sample(rand_distr::Exp::new(-phi[0]).expect("positive rate"));
    }
    fn mode(&self, _phi: &[f64], x: &mut [f64]) {
        x[0] = 0.0;
    }
    fn test_instances() -> Vec<Self> {
        vec![Exponential]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![-(0.1 + 3.0 * rng.random::<f64>())]
    }
}
