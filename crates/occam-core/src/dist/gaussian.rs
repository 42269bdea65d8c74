//! Scalar Gaussian N(x | μ, γ⁻¹) with precision γ — Winn (A.2–A.5), (2.20–2.24).
//!
//! u = [x, x²], φ = [γμ, −γ/2], f = 0, A(φ) = −φ₁²/(4φ₂) − ½ ln(−2φ₂) + ½ ln 2π.
//! Conjugate parents: mean (Gaussian), precision (Gamma) — Winn Table 2.1.

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::special::LN_2PI;
use crate::Rng;
use rand::Rng as _;
use rand_distr::StandardNormal;

/// Scalar Gaussian with mean and precision parents.
#[derive(Clone, Debug, Default)]
pub struct Gaussian;

/// Slot index of the mean.
pub const MEAN: usize = 0;
/// Slot index of the precision.
pub const PRECISION: usize = 1;

/// ⟨φ⟩ and ⟨A⟩ of N(x|μ, γ⁻¹) from the moments of μ ([μ, μ²]) and γ ([γ, ln γ]).
pub(crate) fn prior_scalar(mu: &[f64], gamma: &[f64], phi: &mut [f64]) -> f64 {
    phi[0] = gamma[0] * mu[0];
    phi[1] = -0.5 * gamma[0];
    0.5 * (gamma[0] * mu[1] - gamma[1] + LN_2PI)
}

/// A(φ) and u of the scalar Gaussian.
pub(crate) fn moments_scalar(phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
    if !(phi[1] < 0.0) || !phi[0].is_finite() {
        return Err(OutOfDomain("Gaussian precision must be positive"));
    }
    let prec = -2.0 * phi[1];
    let mean = phi[0] / prec;
    u[0] = mean;
    u[1] = mean * mean + 1.0 / prec;
    Ok(0.5 * (prec * mean * mean - prec.ln() + LN_2PI))
}

/// φ of a Gaussian (any dimension d, φ = [Λμ, −½ col(Λ)]) with the precision of `phi` and mean
/// `x`: φ₁ = Λx with Λ = −2 mat(φ₂). Used for random starts ([`ExpFamily::centred_at`]).
pub(crate) fn centred_gaussian(phi: &[f64], d: usize, x: &[f64], out: &mut [f64]) -> bool {
    out.copy_from_slice(phi);
    for (i, o) in out[..d].iter_mut().enumerate() {
        *o = -2.0 * (0..d).map(|j| phi[d + i * d + j] * x[j]).sum::<f64>();
    }
    out[..d].iter().all(|v| v.is_finite())
}

/// A(φ) − φ·u of the scalar Gaussian without cancellation: with γ = −2φ₂, A holds ½γμ² and
/// φ·u = ½γμ² − ½, so the difference is ½(1 − ln γ + ln 2π), the entropy.
pub(crate) fn own_scalar(phi: &[f64]) -> f64 {
    0.5 * (1.0 - (-2.0 * phi[1]).ln() + LN_2PI)
}

/// Messages to the mean and precision of a scalar Gaussian — Winn (2.21), (2.22).
pub(crate) fn message_scalar(
    slot: usize,
    u: &[f64],
    w: f64,
    mu: &[f64],
    gamma: &[f64],
    m: &mut [f64],
) {
    match slot {
        MEAN => {
            m[0] = gamma[0] * u[0];
            m[1] = -0.5 * gamma[0] * w;
        }
        _ => {
            m[0] = -0.5 * (u[1] - 2.0 * u[0] * mu[0] + w * mu[1]);
            m[1] = 0.5 * w;
        }
    }
}

/// The precision slot of the scalar Gaussians: a Gamma, a product of Gammas or a constant.
pub(crate) const PRECISION_SLOT: SlotSpec = SlotSpec {
    name: "precision",
    aliases: &["tau", "prec", "gamma"],
    kinds: &[ValueKind::Positive],
    constant: ConstDomain::Positive,
    shape: SlotShape::Scalar,
    expects: "Gamma-distributed (or a product of Gammas, or a constant)",
};

impl ExpFamily for Gaussian {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Gaussian",
        aliases: &["Normal"],
        value: ValueKind::Real,
        event: EventShape::Scalar,
        slots: &[
            SlotSpec {
                name: "mean",
                aliases: &["mu", "location"],
                kinds: &[ValueKind::Real],
                constant: ConstDomain::Real,
                shape: SlotShape::Scalar,
                expects: "Gaussian-distributed (or a sum, product or dot product of Gaussians, or a constant)",
            },
            PRECISION_SLOT,
        ],
        params: &["precision"],
        summary: "scalar Gaussian with mean and precision (inverse variance)",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(Gaussian.into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        vec![("precision", Param::Scalar(-2.0 * phi[1]))]
    }
    fn free_params(&self) -> usize {
        2
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: 1 }
    }
    fn slot_input(&self, slot: usize) -> SlotInput {
        SlotInput::single(if slot == MEAN {
            MomentKind::Gaussian { d: 1 }
        } else {
            MomentKind::Gamma
        })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        prior_scalar(pa[MEAN], pa[PRECISION], phi)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        moments_scalar(phi, u)
    }
    fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        centred_gaussian(phi, 1, x, out)
    }
    fn own_term(&self, phi: &[f64], _u: &[f64], _a: f64) -> f64 {
        own_scalar(phi)
    }
    fn finite_values_are_valid(&self) -> bool {
        true
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !x[0].is_finite() {
            return Err(ValueError::NotFiniteReal { value: x[0] });
        }
        u[0] = x[0];
        u[1] = x[0] * x[0];
        Ok(0.0)
    }
    fn message_to(&self, slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        message_scalar(slot, u, w, pa[MEAN], pa[PRECISION], m)
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let prec = -2.0 * phi[1];
        let z: f64 = rng.sample(StandardNormal);
        x[0] = phi[0] / prec + z / prec.sqrt();
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = phi[0] / (-2.0 * phi[1]);
    }
    fn test_instances() -> Vec<Self> {
        vec![Gaussian]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        let prec = 0.2 + 3.0 * rng.random::<f64>();
        let mean = 4.0 * rng.random::<f64>() - 2.0;
        vec![prec * mean, -0.5 * prec]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_matches_winn_a5() {
        let phi = [3.0 * 1.5, -1.5];
        let h = Gaussian.entropy(&phi).unwrap();
        let expected = 0.5 * (1.0 + LN_2PI - 3.0f64.ln());
        assert!((h - expected).abs() < 1e-14);
    }
}
