//! Small numerical helpers shared by the SBN code.

/// Logistic sigmoid σ(x) = 1/(1+e^{−x}), evaluated without overflow.
#[inline]
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// ln(1+e^x) without overflow.
#[inline]
pub fn log1pexp(x: f64) -> f64 {
    if x > 35.0 {
        x
    } else if x < -35.0 {
        x.exp()
    } else {
        x.exp().ln_1p()
    }
}

/// ln(e^a + e^b).
#[inline]
pub fn logaddexp(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// Binary entropy H(μ) = −μ ln μ − (1−μ) ln(1−μ) (0 ln 0 = 0).
#[inline]
pub fn entropy01(mu: f64) -> f64 {
    let mut h = 0.0;
    if mu > 0.0 {
        h -= mu * mu.ln();
    }
    if mu < 1.0 {
        h -= (1.0 - mu) * (1.0 - mu).ln();
    }
    h
}

/// logit(μ) = ln(μ/(1−μ)).
#[inline]
pub fn logit(mu: f64) -> f64 {
    mu.ln() - (1.0 - mu).ln()
}

/// Smallest distance of a hidden mean from 0 or 1; keeps logits and ln R finite.
pub const MU_EPS: f64 = 1e-12;

/// Clamps a mean into [ε, 1−ε].
#[inline]
pub fn clamp_mu(mu: f64) -> f64 {
    mu.clamp(MU_EPS, 1.0 - MU_EPS)
}

/// Entropy of a ±1 unit with mean m: H₂(m) = ln 2cosh μ − μ tanh μ at m = tanh μ.
#[inline]
pub fn entropy_pm(m: f64) -> f64 {
    entropy01(0.5 * (1.0 + m))
}

/// Log-sum-exp of a slice (−∞ for an empty slice).
pub fn logsumexp(v: &[f64]) -> f64 {
    let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_agree_with_naive_forms() {
        for &x in &[-3.0f64, -0.5, 0.0, 0.7, 4.0] {
            let s: f64 = 1.0 / (1.0 + (-x).exp());
            assert!((sigmoid(x) - s).abs() < 1e-15);
            assert!((log1pexp(x) - (1.0 + x.exp()).ln()).abs() < 1e-14);
            assert!((logaddexp(x, 0.3) - (x.exp() + 0.3f64.exp()).ln()).abs() < 1e-14);
        }
        assert!((entropy01(0.5) - 2f64.ln()).abs() < 1e-15);
        assert_eq!(entropy01(0.0), 0.0);
        assert!((entropy_pm(0.0) - 2f64.ln()).abs() < 1e-15);
        assert!((logsumexp(&[0.0, 0.0]) - 2f64.ln()).abs() < 1e-15);
    }
}
