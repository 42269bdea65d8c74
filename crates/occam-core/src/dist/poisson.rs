//! Poisson(x | λ) with a Gamma parent for the rate λ (Winn Table 2.1).
//!
//! u = [x], φ = ⟨ln λ⟩, f(x) = −ln x!, A(φ) = e^φ (prior: ⟨A⟩ = ⟨λ⟩), ⟨x⟩ = e^φ.
//! Message to λ (u = [λ, ln λ]): [−1, ⟨x⟩].

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::special::ln_gamma;
use crate::Rng;
use rand::Rng as _;

/// Poisson distribution.
#[derive(Clone, Debug, Default)]
pub struct Poisson;

impl ExpFamily for Poisson {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Poisson",
        aliases: &[],
        value: ValueKind::Count,
        event: EventShape::Scalar,
        slots: &[SlotSpec {
            name: "rate",
            aliases: &["lambda", "mean"],
            kinds: &[ValueKind::Positive],
            constant: ConstDomain::Positive,
            shape: SlotShape::Scalar,
            expects: "Gamma-distributed (or a positive constant)",
        }],
        params: &[],
        summary: "Poisson counts",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(Poisson.into())
    }
    fn free_params(&self) -> usize {
        1
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Scalar
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gamma)
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi[0] = pa[0][1];
        pa[0][0]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        if !phi[0].is_finite() || phi[0] > 700.0 {
            return Err(OutOfDomain("Poisson log-rate must be finite"));
        }
        u[0] = phi[0].exp();
        Ok(u[0])
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !(x[0] >= 0.0) || x[0].fract() != 0.0 || !x[0].is_finite() {
            return Err(ValueError::NotCount { value: x[0] });
        }
        u[0] = x[0];
        Ok(-ln_gamma(x[0] + 1.0))
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m[0] = -w;
        m[1] = u[0];
    }
    fn expected_base_measure(&self, phi: &[f64], _u: &[f64]) -> f64 {
        // −Σ P(x) ln x!, summed until the tail past the mean is negligible.
        let lambda = phi[0].exp();
        let mut s = 0.0;
        let mut x = 0.0f64;
        loop {
            let lf = ln_gamma(x + 1.0);
            let p = (x * phi[0] - lambda - lf).exp();
            s -= p * lf;
            if x > lambda && p * lf < 1e-18 {
                return s;
            }
            x += 1.0;
        }
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let p = rand_distr::Poisson::new(phi[0].exp()).expect("positive rate");
        x[0] = rng.sample(p);
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = phi[0].exp().floor();
    }
    fn test_instances() -> Vec<Self> {
        vec![Poisson]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![3.0 * rng.random::<f64>() - 1.0]
    }
}
