//! The stick-breaking family against closed forms and quadrature (the shared laws — u = ∂A/∂φ,
//! messages by finite differences, point-mass priors, sample moments — run on it from `laws.rs`).

use super::*;
use rand::SeedableRng;

/// Gauss–Legendre nodes and weights on (0, 1) (Newton on P_n from the Chebyshev guesses).
fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            let mut dp = 0.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                    p0 = p1;
                    p1 = p2;
                }
                dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-15 {
                    break;
                }
            }
            let w = 2.0 / ((1.0 - x * x) * dp * dp);
            ((x + 1.0) / 2.0, w / 2.0)
        })
        .collect()
}

/// KL(Beta(a, b) ‖ Beta(a0, b0)), closed form.
fn kl_beta(a: f64, b: f64, a0: f64, b0: f64) -> f64 {
    ln_beta(a0, b0) - ln_beta(a, b)
        + (a - a0) * digamma(a)
        + (b - b0) * digamma(b)
        + (a0 - a + b0 - b) * digamma(a + b)
}

#[test]
fn categorical_counts_give_the_blei_jordan_stick_update() {
    // q(v_k) = Beta(1 + N_k, α + Σ_{j>k} N_j) (B&J eq. 19) from prior φ plus the counts N.
    let (alpha, counts) = (1.7, [12.5, 0.0, 3.25, 40.0, 0.5]);
    let d = StickBreaking { k: 5 };
    let mut phi = vec![0.0; 5];
    let a_prior = d.prior(&[&[alpha, alpha.ln()]], &mut phi);
    assert_eq!(phi, [0.0, 0.0, 0.0, 0.0, alpha - 1.0]);
    assert!((a_prior + 4.0 * alpha.ln()).abs() < 1e-12);
    phi.iter_mut().zip(counts).for_each(|(p, n)| *p += n);
    let s = sticks(&phi).unwrap();
    for (k, &(a, b)) in s.iter().enumerate() {
        let tail: f64 = counts[k + 1..].iter().sum();
        assert!((a - (1.0 + counts[k])).abs() < 1e-12, "a_{k}");
        assert!((b - (alpha + tail)).abs() < 1e-12, "b_{k}");
    }
    // ⟨ln π_k⟩ = ψ(a_k) − ψ(a_k + b_k) + Σ_{j<k} [ψ(b_j) − ψ(a_j + b_j)], with v_K = 1.
    let mut u = vec![0.0; 5];
    d.moments(&phi, &mut u).unwrap();
    let mut rest = 0.0;
    for k in 0..5 {
        let own = s.get(k).map_or(0.0, |&(a, b)| digamma(a) - digamma(a + b));
        assert!((u[k] - (own + rest)).abs() < 1e-12, "⟨ln π_{k}⟩");
        if let Some(&(a, b)) = s.get(k) {
            rest += digamma(b) - digamma(a + b);
        }
    }
}

#[test]
fn normaliser_and_base_measure_integrate_to_one_on_the_simplex() {
    // ∫ exp(φ·ln π + f(π) − A(φ)) dπ_1 … dπ_{K−1} = 1 over the simplex, with f from `observe`;
    // the simplex is swept by π_k = t_k (1 − Σ_{j<k} π_j), whose Jacobian ∏ (1 − Σ_{j<k} π_j) is
    // formed here from π, independently of the family's f.
    let nodes = gauss_legendre(48);
    for phi in [vec![1.5, 0.7, 2.2], vec![0.9, 2.5, 0.6, 1.8]] {
        let k = phi.len();
        let d = StickBreaking { k };
        let mut u = vec![0.0; k];
        let a = d.moments(&phi, &mut u).unwrap();
        let mut total = 0.0;
        let mut idx = vec![0usize; k - 1];
        'grid: loop {
            let (mut pi, mut rest, mut jac, mut w) = (vec![0.0; k], 1.0, 1.0, 1.0);
            for (j, &i) in idx.iter().enumerate() {
                // t = s², which smooths the t^(a − 1) of a < 2 at 0.
                let (s, ws) = nodes[i];
                let t = s * s;
                pi[j] = t * rest;
                jac *= rest;
                w *= 2.0 * s * ws;
                rest -= pi[j];
            }
            pi[k - 1] = rest;
            let mut ux = vec![0.0; k];
            let f = d.observe_value(&pi, &mut ux).unwrap();
            let dot: f64 = phi.iter().zip(&ux).map(|(p, v)| p * v).sum();
            total += w * jac * (dot + f - a).exp();
            for slot in idx.iter_mut() {
                *slot += 1;
                if *slot < nodes.len() {
                    continue 'grid;
                }
                *slot = 0;
            }
            break;
        }
        assert!((total - 1.0).abs() < 1e-6, "K = {k}: ∫ p = {total}");
    }
}

#[test]
fn bound_term_is_minus_the_sum_of_the_sticks_kl() {
    // A latent stick node adds φ_prior·u − ⟨A_prior⟩ + A_q − φ_q·u to the bound (Winn (2.14)
    // with the own term), which must be −Σ_j KL(Beta(a_j, b_j) ‖ Beta(1, α)).
    let alpha = 0.8;
    let d = StickBreaking { k: 4 };
    let mut prior = vec![0.0; 4];
    let a_p = d.prior(&[&[alpha, alpha.ln()]], &mut prior);
    let q: Vec<f64> = [5.0, 0.3, 2.0, 7.5]
        .iter()
        .zip(&prior)
        .map(|(n, p)| n + p)
        .collect();
    let mut u = vec![0.0; 4];
    let a_q = d.moments(&q, &mut u).unwrap();
    let term =
        prior.iter().zip(&u).map(|(p, v)| p * v).sum::<f64>() - a_p + d.own_term(&q, &u, a_q);
    let kl: f64 = sticks(&q)
        .unwrap()
        .iter()
        .map(|&(a, b)| kl_beta(a, b, 1.0, alpha))
        .sum();
    assert!(
        (term + kl).abs() < 1e-10,
        "bound term {term}, −Σ KL {}",
        -kl
    );
}

#[test]
fn beta_kl_closed_form_matches_quadrature() {
    // KL = ∫ q ln(q/p) on (0, 1) by Gauss–Legendre after v = t², which smooths a < 1 at 0.
    let nodes = gauss_legendre(400);
    for (a, b, a0, b0) in [
        (6.0, 3.5, 1.0, 0.8),
        (1.3, 40.0, 1.0, 2.0),
        (2.0, 2.0, 1.0, 1.0),
    ] {
        let ln_q = |v: f64| (a - 1.0) * v.ln() + (b - 1.0) * (-v).ln_1p() - ln_beta(a, b);
        let ln_p = |v: f64| (a0 - 1.0) * v.ln() + (b0 - 1.0) * (-v).ln_1p() - ln_beta(a0, b0);
        let kl: f64 = nodes
            .iter()
            .map(|&(t, w)| {
                let v = t * t;
                w * 2.0 * t * ln_q(v).exp() * (ln_q(v) - ln_p(v))
            })
            .sum();
        let closed = kl_beta(a, b, a0, b0);
        assert!(
            (kl - closed).abs() < 1e-7,
            "Beta({a},{b})‖Beta({a0},{b0}): {kl} vs {closed}"
        );
    }
}

#[test]
fn gamma_concentration_gets_the_blei_jordan_message() {
    // q(α) = Gamma(s1 + K − 1, s2 − Σ_{j<K} ⟨ln(1 − v_j)⟩) (B&J §4), from a Gamma(s1, s2) prior
    // plus the message [⟨ln π_K⟩, K − 1] in Gamma natural parameters [−rate, shape − 1].
    let d = StickBreaking { k: 4 };
    let phi = [3.0, 0.5, 8.0, 1.2];
    let mut u = vec![0.0; 4];
    d.moments(&phi, &mut u).unwrap();
    let mut m = [0.0; 2];
    d.message_to(0, &u, 1.0, &[&[1.0, 0.0]], &mut m);
    let (s1, s2) = (2.0, 0.5);
    let (shape, rate) = (s1 + m[1], s2 - m[0]);
    let sum_ln_1mv: f64 = sticks(&phi)
        .unwrap()
        .iter()
        .map(|&(a, b)| digamma(b) - digamma(a + b))
        .sum();
    assert!((shape - (s1 + 3.0)).abs() < 1e-12);
    assert!((rate - (s2 - sum_ln_1mv)).abs() < 1e-12);
}

#[test]
fn mean_is_the_product_of_stick_means_and_matches_samples() {
    let d = StickBreaking { k: 4 };
    let phi = [2.0, 0.4, 5.0, 1.5];
    let m = d.mean(&phi).unwrap();
    assert!((m.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let mut rng = Rng::seed_from_u64(7);
    let (draws, mut sum, mut sq) = (40_000, [0.0; 4], [0.0; 4]);
    let mut x = [0.0; 4];
    for _ in 0..draws {
        d.sample(&phi, &mut rng, &mut x);
        for i in 0..4 {
            sum[i] += x[i];
            sq[i] += x[i] * x[i];
        }
    }
    for i in 0..4 {
        let mean = sum[i] / draws as f64;
        let sd = (sq[i] / draws as f64 - mean * mean).sqrt();
        assert!(
            (mean - m[i]).abs() < 5.0 * sd / (draws as f64).sqrt(),
            "E[π_{i}]"
        );
    }
    // And the Beta(1, 1) sticks of K = 2 are a uniform π_1: mean ½.
    assert!((StickBreaking { k: 2 }.mean(&[0.0, 0.0]).unwrap()[0] - 0.5).abs() < 1e-15);
}
