//! Closed forms of the Gamma, Dirichlet and Beta distributions that hand-derived bounds need:
//! expectations of the log, entropies, cross terms and Kullback–Leibler divergences. The VMP
//! engine forms the same quantities generically (φ·u − A, Winn (2.36)); these are for the models
//! written beside it (`occam-nn`'s Bayesian networks, the facade's mixture of Bayesian PCA and
//! ICA), so each formula exists once.
//!
//! Gamma is in the shape–rate form Γ(τ | a, b) = bᵃ τ^{a−1} e^{−bτ} / Γ(a), mean a/b.

use super::{digamma, ln_gamma};

/// ⟨ln τ⟩ = ψ(a) − ln b under Γ(a, b) (Winn (A.13); Lawrence's thesis (6.50)).
#[inline]
pub fn gamma_mean_ln(a: f64, b: f64) -> f64 {
    digamma(a) - b.ln()
}

/// Entropy of Γ(a, b): −(a − 1)ψ(a) − ln b + a + ln Γ(a) (Winn (A.14); thesis (6.51)).
#[inline]
pub fn gamma_entropy(a: f64, b: f64) -> f64 {
    -(a - 1.0) * digamma(a) - b.ln() + a + ln_gamma(a)
}

/// ⟨ln Γ(τ | a₀, b₀)⟩ under a q(τ) with ⟨τ⟩ = `mean` and ⟨ln τ⟩ = `mean_ln`:
/// a₀ ln b₀ − ln Γ(a₀) + (a₀ − 1)⟨ln τ⟩ − b₀⟨τ⟩.
#[inline]
pub fn gamma_expected_ln_pdf(a0: f64, b0: f64, mean: f64, mean_ln: f64) -> f64 {
    a0 * b0.ln() - ln_gamma(a0) + (a0 - 1.0) * mean_ln - b0 * mean
}

/// KL(Γ(a, b) ‖ Γ(a₀, b₀)) = (a − a₀)ψ(a) − ln Γ(a) + ln Γ(a₀) + a₀(ln b − ln b₀) + a(b₀ − b)/b.
pub fn kl_gamma(a: f64, b: f64, a0: f64, b0: f64) -> f64 {
    (a - a0) * digamma(a) - ln_gamma(a) + ln_gamma(a0) + a0 * (b.ln() - b0.ln()) + a * (b0 - b) / b
}

/// ⟨ln π_k⟩ = ψ(α_k) − ψ(Σ α) under Dirichlet(α), into `out` (Winn (A.20)).
pub fn dirichlet_mean_ln(alpha: &[f64], out: &mut [f64]) {
    let psi_total = digamma(alpha.iter().sum());
    for (o, a) in out.iter_mut().zip(alpha) {
        *o = digamma(*a) - psi_total;
    }
}

/// KL(Dirichlet(α) ‖ Dirichlet(α₀)) = ln Γ(Σα) − ln Γ(Σα₀) + Σ_k [ln Γ(α₀_k) − ln Γ(α_k) +
/// (α_k − α₀_k)(ψ(α_k) − ψ(Σα))].
pub fn kl_dirichlet(alpha: &[f64], alpha0: &[f64]) -> f64 {
    let total: f64 = alpha.iter().sum();
    let psi_total = digamma(total);
    let mut s = ln_gamma(total) - ln_gamma(alpha0.iter().sum());
    for (&a, &a0) in alpha.iter().zip(alpha0) {
        s += ln_gamma(a0) - ln_gamma(a) + (a - a0) * (digamma(a) - psi_total);
    }
    s
}

/// KL(Dirichlet(u) ‖ Dirichlet(u₀ 1)), the symmetric prior of mixture weights: [`kl_dirichlet`]
/// with every α₀_k = u₀ (one ln Γ(u₀) for all k).
pub fn kl_dirichlet_symmetric(u: &[f64], u0: f64) -> f64 {
    let total: f64 = u.iter().sum();
    let k = u.len() as f64;
    let mut s = ln_gamma(total) - ln_gamma(k * u0) + k * ln_gamma(u0);
    for &ui in u {
        s += -ln_gamma(ui) + (ui - u0) * (digamma(ui) - digamma(total));
    }
    s
}

/// (⟨ln p⟩, ⟨ln(1 − p)⟩) = (ψ(a) − ψ(a + b), ψ(b) − ψ(a + b)) under Beta(a, b).
pub fn beta_mean_ln(a: f64, b: f64) -> (f64, f64) {
    let psi_total = digamma(a + b);
    (digamma(a) - psi_total, digamma(b) - psi_total)
}

/// KL(Beta(a, b) ‖ Beta(a₀, b₀)): [`kl_dirichlet`] with two categories.
pub fn kl_beta(a: f64, b: f64, a0: f64, b0: f64) -> f64 {
    kl_dirichlet(&[a, b], &[a0, b0])
}

// References are printed to 17 significant digits, as the 50-digit tools give them.
#[allow(clippy::excessive_precision)]
#[cfg(test)]
mod tests {
    use super::*;
    use crate::quad::GaussLegendre;

    fn ln_gamma_pdf(x: f64, a: f64, b: f64) -> f64 {
        a * b.ln() - ln_gamma(a) + (a - 1.0) * x.ln() - b * x
    }

    #[test]
    fn gamma_closed_forms_match_quadrature() {
        let rule = GaussLegendre::new(30);
        let (a, b) = (3.5, 2.0);
        let pdf = |t: f64| ln_gamma_pdf(t, a, b).exp();
        let ln_mean = rule.composite(1e-12, 30.0, 300, |t| pdf(t) * t.ln());
        let ent = rule.composite(1e-12, 30.0, 300, |t| -pdf(t) * ln_gamma_pdf(t, a, b));
        assert!((ln_mean - gamma_mean_ln(a, b)).abs() < 1e-9);
        assert!((ent - gamma_entropy(a, b)).abs() < 1e-9);
        // ⟨ln p⟩ at p = q is minus the entropy, and KL = −H(q) − ⟨ln p⟩_q.
        let own = gamma_expected_ln_pdf(a, b, a / b, gamma_mean_ln(a, b));
        assert!((own + gamma_entropy(a, b)).abs() < 1e-12);
        let (a0, b0) = (1.5, 0.5);
        let cross = gamma_expected_ln_pdf(a0, b0, a / b, gamma_mean_ln(a, b));
        assert!((kl_gamma(a, b, a0, b0) - (-gamma_entropy(a, b) - cross)).abs() < 1e-12);
        let kl_quad = rule.composite(1e-12, 30.0, 300, |t| {
            pdf(t) * (ln_gamma_pdf(t, a, b) - ln_gamma_pdf(t, a0, b0))
        });
        assert!((kl_quad - kl_gamma(a, b, a0, b0)).abs() < 1e-9, "{kl_quad}");
        // ∂H/∂b = −1/b, by central differences.
        let h = 1e-6;
        let fd = (gamma_entropy(a, b + h) - gamma_entropy(a, b - h)) / (2.0 * h);
        assert!((fd + 1.0 / b).abs() < 1e-8);
    }

    #[test]
    fn gamma_kl_matches_50_digit_references_and_vanishes_at_equality() {
        // mpmath 1.3, mp.dps = 50, the same closed form with loggamma and digamma.
        // statrs' ln Γ and ψ are good to a few ulp; the sum of five O(1) terms to ~1e−15.
        let got = kl_gamma(3.0, 2.0, 1.5, 0.5);
        assert!((got - 0.399_688_626_132_346_1).abs() < 1e-14, "{got}");
        // A vague posterior far from its prior (shape and rate 1e−3): the terms reach ~1e3.
        let got = kl_gamma(1e-3, 1e-3, 0.5, 2.0);
        assert!(
            (got - 491.150_945_221_743_15).abs() < 1e-12 * 491.15,
            "{got}"
        );
        assert!(kl_gamma(2.5, 1.5, 2.5, 1.5).abs() < 1e-12);
        assert!(kl_gamma(3.0, 1.0, 1.0, 2.0) > 0.0);
    }

    #[test]
    fn dirichlet_and_beta_closed_forms() {
        assert!(kl_dirichlet_symmetric(&[1.0, 1.0, 1.0], 1.0).abs() < 1e-12);
        assert!(kl_dirichlet_symmetric(&[4.0, 1.0], 1.0) > 0.0);
        let u = [0.7, 3.2, 11.0, 0.05];
        let general = kl_dirichlet(&u, &[0.3; 4]);
        assert!((kl_dirichlet_symmetric(&u, 0.3) - general).abs() < 1e-12 * general.abs());
        assert!(kl_dirichlet(&u, &u).abs() < 1e-12);
        // ⟨ln π⟩ sums of a Beta and its Dirichlet form agree; E[ln p] by quadrature.
        let (a, b) = (2.5, 4.0);
        let mut out = [0.0; 2];
        dirichlet_mean_ln(&[a, b], &mut out);
        assert_eq!(beta_mean_ln(a, b), (out[0], out[1]));
        let rule = GaussLegendre::new(30);
        let ln_b = crate::special::ln_beta(a, b);
        let lpdf =
            |p: f64, a: f64, b: f64, lb: f64| (a - 1.0) * p.ln() + (b - 1.0) * (-p).ln_1p() - lb;
        let e_ln = rule.composite(0.0, 1.0, 200, |p| lpdf(p, a, b, ln_b).exp() * p.ln());
        assert!((e_ln - out[0]).abs() < 1e-9);
        let (a0, b0) = (1.0, 3.0);
        let ln_b0 = crate::special::ln_beta(a0, b0);
        let kl = rule.composite(0.0, 1.0, 200, |p| {
            let l = lpdf(p, a, b, ln_b);
            l.exp() * (l - lpdf(p, a0, b0, ln_b0))
        });
        assert!((kl - kl_beta(a, b, a0, b0)).abs() < 1e-9, "{kl}");
    }
}
