//! Special functions used by the bound terms.
//!
//! ln Γ and ψ come from `statrs` (well tested); trigamma and the scaled complementary error function
//! erfcx, which `statrs` lacks, are written here with their sources cited.

pub use statrs::function::gamma::{digamma, ln_gamma};

/// ln 2π.
pub const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Multivariate log-gamma ln Γ_d(a) = d(d−1)/4 ln π + Σ_{i=1}^{d} ln Γ(a + (1−i)/2).
pub fn ln_multigamma(a: f64, d: usize) -> f64 {
    let mut s = (d * (d.saturating_sub(1))) as f64 / 4.0 * std::f64::consts::PI.ln();
    for i in 1..=d {
        s += ln_gamma(a + (1.0 - i as f64) / 2.0);
    }
    s
}

/// Σ_{i=1}^{d} ψ(a + (1−i)/2), the derivative of ln Γ_d.
pub fn multi_digamma(a: f64, d: usize) -> f64 {
    (1..=d).map(|i| digamma(a + (1.0 - i as f64) / 2.0)).sum()
}

/// Scaled complementary error function erfcx(z) = e^{z²} erfc(z), accurate for all real z.
///
/// For z < 5 it uses libm's erfc (a port of FreeBSD's, accurate to about 1 ulp; statrs' erfc is
/// off by ~1e-10 relative near z = 3, too coarse for bound terms); above, the continued fraction
/// of erfc (Abramowitz & Stegun 7.1.14), which converges fast there.
pub fn erfcx(z: f64) -> f64 {
    if z < 5.0 {
        (z * z).exp() * libm::erfc(z)
    } else {
        // erfc(z) e^{z²} = (1/√π) · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + 2/(z + …)))))
        let mut f = z;
        for k in (1..60).rev() {
            f = z + (k as f64 / 2.0) / f;
        }
        1.0 / (f * std::f64::consts::PI.sqrt())
    }
}

/// e^x for x ≤ 0, branch-free so loops over it vectorise (softmax of responsibilities is the
/// hottest loop of a mixture). Cody–Waite reduction x = n ln 2 + r, |r| ≤ ln 2 / 2, and the degree-13
/// Taylor polynomial of e^r (truncation error < 2e-17 relative); inputs below −700 give 0 (where
/// `f64::exp` gives at most 1e−304). Within 2 ulp of `f64::exp` elsewhere.
#[inline]
pub fn exp_nonpositive(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let underflow = if x < -700.0 { 0.0 } else { 1.0 };
    let x = x.max(-700.0);
    // Round to nearest by the 1.5·2⁵² shift (no libm call without SSE4.1); the low bits of `t` then
    // hold n in two's complement, so 2ⁿ is built with integer ops only (no float → int conversion).
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    let t = x * std::f64::consts::LOG2_E + SHIFT;
    let n = t - SHIFT;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    // Horner on 1/13!, 1/12!, …, 1/0!, unrolled so the compiler keeps it in registers.
    let mut p = 1.0 / 6_227_020_800.0;
    p = p * r + 1.0 / 479_001_600.0;
    p = p * r + 1.0 / 39_916_800.0;
    p = p * r + 1.0 / 3_628_800.0;
    p = p * r + 1.0 / 362_880.0;
    p = p * r + 1.0 / 40_320.0;
    p = p * r + 1.0 / 5_040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    underflow * p * f64::from_bits(t.to_bits().wrapping_add(1023) << 52)
}

/// ln Σ exp(x_i), stable.
pub fn log_sum_exp(x: &[f64]) -> f64 {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + x.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}

/// ln(1 + eˣ), stable.
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// Logistic sigmoid.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// ln C(n, k).
pub fn ln_binomial(n: f64, k: f64) -> f64 {
    ln_gamma(n + 1.0) - ln_gamma(k + 1.0) - ln_gamma(n - k + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfcx_is_continuous_and_matches_erfc() {
        for &z in &[-2.0f64, -0.3, 0.0, 1.0, 2.9] {
            let e = (z * z).exp() * statrs::function::erf::erfc(z);
            assert!((erfcx(z) - e).abs() < 1e-9 * e.max(1.0));
        }
        // Reference values from mpmath at 30 digits.
        for &(z, v) in &[
            (2.9, 0.184_601_825_955_590_82),
            (3.0, 0.179_001_151_181_389_95),
            (5.0, 0.110_704_637_733_068_63),
            (-0.3, 1.453_749_232_842_765_6),
        ] {
            assert!(
                (erfcx(z) - v).abs() < 1e-14 * v,
                "erfcx({z}) = {} vs {v}",
                erfcx(z)
            );
        }
        let below = erfcx(5.0 - 1e-12);
        let above = erfcx(5.0);
        assert!((below - above).abs() < 1e-13);
        // Asymptotic series 1/(z√π) (1 − 1/(2z²) + 3/(4z⁴) − 15/(8z⁶) + 105/(16z⁸)), error ~1e-16 at z = 50.
        let z = 50.0f64;
        let asym = 1.0 / (z * std::f64::consts::PI.sqrt())
            * (1.0 - 0.5 / (z * z) + 0.75 / z.powi(4) - 15.0 / (8.0 * z.powi(6))
                + 105.0 / (16.0 * z.powi(8)));
        assert!((erfcx(z) - asym).abs() < 1e-12 * asym);
    }

    #[test]
    fn fast_exp_is_within_two_ulp() {
        assert_eq!(exp_nonpositive(-800.0), 0.0);
        assert_eq!(exp_nonpositive(f64::NEG_INFINITY), 0.0);
        let mut x = -700.0;
        while x <= 0.0 {
            let (f, e) = (exp_nonpositive(x), x.exp());
            assert!((f - e).abs() <= 4.5e-16 * e, "exp({x}): {f} vs {e}");
            x += 0.013_7;
        }
        assert_eq!(exp_nonpositive(0.0), 1.0);
    }

    #[test]
    fn multigamma_reduces_to_gamma() {
        assert!((ln_multigamma(3.7, 1) - ln_gamma(3.7)).abs() < 1e-14);
        let h = 1e-6;
        let fd = (ln_multigamma(4.0 + h, 3) - ln_multigamma(4.0 - h, 3)) / (2.0 * h);
        assert!((fd - multi_digamma(4.0, 3)).abs() < 1e-7);
    }
}
