//! Rectified (truncated at 0) Gaussian N^R(x | μ₀, γ⁻¹) — Winn (A.6–A.10), (2.40), with the second
//! moment corrected (see docs/seed-corrections.md, Winn (A.10)).
//!
//! Same u = [x, x²] and φ = [γμ₀, −γ/2] as the Gaussian; f(x) = 0 for x ≥ 0, −∞ otherwise. With
//! z = −μ√(γ/2): A(φ) = ½ ln(2π/γ) − ln 2 + ln erfcx(z), and
//! ⟨x⟩ = μ + √(2/(πγ))/erfcx(z), ⟨x²⟩ = μ² + 1/γ + √(2/(πγ)) μ/erfcx(z).
//!
//! The mean μ₀ is a constant: ⟨A⟩ is not multilinear in a random mean's moments, so no mean parent is
//! conjugate. A Gamma precision parent is conjugate only when μ₀ = 0 (then ⟨A⟩ is linear in ⟨ln γ⟩);
//! the graph builder enforces this.

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::special::{erfcx, LN_2PI};
use crate::Rng;
use rand::Rng as _;
use rand_distr::{Exp, StandardNormal};

/// Rectified Gaussian with a constant location μ₀ and a precision parent.
#[derive(Clone, Debug, Default)]
pub struct RectifiedGaussian {
    /// Location of the untruncated Gaussian (a constant).
    pub location: f64,
}

fn mean_and_precision(phi: &[f64]) -> Result<(f64, f64), OutOfDomain> {
    if !(phi[1] < 0.0) || !phi[0].is_finite() {
        return Err(OutOfDomain("rectified Gaussian precision must be positive"));
    }
    let prec = -2.0 * phi[1];
    Ok((phi[0] / prec, prec))
}

/// A of the truncated Gaussian with location `mu` and precision `prec`.
fn log_partition(mu: f64, prec: f64) -> f64 {
    0.5 * (LN_2PI - prec.ln()) - std::f64::consts::LN_2 + erfcx(-mu * (prec / 2.0).sqrt()).ln()
}

impl ExpFamily for RectifiedGaussian {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "RectifiedGaussian",
        aliases: &[],
        value: ValueKind::Real,
        event: EventShape::Scalar,
        slots: &[
            // A random mean is not conjugate (⟨A⟩ is not multilinear in its moments): the
            // language accepts only a constant here.
            SlotSpec {
                name: "mean",
                aliases: &["mu", "location"],
                kinds: &[],
                constant: ConstDomain::Real,
                shape: SlotShape::Scalar,
                expects: "a constant (a random mean is not conjugate for a rectified Gaussian)",
            },
            super::gaussian::PRECISION_SLOT,
        ],
        params: &["location", "precision"],
        summary: "Gaussian truncated to x ≥ 0",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(RectifiedGaussian {
            location: args.number(0)?,
        }
        .into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        let prec = -2.0 * phi[1];
        vec![
            ("location", Param::Scalar(phi[0] / prec)),
            ("precision", Param::Scalar(prec)),
        ]
    }
    fn free_params(&self) -> usize {
        2
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: 1 }
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gamma)
    }
    fn needs_constant_parent(&self, _slot: usize) -> bool {
        self.location != 0.0
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let gamma = pa[0];
        phi[0] = gamma[0] * self.location;
        phi[1] = -0.5 * gamma[0];
        // Exact when the precision is constant or the location is 0 (the builder enforces one).
        0.5 * (LN_2PI - gamma[1]) - std::f64::consts::LN_2
            + erfcx(-self.location * (gamma[0] / 2.0).sqrt()).ln()
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        let (mu, prec) = mean_and_precision(phi)?;
        let r = erfcx(-mu * (prec / 2.0).sqrt());
        let c = (2.0 / (std::f64::consts::PI * prec)).sqrt() / r;
        u[0] = mu + c;
        // Winn (A.10), corrected: √(2/(πγ)), not the printed √(1/(πγ)) (quadrature agrees).
        u[1] = mu * mu + 1.0 / prec + c * mu;
        Ok(log_partition(mu, prec))
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !(x[0] >= 0.0) || !x[0].is_finite() {
            return Err(ValueError::OutsideSupport {
                value: x[0],
                support: "x ≥ 0",
            });
        }
        u[0] = x[0];
        u[1] = x[0] * x[0];
        Ok(0.0)
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        let mu = self.location;
        m[0] = -0.5 * (u[1] - 2.0 * mu * u[0] + w * mu * mu);
        m[1] = 0.5 * w;
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let (mu, prec) = mean_and_precision(phi).expect("sampling needs a valid φ");
        let sd = 1.0 / prec.sqrt();
        // Standardised lower limit a: x = μ + sd·z with z ≥ a.
        let a = -mu / sd;
        let z = if a <= 0.5 {
            loop {
                let z: f64 = rng.sample(StandardNormal);
                if z >= a {
                    break z;
                }
            }
        } else {
            // Robert (1995): exponential proposal with the optimal rate.
            let alpha = 0.5 * (a + (a * a + 4.0).sqrt());
            let exp = Exp::new(alpha).expect("positive rate");
            loop {
                let z = a + rng.sample(exp);
                if rng.random::<f64>() <= (-(z - alpha) * (z - alpha) / 2.0).exp() {
                    break z;
                }
            }
        };
        x[0] = (mu + sd * z).max(0.0);
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = (phi[0] / (-2.0 * phi[1])).max(0.0);
    }
    fn test_instances() -> Vec<Self> {
        vec![
            RectifiedGaussian { location: 0.0 },
            RectifiedGaussian { location: 0.7 },
        ]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        let prec = 0.2 + 3.0 * rng.random::<f64>();
        let mean = 6.0 * rng.random::<f64>() - 4.0;
        vec![prec * mean, -0.5 * prec]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Moments and normaliser against numerical integration (composite Simpson on [0, 60σ]).
    #[test]
    fn moments_match_quadrature() {
        for &(mu, prec) in &[
            (0.5, 2.0),
            (0.0, 1.0),
            (-3.0, 4.0),
            (-8.0, 1.0),
            (4.0, 0.25),
        ] {
            let phi = [prec * mu, -0.5 * prec];
            let mut u = [0.0; 2];
            let a = RectifiedGaussian::default().moments(&phi, &mut u).unwrap();
            let hi = mu.max(0.0) + 60.0 / prec.sqrt();
            let n = 200_000;
            let h = hi / n as f64;
            let (mut z, mut m1, mut m2) = (0.0, 0.0, 0.0);
            for i in 0..=n {
                let x = i as f64 * h;
                let wgt = if i == 0 || i == n {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                let p = (phi[0] * x + phi[1] * x * x).exp() * wgt;
                z += p;
                m1 += p * x;
                m2 += p * x * x;
            }
            z *= h / 3.0;
            m1 *= h / 3.0;
            m2 *= h / 3.0;
            assert!((a - z.ln()).abs() < 1e-8, "A at ({mu},{prec})");
            assert!(
                (u[0] - m1 / z).abs() < 1e-8 * (1.0 + u[0].abs()),
                "<x> at ({mu},{prec})"
            );
            assert!(
                (u[1] - m2 / z).abs() < 1e-8 * (1.0 + u[1].abs()),
                "<x²> at ({mu},{prec})"
            );
        }
        // μ = 0.5, γ = 2 → ⟨x²⟩ = 0.89449 by quadrature (the printed (A.10) gives 0.85217).
        let mut u = [0.0; 2];
        RectifiedGaussian::default()
            .moments(&[1.0, -1.0], &mut u)
            .unwrap();
        assert!((u[1] - 0.89449).abs() < 5e-6);
    }

    #[test]
    fn samples_are_non_negative_with_the_right_mean() {
        use rand::SeedableRng;
        let mut rng = Rng::seed_from_u64(7);
        for &(mu, prec) in &[(1.0, 1.0), (-3.0, 1.0)] {
            let phi = [prec * mu, -0.5 * prec];
            let mut u = [0.0; 2];
            RectifiedGaussian::default().moments(&phi, &mut u).unwrap();
            let n = 40_000;
            let mut s = 0.0;
            for _ in 0..n {
                let mut x = [0.0];
                RectifiedGaussian::default().sample(&phi, &mut rng, &mut x);
                assert!(x[0] >= 0.0);
                s += x[0];
            }
            let sd = (u[1] - u[0] * u[0]).sqrt();
            assert!((s / n as f64 - u[0]).abs() < 5.0 * sd / (n as f64).sqrt());
        }
    }
}
