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
    // Taylor coefficients 1/i! by Estrin's scheme: the same work as Horner but a dependency chain of
    // 4 multiply-adds instead of 13, so the exps of a row overlap in the pipeline.
    const C: [f64; 14] = [
        1.0,
        1.0,
        0.5,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5_040.0,
        1.0 / 40_320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let q0 = C[0] + C[1] * r;
    let q1 = C[2] + C[3] * r;
    let q2 = C[4] + C[5] * r;
    let q3 = C[6] + C[7] * r;
    let q4 = C[8] + C[9] * r;
    let q5 = C[10] + C[11] * r;
    let q6 = C[12] + C[13] * r;
    let s0 = q0 + q1 * r2;
    let s1 = q2 + q3 * r2;
    let s2 = q4 + q5 * r2;
    let t0 = s0 + s1 * r4;
    let t1 = s2 + q6 * r4;
    let p = t0 + t1 * r8;
    underflow * p * f64::from_bits(t.to_bits().wrapping_add(1023) << 52)
}

/// ln x for positive, finite, normal x (no subnormals, zeros, infinities or NaN: the caller's domain,
/// e.g. a softmax's sum in [1, K]), branch-free so loops over it vectorise like [`exp_nonpositive`].
/// x = 2ᵉ m with m in [√½, √2) read from the bits (the exponent turned into a float by the 2⁵² shift,
/// no float ↔ int conversion); with f = m − 1 (exact) and s = f/(2 + f), ln m = 2 atanh s =
/// f − (f²/2 − s(f²/2 + R)), R = Σ_{i≥1} 2s^{2i}/(2i + 1) — fdlibm's `__ieee754_log` arrangement, in
/// which the exact f carries the result and the rounded terms only a correction; the series to
/// s²⁰ (|s| ≤ 0.172) leaves a truncation error below 1e−18 relative. Plain mul/add (no fused
/// multiply-add), so every target gives the same bits; within 2 ulp of `f64::ln` (tested).
#[inline]
pub fn ln_positive(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const SHIFT: f64 = 4_503_599_627_370_496.0; // 2⁵²
    let bits = x.to_bits();
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    // The biased exponent as the low bits of 2⁵² + e: exact.
    let e = f64::from_bits(SHIFT.to_bits() | (bits >> 52)) - (SHIFT + 1023.0);
    let big = m > std::f64::consts::SQRT_2;
    let (m, e) = if big { (m * 0.5, e + 1.0) } else { (m, e) };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    // 2/(2i + 1), i = 1..10, by Horner's scheme in z.
    const C: [f64; 10] = [
        2.0 / 3.0,
        2.0 / 5.0,
        2.0 / 7.0,
        2.0 / 9.0,
        2.0 / 11.0,
        2.0 / 13.0,
        2.0 / 15.0,
        2.0 / 17.0,
        2.0 / 19.0,
        2.0 / 21.0,
    ];
    let mut p = C[9];
    for c in C[..9].iter().rev() {
        p = p * z + c;
    }
    let r = z * p;
    let hfsq = 0.5 * f * f;
    // e ln 2 in two parts: e · LN2_HI is exact (LN2_HI has 32 significant bits).
    e * LN2_HI - ((hfsq - (s * (hfsq + r) + e * LN2_LO)) - f)
}

/// Row-wise softmax of row-major φ (rows × k): u = e^{φ−m}/s and a = m + ln s per row, with m the
/// row maximum — the moments of `rows` Categoricals at once. The exps of the whole block run in one
/// loop (vectorised, and compiled for AVX-512 and AVX2 too, chosen at run time); no fused multiply-add
/// is used, so every target gives the same bits. Returns the first row that has a NaN, a +∞ or only
/// −∞ entries.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
pub fn softmax_rows(phi: &[f64], k: usize, u: &mut [f64], a: &mut [f64]) -> Result<(), usize> {
    exp_minus_row_max(phi, k, u, a)?;
    // Rows in groups of 64: the sums s (each in [1, k]: the row's largest term is e⁰) of a group
    // first, then their ln in one vectorised loop ([`ln_positive`] instead of a libm call per row).
    let mut sums = [0.0; 64];
    for (us, as_) in u.chunks_mut(64 * k).zip(a.chunks_mut(64)) {
        for ((out, s), _) in us.chunks_exact_mut(k).zip(sums.iter_mut()).zip(as_.iter()) {
            *s = out.iter().sum();
            let inv = 1.0 / *s;
            out.iter_mut().for_each(|v| *v *= inv);
        }
        for (ar, s) in as_.iter_mut().zip(&sums) {
            *ar += ln_positive(*s);
        }
    }
    Ok(())
}

/// Row-wise e^{φ − m} with m the row maximum, into `out`, and m into `maxes`: [`softmax_rows`]
/// without the normalisation (same vectorised exps, same bits on every target). Returns the first
/// row that has a NaN, a +∞ or only −∞ entries.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
pub fn exp_minus_row_max(
    phi: &[f64],
    k: usize,
    out: &mut [f64],
    maxes: &mut [f64],
) -> Result<(), usize> {
    // p · 0 is NaN exactly when p is NaN or ±∞: one vectorised pass over the block, and the rows
    // are checked one by one only when it finds one (a −∞ entry is allowed).
    let mut probe = [0.0; 8];
    let chunks = phi.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().map(|p| p * 0.0).sum();
    for c in chunks {
        for i in 0..8 {
            probe[i] += c[i] * 0.0;
        }
    }
    if (probe.iter().sum::<f64>() + tail).is_nan() {
        for (r, row) in phi.chunks_exact(k).enumerate() {
            let mut m = f64::NEG_INFINITY;
            let mut nan = false;
            for &p in row {
                nan |= p.is_nan();
                m = if p > m { p } else { m };
            }
            if nan || m == f64::INFINITY || m == f64::NEG_INFINITY {
                return Err(r);
            }
        }
    }
    for ((row, o), mr) in phi
        .chunks_exact(k)
        .zip(out.chunks_exact_mut(k))
        .zip(maxes.iter_mut())
    {
        let m = row
            .iter()
            .fold(f64::NEG_INFINITY, |m, &p| if p > m { p } else { m });
        *mr = m;
        o.iter_mut().zip(row).for_each(|(o, p)| *o = p - m);
    }
    out.iter_mut().for_each(|v| *v = exp_nonpositive(*v));
    Ok(())
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

/// ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b).
pub fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
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

    /// Distance in units in the last place between two positive finite doubles.
    fn ulps(a: f64, b: f64) -> u64 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn fast_ln_is_within_two_ulp() {
        // Every binade from 2⁻¹⁰²² to 2¹⁰²³ at 97 points, plus a fine grid around 1 (where ln x → 0
        // and the relative error is hardest to keep) and the values a softmax sum takes, [1, 64].
        let mut worst = 0;
        let mut check = |x: f64| {
            let (f, e) = (ln_positive(x), x.ln());
            let d = if e == 0.0 {
                u64::from(f != 0.0)
            } else if (f > 0.0) == (e > 0.0) {
                ulps(f.abs(), e.abs())
            } else {
                u64::MAX
            };
            assert!(d <= 2, "ln({x:e}): {f:e} vs {e:e}, {d} ulp");
            worst = worst.max(d);
        };
        for b in -1022..1024 {
            for i in 0..97 {
                check(2f64.powi(b) * (1.0 + i as f64 / 97.0));
            }
        }
        for i in 1..20_000 {
            check(1.0 + (i as f64 - 10_000.0) * 1.3e-5);
            check(1.0 + i as f64 * 3.15e-3);
        }
        for x in [
            f64::MIN_POSITIVE,
            f64::MAX,
            1.0,
            2.0,
            0.5,
            std::f64::consts::SQRT_2,
        ] {
            check(x);
        }
        assert_eq!(ln_positive(1.0), 0.0);
        eprintln!("ln_positive: at most {worst} ulp from f64::ln");
    }

    #[test]
    fn softmax_rows_matches_one_row_at_a_time() {
        let k = 7;
        let mut phi: Vec<f64> = (0..k * 40)
            .map(|i| ((i * 7919) % 1000) as f64 * 0.9 - 450.0)
            .collect();
        phi[3] = f64::NEG_INFINITY;
        let mut u = vec![0.0; phi.len()];
        let mut a = vec![0.0; 40];
        softmax_rows(&phi, k, &mut u, &mut a).unwrap();
        for (r, row) in phi.chunks(k).enumerate() {
            let lse = log_sum_exp(row);
            assert!((a[r] - lse).abs() <= 1e-14 * lse.abs().max(1.0));
            for (j, p) in row.iter().enumerate() {
                let want = (p - lse).exp();
                assert!((u[r * k + j] - want).abs() <= 1e-14 * want.max(1e-300));
            }
        }
        phi[k * 5 + 2] = f64::NAN;
        assert_eq!(softmax_rows(&phi, k, &mut u, &mut a), Err(5));
        let all_minus_inf = vec![f64::NEG_INFINITY; k];
        assert_eq!(
            softmax_rows(&all_minus_inf, k, &mut u[..k], &mut a[..1]),
            Err(0)
        );
    }

    #[test]
    fn multigamma_reduces_to_gamma() {
        assert!((ln_multigamma(3.7, 1) - ln_gamma(3.7)).abs() < 1e-14);
        let h = 1e-6;
        let fd = (ln_multigamma(4.0 + h, 3) - ln_multigamma(4.0 - h, 3)) / (2.0 * h);
        assert!((fd - multi_digamma(4.0, 3)).abs() < 1e-7);
    }
}
