//! Gamma(x | s, b) whose shape s = c·a is a multiple of a random variable a
//! ([`super::ShapeGamma`], moments u(a) = [s, ln a, ln Γ(s), s ln s]) — Winn Example 2.1.
//!
//! ln p(x | s, b) = s ln b − ln Γ(s) + (s − 1) ln x − b x, so with u = [x, ln x] the child is the
//! Gamma family with φ = [−b, s − 1]; its expected log-partition under q(a)q(b) is
//! ⟨A⟩ = ⟨ln Γ(s)⟩ − ⟨s⟩⟨ln b⟩, linear in u(a) and u(b), so every message is exact:
//! to a, Σ_i w_i [⟨s⟩ (ln x_i + ⟨ln b⟩) − ⟨ln Γ(s)⟩], i.e. [Σ w ln x + w⟨ln b⟩, 0, −w, 0]
//! ((2.69) with the message m_{x→a} = [⟨ln x⟩ + ⟨ln b⟩, −1] in Winn's u = [a, ln Γ(a)]); to b,
//! [−Σ w x, w⟨s⟩]. The constant c lives in the latent's family only.
//!
//! [`super::GammaTiedShape`] is the same child whose rate is k times its own shape, b = k s (the
//! Student-t scale mixture λ ~ Gamma(ν/2, ν/2): c = 1/2, k = 1). Its two slots are one variable,
//! so the mean-field product ⟨s⟩⟨ln b⟩ would be wrong; the term s ln b = s ln k + s ln s is
//! linear in u(a) instead: ⟨A⟩ = ⟨ln Γ(s)⟩ − ⟨s⟩ ln k − ⟨s ln s⟩, φ = [−k⟨s⟩, ⟨s⟩ − 1], and
//! the message to a is [Σ w ln x − k Σ w x + w ln k, 0, −w, w].

use super::gamma::{usual_shape_rate, RATE_SLOT};
use super::{Dist, ExpFamily, Gamma, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::Rng;

/// Formulas shared with the Gamma (they read φ only).
pub(super) const GAMMA: Gamma = Gamma { shape: 1.0 };

/// The random shape slot.
pub(super) const SHAPE_SLOT: SlotSpec = SlotSpec {
    name: "shape",
    aliases: &["a"],
    kinds: &[ValueKind::Positive],
    constant: ConstDomain::Never,
    shape: SlotShape::Scalar,
    expects: "a Gamma- or Exponential-distributed variable, or a positive multiple of one",
};

/// A Gamma with a random shape s and an independent rate (module docs).
#[derive(Clone, Debug, Default)]
pub struct GammaRandomShape;

/// The parts every Gamma child shares: kind, moments, values, draws and modes are the Gamma's.
macro_rules! gamma_value_methods {
    () => {
        fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
            usual_shape_rate(phi)
        }
        fn free_params(&self) -> usize {
            2
        }
        fn kind(&self) -> MomentKind {
            MomentKind::Gamma
        }
        fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
            GAMMA.moments(phi, u)
        }
        fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
            GAMMA.centred_at(phi, x, out)
        }
        fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
            GAMMA.observe_value(x, u)
        }
        fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
            GAMMA.sample(phi, rng, x)
        }
        fn mode(&self, phi: &[f64], x: &mut [f64]) {
            GAMMA.mode(phi, x)
        }
        fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
            GAMMA.random_phi(rng)
        }
    };
}
pub(super) use gamma_value_methods;

impl ExpFamily for GammaRandomShape {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: true,
        observed_only: false,
        name: "GammaRandomShape",
        aliases: &[],
        value: ValueKind::Positive,
        event: EventShape::Scalar,
        slots: &[SHAPE_SLOT, RATE_SLOT],
        params: &["shape", "rate"],
        summary: "`Gamma(a, b)` with a random shape `a` (a positive multiple of a `Gamma` or \
                  `Exponential` variable): what `Gamma(a, b)` with a random shape is. Exact: ⟨ln Γ(a)⟩ from q(a)",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(GammaRandomShape.into())
    }
    gamma_value_methods!();
    fn slot_input(&self, slot: usize) -> SlotInput {
        SlotInput::single(if slot == 0 {
            MomentKind::GammaShape
        } else {
            MomentKind::Gamma
        })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let (a, b) = (pa[0], pa[1]);
        let s = a[0];
        phi[0] = -b[0];
        phi[1] = s - 1.0;
        a[2] - s * b[1]
    }
    fn message_to(&self, slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        if slot == 0 {
            m[0] = u[1] + w * pa[1][1];
            m[1] = 0.0;
            m[2] = -w;
            m[3] = 0.0;
        } else {
            m[0] = -u[0];
            m[1] = w * pa[0][0];
        }
    }
    fn test_instances() -> Vec<Self> {
        vec![GammaRandomShape]
    }
}
