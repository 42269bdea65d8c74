//! Bernoulli(x | p), x ∈ {0, 1}, with a Beta parent for p.
//!
//! u = [x], φ = ⟨ln p⟩ − ⟨ln(1 − p)⟩, f = 0, A(φ) = ln(1 + e^φ) (prior: ⟨A⟩ = −⟨ln(1 − p)⟩),
//! ⟨x⟩ = σ(φ). Message to the Beta parent (u = [ln p, ln(1 − p)]): [⟨x⟩, 1 − ⟨x⟩].

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::special::{sigmoid, softplus};
use crate::Rng;
use rand::Rng as _;

/// Bernoulli distribution.
#[derive(Clone, Debug, Default)]
pub struct Bernoulli;

/// The success-probability slot of the Beta-parent count families: a Beta or a constant.
pub(crate) const PROB_SLOT: SlotSpec = SlotSpec {
    name: "prob",
    aliases: &["p", "probability"],
    kinds: &[ValueKind::Probability],
    constant: ConstDomain::Probability,
    shape: SlotShape::Scalar,
    expects: "Beta-distributed (or a constant in [0, 1])",
};

impl ExpFamily for Bernoulli {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Bernoulli",
        aliases: &[],
        value: ValueKind::Binary,
        event: EventShape::Scalar,
        slots: &[PROB_SLOT],
        params: &[],
        summary: "0 or 1",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(Bernoulli.into())
    }
    fn free_params(&self) -> usize {
        1
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Scalar
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Dirichlet { k: 2 })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi[0] = pa[0][0] - pa[0][1];
        -pa[0][1]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        if phi[0].is_nan() {
            return Err(OutOfDomain("Bernoulli log-odds is NaN"));
        }
        u[0] = sigmoid(phi[0]);
        Ok(softplus(phi[0]))
    }
    /// The q with probability 1 − 10⁻⁹ on the drawn value: log-odds ±ln((1 − δ)/δ), δ = 10⁻⁹.
    /// (The exact point mass has infinite log-odds, where A(φ) − φ·u is ∞ − ∞.) Its moments
    /// differ from the point mass's by 10⁻⁹ and its entropy is 2.2·10⁻⁸.
    fn centred_at(&self, _phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        const DELTA: f64 = 1e-9;
        let logit = ((1.0 - DELTA) / DELTA).ln();
        out[0] = if x[0] > 0.5 { logit } else { -logit };
        true
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if x[0] != 0.0 && x[0] != 1.0 {
            return Err(ValueError::NotBinary { value: x[0] });
        }
        u[0] = x[0];
        Ok(0.0)
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m[0] = u[0];
        m[1] = w - u[0];
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        x[0] = if rng.random::<f64>() < sigmoid(phi[0]) {
            1.0
        } else {
            0.0
        };
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = if phi[0] > 0.0 { 1.0 } else { 0.0 };
    }
    fn test_instances() -> Vec<Self> {
        vec![Bernoulli]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![6.0 * rng.random::<f64>() - 3.0]
    }
}
