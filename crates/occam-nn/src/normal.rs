//! The network activation g(x) = erf(x/√2) = 2Φ(x) − 1 and its derivative. The standard normal
//! itself (φ, Φ, Owen's T, Φ₂) lives in [`occam_core::special::normal`].

use occam_core::special::norm_pdf;
use std::f64::consts::FRAC_1_SQRT_2;

/// The network activation g(x) = erf(x/√2) = √(2/π) ∫₀ˣ e^{−t²/2} dt = 2Φ(x) − 1 (the thesis's
/// (5.3) and the committee paper's (3) print e^{−t²} in the integrand, which would saturate at
/// ±1/√2; every later identity needs e^{−t²/2}).
pub fn g(x: f64) -> f64 {
    libm::erf(x * FRAC_1_SQRT_2)
}

/// g'(x) = √(2/π) e^{−x²/2} = 2φ(x).
pub fn g_prime(x: f64) -> f64 {
    2.0 * norm_pdf(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use occam_core::special::norm_cdf;

    #[test]
    fn g_is_twice_phi_minus_one() {
        for x in [-7.0, -2.5, -0.3, 0.0, 0.4, 1.7, 6.0] {
            assert!((g(x) - (2.0 * norm_cdf(x) - 1.0)).abs() < 1e-15);
        }
        // Derivative by central differences.
        for x in [-1.3, 0.2, 2.1] {
            let fd = (g(x + 1e-6) - g(x - 1e-6)) / 2e-6;
            assert!((fd - g_prime(x)).abs() < 1e-9);
        }
    }
}
