//! Gamma(x | s, k s) whose rate is k times its random shape s (the Student-t scale mixture
//! λ ~ Gamma(ν/2, ν/2): s = ν/2, k = 1) — see `gamma_random_shape.rs` for the shared derivation.
//!
//! Both slots are one variable, so the mean-field product ⟨s⟩⟨ln b⟩ would be wrong; the term
//! s ln b = s ln k + s ln s is linear in u(a) = [s, ln a, ln Γ(s), s ln s] instead:
//! ⟨A⟩ = ⟨ln Γ(s)⟩ − ⟨s⟩ ln k − ⟨s ln s⟩, φ = [−k⟨s⟩, ⟨s⟩ − 1], and the message to a is
//! [Σ w ln x − k Σ w x + w ln k, 0, −w, w].

use super::gamma::usual_shape_rate;
use super::gamma_random_shape::{gamma_value_methods, GAMMA, SHAPE_SLOT};
use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{ArgError, Args, EventShape, FamilySpec, Param, ValueKind};
use crate::Rng;

/// A Gamma with a random shape s and rate k·s (module docs).
#[derive(Clone, Debug)]
pub struct GammaTiedShape {
    /// k in the rate k·s.
    pub rate_factor: f64,
}

impl ExpFamily for GammaTiedShape {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: true,
        observed_only: false,
        name: "GammaTiedShape",
        aliases: &[],
        value: ValueKind::Positive,
        event: EventShape::Scalar,
        slots: &[SHAPE_SLOT],
        params: &["shape", "rate"],
        summary: "`Gamma(s, k * s)` whose rate is a multiple of its random shape (Student-t's \
                  `Gamma(nu * 0.5, nu * 0.5)`): what `Gamma(s, k * s)` is. Exact: ⟨s ln s⟩ from q",
    };

    /// Written directly, the rate is the shape itself (k = 1).
    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(GammaTiedShape { rate_factor: 1.0 }.into())
    }
    gamma_value_methods!();
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::GammaShape)
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let k = self.rate_factor;
        let a = pa[0];
        let s = a[0];
        phi[0] = -k * s;
        phi[1] = s - 1.0;
        a[2] - s * k.ln() - a[3]
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        let k = self.rate_factor;
        m[0] = u[1] - k * u[0] + w * k.ln();
        m[1] = 0.0;
        m[2] = -w;
        m[3] = w;
    }
    fn test_instances() -> Vec<Self> {
        vec![
            GammaTiedShape { rate_factor: 1.0 },
            GammaTiedShape { rate_factor: 2.5 },
        ]
    }
}
