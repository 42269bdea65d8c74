//! Checks of the hand-derived updates: each leaves the bound stationary in its own parameters
//! (a maximiser), the bound never decreases, and shared α sums over components (Winn (3.16)
//! indexes α by m against the text's shared α; see docs/seed-corrections.md).

use super::*;
use crate::latent::synth;

fn fitted(k: usize, sweeps: usize) -> (Mbpca, Matrix) {
    let t = synth::sinusoid(120, 0.1, 2);
    let mut m = initialise(&t, k, 1, Priors::default(), 5).unwrap();
    let trace = m.run(&t, sweeps, 0.0).unwrap();
    assert!(trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
    (m, t)
}

fn assert_maximum(what: &str, m: &Mbpca, t: &Matrix, h: f64, poke: &dyn Fn(&mut Mbpca, f64)) {
    crate::latent::stationary::assert_maximum(what, m, &|m: &Mbpca| m.bound(t), h, 1e-5, poke);
}

#[test]
fn each_update_maximises_the_bound_in_its_factor() {
    let (mut m, t) = fitted(3, 5);
    m.update_xs(&t).unwrap();
    assert_maximum("m_nm", &m, &t, 1e-4, &|m, h| m.x[7 * 3 + 1] += h);
    m.update_mu(&t);
    assert_maximum("mu", &m, &t, 1e-4, &|m, h| m.mu[2 * 2 + 1] += h);
    assert_maximum("mu var", &m, &t, 1e-7, &|m, h| m.mu_var[1] += h);
    m.update_w(&t).unwrap();
    assert_maximum("w", &m, &t, 1e-4, &|m, h| m.w[2 * 2 + 1] += h);
    m.update_alpha();
    assert_maximum("alpha rate", &m, &t, 1e-4, &|m, h| {
        m.alpha_rate[0] *= 1.0 + h
    });
    assert_maximum("alpha shape", &m, &t, 1e-4, &|m, h| {
        m.alpha_shape[0] *= 1.0 + h
    });
    m.update_tau(&t);
    assert_maximum("tau rate", &m, &t, 1e-5, &|m, h| m.tau_rate *= 1.0 + h);
    assert_maximum("tau shape", &m, &t, 1e-5, &|m, h| m.tau_shape *= 1.0 + h);
    m.update_pi();
    assert_maximum("u", &m, &t, 1e-4, &|m, h| m.u[1] += h);
}

#[test]
fn responsibilities_are_the_optimal_q_of_s() {
    // Moving probability between two components of one point's q(s_n) lowers the bound on both
    // sides after q(x, s) is updated, so r_n is the maximiser on the simplex.
    let (mut m, t) = fitted(3, 5);
    m.update_xs(&t).unwrap();
    let n = 11;
    let (a, b) = (0, 2);
    let h = 1e-4 * m.r[n * 3 + a].min(m.r[n * 3 + b]).max(1e-3);
    assert_maximum("r", &m, &t, h, &|m, h| {
        m.r[n * 3 + a] += h;
        m.r[n * 3 + b] -= h;
    });
}

#[test]
fn alpha_is_shared_across_components() {
    let (m, _) = fitted(3, 3);
    // (3.26) with α shared: shape a_α + K d / 2 (the printed per-component form has d / 2).
    for s in &m.alpha_shape {
        assert!((s - (1e-3 + 3.0)).abs() < 1e-12, "{s}");
    }
    let mut expect = 1e-3;
    for k in 0..3 {
        expect += 0.5 * (0..2).map(|r| m.w[k * 2 + r].powi(2)).sum::<f64>();
        expect += 0.5 * 2.0 * m.w_cov[k];
    }
    assert!((m.alpha_rate[0] - expect).abs() < 1e-9 * expect);
}

#[test]
fn removing_a_component_keeps_the_others() {
    let (m, t) = fitted(3, 3);
    let mut r = m.clone();
    r.remove(1);
    assert_eq!((r.k, r.u.len(), r.mu.len(), r.r.len()), (2, 2, 4, 240));
    assert_eq!(r.mu[2..4], m.mu[4..6]);
    assert_eq!((r.x[2], r.x[3]), (m.x[3], m.x[5]));
    r.run(&t, 3, 0.0).unwrap();
    let s: f64 = (0..2).map(|k| r.r[5 * 2 + k]).sum();
    assert!((s - 1.0).abs() < 1e-12);
}

#[test]
fn bad_shapes_are_errors() {
    let t = synth::sinusoid(10, 0.1, 1);
    for (k, q) in [(0, 1), (1, 0), (1, 2), (6, 1)] {
        let e = initialise(&t, k, q, Priors::default(), 0).unwrap_err();
        assert!(e.to_string().contains("mixture of Bayesian PCA"), "{e}");
    }
    let mut m = initialise(&t, 2, 1, Priors::default(), 0).unwrap();
    let other = synth::sinusoid(12, 0.1, 1);
    assert!(m.run(&other, 2, 0.0).is_err());
}

/// The expected squared residual of one point, written out term by term (the loop form that
/// `residuals` replaces by matrix products).
fn residual_loop(s: &Mbpca, e: &Expect, t: &[f64], n: usize, m: usize) -> f64 {
    let (d, q, k) = (s.d, s.q, s.k);
    let xm = &s.x[(n * k + m) * q..(n * k + m + 1) * q];
    let wm = &s.w[m * d * q..(m + 1) * d * q];
    let mu = &s.mu[m * d..(m + 1) * d];
    let wtw = &e.wtw[m * q * q..(m + 1) * q * q];
    let sx = &s.x_cov[m * q * q..(m + 1) * q * q];
    let mut r = t.iter().map(|v| v * v).sum::<f64>() + e.mu2[m];
    for i in 0..q {
        for j in 0..q {
            r += wtw[i * q + j] * (sx[j * q + i] + xm[i] * xm[j]);
        }
    }
    for j in 0..d {
        let wx: f64 = (0..q).map(|i| wm[j * q + i] * xm[i]).sum();
        r += -2.0 * t[j] * wx - 2.0 * t[j] * mu[j] + 2.0 * mu[j] * wx;
    }
    r
}

#[test]
fn residual_products_match_the_loop() {
    let t = synth::sphere(60, 0.05, 4);
    let mut m = initialise(&t, 3, 2, Priors::default(), 1).unwrap();
    m.run(&t, 4, 0.0).unwrap();
    let e = m.expect();
    let r = m.residuals(&e, &t);
    for n in [0, 17, 59] {
        for c in 0..3 {
            let want = residual_loop(&m, &e, t.row(n), n, c);
            let got = r[n * 3 + c];
            assert!(
                (got - want).abs() < 1e-10 * want.abs().max(1.0),
                "{got} vs {want}"
            );
        }
    }
}

/// A sweep computes q(τ) and the bound from the responsibility-weighted sums of q(x, s)
/// (`sweep.rs`) instead of the per-point residuals of (3.27) that `update_tau` and `bound` form
/// (two algebraically equal forms), so after the first sweep the two runs differ by round-off:
/// every factor and the bound must agree to 1e-12.
#[test]
fn sweep_equals_the_updates_one_by_one() {
    let t = synth::sphere(80, 0.05, 7);
    let mut fused = initialise(&t, 3, 2, Priors::default(), 2).unwrap();
    let mut plain = fused.clone();
    for _ in 0..4 {
        let b = fused.sweep(&t).unwrap();
        plain.update_xs(&t).unwrap();
        plain.update_mu(&t);
        plain.update_w(&t).unwrap();
        plain.update_alpha();
        plain.update_tau(&t);
        plain.update_pi();
        let want = plain.bound(&t);
        assert!((b - want).abs() <= 1e-12 * want.abs(), "{b} vs {want}");
        for (name, a, z) in [
            ("r", &fused.r, &plain.r),
            ("x", &fused.x, &plain.x),
            ("w", &fused.w, &plain.w),
            ("mu", &fused.mu, &plain.mu),
            ("x_cov", &fused.x_cov, &plain.x_cov),
            ("w_cov", &fused.w_cov, &plain.w_cov),
        ] {
            for (u, v) in a.iter().zip(z) {
                assert!(
                    (u - v).abs() <= 1e-12 * v.abs().max(1.0),
                    "{name}: {u} vs {v}"
                );
            }
        }
        assert!(
            (fused.tau_rate - plain.tau_rate).abs() <= 1e-12 * plain.tau_rate,
            "{} vs {}",
            fused.tau_rate,
            plain.tau_rate
        );
        assert_eq!(fused.tau_shape, plain.tau_shape);
        for (u, v) in fused.u.iter().zip(&plain.u) {
            assert!((u - v).abs() <= 1e-12 * v.abs(), "u: {u} vs {v}");
        }
    }
}

/// q(s_n) from the module's short form of ℓ_nm (the quadratic term through Σ_x⁻¹, see
/// `sweep.rs`) equals q(s_n) from ℓ_nm written out with the residuals of (3.27).
#[test]
fn responsibilities_equal_the_residual_form() {
    let t = synth::sphere(90, 0.05, 3);
    let mut m = initialise(&t, 4, 2, Priors::default(), 3).unwrap();
    m.run(&t, 3, 0.0).unwrap();
    m.update_xs(&t).unwrap();
    let e = m.expect();
    let ell = m.ells(&e, &t, &m.logdet_x());
    for (n, (r, l)) in m.r.chunks_exact(4).zip(ell.chunks_exact(4)).enumerate() {
        let lse = occam_core::special::log_sum_exp(l);
        for (a, b) in r.iter().zip(l) {
            let want = (b - lse).exp();
            assert!((a - want).abs() < 1e-10, "point {n}: {a} vs {want}");
        }
    }
}

/// Components run in parallel; every sum is taken in a fixed order, so one thread and two give
/// the same bits.
#[test]
fn the_same_bits_on_one_thread_and_two() {
    let t = synth::sphere(150, 0.05, 9);
    let run = |threads: usize| {
        occam_core::threads::on_threads(threads, || {
            let mut m = initialise(&t, 5, 2, Priors::default(), 4).unwrap();
            let trace = m.run(&t, 6, 0.0).unwrap();
            (trace, m.r, m.x, m.w, m.tau_rate)
        })
        .unwrap()
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one.0, two.0);
    assert_eq!(one.1, two.1);
    assert_eq!(one.2, two.2);
    assert_eq!(one.3, two.3);
    assert_eq!(one.4, two.4);
}
