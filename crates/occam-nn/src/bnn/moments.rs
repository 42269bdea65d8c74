//! Moments of a hidden unit's output under a Gaussian pre-activation a ~ N(μ, σ²), with their
//! derivatives in (μ, σ²).
//!
//! * ⟨g(a)⟩ = g(μ/√(1+σ²)) — the thesis's (C.31)/(C.32), the committee paper's (B.15)/(B.16); exact
//!   for g(x) = erf(x/√2).
//! * ⟨g(a)²⟩ has no elementary form. [`G2Form::Approx`] is the papers' (C.34)/(B.18): g(x)² ≈
//!   1 − e^{−c x²/2}, c = 1.24, so the "bound" built on it is only approximately a bound.
//!   [`G2Form::Exact`] writes g = 2Φ − 1 and gets ⟨g²⟩ = 4Φ₂(h, h; ρ) − 4Φ(h) + 1 =
//!   1 − 8 T(h, 1/√(1+2σ²)) with h = μ/√(1+σ²), ρ = σ²/(1+σ²) (Owen's T), which keeps the
//!   objective a true lower bound.
//! * The derivatives of ⟨g⟩ are taken with respect to the variance σ² (the printed (C.39)/(C.5) is
//!   the derivative with respect to the standard deviation).

use crate::normal::{g, g_prime};
use occam_core::special::{norm_cdf, owens_t};
use serde::{Deserialize, Serialize};

/// The constant of the papers' approximation g(x)² ≈ 1 − e^{−c x²/2}.
pub const C_APPROX: f64 = 1.24;

/// How ⟨g(a)²⟩ is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum G2Form {
    /// The papers' closed-form approximation with c = 1.24 ((C.34), (B.18)); the objective is then an
    /// approximation to a bound (|error of g²| ≤ 0.0052).
    #[default]
    Approx,
    /// The exact value through the bivariate normal CDF; the objective is a true lower bound.
    Exact,
}

/// ⟨g⟩, ⟨g²⟩ and their partial derivatives in μ and σ².
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UnitMoments {
    /// ⟨g(a)⟩.
    pub g1: f64,
    /// ∂⟨g⟩/∂μ.
    pub g1_mu: f64,
    /// ∂⟨g⟩/∂σ².
    pub g1_var: f64,
    /// ⟨g(a)²⟩.
    pub g2: f64,
    /// ∂⟨g²⟩/∂μ.
    pub g2_mu: f64,
    /// ∂⟨g²⟩/∂σ².
    pub g2_var: f64,
}

/// Moments of g(a) for a ~ N(mu, var), var ≥ 0.
pub fn unit_moments(mu: f64, var: f64, form: G2Form) -> UnitMoments {
    let s = 1.0 + var;
    let rs = s.sqrt();
    let h = mu / rs;
    let gp = g_prime(h);
    let g1 = g(h);
    let g1_mu = gp / rs;
    let g1_var = -0.5 * gp * mu / (s * rs);
    let (g2, g2_mu, g2_var) = match form {
        G2Form::Approx => {
            let c = C_APPROX;
            let d = 1.0 + c * var;
            let e = (-0.5 * c * mu * mu / d).exp();
            let de = e / d.sqrt();
            (
                1.0 - de,
                de * c * mu / d,
                0.5 * c * de / d * (1.0 - c * mu * mu / d),
            )
        }
        G2Form::Exact => {
            // ⟨g²⟩ = 4Φ₂(h,h;ρ) − 4Φ(h) + 1 with dΦ₂(h,h;ρ)/dh = 2φ(h)Φ(h√((1−ρ)/(1+ρ))) and
            // ∂Φ₂/∂ρ = φ₂(h,h;ρ) = exp(−h²/(1+ρ)) / (2π√(1−ρ²)); (1−ρ)/(1+ρ) = 1/(1+2σ²).
            let q = 1.0 + 2.0 * var;
            let a = 1.0 / q.sqrt();
            let g2 = 1.0 - 8.0 * owens_t(h, a);
            let pdf = 0.5 * gp; // φ(h)
            let dh = pdf * (8.0 * norm_cdf(h * a) - 4.0);
            // h²/(1+ρ) = μ²/(1+2σ²) and 1/√(1−ρ²) = (1+σ²)/√(1+2σ²).
            let phi2 = (-mu * mu / q).exp() / (2.0 * std::f64::consts::PI) * s * a;
            let drho = 4.0 * phi2;
            (g2, dh / rs, dh * (-0.5 * mu / (s * rs)) + drho / (s * s))
        }
    };
    UnitMoments {
        g1,
        g1_mu,
        g1_var,
        g2,
        g2_mu,
        g2_var,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use occam_core::quad::expect_standard_normal;

    const CASES: [(f64, f64); 8] = [
        (0.0, 1.0),
        (0.7, 0.3),
        (-1.5, 2.0),
        (2.5, 0.05),
        (0.1, 6.0),
        (-3.0, 0.5),
        (1.0, 1e-8),
        (4.0, 9.0),
    ];

    #[test]
    fn mean_identity_b15_matches_quadrature() {
        for (mu, var) in CASES {
            let q = expect_standard_normal(|s| g(var.sqrt() * s + mu));
            let m = unit_moments(mu, var, G2Form::Approx);
            assert!((m.g1 - q).abs() < 1e-13, "⟨g⟩({mu},{var}) {} vs {q}", m.g1);
        }
    }

    #[test]
    fn exact_second_moment_matches_quadrature_to_1e10() {
        for (mu, var) in CASES {
            let q = expect_standard_normal(|s| g(var.sqrt() * s + mu).powi(2));
            let m = unit_moments(mu, var, G2Form::Exact);
            assert!((m.g2 - q).abs() < 1e-10, "⟨g²⟩({mu},{var}) {} vs {q}", m.g2);
        }
        // a = 1, b = 0: exactly 1/3 (P(two of three iid normals order) identity).
        let m = unit_moments(0.0, 1.0, G2Form::Exact);
        assert!((m.g2 - 1.0 / 3.0).abs() < 1e-14);
    }

    #[test]
    fn approximation_c124_is_within_0006() {
        // Pointwise: |g(x)² − (1 − e^{−c x²/2})| ≤ 0.0052 on a fine grid.
        let worst = (0..=12000)
            .map(|i| -12.0 + i as f64 * 0.002)
            .map(|x| (g(x).powi(2) - (1.0 - (-0.5 * C_APPROX * x * x).exp())).abs())
            .fold(0.0, f64::max);
        assert!(
            worst <= 0.006 && worst > 0.004,
            "max pointwise error {worst}"
        );
        // And on the Gaussian expectation (B.18): within 0.006 of the exact value.
        for (mu, var) in CASES {
            let a = unit_moments(mu, var, G2Form::Approx).g2;
            let e = unit_moments(mu, var, G2Form::Exact).g2;
            assert!((a - e).abs() <= 0.006, "({mu},{var}): {a} vs {e}");
        }
        let a = unit_moments(0.0, 1.0, G2Form::Approx).g2;
        assert!((a - 0.3319).abs() < 1e-4);
    }

    #[test]
    fn derivatives_match_finite_differences() {
        for form in [G2Form::Approx, G2Form::Exact] {
            for (mu, var) in CASES {
                let m = unit_moments(mu, var, form);
                let e = 1e-6;
                let p = unit_moments(mu + e, var, form);
                let n = unit_moments(mu - e, var, form);
                let ev = e * var.max(1e-3);
                let pv = unit_moments(mu, var + ev, form);
                let nv = unit_moments(mu, var - ev, form);
                let checks = [
                    (m.g1_mu, (p.g1 - n.g1) / (2.0 * e)),
                    (m.g2_mu, (p.g2 - n.g2) / (2.0 * e)),
                    (m.g1_var, (pv.g1 - nv.g1) / (2.0 * ev)),
                    (m.g2_var, (pv.g2 - nv.g2) / (2.0 * ev)),
                ];
                for (i, (an, fd)) in checks.into_iter().enumerate() {
                    assert!(
                        (an - fd).abs() < 1e-6 * (1.0 + fd.abs()),
                        "{form:?} ({mu},{var}) derivative {i}: {an} vs {fd}"
                    );
                }
            }
        }
    }
}
