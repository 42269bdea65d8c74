//! The quadrature behind [`super::CategoricalSoftmaxQuad`]: E[lse(η)], E[g] and E[H] for
//! η ~ N(m, Σ) with K ≤ 3 by a product Gauss–Hermite rule over the K − 1 contrasts
//! d_j = η_j − η₀ (the family's module docs), evaluated with one exponential and one logarithm
//! per point and with the points of negligible weight left out.
//!
//! **One exponential per point.** With d = Cm + Lz (L lower triangular) the first contrast d₁
//! depends on the outer node only, so lse(0, d₁, d₂) = s₁ + softplus(t) with s₁ = softplus(d₁)
//! (formed once per outer node) and t = d₂ − s₁. With e = exp(−|t|), softplus(t) =
//! max(t, 0) + ln(1 + e), and σ(t), 1 − σ(t) are 1/(1 + e) and e/(1 + e) in the order of t's
//! sign. Writing s = σ(t), r = 1 − σ(t), p = σ(d₁), p̄ = 1 − σ(d₁), the softmax is
//! g = (p̄r, pr, s) and its Hessian H = diag(g) − ggᵀ has the entries
//! H₂₂ = sr, H₁₂ = −psr, H₀₂ = −p̄sr, H₀₁ = −pp̄r², H₁₁ = g₁(g₀ + g₂) = pp̄r² + psr,
//! H₀₀ = pp̄r² + p̄sr: sums of products of non-negative numbers, no difference g − g² that
//! loses digits as g → 1. So the inner sum over the second axis needs only Σw, Σw·softplus(t),
//! Σws, Σwr, Σwr², Σwsr, and the outer sum multiplies them by the outer node's s₁, p, p̄. For
//! K = 2 the contrast is t itself: g = (r, s), H = sr·[[1, −1], [−1, 1]]. The rule and its
//! points are the ones of the direct evaluation (the exponential of each η less the largest, one
//! logarithm of their sum, g by division, H by the products g_i g_j; three exponentials and
//! three divisions a point for K = 3): the test `matches_the_direct_evaluation` finds the two
//! within 1e-13 of each quantity's largest entry, round-off. (The direct form's H_ii = g_i − g_i²
//! lost digits as g_i → 1, 1e-16 absolute; the test's reference forms g_i Σ_{j≠i} g_j.)
//!
//! **Pruning.** A point of the product rule whose weight Π_j w_j is below [`PRUNE`] is left out.
//! g and H have entries in [−1, 1] and |lse(0, d)| ≤ ln 3 + max_j |d_j|, so the sums change by at
//! most the weight left out (a property of the rule: below 2.2e-19 for the 48-point tier, see
//! `Rule::dropped`, asserted by the test `pruned_weight_is_negligible`) times 1, and times
//! ln 3 + |Cm|∞ + ‖L‖∞·max|z| for the value — far below round-off. It keeps 380 of the 400
//! points of the 20-point tier, 748 of 1024 and 1176 of 2304.

use crate::special::GaussHermite;
use std::sync::OnceLock;

/// Points of the product rule whose weight is below this are left out (module docs).
pub const PRUNE: f64 = 1e-20;

/// (largest contrast sd, Gauss–Hermite points per contrast axis) of the rules, in increasing sd;
/// the last serves every larger sd (the family's module docs).
pub const QUAD_TIERS: [(f64, usize); 3] = [(1.0, 20), (2.0, 32), (f64::INFINITY, 48)];

/// A Gauss–Hermite rule with the ranges of its nodes kept in the one- and two-dimensional
/// product rules (module docs: pruning).
#[derive(Clone, Debug)]
pub struct Rule {
    /// The rule.
    pub gh: GaussHermite,
    /// The nodes i kept in one dimension (w_i ≥ [`PRUNE`]), a range since the weights rise then
    /// fall.
    pub one: std::ops::Range<usize>,
    /// For each outer node i, the inner nodes j kept in two dimensions (w_i w_j ≥ [`PRUNE`]).
    pub two: Vec<std::ops::Range<usize>>,
}

impl Rule {
    /// The `n`-point rule with its kept ranges.
    pub fn new(n: usize) -> Self {
        let gh = GaussHermite::new(n);
        let keep = |scale: f64| {
            let kept: Vec<usize> = (0..gh.weights.len())
                .filter(|&j| scale * gh.weights[j] >= PRUNE)
                .collect();
            match (kept.first(), kept.last()) {
                (Some(&lo), Some(&hi)) => lo..hi + 1,
                _ => 0..0,
            }
        };
        let one = keep(1.0);
        let two = gh.weights.iter().map(|&w| keep(w)).collect();
        Rule { gh, one, two }
    }

    /// The total weight left out of the (`dims` = 1 or 2)-dimensional product rule, summed
    /// over the points left out (not as 1 less the kept weight, which would be round-off).
    #[cfg(test)]
    pub fn dropped(&self, dims: usize) -> f64 {
        let w = &self.gh.weights;
        let out = |r: &std::ops::Range<usize>| -> f64 {
            (0..w.len()).filter(|j| !r.contains(j)).map(|j| w[j]).sum()
        };
        if dims == 1 {
            out(&self.one)
        } else {
            self.two.iter().zip(w).map(|(r, wi)| wi * out(r)).sum()
        }
    }
}

/// The rule of the tier of the largest contrast sd `sd` ([`QUAD_TIERS`]).
pub fn tier_rule(sd: f64) -> &'static Rule {
    static RULES: OnceLock<[Rule; 3]> = OnceLock::new();
    let rules = RULES.get_or_init(|| QUAD_TIERS.map(|(_, n)| Rule::new(n)));
    let tier = QUAD_TIERS.iter().position(|&(top, _)| sd <= top);
    &rules[tier.unwrap_or(QUAD_TIERS.len() - 1)]
}

/// E[lse(η)], E[g] and E[H] (row-major): what [`expect_lse`] returns.
pub type Expectations = (f64, Vec<f64>, Vec<f64>);

/// The contrasts' mean Cm and covariance CΣCᵀ ((K − 1)², row-major) from the moments
/// `pa = [m, ⟨ηηᵀ⟩]`.
pub fn contrasts(k: usize, pa: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (m, s) = pa.split_at(k);
    let q = k - 1;
    let cov = |i: usize, j: usize| s[i * k + j] - m[i] * m[j];
    let mean: Vec<f64> = (1..k).map(|j| m[j] - m[0]).collect();
    let mut c = vec![0.0; q * q];
    for j in 0..q {
        for l in 0..q {
            c[j * q + l] = cov(j + 1, l + 1) - cov(j + 1, 0) - cov(0, l + 1) + cov(0, 0);
        }
    }
    (mean, c)
}

/// softplus(t), σ(t) and 1 − σ(t) from one exponential (module docs).
#[inline]
fn point(t: f64) -> (f64, f64, f64) {
    let e = (-t.abs()).exp();
    let inv = 1.0 / (1.0 + e);
    let sp = t.max(0.0) + e.ln_1p();
    if t >= 0.0 {
        (sp, inv, e * inv)
    } else {
        (sp, e * inv, inv)
    }
}

/// E[lse(η)], E[g] (K) and E[H] (K × K, row-major) for η ~ N(m, Σ), K = 2 or 3, given the
/// moments `pa = [m, ⟨ηηᵀ⟩]`, by the pruned product rule `r` over the contrasts (module docs).
pub fn expect_lse(k: usize, pa: &[f64], r: &Rule) -> Expectations {
    assert!(
        (2..=3).contains(&k),
        "the softmax quadrature serves K = 2 or 3, not {k}"
    );
    let (mean, c) = contrasts(k, pa);
    let q = k - 1;
    let l = crate::linalg::cholesky_semidefinite(&c, q);
    let (nodes, weights) = (&r.gh.nodes, &r.gh.weights);
    let m0 = pa[0];
    if q == 1 {
        let (mut e, mut s, mut rr, mut sr) = (0.0, 0.0, 0.0, 0.0);
        for i in r.one.clone() {
            let w = weights[i];
            let (sp, si, ri) = point(mean[0] + l[0] * nodes[i]);
            e += w * sp;
            s += w * si;
            rr += w * ri;
            sr += w * si * ri;
        }
        return (m0 + e, vec![rr, s], vec![sr, -sr, -sr, sr]);
    }
    let (l00, l10, l11) = (l[0], l[2], l[3]);
    let mut e = 0.0;
    let (mut g, mut h) = ([0.0; 3], [0.0; 9]);
    for (i, inner) in r.two.iter().enumerate() {
        if inner.is_empty() {
            continue;
        }
        let wi = weights[i];
        let (s1, p, pb) = point(mean[0] + l00 * nodes[i]);
        let base = mean[1] + l10 * nodes[i] - s1;
        let (mut a0, mut ae, mut a_s, mut ar, mut arr, mut asr) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for j in inner.clone() {
            let w = weights[j];
            let (sp, s, rj) = point(base + l11 * nodes[j]);
            let wr = w * rj;
            a0 += w;
            ae += w * sp;
            a_s += w * s;
            ar += wr;
            arr += wr * rj;
            asr += wr * s;
        }
        let ppb = p * pb;
        e += wi * (s1 * a0 + ae);
        g[0] += wi * pb * ar;
        g[1] += wi * p * ar;
        g[2] += wi * a_s;
        h[0] += wi * (ppb * arr + pb * asr);
        h[1] -= wi * ppb * arr;
        h[2] -= wi * pb * asr;
        h[4] += wi * (ppb * arr + p * asr);
        h[5] -= wi * p * asr;
        h[8] += wi * asr;
    }
    (h[3], h[6], h[7]) = (h[1], h[2], h[5]);
    (m0 + e, g.to_vec(), h.to_vec())
}

/// The contrasts' largest sd, max_j (Var d_j)^½, from the moments `pa = [m, ⟨ηηᵀ⟩]`: what
/// chooses the tier ([`tier_rule`]).
pub fn largest_contrast_sd(k: usize, pa: &[f64]) -> f64 {
    let (m, s) = pa.split_at(k);
    let var = |j: usize| {
        let cov = |a: usize, b: usize| s[a * k + b] - m[a] * m[b];
        cov(j, j) - 2.0 * cov(j, 0) + cov(0, 0)
    };
    (1..k).map(|j| var(j).max(0.0).sqrt()).fold(0.0, f64::max)
}

/// [`expect_lse`] with the rule of the tier of the contrasts' largest sd.
pub fn expect_lse_tiered(k: usize, pa: &[f64]) -> Expectations {
    expect_lse(k, pa, tier_rule(largest_contrast_sd(k, pa)))
}

#[cfg(test)]
mod tests;
