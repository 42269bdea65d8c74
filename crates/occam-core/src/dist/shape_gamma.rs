//! A Gamma- (or Exponential-) distributed variable a used as the shape c·a of Gamma children —
//! Winn Example 2.1, (2.67)–(2.69), with a Gamma prior in place of his inverse-Gamma.
//!
//! Gamma children make u(a) = [s, ln a, ln Γ(s), s ln s] with s = c·a (Winn (2.68); the last
//! entry is read by a child whose rate is a multiple of its shape, the Student-t scale mixture
//! `λ ~ Gamma(ν/2, ν/2)`). The prior Gamma(α, b) is ln p(a) = (α − 1) ln a − b a − ln Γ(α) + α ln b
//! with b a = (b/c) s, so φ_prior = [−⟨b⟩/c, α − 1, 0, 0] and ⟨A_prior⟩ = ln Γ(α) − α⟨ln b⟩; the
//! children add to
//! φ's third and fourth entries ([`super::GammaRandomShape`], [`super::GammaTiedShape`]), and q(a)
//! ∝ exp(φ·u(a)) (Winn (2.69)) is in no standard family. It is an exponential family all the
//! same, with A(φ) = ln ∫ exp(φ·u(a)) da and ⟨u⟩ = ∂A/∂φ taken by 1-D quadrature (`shape_quad`):
//! the engine's generic update, messages and bound term (A(φ) − φ·⟨u⟩ + the prior's terms: the
//! KL of q(a) from its prior) then hold unchanged, exact up to a quadrature error below 1e-9.
//! Winn samples q(ln a) by adaptive rejection instead; quadrature is deterministic and gives the
//! bound he lacks.
//!
//! The rate may have a Gamma parent: message [−⟨a⟩, α] = [−⟨s⟩/c, α], as for a Gamma.

use super::shape_quad::{shape_stats, ShapeDensity};
use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::special::ln_gamma;
use crate::Rng;
use rand::Rng as _;

/// A Gamma(α, rate) variable a whose multiple `scale`·a is the shape of Gamma children.
#[derive(Clone, Debug)]
pub struct ShapeGamma {
    /// The prior's shape α > 0 (1 for an Exponential prior).
    pub alpha: f64,
    /// The constant c of the children's shape c·a.
    pub scale: f64,
}

impl ExpFamily for ShapeGamma {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: true,
        observed_only: false,
        name: "ShapeGamma",
        aliases: &[],
        value: ValueKind::Positive,
        event: EventShape::Scalar,
        slots: &[
            SlotSpec {
                name: "shape",
                aliases: &["a"],
                kinds: &[],
                constant: ConstDomain::Positive,
                shape: SlotShape::Scalar,
                expects: "a positive constant",
            },
            super::gamma::RATE_SLOT,
        ],
        params: &["mean", "sd"],
        summary: "a `Gamma` or `Exponential` variable that is the shape of Gamma children \
                  (`x ~ Gamma(a, b)`, `lam ~ Gamma(nu * 0.5, nu * 0.5)`); the language picks it for such a \
                  `Gamma(shape, rate)`. \
                  q(a) is no standard family: its moments and bound term by 1-D quadrature \
                  (exact). Its children read ⟨s⟩, ⟨ln Γ(s)⟩, ⟨s ln s⟩ of their shape s = c·a, so \
                  it can be nothing else",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(ShapeGamma {
            alpha: args.number(0)?,
            scale: 1.0,
        }
        .into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        let (mean, sd) = match ShapeDensity::new(phi, self.scale).normalise() {
            // var a = (⟨s²⟩ − ⟨s⟩²)/c², both from the quadrature.
            Ok(n) => (
                n.u[0] / self.scale,
                (n.s2 - n.u[0] * n.u[0]).max(0.0).sqrt() / self.scale,
            ),
            Err(_) => (f64::NAN, f64::NAN),
        };
        vec![("mean", Param::Scalar(mean)), ("sd", Param::Scalar(sd))]
    }
    fn free_params(&self) -> usize {
        4
    }
    fn kind(&self) -> MomentKind {
        MomentKind::GammaShape
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gamma)
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let b = pa[0];
        phi[0] = -b[0] / self.scale;
        phi[1] = self.alpha - 1.0;
        phi[2] = 0.0;
        phi[3] = 0.0;
        ln_gamma(self.alpha) - self.alpha * b[1]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        let n = ShapeDensity::new(phi, self.scale).normalise()?;
        u.copy_from_slice(&n.u);
        Ok(n.log_z)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !(x[0] > 0.0) || !x[0].is_finite() {
            return Err(ValueError::OutsideSupport {
                value: x[0],
                support: "x > 0",
            });
        }
        u.copy_from_slice(&shape_stats(x[0], self.scale));
        Ok(0.0)
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m[0] = -u[0] / self.scale;
        m[1] = self.alpha * w;
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let d = ShapeDensity::new(phi, self.scale);
        let n = d.normalise().expect("sampling needs a valid φ");
        x[0] = d.sample(&n, rng.random::<f64>());
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = ShapeDensity::new(phi, self.scale)
            .mode()
            .unwrap_or(f64::MIN_POSITIVE);
    }
    fn mean(&self, phi: &[f64]) -> Option<Vec<f64>> {
        let n = ShapeDensity::new(phi, self.scale).normalise().ok()?;
        Some(vec![n.u[0] / self.scale])
    }
    fn test_instances() -> Vec<Self> {
        vec![
            ShapeGamma {
                alpha: 2.0,
                scale: 1.0,
            },
            ShapeGamma {
                alpha: 1.0,
                scale: 0.5,
            },
        ]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        // A prior tilted by n Gamma children, r·n of them with rates tied to their shapes:
        // normalisable for every draw (near 0 the density is ~ a^{φ₂ + n}, at ∞ it falls as
        // e^{−(1 − r) n s ln s}).
        let n = 1.0 + 4.0 * rng.random::<f64>();
        let r = 0.9 * rng.random::<f64>();
        vec![
            -(0.2 + 2.0 * rng.random::<f64>()),
            2.0 * rng.random::<f64>() - 0.5,
            -n,
            r * n,
        ]
    }
}
