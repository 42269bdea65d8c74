//! The SBN code's clamp of hidden means. The logistic toolbox it uses (sigmoid, softplus, logit,
//! log-sum-exp, binary entropy) is [`occam_core::special::logistic`], defined once there.

/// Smallest distance of a hidden mean from 0 or 1; keeps logits and ln R finite.
pub const MU_EPS: f64 = 1e-12;

/// Clamps a mean into [ε, 1−ε].
#[inline]
pub fn clamp_mu(mu: f64) -> f64 {
    mu.clamp(MU_EPS, 1.0 - MU_EPS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamp_keeps_logits_finite() {
        assert_eq!(clamp_mu(0.0), MU_EPS);
        assert_eq!(clamp_mu(1.0), 1.0 - MU_EPS);
        assert_eq!(clamp_mu(0.3), 0.3);
        assert!(occam_core::special::logit(clamp_mu(1.0)).is_finite());
    }
}
