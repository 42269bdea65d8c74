//! The Leisink–Kappen third-order lower bound on log Z (Leisink & Kappen 2000, §3 and App. A–B).
//!
//! With factorised μ(s) = μ^i s_i + μ^0, λ(s) = λ^0 (λ^i = 0, the paper's choice), m = tanh μ and
//! v = 1 − m² = sech² μ, the optimal μ^0 and λ^0 (50a) give (22):
//!   B(μ) = L_mf(m) + ln(1 + e^{λ0} P),  P = ½⟨ΔE²⟩,  λ0 = T/P,  T = −⅙⟨ΔE³⟩,
//! where L_mf(m) = log Z_μ is the mean-field free energy at m (derived here: with μ⁰ at (21),
//! log Z_μ = ⟨−E⟩_μ + Σ_i H₂(m_i); the paper states it at the mean-field μ only, after (24)), and with
//! α = h + W m − μ (58), u = m∘v, a = α∘v:
//!   P = ¼ Σ_ij W_ij² v_i v_j + ½ Σ_i α_i² v_i                                        (55)
//!   T = ⅙ tr((WV)³) + ⅓ Σ_ij W_ij³ u_i u_j − ⅓ Σ_i α_i³ u_i + ½ aᵀWa − Σ_i α_i u_i (W∘W v)_i  (56)–(57)
//! B_tm evaluates B at the mean-field μ (24); B_to maximises B over μ by L-BFGS from there (23).
//! Gradients with respect to μ, h and W (at fixed μ) are derived by hand from these closed forms
//! and checked against central differences in the tests.

use super::error::Result;
use super::mf::{mean_field, MeanFieldOptions};
use super::model::{dot, sech2, BoltzmannMachine};
use super::optim::lbfgs_maximize;
use super::Quality;
use occam_core::special::{ln_2cosh, softplus};

/// The exponential lower bound (11): e^x ≥ e^μ {1 + (x−μ) + e^λ((1−λ)/2 (x−μ)² + (x−μ)³/6)}.
pub fn exp_lower_bound(x: f64, mu: f64, lambda: f64) -> f64 {
    let d = x - mu;
    mu.exp() * (1.0 + d + lambda.exp() * (0.5 * (1.0 - lambda) * d * d + d * d * d / 6.0))
}

/// The pieces of (22) at one μ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThirdOrderParts {
    /// log Z_μ with μ^0 optimal, i.e. the mean-field value at m = tanh μ.
    pub log_z_mu: f64,
    /// P = ½⟨ΔE²⟩ (55).
    pub half_var: f64,
    /// T = −⅙⟨ΔE³⟩ (56)–(57).
    pub neg_third: f64,
    /// λ^0 = −⅓⟨ΔE³⟩/⟨ΔE²⟩ (50a).
    pub lambda0: f64,
    /// The bound (22).
    pub bound: f64,
}

struct Work {
    m: Vec<f64>,
    v: Vec<f64>,
    u: Vec<f64>,
    alpha: Vec<f64>,
    a: Vec<f64>,
    w2v: Vec<f64>,
    m2: Vec<f64>, // (WV)², row-major
}

fn work(bm: &BoltzmannMachine, mu: &[f64]) -> (Work, ThirdOrderParts) {
    let n = bm.n();
    let w = bm.weights();
    let h = bm.thresholds();
    let m: Vec<f64> = mu.iter().map(|x| x.tanh()).collect();
    let v: Vec<f64> = mu.iter().map(|x| sech2(*x)).collect();
    let u: Vec<f64> = m.iter().zip(&v).map(|(a, b)| a * b).collect();
    let mut alpha = vec![0.0; n];
    let mut log_z_mu = bm.offset();
    let mut w2v = vec![0.0; n];
    let mut t2 = 0.0;
    for i in 0..n {
        let row = &w[i * n..(i + 1) * n];
        let wm = dot(row, &m);
        alpha[i] = h[i] + wm - mu[i];
        // L_mf = c + Σ_i m_i (h_i + ½ (Wm)_i) + Σ_i [ln 2cosh μ_i − μ_i m_i]
        log_z_mu += m[i] * (h[i] + 0.5 * wm) + ln_2cosh(mu[i]) - mu[i] * m[i];
        let mut s2 = 0.0;
        let mut s3 = 0.0;
        for j in 0..n {
            let wij = row[j];
            let w2 = wij * wij;
            s2 += w2 * v[j];
            s3 += w2 * wij * u[j];
        }
        w2v[i] = s2;
        t2 += u[i] * s3;
    }
    let a: Vec<f64> = alpha.iter().zip(&v).map(|(x, y)| x * y).collect();
    // M = W V, M² = (WV)²
    let mut mv = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            mv[i * n + j] = w[i * n + j] * v[j];
        }
    }
    let mut m2 = vec![0.0; n * n];
    for i in 0..n {
        let out = &mut m2[i * n..(i + 1) * n];
        for k in 0..n {
            let x = mv[i * n + k];
            if x != 0.0 {
                let rk = &mv[k * n..(k + 1) * n];
                for (o, r) in out.iter_mut().zip(rk) {
                    *o += x * r;
                }
            }
        }
    }
    let mut tr3 = 0.0;
    for i in 0..n {
        for j in 0..n {
            tr3 += m2[i * n + j] * mv[j * n + i];
        }
    }
    let mut p = 0.0;
    let mut t = tr3 / 6.0 + t2 / 3.0;
    for i in 0..n {
        p += 0.25 * v[i] * w2v[i] + 0.5 * alpha[i] * alpha[i] * v[i];
        let wa = dot(&w[i * n..(i + 1) * n], &a);
        t += -alpha[i].powi(3) * u[i] / 3.0 + 0.5 * a[i] * wa - alpha[i] * u[i] * w2v[i];
    }
    let (lambda0, corr) = correction(p, t);
    let parts = ThirdOrderParts {
        log_z_mu,
        half_var: p,
        neg_third: t,
        lambda0,
        bound: log_z_mu + corr,
    };
    (
        Work {
            m,
            v,
            u,
            alpha,
            a,
            w2v,
            m2,
        },
        parts,
    )
}

/// (λ0, ln(1 + e^{λ0} P)); zero correction when P vanishes.
fn correction(p: f64, t: f64) -> (f64, f64) {
    if p <= 1e-300 {
        return (0.0, 0.0);
    }
    let lambda = t / p;
    let x = lambda + p.ln();
    (lambda, softplus(x))
}

/// κ = e^λ/(1 + e^λ P) = 1/(e^{−λ} + P), the derivative factor of ln(1 + e^{T/P} P).
fn kappa(p: f64, lambda: f64) -> f64 {
    if p <= 1e-300 {
        0.0
    } else {
        1.0 / ((-lambda).exp() + p)
    }
}

/// B(μ) of (22) with its parts.
pub fn third_order_bound(bm: &BoltzmannMachine, mu: &[f64]) -> ThirdOrderParts {
    work(bm, mu).1
}

/// Partial derivatives of the correction with respect to m (explicit) and α, scaled by κ.
fn correction_partials(
    bm: &BoltzmannMachine,
    wk: &Work,
    pr: &ThirdOrderParts,
) -> (Vec<f64>, Vec<f64>) {
    let n = bm.n();
    let w = bm.weights();
    let kap = kappa(pr.half_var, pr.lambda0);
    let one_l = 1.0 - pr.lambda0;
    let (m, v, u, al, a) = (&wk.m, &wk.v, &wk.u, &wk.alpha, &wk.a);
    let au: Vec<f64> = al.iter().zip(u).map(|(x, y)| x * y).collect();
    let mut cm = vec![0.0; n];
    let mut ca = vec![0.0; n];
    for k in 0..n {
        let row = &w[k * n..(k + 1) * n];
        let mut w3u = 0.0;
        let mut w2au = 0.0;
        let mut dk = 0.0;
        for j in 0..n {
            let wkj = row[j];
            w3u += wkj * wkj * wkj * u[j];
            w2au += wkj * wkj * au[j];
            dk += wk.m2[k * n + j] * wkj;
        }
        let wa = dot(row, a);
        let c3 = 1.0 - 3.0 * m[k] * m[k];
        let dp_m = -m[k] * (wk.w2v[k] + al[k] * al[k]);
        let dp_a = al[k] * v[k];
        let dt_m = -m[k] * dk + 2.0 / 3.0 * w3u * c3
            - al[k].powi(3) * c3 / 3.0
            - 2.0 * m[k] * al[k] * wa
            - al[k] * wk.w2v[k] * c3
            + 2.0 * m[k] * w2au;
        let dt_a = -al[k] * al[k] * u[k] + wa * v[k] - u[k] * wk.w2v[k];
        cm[k] = kap * (one_l * dp_m + dt_m);
        ca[k] = kap * (one_l * dp_a + dt_a);
    }
    (cm, ca)
}

/// B(μ) and ∂B/∂μ (23), written into `grad`.
pub fn third_order_grad_mu(bm: &BoltzmannMachine, mu: &[f64], grad: &mut [f64]) -> f64 {
    let n = bm.n();
    let w = bm.weights();
    let (wk, pr) = work(bm, mu);
    let (cm, ca) = correction_partials(bm, &wk, &pr);
    for k in 0..n {
        // ∂α_i/∂μ_k = W_ik v_k − δ_ik, ∂m_k/∂μ_k = v_k, ∂L_mf/∂m = α
        let wca = dot(&w[k * n..(k + 1) * n], &ca);
        grad[k] = wk.v[k] * (wk.alpha[k] + cm[k] + wca) - ca[k];
    }
    pr.bound
}

/// Gradients of B with respect to the model at fixed μ: (B, ∂B/∂h, ∂B/∂W_pair) where
/// ∂B/∂W_pair[i·n + j] differentiates the symmetric pair w_ij = w_ji jointly (diagonal 0).
/// These are the third-order estimates of ⟨s_i⟩ and ⟨s_i s_j⟩ (= ∂log Z/∂h_i, ∂log Z/∂w_ij).
pub fn third_order_grad_model(bm: &BoltzmannMachine, mu: &[f64]) -> (f64, Vec<f64>, Vec<f64>) {
    let n = bm.n();
    let w = bm.weights();
    let (wk, pr) = work(bm, mu);
    let (_, ca) = correction_partials(bm, &wk, &pr);
    let kap = kappa(pr.half_var, pr.lambda0);
    let one_l = 1.0 - pr.lambda0;
    let (m, v, u, al, a) = (&wk.m, &wk.v, &wk.u, &wk.alpha, &wk.a);
    let dh: Vec<f64> = (0..n).map(|i| m[i] + ca[i]).collect();
    let mut dw = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            let wij = w[i * n + j];
            let explicit = one_l * wij * v[i] * v[j]
                + v[i] * wk.m2[i * n + j]
                + 2.0 * wij * wij * u[i] * u[j]
                + a[i] * a[j]
                - 2.0 * wij * (al[i] * u[i] * v[j] + al[j] * u[j] * v[i]);
            dw[i * n + j] = m[i] * m[j] + kap * explicit + ca[i] * m[j] + ca[j] * m[i];
        }
    }
    (pr.bound, dh, dw)
}

/// Options for the third-order bound.
#[derive(Debug, Clone)]
pub struct ThirdOrderOptions {
    /// Mean-field options for the starting μ.
    pub mean_field: MeanFieldOptions,
    /// Maximise over μ (B_to) rather than stopping at the mean-field μ (B_tm).
    pub optimise: bool,
    /// L-BFGS iterations.
    pub max_iter: usize,
    /// Relative gradient tolerance.
    pub gtol: f64,
}

impl Default for ThirdOrderOptions {
    fn default() -> Self {
        Self {
            mean_field: MeanFieldOptions::default(),
            optimise: true,
            max_iter: 500,
            gtol: 1e-10,
        }
    }
}

/// Third-order result.
#[derive(Debug, Clone)]
pub struct ThirdOrderResult {
    /// The lower bound on log Z.
    pub log_z: f64,
    /// Always [`Quality::LowerBound`].
    pub quality: Quality,
    /// The mean-field bound it started from.
    pub mean_field_log_z: f64,
    /// The μ used.
    pub mu: Vec<f64>,
    /// λ^0 at that μ.
    pub lambda0: f64,
    /// Estimates of ⟨s_i⟩ = ∂B/∂h_i.
    pub means: Vec<f64>,
    /// Estimates of ⟨s_i s_j⟩ = ∂B/∂w_ij (diagonal 1).
    pub correlations: Vec<f64>,
    /// L-BFGS iterations (0 for B_tm).
    pub iterations: usize,
    /// L-BFGS converged (true for B_tm).
    pub converged: bool,
}

/// B_tm (μ = mean field, (24)) or B_to (μ maximised, (23)), according to `o.optimise`.
pub fn third_order(bm: &BoltzmannMachine, o: &ThirdOrderOptions) -> Result<ThirdOrderResult> {
    let mf = mean_field(bm, &o.mean_field)?;
    Ok(third_order_from(bm, &mf.fields, mf.log_z, o))
}

/// Third order from a given starting μ (e.g. the mean-field fields).
pub fn third_order_from(
    bm: &BoltzmannMachine,
    mu0: &[f64],
    mf_log_z: f64,
    o: &ThirdOrderOptions,
) -> ThirdOrderResult {
    let n = bm.n();
    let mut mu = mu0.to_vec();
    let (mut iterations, mut converged) = (0, true);
    if o.optimise && n > 0 {
        let r = lbfgs_maximize(
            &mut mu,
            |x, g| third_order_grad_mu(bm, x, g),
            o.max_iter,
            o.gtol,
            10,
        );
        iterations = r.iterations;
        converged = r.converged;
    }
    let parts = third_order_bound(bm, &mu);
    let (_, dh, mut dw) = third_order_grad_model(bm, &mu);
    for i in 0..n {
        dw[i * n + i] = 1.0;
    }
    ThirdOrderResult {
        log_z: parts.bound,
        quality: Quality::LowerBound,
        mean_field_log_z: mf_log_z,
        mu,
        lambda0: parts.lambda0,
        means: dh,
        correlations: dw,
        iterations,
        converged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::exact::exact_log_z;
    use crate::bm::mf::mf_bound;

    pub(crate) fn rand_bm(n: usize, seed: u64, sw: f64, sh: f64) -> BoltzmannMachine {
        let mut x = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
        let mut r = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..i {
                let v = r() * sw;
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        let h = (0..n).map(|_| r() * sh).collect();
        BoltzmannMachine::new(w, h, 0.2).unwrap()
    }

    fn pm(s: u64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| if s >> i & 1 == 1 { 1.0 } else { -1.0 })
            .collect()
    }

    /// (55)–(58) and (22) against brute-force moments of ΔE under P_μ at an arbitrary μ (α ≠ 0).
    #[test]
    fn moments_match_brute_force() {
        let n = 7;
        let bm = rand_bm(n, 4, 0.8, 0.5);
        let mu: Vec<f64> = (0..n).map(|i| 0.3 * i as f64 - 0.9).collect();
        let pr = third_order_bound(&bm, &mu);
        // P_μ(s) ∝ exp(μ·s); μ0 = −⟨E + μ·s⟩; ΔE = μ·s + μ0 + E
        let lzmu: f64 = mu.iter().map(|x| ln_2cosh(*x)).sum();
        let mut e_neg_e_plus = 0.0; // ⟨−E − μ·s⟩
        for s in 0..(1u64 << n) {
            let x = pm(s, n);
            let p = (dot(&mu, &x) - lzmu).exp();
            e_neg_e_plus += p * (bm.log_weight(&x) - dot(&mu, &x));
        }
        let mu0 = e_neg_e_plus;
        let (mut d2, mut d3) = (0.0, 0.0);
        for s in 0..(1u64 << n) {
            let x = pm(s, n);
            let p = (dot(&mu, &x) - lzmu).exp();
            let de = dot(&mu, &x) + mu0 - bm.log_weight(&x);
            d2 += p * de * de;
            d3 += p * de * de * de;
        }
        assert!(
            (pr.half_var - 0.5 * d2).abs() < 1e-12,
            "{} vs {}",
            pr.half_var,
            0.5 * d2
        );
        assert!(
            (pr.neg_third + d3 / 6.0).abs() < 1e-12,
            "{} vs {}",
            pr.neg_third,
            -d3 / 6.0
        );
        assert!((pr.log_z_mu - (mu0 + lzmu)).abs() < 1e-12);
        // (20) directly with λ0 from (50a)
        let l0 = -d3 / (3.0 * d2);
        assert!((pr.lambda0 - l0).abs() < 1e-10);
        let b20 = mu0 + lzmu + (1.0 + l0.exp() * ((1.0 - l0) / 2.0 * d2 - d3 / 6.0)).ln();
        assert!((pr.bound - b20).abs() < 1e-12);
        let lz = exact_log_z(&bm).unwrap();
        assert!(pr.bound <= lz);
        // (15) summed over states equals (20); terms can be negative, so sum directly
        let mut z = 0.0;
        for s in 0..(1u64 << n) {
            let x = pm(s, n);
            let mus = dot(&mu, &x) + mu0;
            let de = mus - bm.log_weight(&x);
            z += mus.exp()
                * (1.0 - de + l0.exp() * ((1.0 - l0) / 2.0 * de * de - de * de * de / 6.0));
        }
        assert!((z.ln() - pr.bound).abs() < 1e-10);
    }

    #[test]
    fn gradients_match_central_differences() {
        for seed in 0..4 {
            let n = 6;
            let bm = rand_bm(n, seed, 1.2, 0.6);
            let mu: Vec<f64> = (0..n)
                .map(|i| ((i * 7 + seed as usize) % 5) as f64 * 0.4 - 0.8)
                .collect();
            let mut g = vec![0.0; n];
            third_order_grad_mu(&bm, &mu, &mut g);
            let e = 1e-6;
            for k in 0..n {
                let mut a = mu.clone();
                let mut b = mu.clone();
                a[k] += e;
                b[k] -= e;
                let fd = (third_order_bound(&bm, &a).bound - third_order_bound(&bm, &b).bound)
                    / (2.0 * e);
                assert!(
                    (fd - g[k]).abs() < 1e-6 * (1.0 + fd.abs()),
                    "mu {k}: {fd} vs {}",
                    g[k]
                );
            }
            let (_, dh, dw) = third_order_grad_model(&bm, &mu);
            for i in 0..n {
                let mut a = bm.clone();
                let mut b = bm.clone();
                a.thresholds_mut()[i] += e;
                b.thresholds_mut()[i] -= e;
                let fd = (third_order_bound(&a, &mu).bound - third_order_bound(&b, &mu).bound)
                    / (2.0 * e);
                assert!(
                    (fd - dh[i]).abs() < 1e-6 * (1.0 + fd.abs()),
                    "h {i}: {fd} vs {}",
                    dh[i]
                );
                for j in 0..i {
                    let mut a = bm.clone();
                    let mut b = bm.clone();
                    a.set_pair(i, j, bm.w(i, j) + e);
                    b.set_pair(i, j, bm.w(i, j) - e);
                    let fd = (third_order_bound(&a, &mu).bound - third_order_bound(&b, &mu).bound)
                        / (2.0 * e);
                    let an = dw[i * n + j];
                    assert!(
                        (fd - an).abs() < 1e-6 * (1.0 + fd.abs()),
                        "w {i}{j}: {fd} vs {an}"
                    );
                }
            }
        }
    }

    #[test]
    fn ordering_and_tap_limit() {
        let n = 10;
        let bm = rand_bm(n, 11, 0.5, 0.3);
        let lz = exact_log_z(&bm).unwrap();
        let tm = third_order(
            &bm,
            &ThirdOrderOptions {
                optimise: false,
                ..Default::default()
            },
        )
        .unwrap();
        let to = third_order(&bm, &ThirdOrderOptions::default()).unwrap();
        assert!(tm.mean_field_log_z < tm.log_z);
        assert!(tm.log_z <= to.log_z + 1e-12);
        assert!(to.log_z <= lz, "{} > {lz}", to.log_z);
        // small weights: B_tm − L_mf → ¼ Σ_ij w_ij² (1 − m_i²)(1 − m_j²) (25), error O(w³)
        for &scale in &[0.02, 0.01] {
            let small = rand_bm(n, 3, scale, 0.3);
            let mf = crate::bm::mf::mean_field(&small, &MeanFieldOptions::default()).unwrap();
            let b = third_order_bound(&small, &mf.fields);
            let m = &mf.means;
            let mut tap = 0.0;
            for i in 0..n {
                for j in 0..n {
                    tap += 0.25 * small.w(i, j).powi(2) * (1.0 - m[i] * m[i]) * (1.0 - m[j] * m[j]);
                }
            }
            let corr = b.bound - mf_bound(&small, m);
            assert!(
                (corr - tap).abs() < 2.0 * scale.powi(3) * (n * n) as f64,
                "{corr} vs {tap}"
            );
        }
    }

    #[test]
    fn exponential_bound_examples() {
        for &(x, mu, l) in &[
            (0.0, 0.0, 0.0),
            (-5.0, 1.0, 2.0),
            (3.0, -1.0, -1.5),
            (10.0, 2.0, 0.5),
        ] {
            assert!(exp_lower_bound(x, mu, l) <= f64::exp(x) * (1.0 + 1e-14) + 1e-300);
        }
        assert!((exp_lower_bound(0.7, 0.7, 1.3) - 0.7f64.exp()).abs() < 1e-15);
    }
}
