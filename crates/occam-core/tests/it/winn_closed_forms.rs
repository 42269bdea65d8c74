//! Winn §1.8.5: the univariate Gaussian with unknown mean and precision. VMP must reproduce the
//! hand-derived updates (1.59–1.62) and the bound (1.63) to 1e-10, and the bound must not decrease.

use occam_core::prelude::*;
use occam_core::special::{digamma, ln_gamma, LN_2PI};
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

#[test]
fn vmp_matches_the_closed_form_updates_and_bound() {
    let mut rng = occam_core::Rng::seed_from_u64(1);
    let x: Vec<f64> = (0..4)
        .map(|_| Normal::new(5.0, 1.0).unwrap().sample(&mut rng))
        .collect();
    let (m, beta, a, b) = (0.0, 1e-3, 1e-3, 1e-3);

    let mut g = Graph::new();
    let n = g.plate("N", x.len());
    let mu = g.add("mu", Gaussian, &[], [c(m), c(beta)]).unwrap();
    let gamma = g.add("gamma", Gamma { shape: a }, &[], [c(b)]).unwrap();
    let xs = g.add("x", Gaussian, &[n], [p(mu), p(gamma)]).unwrap();
    g.observe(xs, &x).unwrap();
    let mut vmp = g.compile().unwrap();
    vmp.initialize(0).unwrap();

    // Closed-form iteration from the same start: Q(γ) is its prior.
    let mut e_g = a / b;
    let nn = x.len() as f64;
    let sx: f64 = x.iter().sum();
    let mut last = f64::NEG_INFINITY;
    for _ in 0..30 {
        // (1.59), (1.60)
        let beta_q = beta + nn * e_g;
        let m_q = (beta * m + e_g * sx) / beta_q;
        let (e_mu, e_mu2) = (m_q, m_q * m_q + 1.0 / beta_q);
        // (1.61), (1.62)
        let a_q = a + nn / 2.0;
        let b_q = b + 0.5
            * x.iter()
                .map(|xi| xi * xi - 2.0 * xi * e_mu + e_mu2)
                .sum::<f64>();
        e_g = a_q / b_q;
        let e_lng = digamma(a_q) - b_q.ln();
        // (1.63)
        let sq: f64 = x.iter().map(|xi| xi * xi - 2.0 * xi * e_mu + e_mu2).sum();
        let bound = nn / 2.0 * (e_lng - LN_2PI) - e_g / 2.0 * sq
            + 0.5 * (beta.ln() - beta * (e_mu2 - 2.0 * m * e_mu + m * m))
            - 0.5 * (beta_q.ln() - 1.0)
            + (a * b.ln() + a * e_lng - b * e_g - ln_gamma(a))
            - (a_q * b_q.ln() + a_q * e_lng - b_q * e_g - ln_gamma(a_q));

        vmp.update(mu).unwrap();
        vmp.update(gamma).unwrap();
        let phi_mu = vmp.natural(mu);
        let phi_g = vmp.natural(gamma);
        let rel = |got: f64, want: f64| (got - want).abs() / want.abs().max(1.0);
        assert!(rel(-2.0 * phi_mu[1], beta_q) < 1e-10, "β'");
        assert!(rel(phi_mu[0] / (-2.0 * phi_mu[1]), m_q) < 1e-10, "m'");
        assert!(rel(phi_g[1] + 1.0, a_q) < 1e-10, "a'");
        assert!(rel(-phi_g[0], b_q) < 1e-10, "b'");
        let l = vmp.bound();
        assert!(rel(l, bound) < 1e-10, "bound {l} vs (1.63) {bound}");
        assert!(l >= last - 1e-12 * l.abs(), "bound decreased: {last} → {l}");
        last = l;
    }
}

/// Winn (1.68–1.69): with both factors MAP, VMP converges to the joint MAP fixed point, and the
/// bound is log P(x, μ', γ').
#[test]
fn map_factors_reach_the_map_fixed_point() {
    let x = [4.4, 5.9, 5.2, 3.7];
    let (m, beta, a, b) = (0.0, 1e-3, 2.0, 1.0);
    let mut g = Graph::new();
    let n = g.plate("N", 4);
    let mu = g.add("mu", Gaussian, &[], [c(m), c(beta)]).unwrap();
    let gamma = g.add("gamma", Gamma { shape: a }, &[], [c(b)]).unwrap();
    let xs = g.add("x", Gaussian, &[n], [p(mu), p(gamma)]).unwrap();
    g.observe(xs, &x).unwrap();
    g.set_map(mu);
    g.set_map(gamma);
    let mut vmp = g.compile().unwrap();
    let fit = vmp
        .run(&RunOptions {
            tol: 1e-14,
            max_iter: 500,
            decrease_is_error: true,
            ..Default::default()
        })
        .unwrap();
    let (mu_v, g_v) = (vmp.mean(mu).unwrap()[0], vmp.mean(gamma).unwrap()[0]);
    let nn = 4.0;
    let mu_fp = (beta * m + g_v * x.iter().sum::<f64>()) / (beta + nn * g_v);
    let g_fp = (nn + 2.0 * (a - 1.0))
        / (2.0 * b + x.iter().map(|xi| (xi - mu_v) * (xi - mu_v)).sum::<f64>());
    assert!(
        (mu_v - mu_fp).abs() < 1e-9 && (g_v - g_fp).abs() < 1e-9,
        "({mu_v}, {g_v}) vs ({mu_fp}, {g_fp})"
    );
    let log_joint = x
        .iter()
        .map(|xi| 0.5 * (g_v.ln() - LN_2PI) - 0.5 * g_v * (xi - mu_v).powi(2))
        .sum::<f64>()
        + 0.5 * (beta.ln() - LN_2PI)
        - 0.5 * beta * (mu_v - m).powi(2)
        + a * b.ln()
        - ln_gamma(a)
        + (a - 1.0) * g_v.ln()
        - b * g_v;
    assert!(
        (fit.bound - log_joint).abs() < 1e-9,
        "bound {} vs log P(x, μ', γ') {log_joint}",
        fit.bound
    );
}
