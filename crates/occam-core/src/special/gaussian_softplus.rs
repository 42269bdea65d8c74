//! E[softplus(η)] = E[ln(1 + e^η)] for a Gaussian η ~ N(μ, v), with its exact derivatives in μ
//! and v: the expected log-partition of a Bernoulli/Binomial with Gaussian log-odds, the term the
//! quadrature logit families (`dist::logistic_quad`) put in the bound. It has no closed form.
//!
//! Two rules, each the better one where it is used (errors measured against a geometrically
//! convergent trapezoid rule in the tests below):
//! - σ = √v ≤ 1: Gauss–Hermite in z = (η − μ)/σ. The integrand is analytic in a strip of
//!   half-width π/σ ≥ π, so the rule's error falls geometrically with the number of points at a
//!   rate that grows as σ shrinks; the fewest points that keep it at round-off are taken
//!   ([`HERMITE_TIERS`]): 8 for σ ≤ 0.2, 16 for σ ≤ 0.5, 32 up to σ = 1, each within 2e-14 of the
//!   integral (relative, above 1) over μ ∈ [−8, 8] (measured against the trapezoid rule below: 8 points at σ = 0.2 and
//!   16 at σ = 0.5 are off by ≤ 4e-15; 8 points at σ = 0.3 would be 1.4e-13). Large-N regressions
//!   have σ ≪ 1 for every row, where this is a quarter of the 32-point cost.
//! - σ > 1: Gauss–Hermite degrades as the strip narrows (32 points: 5e-6 at σ = 3, 1e-2 at
//!   σ = 10), so the integral is split as softplus(η) = max(η, 0) + ln(1 + e^{−|η|}): the first
//!   part in closed form, E max(η, 0) = μΦ(μ/σ) + σφ(μ/σ); the second, which decays as e^{−|η|}
//!   and is smooth on either side of 0, by composite Gauss–Legendre in η over [−40, 0] and
//!   [0, 40] (8 panels of 16 points per side; the Gaussian density is smooth on the scale σ > 1
//!   there). Error ≤ 1.5e-10 for σ ≤ 10, ≤ 1.5e-9 at σ = 100.
//!
//! The derivatives are those of the rule itself (not a second rule for E[σ(η)] and E[σ′(η)]), so
//! a message built from them is the exact gradient of the bound term as computed, and a finite
//! difference of the term reproduces it.

use super::{norm_cdf, norm_pdf, sigmoid, softplus};
use crate::quad::GaussLegendre;
use std::sync::OnceLock;

/// Nodes and weights of the n-point probabilists' Gauss–Hermite rule: Σ w_k f(z_k) ≈ E f(z),
/// z ~ N(0, 1) (weights sum to 1).
#[derive(Clone, Debug)]
pub struct GaussHermite {
    /// Nodes, increasing.
    pub nodes: Vec<f64>,
    /// Weights (sum to 1).
    pub weights: Vec<f64>,
}

impl GaussHermite {
    /// The rule with `n ≥ 1` points: roots of the physicists' H_n by Newton's method on the
    /// orthonormal recurrence (Numerical Recipes §4.6, `gauher`), scaled to the standard normal.
    pub fn new(n: usize) -> Self {
        let n = n.max(1);
        let pim4 = std::f64::consts::PI.powf(-0.25);
        let (mut x, mut w) = (vec![0.0; n], vec![0.0; n]);
        let mut z = 0.0;
        for i in 0..n.div_ceil(2) {
            // Initial guesses (NR's), then Newton.
            let nf = n as f64;
            z = match i {
                0 => (2.0 * nf + 1.0).sqrt() - 1.85575 * (2.0 * nf + 1.0).powf(-0.16667),
                1 => z - 1.14 * nf.powf(0.426) / z,
                2 => 1.86 * z - 0.86 * x[0],
                3 => 1.91 * z - 0.91 * x[1],
                _ => 2.0 * z - x[i - 2],
            };
            let mut pp = 1.0;
            for _ in 0..100 {
                let (mut p1, mut p2) = (pim4, 0.0);
                for j in 0..n {
                    let p3 = p2;
                    p2 = p1;
                    let jf = j as f64;
                    p1 = z * (2.0 / (jf + 1.0)).sqrt() * p2 - (jf / (jf + 1.0)).sqrt() * p3;
                }
                pp = (2.0 * nf).sqrt() * p2;
                let dz = p1 / pp;
                z -= dz;
                if dz.abs() < 1e-15 * z.abs().max(1.0) {
                    break;
                }
            }
            x[i] = z;
            x[n - 1 - i] = -z;
            w[i] = 2.0 / (pp * pp);
            w[n - 1 - i] = w[i];
        }
        // Physicists' (weight e^{−x²}) to probabilists' (standard normal): z = √2 x, w/√π.
        let s = std::f64::consts::PI.sqrt();
        let mut nodes: Vec<f64> = x.iter().map(|v| v * std::f64::consts::SQRT_2).collect();
        let mut weights: Vec<f64> = w.iter().map(|v| v / s).collect();
        nodes.reverse();
        weights.reverse();
        GaussHermite { nodes, weights }
    }
}

/// (largest σ, points) of the Gauss–Hermite rules used for σ ≤ 1, in increasing σ (module docs).
pub const HERMITE_TIERS: [(f64, usize); 3] = [(0.2, 8), (0.5, 16), (1.0, 32)];

/// The rule for a standard deviation σ ≤ 1 (module docs).
fn hermite(sd: f64) -> &'static GaussHermite {
    static RULES: OnceLock<[GaussHermite; 3]> = OnceLock::new();
    let rules = RULES.get_or_init(|| HERMITE_TIERS.map(|(_, n)| GaussHermite::new(n)));
    let tier = HERMITE_TIERS
        .iter()
        .position(|&(top, _)| sd <= top)
        .unwrap_or(HERMITE_TIERS.len() - 1);
    &rules[tier]
}

/// The σ > 1 rule's fixed part (module docs): composite 16-point Gauss–Legendre over [0, 40] in
/// |η| (8 panels), each node's position a, weight w, panel half-width and ln(1 + e^{−a}). None of
/// them depends on μ or σ, so they are formed once (the same operations as inline, so the same
/// bits): a row then costs one exponential (the Gaussian density) per node instead of three. At
/// the start of a logistic regression every row has σ > 1 (the prior's spread of η), and these
/// two passes over the rows (message and bound) were most of the set-up.
struct Panels {
    /// (a, w, half, ln(1 + e^{−a})) per node, panel by panel.
    nodes: Vec<(f64, f64, f64, f64)>,
}

fn panels() -> &'static Panels {
    static PANELS: OnceLock<Panels> = OnceLock::new();
    PANELS.get_or_init(|| {
        let rule = GaussLegendre::new(16);
        let (panels, reach) = (8, 40.0);
        let h = reach / panels as f64;
        let mut nodes = Vec::with_capacity(panels * rule.nodes.len());
        for p in 0..panels {
            let (lo, hi) = (p as f64 * h, (p + 1) as f64 * h);
            let (c, half) = (0.5 * (lo + hi), 0.5 * (hi - lo));
            for (&x, &w) in rule.nodes.iter().zip(&rule.weights) {
                let a = c + half * x;
                nodes.push((a, w, half, (-a).exp().ln_1p()));
            }
        }
        Panels { nodes }
    })
}

/// E[softplus(η)] for η ~ N(`mean`, `var`), and its derivatives ∂/∂μ and ∂/∂v (module docs for
/// the rules and their accuracy). A negative `var` (round-off of ⟨η²⟩ − ⟨η⟩²) counts as 0.
pub fn expect_softplus(mean: f64, var: f64) -> (f64, f64, f64) {
    let var = var.max(0.0);
    let sd = var.sqrt();
    if sd <= 1.0 {
        let r = hermite(sd);
        let (mut e, mut d_mean, mut d_var) = (0.0, 0.0, 0.0);
        for (&z, &w) in r.nodes.iter().zip(&r.weights) {
            let eta = mean + sd * z;
            let s = sigmoid(eta);
            e += w * softplus(eta);
            d_mean += w * s;
            // ∂/∂v of Σ w softplus(μ + √v z) = Σ w z σ(η)/(2√v); its limit ½Σ w σ′(η) as v → 0,
            // used below 1e-6 where the quotient loses digits (the two differ by O(v)).
            d_var += if sd < 1e-6 {
                0.5 * w * s * (1.0 - s)
            } else {
                w * z * s / (2.0 * sd)
            };
        }
        return (e, d_mean, d_var);
    }
    // max(η, 0) in closed form.
    let t = mean / sd;
    let (cdf, pdf) = (norm_cdf(t), norm_pdf(t));
    let mut e = mean * cdf + sd * pdf;
    let mut d_mean = cdf;
    let mut d_var = pdf / (2.0 * sd);
    // ln(1 + e^{−|η|}) against the density N(η; μ, v), by panels on either side of 0.
    let table = panels();
    for side in [-1.0, 1.0] {
        for &(a, w, half, g) in &table.nodes {
            let eta = side * a;
            let d = (eta - mean) / sd;
            let dens = pdf_scaled(d, sd) * w * half;
            e += g * dens;
            d_mean += g * dens * d / sd;
            d_var += g * dens * (d * d - 1.0) / (2.0 * var);
        }
    }
    (e, d_mean, d_var)
}

/// N(η; μ, σ²) at standardised distance d = (η − μ)/σ.
fn pdf_scaled(d: f64, sd: f64) -> f64 {
    norm_pdf(d) / sd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// E[softplus] by the trapezoid rule in z with step 0.005 over ±40: the integrand is analytic
    /// in the strip |Im z| < π/σ and decays like a Gaussian, so the rule converges geometrically
    /// (error ~ e^{−2π²/(σh)}, below 1e-300 at σ = 10) and its own error is round-off, ~1e-15.
    fn reference(mean: f64, var: f64) -> f64 {
        let sd = var.sqrt();
        let n = 16_000;
        let h = 80.0 / n as f64;
        let f = |z: f64| softplus(mean + sd * z) * norm_pdf(z);
        (1..n).map(|i| f(-40.0 + i as f64 * h)).sum::<f64>() * h + 0.5 * h * (f(-40.0) + f(40.0))
    }

    #[test]
    fn hermite_rule_integrates_normal_moments() {
        let r = GaussHermite::new(32);
        assert!((r.weights.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        // E z^{2k} = (2k − 1)!! up to degree 2n − 1.
        let mut double_fact = 1.0;
        for k in 1..=15 {
            double_fact *= (2 * k - 1) as f64;
            let m: f64 = r
                .nodes
                .iter()
                .zip(&r.weights)
                .map(|(z, w)| w * z.powi(2 * k))
                .sum();
            assert!((m / double_fact - 1.0).abs() < 1e-12, "E z^{}: {m}", 2 * k);
        }
    }

    #[test]
    fn expectation_matches_a_fine_trapezoid() {
        for (mean, var, tol) in [
            (0.0, 0.09, 1e-13),
            (1.0, 1.0, 1e-13),
            (-2.0, 0.5, 1e-13),
            (0.5, 1.0001, 1e-9),
            (0.0, 9.0, 1e-9),
            (3.0, 100.0, 1e-9),
            (-30.0, 4.0, 1e-9),
        ] {
            let (e, _, _) = expect_softplus(mean, var);
            let r = reference(mean, var);
            assert!((e - r).abs() < tol, "μ {mean} v {var}: {e} vs {r}");
        }
        // A point mass: softplus itself.
        assert!((expect_softplus(0.7, 0.0).0 - softplus(0.7)).abs() < 1e-15);
    }

    /// Each Gauss–Hermite tier at the top of its range of σ (and the 32-point rule just above
    /// the smaller tiers' tops), over a grid of means: within 2e-14 of the trapezoid rule,
    /// relative where the value exceeds 1 (the 32-point rule of before is 2.2e-14 off at μ = 5.5,
    /// the sum's round-off).
    #[test]
    fn every_hermite_tier_is_at_round_off() {
        for sd in [0.05, 0.2, 0.2001, 0.35, 0.5, 0.5001, 0.8, 1.0] {
            for i in 0..=32 {
                let mean = -8.0 + 0.5 * i as f64;
                let (e, _, _) = expect_softplus(mean, sd * sd);
                let r = reference(mean, sd * sd);
                assert!(
                    (e - r).abs() < 2e-14 * r.max(1.0),
                    "μ {mean} σ {sd}: {e} vs {r}"
                );
            }
        }
    }

    #[test]
    fn derivatives_are_those_of_the_rule() {
        for (mean, var) in [
            (0.3, 0.2),
            (-1.0, 0.9),
            (0.5, 2.0),
            (2.0, 30.0),
            (0.1, 1e-14),
        ] {
            let (_, dm, dv) = expect_softplus(mean, var);
            let h = 1e-6;
            let fm =
                (expect_softplus(mean + h, var).0 - expect_softplus(mean - h, var).0) / (2.0 * h);
            let hv = h * var.max(1e-3);
            let fv = (expect_softplus(mean, var + hv).0
                - expect_softplus(mean, (var - hv).max(0.0)).0)
                / (var + hv - (var - hv).max(0.0));
            assert!(
                (dm - fm).abs() < 1e-7,
                "∂μ at ({mean}, {var}): {dm} vs {fm}"
            );
            assert!(
                (dv - fv).abs() < 1e-6,
                "∂v at ({mean}, {var}): {dv} vs {fv}"
            );
        }
    }

    /// The tabled σ > 1 rule gives the bits of the rule evaluated node by node (its panels'
    /// positions and ln(1 + e^{−a}) formed inline, as before the table).
    #[test]
    fn tabled_panels_give_the_inline_bits() {
        fn inline(mean: f64, var: f64) -> (f64, f64, f64) {
            let sd = var.sqrt();
            let t = mean / sd;
            let (cdf, pdf) = (norm_cdf(t), norm_pdf(t));
            let (mut e, mut d_mean, mut d_var) = (mean * cdf + sd * pdf, cdf, pdf / (2.0 * sd));
            let rule = GaussLegendre::new(16);
            let h = 40.0 / 8.0;
            for side in [-1.0, 1.0] {
                for p in 0..8 {
                    let (lo, hi) = (p as f64 * h, (p + 1) as f64 * h);
                    let (c, half) = (0.5 * (lo + hi), 0.5 * (hi - lo));
                    for (&x, &w) in rule.nodes.iter().zip(&rule.weights) {
                        let a = c + half * x;
                        let g = (-a).exp().ln_1p();
                        let d = (side * a - mean) / sd;
                        let dens = pdf_scaled(d, sd) * w * half;
                        e += g * dens;
                        d_mean += g * dens * d / sd;
                        d_var += g * dens * (d * d - 1.0) / (2.0 * var);
                    }
                }
            }
            (e, d_mean, d_var)
        }
        for (mean, var) in [
            (0.0, 1.01),
            (-3.7, 20.0),
            (5.2, 4.5),
            (0.4, 900.0),
            (-30.0, 2.0),
        ] {
            let (a, b) = (expect_softplus(mean, var), inline(mean, var));
            assert_eq!(
                (a.0.to_bits(), a.1.to_bits(), a.2.to_bits()),
                (b.0.to_bits(), b.1.to_bits(), b.2.to_bits()),
                "({mean}, {var})"
            );
        }
    }
}
