use super::*;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

fn random_theta(lay: Layout, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut th = vec![0.0; lay.len()];
    for m in 0..lay.m {
        for i in 0..lay.k {
            th[lay.mean(m) + i] = rng.random_range(-1.0..1.0);
            th[lay.log_var(m) + i] = rng.random_range(-2.0..0.0);
            if lay.m > 1 {
                th[lay.r_mean(m) + i] = th[lay.mean(m) + i] + rng.random_range(-0.2..0.2);
                th[lay.r_log_var(m) + i] = th[lay.log_var(m) + i] + rng.random_range(0.0..1.0);
            }
        }
    }
    th
}

/// Monte Carlo estimate of the mixture entropy −E ln q(w).
fn mc_entropy(th: &[f64], lay: Layout, q: &[f64], n: usize, seed: u64) -> (f64, f64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let k = lay.k;
    let ln_comp = |w: &[f64], m: usize| -> f64 {
        (0..k)
            .map(|i| {
                let s = th[lay.log_var(m) + i].exp();
                let d = w[i] - th[lay.mean(m) + i];
                -0.5 * (occam_core::special::LN_2PI + s.ln() + d * d / s)
            })
            .sum()
    };
    let (mut sum, mut sum2) = (0.0, 0.0);
    let mut w = vec![0.0; k];
    for _ in 0..n {
        let u: f64 = rng.random();
        let mut m = 0;
        let mut acc = q[0];
        while u > acc && m + 1 < q.len() {
            m += 1;
            acc += q[m];
        }
        for (i, wi) in w.iter_mut().enumerate() {
            let z: f64 = StandardNormal.sample(&mut rng);
            *wi = th[lay.mean(m) + i] + th[lay.log_var(m) + i].exp().sqrt() * z;
        }
        let terms: Vec<f64> = (0..q.len()).map(|j| q[j].ln() + ln_comp(&w, j)).collect();
        let v = -log_sum_exp(&terms);
        sum += v;
        sum2 += v * v;
    }
    let mean = sum / n as f64;
    (mean, ((sum2 / n as f64 - mean * mean) / n as f64).sqrt())
}

#[test]
fn bound_lies_below_monte_carlo_entropy_and_the_cap() {
    for (seed, m, k) in [(1u64, 3usize, 3usize), (2, 2, 5), (3, 4, 2)] {
        let lay = Layout { m, k };
        let q: Vec<f64> = vec![1.0 / m as f64; m];
        let th = random_theta(lay, seed);
        let e = entropy_bound(&th, lay, &q, None);
        let (mc, se) = mc_entropy(&th, lay, &q, 40_000, seed + 100);
        assert!(
            e.total() < mc + 4.0 * se,
            "bound {} vs MC {mc} ± {se}",
            e.total()
        );
        // 0 ≤ ... the MI bound is at most −Σ Q ln Q = ln M (the minimum-overlap cap (A.12)-(A.13)).
        let cap = -q.iter().map(|p| p * p.ln()).sum::<f64>();
        assert!(e.mutual_information <= cap + 1e-12);
        assert!(e.total() <= e.components + cap + 1e-12);
    }
}

#[test]
fn mi_bound_is_zero_for_flat_smoothing_and_near_ln_m_for_separated_components() {
    let lay = Layout { m: 3, k: 2 };
    let q = [1.0 / 3.0; 3];
    let mut th = random_theta(lay, 7);
    // ρ → ∞: r ≡ 1, so ⟨ln r⟩ = 0, G = 1 and 𝓘 = 0.
    for m in 0..3 {
        for i in 0..2 {
            th[lay.r_log_var(m) + i] = 60.0;
        }
    }
    assert!(entropy_bound(&th, lay, &q, None).mutual_information.abs() < 1e-12);
    // Far-apart narrow components with r = q: 𝓘 → ln 3 from below.
    for m in 0..3 {
        for i in 0..2 {
            th[lay.mean(m) + i] = 50.0 * m as f64;
            th[lay.r_mean(m) + i] = 50.0 * m as f64;
            th[lay.log_var(m) + i] = -2.0;
            th[lay.r_log_var(m) + i] = -2.0;
        }
    }
    let mi = entropy_bound(&th, lay, &q, None).mutual_information;
    // With r = q the bound is ln 3 − Σ_k ½ ln 2 − ½·2 ... exactly: ⟨ln r⟩ = −K/2, G_mm = 2^{−K/2}.
    let expect = 3f64.ln() - 1.0 + 2.0 * 0.5 * 2f64.ln();
    assert!((mi - expect).abs() < 1e-10, "{mi} vs {expect}");
    assert!((0.0..=3f64.ln()).contains(&mi));
}

#[test]
fn closed_form_lambda_is_the_optimum_of_the_printed_bound() {
    let lay = Layout { m: 3, k: 4 };
    let q = [0.2, 0.5, 0.3];
    let th = random_theta(lay, 11);
    let e = entropy_bound(&th, lay, &q, None);
    // Evaluate the printed (25)/(A.10) form with free λ; it peaks at the closed-form λ.
    let k = lay.k;
    let printed = |lam: &[f64]| -> f64 {
        let mut v = 0.0;
        for m in 0..3 {
            for i in 0..k {
                let (s, rho) = (th[lay.log_var(m) + i].exp(), th[lay.r_log_var(m) + i].exp());
                let d = th[lay.mean(m) + i] - th[lay.r_mean(m) + i];
                v -= 0.5 * q[m] * (s + d * d) / rho;
            }
            for mp in 0..3 {
                let mut lg = 0.0;
                for i in 0..k {
                    let (s, rho) = (
                        th[lay.log_var(m) + i].exp(),
                        th[lay.r_log_var(mp) + i].exp(),
                    );
                    let d = th[lay.mean(m) + i] - th[lay.r_mean(mp) + i];
                    lg += -0.5 * (1.0 + s / rho).ln() - 0.5 * d * d / (s + rho);
                }
                v -= q[m] * lam[mp] * lg.exp();
            }
            v += -q[m] * q[m].ln() + q[m] * lam[m].ln();
        }
        v + 1.0
    };
    let at = printed(&e.lambda);
    assert!((at - e.mutual_information).abs() < 1e-12);
    for j in 0..3 {
        for f in [0.8, 1.25] {
            let mut l = e.lambda.clone();
            l[j] *= f;
            assert!(printed(&l) < at);
        }
    }
}

#[test]
fn gradient_matches_finite_differences() {
    for (m, k, seed) in [(1usize, 4usize, 5u64), (3, 3, 6)] {
        let lay = Layout { m, k };
        let q: Vec<f64> = (0..m).map(|j| (j + 1) as f64).collect();
        let tot: f64 = q.iter().sum();
        let q: Vec<f64> = q.iter().map(|v| v / tot).collect();
        let th = random_theta(lay, seed);
        let mut g = vec![0.0; lay.len()];
        entropy_bound(&th, lay, &q, Some(&mut g));
        for i in 0..lay.len() {
            let mut p = th.clone();
            let mut n = th.clone();
            p[i] += 1e-6;
            n[i] -= 1e-6;
            let fd = (entropy_bound(&p, lay, &q, None).total()
                - entropy_bound(&n, lay, &q, None).total())
                / 2e-6;
            assert!(
                (fd - g[i]).abs() < 1e-7 * (1.0 + fd.abs()),
                "M={m} θ[{i}]: {} vs {fd}",
                g[i]
            );
        }
    }
}
