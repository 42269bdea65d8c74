//! Gamma(x | a, b) with shape a and rate b — Winn (A.11–A.14). The shape has no conjugate prior
//! (Winn Table 2.1): this family holds a constant shape; a random one (Winn Example 2.1) builds
//! [`super::GammaRandomShape`] (its variable then gets [`super::ShapeGamma`], q by quadrature).
//!
//! u = [x, ln x], φ = [−b, a − 1], f = 0, A(φ) = ln Γ(φ₂ + 1) − (φ₂ + 1) ln(−φ₁).
//! ⟨u⟩ = [a/b, ψ(a) − ln b]. The rate may have a Gamma parent: message [−⟨x⟩, a].

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    Arg, ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::special::{digamma, ln_gamma};
use crate::Rng;
use rand::Rng as _;

/// Gamma distribution with a constant shape and a rate parent.
#[derive(Clone, Debug)]
pub struct Gamma {
    /// Shape a > 0.
    pub shape: f64,
}

/// Shape and rate of the member with natural parameters φ.
pub(crate) fn shape_rate(phi: &[f64]) -> Result<(f64, f64), OutOfDomain> {
    let (a, b) = (phi[1] + 1.0, -phi[0]);
    if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
        return Err(OutOfDomain("Gamma shape and rate must be positive"));
    }
    Ok((a, b))
}

/// The rate slot of the Gamma: a Gamma or a positive constant.
pub(crate) const RATE_SLOT: SlotSpec = SlotSpec {
    name: "rate",
    aliases: &["b", "beta", "inverse_scale"],
    kinds: &[ValueKind::Positive],
    constant: ConstDomain::Positive,
    shape: SlotShape::Scalar,
    expects: "Gamma-distributed (or a positive constant)",
};

/// Shape and rate of the Gamma member with natural parameters φ, as reported.
pub(crate) fn usual_shape_rate(phi: &[f64]) -> Vec<(&'static str, Param)> {
    vec![
        ("shape", Param::Scalar(phi[1] + 1.0)),
        ("rate", Param::Scalar(-phi[0])),
    ]
}

impl ExpFamily for Gamma {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Gamma",
        aliases: &[],
        value: ValueKind::Positive,
        event: EventShape::Scalar,
        slots: &[
            SlotSpec {
                name: "shape",
                aliases: &["a"],
                kinds: &[ValueKind::Positive],
                constant: ConstDomain::Positive,
                shape: SlotShape::Scalar,
                expects: "a positive constant, or a Gamma- or Exponential-distributed variable \
                          (times a positive constant)",
            },
            RATE_SLOT,
        ],
        params: &["shape", "rate"],
        summary: "Gamma with shape and rate (mean shape / rate); a random shape (a `Gamma` or \
                  `Exponential` variable, times a positive constant) makes it `GammaRandomShape` \
                  (`GammaTiedShape` when the rate is a multiple of the same variable) and the \
                  shape's variable `ShapeGamma`",
    };

    /// The family's parent slots: the rate only (a constant shape is a field).
    const SLOTS: &'static [SlotSpec] = &[RATE_SLOT];

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        if let Arg::Variable(_) = args.get(0) {
            return Ok(super::GammaRandomShape.into());
        }
        Ok(Gamma {
            shape: args.number(0)?,
        }
        .into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        usual_shape_rate(phi)
    }
    fn free_params(&self) -> usize {
        2
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Gamma
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gamma)
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let b = pa[0];
        phi[0] = -b[0];
        phi[1] = self.shape - 1.0;
        ln_gamma(self.shape) - self.shape * b[1]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        let (a, b) = shape_rate(phi)?;
        let ln_b = b.ln();
        u[0] = a / b;
        u[1] = digamma(a) - ln_b;
        Ok(ln_gamma(a) - a * ln_b)
    }
    /// The Gamma with φ's shape a and mean x: rate a/x (the relative spread 1/√a of φ kept).
    fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        let Ok((a, _)) = shape_rate(phi) else {
            return false;
        };
        if !(x[0] > 0.0 && x[0].is_finite()) {
            return false;
        }
        out[0] = -a / x[0];
        out[1] = phi[1];
        true
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !(x[0] > 0.0) || !x[0].is_finite() {
            return Err(ValueError::OutsideSupport {
                value: x[0],
                support: "x > 0",
            });
        }
        u[0] = x[0];
        u[1] = x[0].ln();
        Ok(0.0)
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m[0] = -u[0];
        m[1] = self.shape * w;
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let (a, b) = shape_rate(phi).expect("sampling needs a valid φ");
        let g = rand_distr::Gamma::new(a, 1.0 / b).expect("valid Gamma");
        x[0] = rng.sample(g).max(f64::MIN_POSITIVE);
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        let (a, b) = (phi[1] + 1.0, -phi[0]);
        // (a − 1)/b, Winn §2.6.1; for a ≤ 1 the density is unbounded at 0.
        x[0] = ((a - 1.0) / b).max(f64::MIN_POSITIVE);
    }
    fn test_instances() -> Vec<Self> {
        vec![Gamma { shape: 1e-3 }, Gamma { shape: 2.5 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![
            -(0.1 + 3.0 * rng.random::<f64>()),
            5.0 * rng.random::<f64>() - 0.8,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_matches_winn_a14() {
        let (a, b) = (2.5f64, 1.7f64);
        let h = Gamma { shape: 1.0 }.entropy(&[-b, a - 1.0]).unwrap();
        let expected = a + (1.0 - a) * digamma(a) - b.ln() + ln_gamma(a);
        assert!((h - expected).abs() < 1e-12);
    }
}
