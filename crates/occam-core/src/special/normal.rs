//! The standard normal: density φ, CDF Φ (accurate in both tails), Owen's T function and the
//! bivariate CDF Φ₂. `statrs` has no Owen's T or Φ₂, hence written here; moved from `occam-nn`
//! (the network moments of Lawrence's thesis ch. 5–6) so every crate uses one copy.

use crate::quad::GaussLegendre;
use std::f64::consts::{FRAC_1_SQRT_2, PI};
use std::sync::OnceLock;

/// 1/√(2π).
pub const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// Standard normal density φ(x).
pub fn norm_pdf(x: f64) -> f64 {
    INV_SQRT_2PI * (-0.5 * x * x).exp()
}

/// Standard normal CDF Φ(x) = ½ erfc(−x/√2) (accurate in both tails).
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x * FRAC_1_SQRT_2)
}

fn rule() -> &'static GaussLegendre {
    static RULE: OnceLock<GaussLegendre> = OnceLock::new();
    RULE.get_or_init(|| GaussLegendre::new(16))
}

/// Owen's T function T(h, a) = (1/2π) ∫₀ᵃ e^{−h²(1+x²)/2} / (1+x²) dx.
///
/// For |a| ≤ 1 the integrand is analytic and smooth on the interval; a 16-point Gauss–Legendre rule
/// is within 3e-16 (absolute) of a 60-point one over h ∈ [0, 12], a ∈ (0, 1] (12 points already
/// give 4e-16; beyond |h| = 12, T < 1e-31). For |a| > 1 Owen's identity T(h,a) + T(ah,1/a) = ½Φ(h) + ½Φ(ah) − Φ(h)Φ(ah)
/// (h ≥ 0) maps it back.
pub fn owens_t(h: f64, a: f64) -> f64 {
    // A NaN argument (a fit's trial step that overflowed a variance) must come back as NaN, which
    // the optimiser treats as "step too long": it would otherwise fall through to the |a| > 1
    // identity below and recurse without end.
    if a.is_nan() || h.is_nan() {
        return f64::NAN;
    }
    if a < 0.0 {
        return -owens_t(h, -a);
    }
    let h = h.abs();
    if a <= 1.0 {
        let hh = 0.5 * h * h;
        return rule().integrate(0.0, a, |x| {
            let s = 1.0 + x * x;
            (-hh * s).exp() / s
        }) / (2.0 * PI);
    }
    if a.is_infinite() {
        return 0.5 * norm_cdf(-h);
    }
    let ah = a * h;
    let (ph, pah) = (norm_cdf(h), norm_cdf(ah));
    0.5 * ph + 0.5 * pah - ph * pah - owens_t(ah, 1.0 / a)
}

/// Φ₂(h, h; ρ) = P(X ≤ h, Y ≤ h) for standard normals with correlation ρ ∈ (−1, 1):
/// Φ(h) − 2 T(h, √((1−ρ)/(1+ρ))).
pub fn bvn_cdf_diag(h: f64, rho: f64) -> f64 {
    norm_cdf(h) - 2.0 * owens_t(h, ((1.0 - rho) / (1.0 + rho)).sqrt())
}

/// The bivariate standard normal CDF Φ₂(h, k; ρ), ρ ∈ (−1, 1), by Owen's (1956) formula
/// Φ₂ = ½Φ(h) + ½Φ(k) − T(h, a_h) − T(k, a_k) − β with a_h = (k − ρh)/(h√(1−ρ²)),
/// a_k = (h − ρk)/(k√(1−ρ²)), and β = ½ when hk < 0 or (hk = 0 and h + k < 0), else 0.
pub fn bvn_cdf(h: f64, k: f64, rho: f64) -> f64 {
    let r = (1.0 - rho * rho).sqrt();
    if h == 0.0 && k == 0.0 {
        return 0.25 + rho.asin() / (2.0 * PI);
    }
    // T(0, a) = atan(a)/(2π), whose limit as a → ±∞ is ±¼.
    let t = |x: f64, y: f64| {
        if x == 0.0 {
            0.25 * (y - rho * x).signum()
        } else {
            owens_t(x, (y - rho * x) / (x * r))
        }
    };
    let beta = if h * k < 0.0 || (h * k == 0.0 && h + k < 0.0) {
        0.5
    } else {
        0.0
    };
    0.5 * norm_cdf(h) + 0.5 * norm_cdf(k) - t(h, k) - t(k, h) - beta
}

// References are printed to 17 significant digits, as the 50-digit tools give them.
#[allow(clippy::excessive_precision)]
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owens_t_and_phi2_return_nan_for_nan_arguments() {
        // Found by a long sunspot fit: a NaN `a` recursed through the |a| > 1 identity until the
        // stack overflowed.
        assert!(owens_t(0.5, f64::NAN).is_nan());
        assert!(owens_t(f64::NAN, 0.5).is_nan());
        assert!(owens_t(f64::NAN, 3.0).is_nan());
        assert!(bvn_cdf_diag(0.3, f64::NAN).is_nan());
    }

    #[test]
    fn owens_t_matches_direct_quadrature_and_special_values() {
        let fine = GaussLegendre::new(30);
        for &h in &[0.0, 0.3, 1.0, 2.5, 5.0] {
            for &a in &[0.1, 0.5, 1.0, 1.7, 4.0, 20.0] {
                let direct = fine.composite(0.0, a, 200, |x| {
                    (-0.5 * h * h * (1.0 + x * x)).exp() / (1.0 + x * x)
                }) / (2.0 * PI);
                assert!((owens_t(h, a) - direct).abs() < 1e-14, "T({h},{a})");
            }
        }
        // T(h, 1) = ½Φ(h)(1 − Φ(h)); T(0, a) = atan(a)/2π.
        for h in [0.2, 1.5, 3.0] {
            let p = norm_cdf(h);
            assert!((owens_t(h, 1.0) - 0.5 * p * (1.0 - p)).abs() < 1e-15);
        }
        assert!((owens_t(0.0, 3.0) - 3f64.atan() / (2.0 * PI)).abs() < 1e-15);
    }

    #[test]
    fn bivariate_cdf_matches_quadrature() {
        // Φ₂(h,k;ρ) = E_x[ 1{x ≤ h} Φ((k − ρx)/√(1−ρ²)) ], integrated over x ≤ h.
        let fine = GaussLegendre::new(30);
        for &(h, k, rho) in &[
            (0.5, 0.5, 0.3),
            (-1.0, 0.7, -0.6),
            (1.2, -0.4, 0.9),
            (0.0, 0.0, 0.5),
            (0.0, 1.0, 0.2),
            (-2.0, -1.5, 0.75),
        ] {
            let r = (1.0f64 - rho * rho).sqrt();
            let q = fine.composite(-12.0, h, 400, |x| norm_pdf(x) * norm_cdf((k - rho * x) / r));
            let got = bvn_cdf(h, k, rho);
            assert!((got - q).abs() < 1e-13, "Φ₂({h},{k};{rho}) = {got} vs {q}");
            if h == k {
                assert!((bvn_cdf_diag(h, rho) - q).abs() < 1e-13);
            }
        }
        // Independence: Φ₂(h,k;0) = Φ(h)Φ(k).
        assert!((bvn_cdf(0.3, -0.8, 0.0) - norm_cdf(0.3) * norm_cdf(-0.8)).abs() < 1e-15);
    }

    #[test]
    fn phi_and_owens_t_match_50_digit_references() {
        // mpmath 1.3, mp.dps = 50: ncdf(x), and T(h, a) by its quad of the defining integral.
        for (x, want) in [
            (-38.0, 2.885_428_360_068_784_3e-316),
            (-10.0, 7.619_853_024_160_526e-24),
            (-1.0, 0.158_655_253_931_457_05),
            (0.0, 0.5),
            (1.5, 0.933_192_798_731_141_93),
            (8.0, 0.999_999_999_999_999_38),
        ] {
            // libm's erfc carries up to ~20 ulp in the far tail (3.7e−15 relative at x = −10).
            let got = norm_cdf(x);
            assert!(
                (got - want).abs() <= 32.0 * f64::EPSILON * want + 1e-320,
                "Φ({x}) = {got}"
            );
        }
        for (h, a, want) in [
            (0.5, 0.3, 0.040_786_707_344_250_107),
            (2.0, 0.9, 0.010_928_598_829_162_457),
            (1.0, 3.0, 0.079_299_504_748_872_587),
            (0.1, 50.0, 0.230_086_080_937_209_61),
            (6.0, 0.5, 4.922_418_609_131_739_3e-10),
        ] {
            let got = owens_t(h, a);
            assert!((got - want).abs() < 1e-15, "T({h}, {a}) = {got}");
        }
    }
}
