//! The Jaakkola–Jordan bound against exact expectations (quadrature) and its ξ fixed point
//! against finite differences.

use super::*;
use crate::dist::BinomialLogit;
use crate::quad::expect_standard_normal;
use crate::special::ln_binomial;

/// ⟨ln p(y | η)⟩ for η ~ N(m, v), by quadrature: y ln σ(η) + (n − y) ln σ(−η) + ln C(n, y).
fn exact(n: u32, y: f64, m: f64, v: f64) -> f64 {
    let n = n as f64;
    expect_standard_normal(|z| {
        let eta = m + v.sqrt() * z;
        y * log_sigmoid(eta) + (n - y) * log_sigmoid(-eta)
    }) + ln_binomial(n, y)
}

/// The family's bound term ⟨φ⟩y − ⟨A⟩ + f(y) at moments (m, m² + v).
fn family_bound(d: &impl ExpFamily, y: f64, m: f64, v: f64) -> f64 {
    let pa = [m, m * m + v];
    let mut phi = [0.0];
    let a = d.prior(&[&pa], &mut phi);
    let mut u = [0.0];
    let f = d.observe_value(&[y], &mut u).unwrap();
    phi[0] * u[0] - a + f
}

#[test]
fn the_bound_is_below_the_exact_expectation_and_exact_for_a_point_mass() {
    for &(m, v) in &[(0.0, 1.0), (1.5, 0.3), (-2.0, 4.0), (0.3, 1e-3), (4.0, 9.0)] {
        for y in [0.0, 1.0] {
            let b = family_bound(&BernoulliLogit, y, m, v);
            let e = exact(1, y, m, v);
            assert!(b <= e + 1e-12, "m {m} v {v} y {y}: bound {b} > exact {e}");
            // The one-trial helper agrees with the family's term.
            let h = jj_bound(y, m, m * m + v, jj_xi(m * m + v));
            assert!((h - b).abs() < 1e-12, "{h} vs {b}");
        }
        for y in [0.0, 2.0, 5.0] {
            let b = family_bound(&BinomialLogit { trials: 5 }, y, m, v);
            let e = exact(5, y, m, v);
            assert!(b <= e + 1e-12, "binomial m {m} v {v} y {y}: {b} > {e}");
        }
    }
    // A point mass: ξ = |η| makes the tangent touch, the bound is the log-likelihood itself.
    for eta in [-3.0, -0.2, 0.0, 0.7, 5.0] {
        for y in [0.0, 1.0] {
            let b = family_bound(&BernoulliLogit, y, eta, 0.0);
            let e = y * log_sigmoid(eta) + (1.0 - y) * log_sigmoid(-eta);
            assert!((b - e).abs() < 1e-12, "η {eta} y {y}: {b} vs {e}");
        }
    }
}

#[test]
fn the_xi_update_is_a_stationary_point_and_the_maximum_of_the_bound() {
    for &(y, m1, m2) in &[
        (1.0, 0.4, 1.3),
        (0.0, -1.0, 2.5),
        (1.0, 2.0, 4.2),
        (0.0, 0.1, 0.02),
    ] {
        let xi = jj_xi(m2);
        let h = 1e-5;
        let fd = (jj_bound(y, m1, m2, xi + h) - jj_bound(y, m1, m2, xi - h)) / (2.0 * h);
        assert!(fd.abs() < 1e-8, "dL/dξ at ξ* = {fd}");
        // Away from ξ* the derivative has the sign that points back to it (−λ′(ξ)(m2 − ξ²), λ′ < 0).
        let lo =
            (jj_bound(y, m1, m2, 0.5 * xi + h) - jj_bound(y, m1, m2, 0.5 * xi - h)) / (2.0 * h);
        let hi =
            (jj_bound(y, m1, m2, 2.0 * xi + h) - jj_bound(y, m1, m2, 2.0 * xi - h)) / (2.0 * h);
        assert!(lo > 0.0 && hi < 0.0, "dL/dξ: {lo} below ξ*, {hi} above");
        for s in [0.1, 0.5, 0.9, 1.1, 2.0, 5.0] {
            assert!(jj_bound(y, m1, m2, s * xi) <= jj_bound(y, m1, m2, xi) + 1e-15);
        }
    }
}

#[test]
fn lambda_is_continuous_at_zero() {
    let a = jj_lambda(1e-4 * (1.0 - 1e-12));
    let b = jj_lambda(1e-4 * (1.0 + 1e-12));
    assert!((a - b).abs() < 1e-14, "{a} {b}");
    assert_eq!(jj_lambda(0.0), 0.125);
    assert!((jj_lambda(2.0) - (1.0f64).tanh() / 8.0).abs() < 1e-15);
}

#[test]
fn messages_are_the_bound_derivatives_at_the_optimal_xi() {
    // Envelope theorem: the message at ξ* equals the derivative of max_ξ L in u_η.
    let d = BinomialLogit { trials: 3 };
    let pa = [0.7, 1.9];
    let mut m = [0.0; 2];
    d.message_to(0, &[2.0], 1.0, &[&pa], &mut m);
    let l = |p: [f64; 2]| {
        let mut phi = [0.0];
        let a = d.prior(&[&p], &mut phi);
        phi[0] * 2.0 - a
    };
    let h = 1e-6;
    for k in 0..2 {
        let (mut p, mut q) = (pa, pa);
        p[k] += h;
        q[k] -= h;
        let fd = (l(p) - l(q)) / (2.0 * h);
        assert!(
            (fd - m[k]).abs() < 1e-7,
            "slot entry {k}: FD {fd}, message {}",
            m[k]
        );
    }
}
