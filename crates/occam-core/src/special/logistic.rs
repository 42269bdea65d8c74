//! The logistic toolbox: log-sum-exp, the sigmoid and its logarithm, softplus, logit, ln 2cosh and
//! the binary entropy, each defined once for every crate (the VMP families, the sigmoid belief and
//! Boltzmann networks of `occam-binary`, the networks of `occam-nn`).
//!
//! **Cut-off policy: none.** Every function here is written so that no branch needs a threshold
//! beyond the sign of its argument: softplus(x) = x⁺ + ln(1 + e^{−|x|}) with `ln_1p`, whose
//! argument lies in (0, 1] and whose exponential underflows gracefully to 0, so the result is
//! within an ulp or two for every finite x (tested against 50-digit references at ±745, ±36, ±35,
//! 0, …). A copy with cut-offs at ±35 (`x` above, `eˣ` below) was retired: below −35 it dropped
//! the −e^{2x}/2 term, a relative error up to 3.2e−16 (1.4 ulp) at x = −35, and between 0 and 35
//! it lost the last bit by forming ln(1 + eˣ) from a rounded eˣ.
//!
//! The binary entropy is evaluated from its smaller probability s = min(p, 1 − p), which is exact
//! (1 − p is exact for p ≥ ½, Sterbenz), and ln(1 − s) by `ln_1p(−s)`: H = −s ln s − (1 − s)
//! ln(1 − s). A copy that formed 1 − p for small p lost up to 5e−8 relative at p = 1e−10.

/// ln Σ exp(x_i), stable (the maximum is taken out first); −∞ for an empty or all −∞ slice.
pub fn log_sum_exp(x: &[f64]) -> f64 {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + x.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}

/// ln(eᵃ + eᵇ), stable; −∞ when both are −∞.
#[inline]
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// softplus(x) = ln(1 + eˣ), accurate for every finite x (no cut-offs: see the module doc).
#[inline]
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// The logistic sigmoid σ(x) = 1/(1 + e^{−x}), without overflow: for x < 0 as eˣ/(1 + eˣ), so
/// that tiny values keep their relative accuracy down to the subnormals.
#[inline]
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// ln σ(x) = −softplus(−x).
#[inline]
pub fn log_sigmoid(x: f64) -> f64 {
    -softplus(-x)
}

/// logit(μ) = ln(μ/(1 − μ)), the inverse of [`sigmoid`] on (0, 1).
#[inline]
pub fn logit(mu: f64) -> f64 {
    mu.ln() - (1.0 - mu).ln()
}

/// ln(2 cosh x) = |x| + softplus(−2|x|), stable for large |x| (the log-partition of a ±1 unit).
#[inline]
pub fn ln_2cosh(x: f64) -> f64 {
    let a = x.abs();
    a + softplus(-2.0 * a)
}

/// Binary entropy H(p) = −p ln p − (1 − p) ln(1 − p) of a unit that is 1 with probability p
/// (0 ln 0 = 0, so H(0) = H(1) = 0); evaluated from min(p, 1 − p) (see the module doc).
#[inline]
pub fn binary_entropy(p: f64) -> f64 {
    entropy_of_smaller(if p > 0.5 { 1.0 - p } else { p })
}

/// Binary entropy of a ±1 unit with mean m ∈ [−1, 1]: H((1 + m)/2) = ln 2cosh μ − μ tanh μ at
/// m = tanh μ. The smaller probability (1 − |m|)/2 is formed directly, so m near ±1 loses nothing
/// to the cancellation in 1 − (1 + m)/2.
#[inline]
pub fn binary_entropy_pm(m: f64) -> f64 {
    entropy_of_smaller(0.5 * (1.0 - m.abs()))
}

/// −s ln s − (1 − s) ln(1 − s) for s ∈ [0, ½].
#[inline]
fn entropy_of_smaller(s: f64) -> f64 {
    if s > 0.0 {
        -s * s.ln() - (1.0 - s) * (-s).ln_1p()
    } else {
        0.0
    }
}

// References are printed to 17 significant digits, as the 50-digit tools give them.
#[allow(clippy::excessive_precision)]
#[cfg(test)]
mod tests {
    use super::*;

    /// |got − want| ≤ ulps · ε · |want| (or ≤ the smallest subnormal's few multiples at 0).
    fn close(got: f64, want: f64, ulps: f64) -> bool {
        (got - want).abs() <= ulps * f64::EPSILON * want.abs() + 1e-323
    }

    #[test]
    fn softplus_matches_50_digit_references_at_the_extremes() {
        // mpmath 1.3, mp.dps = 50: log1p(exp(mpf(x))), printed to 17 digits.
        let refs = [
            (-745.0, 2.822_350_730_471_937_1e-324),
            (-700.0, 9.859_676_543_759_770_9e-305),
            (-40.0, 4.248_354_255_291_589e-18),
            (-36.0, 2.319_522_830_243_569_1e-16),
            (-35.5, 3.824_246_628_097_134_6e-16),
            (-35.0, 6.305_116_760_146_987_4e-16),
            (-20.0, 2.061_153_620_314_380_7e-9),
            (-0.001, 0.692_647_305_559_940_1),
            (0.0, std::f64::consts::LN_2),
            (0.001, 0.693_647_305_559_940_1),
            (2.5, 2.578_889_734_292_549_6),
            (20.0, 20.000_000_002_061_154),
            (35.0, 35.000_000_000_000_001),
            (35.5, 35.5),
            (36.0, 36.0),
            (40.0, 40.0),
            (700.0, 700.0),
        ];
        for (x, want) in refs {
            assert!(
                close(softplus(x), want, 2.0),
                "softplus({x}) = {}",
                softplus(x)
            );
            assert!(close(log_sigmoid(-x), -want, 2.0));
        }
        // The retired cut-off copy (eˣ below −35) is 1.4 ulp off at −35.5 and −36, where this
        // one is within 1: the test that chose between them.
        let cut = |x: f64| if x < -35.0 { x.exp() } else { x.exp().ln_1p() };
        for (x, want) in [
            (-35.5, 3.824_246_628_097_134_6e-16),
            (-36.0, 2.319_522_830_243_569_1e-16),
        ] {
            let (new, old) = (softplus(x), cut(x));
            assert!(
                (new - want).abs() < (old - want).abs(),
                "x = {x}: {new} vs {old}"
            );
        }
        // Series at 0: ln 2 + x/2 + x²/8 − x⁴/192.
        let x = 1e-3f64;
        let series = std::f64::consts::LN_2 + x / 2.0 + x * x / 8.0 - x.powi(4) / 192.0;
        assert!(close(softplus(x), series, 2.0));
        assert_eq!(softplus(f64::INFINITY), f64::INFINITY);
        assert_eq!(softplus(f64::NEG_INFINITY), 0.0);
    }

    #[test]
    fn sigmoid_and_logit_are_inverse_and_match_references() {
        // mpmath, 50 digits: 1/(1 + exp(−x)).
        for (x, want) in [
            (-745.0, 2.822_350_730_471_937e-324),
            (-40.0, 4.248_354_255_291_589e-18),
            (-36.0, 2.319_522_830_243_568_9e-16),
            (-1.0, 0.268_941_421_369_995_12),
            (0.0, 0.5),
            (1.0, 0.731_058_578_630_004_88),
            (36.0, 0.999_999_999_999_999_77),
        ] {
            assert!(close(sigmoid(x), want, 2.0), "σ({x}) = {}", sigmoid(x));
        }
        assert!(sigmoid(-745.0) > 0.0);
        for x in [-30.0f64, -3.0, -0.2, 0.0, 0.7, 5.0] {
            let mu = sigmoid(x);
            assert!((logit(mu) - x).abs() < 1e-12 * x.abs().max(1.0));
            // dσ/dx = σ(1 − σ) and d softplus/dx = σ, by central differences.
            let h = 1e-6;
            let fd = (sigmoid(x + h) - sigmoid(x - h)) / (2.0 * h);
            assert!((fd - mu * (1.0 - mu)).abs() < 1e-9);
            let fd = (softplus(x + h) - softplus(x - h)) / (2.0 * h);
            assert!((fd - mu).abs() < 1e-9);
        }
    }

    #[test]
    fn log_sum_exp_and_log_add_exp_closed_forms() {
        assert!((log_sum_exp(&[0.0, 0.0]) - 2f64.ln()).abs() < 1e-15);
        assert_eq!(log_sum_exp(&[]), f64::NEG_INFINITY);
        assert_eq!(log_sum_exp(&[f64::NEG_INFINITY; 3]), f64::NEG_INFINITY);
        // Far beyond exp's range: 1000 + ln 3.
        assert!((log_sum_exp(&[1000.0, 1000.0, 1000.0]) - (1000.0 + 3f64.ln())).abs() < 1e-12);
        for (a, b) in [(0.3, -2.0), (-800.0, -801.0), (5.0, f64::NEG_INFINITY)] {
            assert!((log_add_exp(a, b) - log_sum_exp(&[a, b])).abs() < 1e-15 * a.abs().max(1.0));
        }
        assert!((log_add_exp(0.3, 0.3) - (0.3 + 2f64.ln())).abs() < 1e-15);
    }

    #[test]
    fn binary_entropy_matches_50_digit_references() {
        // mpmath, 60 digits: −p ln p − (1 − p) log1p(−p) at the double p (with log(1 − p) instead,
        // 1 − 10⁻³⁰⁰ rounds to 1 even at 60 digits and the reference itself would be off by 1.4%).
        for (p, want) in [
            (1e-300, 6.917_755_278_982_137_2e-298),
            (1e-15, 3.553_877_639_491_068_7e-14),
            (1e-12, 2.863_102_111_592_804_8e-11),
            (1e-8, 1.942_068_073_895_236_6e-7),
            (0.1, 0.325_082_973_391_448_25),
            (0.5, std::f64::consts::LN_2),
            (0.9, 0.325_082_973_391_448_19),
            (0.999_999, 1.481_551_005_836_138_2e-5),
            (0.999_999_999_999, 2.863_040_986_996_756_3e-11),
        ] {
            assert!(
                close(binary_entropy(p), want, 4.0),
                "H({p}) = {}",
                binary_entropy(p)
            );
        }
        // ±1 coding, at the double m: H((1 + m)/2), the same way.
        for (m, want) in [
            (1.0 - 2f64.powi(-40), 1.337_822_796_038_268_7e-11),
            (-(1.0 - 2f64.powi(-40)), 1.337_822_796_038_268_7e-11),
            (1.0 - 2f64.powi(-20), 7.417_722_012_205_235_7e-6),
            (0.3, 0.647_446_639_034_632_46),
            (0.999_999_999_999, 1.466_177_085_845_991_4e-11),
        ] {
            assert!(
                close(binary_entropy_pm(m), want, 4.0),
                "H±({m}) = {}",
                binary_entropy_pm(m)
            );
        }
        // The retired copy, 1 − p formed for a small p, is off by far more at p = 1e−12.
        let naive = |p: f64| -p * p.ln() - (1.0 - p) * (1.0 - p).ln();
        let want = 2.863_102_111_592_804_8e-11;
        assert!((naive(1e-12) - want).abs() > 1e3 * (binary_entropy(1e-12) - want).abs());
        assert_eq!(binary_entropy(0.0), 0.0);
        assert_eq!(binary_entropy(1.0), 0.0);
        assert_eq!(binary_entropy_pm(1.0), 0.0);
        assert_eq!(binary_entropy_pm(-1.0), 0.0);
        // dH/dp = −logit p, by central differences.
        for p in [0.01, 0.3, 0.5, 0.8] {
            let h = 1e-6;
            let fd = (binary_entropy(p + h) - binary_entropy(p - h)) / (2.0 * h);
            assert!((fd + logit(p)).abs() < 1e-8);
        }
    }

    #[test]
    fn ln_2cosh_closed_form_and_extremes() {
        for x in [-3.0f64, -0.5, 0.0, 0.25, 4.0] {
            assert!((ln_2cosh(x) - (2.0 * x.cosh()).ln()).abs() < 1e-15 * x.abs().max(1.0));
            // H±(tanh μ) = ln 2cosh μ − μ tanh μ.
            let m = x.tanh();
            assert!((binary_entropy_pm(m) - (ln_2cosh(x) - x * m)).abs() < 1e-14);
        }
        assert_eq!(ln_2cosh(1000.0), 1000.0);
        assert_eq!(ln_2cosh(-1000.0), 1000.0);
    }
}
