//! Third-order (Leisink–Kappen) bound: moment engines agree, gradients match finite
//! differences, the Saul ↔ first-order equivalence holds, and Table 1 / Fig. 8 reproduce.

use crate::sbn_common;
use occam_binary::sbn::exact;
use occam_binary::sbn::mf::{self, MfOptions};
use occam_binary::sbn::repro::{lk_table_cell, LkTableOptions};
use occam_binary::sbn::third::{self, MomentEngine, PmParams, TermAdjoint, XiParams};
use sbn_common::{check_fd, random_sbn};

fn random_xi(sbn: &occam_binary::sbn::Sbn, seed: u64) -> XiParams {
    use rand::{Rng, SeedableRng};
    let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    XiParams {
        xi0: (0..sbn.n_units())
            .map(|_| -0.8 + 0.4 * r.random::<f64>())
            .collect(),
        xie: (0..sbn.n_edges())
            .map(|_| 0.3 * (2.0 * r.random::<f64>() - 1.0))
            .collect(),
    }
}

fn random_m(h: usize, seed: u64) -> Vec<f64> {
    use rand::{Rng, SeedableRng};
    let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..h).map(|_| 1.6 * r.random::<f64>() - 0.8).collect()
}

#[test]
fn sbn_polynomial_and_enumerated_moments_agree() {
    for seed in 0..6 {
        let (sbn, ev) = random_sbn(seed, 7, 3, 0.6, 1.5);
        let th = PmParams::from_sbn(&sbn);
        let xi = random_xi(&sbn, seed + 100);
        let m = random_m(ev.hidden().len(), seed + 200);
        let mu: Vec<f64> = m.iter().map(|x: &f64| x.atanh()).collect();
        let t = third::build_terms(&sbn, &ev, &th, &xi, Some(&mu));
        let mut a1 = TermAdjoint::zeros(&t);
        let mut a2 = TermAdjoint::zeros(&t);
        let e = third::moments_enum(&t, &m, Some((0.7, -1.3, 0.4, &mut a1))).unwrap();
        let p =
            occam_binary::sbn::third_poly::moments_poly(&t, &m, Some((0.7, -1.3, 0.4, &mut a2)));
        for (x, y) in [(e.0, p.0), (e.1, p.1), (e.2, p.2)] {
            assert!(
                (x - y).abs() < 1e-10 * (1.0 + x.abs()),
                "seed {seed}: {e:?} vs {p:?}"
            );
        }
        let close = |a: &[f64], b: &[f64]| {
            a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() < 1e-9 * (1.0 + x.abs()))
        };
        assert!((a1.c0 - a2.c0).abs() < 1e-9 * (1.0 + a1.c0.abs()));
        assert!(close(&a1.lin, &a2.lin) && close(&a1.quad, &a2.quad));
        assert!(
            close(&a1.coef, &a2.coef) && close(&a1.b, &a2.b),
            "seed {seed}"
        );
    }
}

#[test]
fn sbn_third_order_gradients_match_finite_differences() {
    for seed in 0..4 {
        let (sbn, ev) = random_sbn(seed + 10, 6, 2, 0.7, 1.0);
        let th = PmParams::from_sbn(&sbn);
        let xi = random_xi(&sbn, seed);
        let m = random_m(ev.hidden().len(), seed + 1);
        for engine in [MomentEngine::Enumerate, MomentEngine::Polynomial] {
            let (_, g) = third::third_order(&sbn, &ev, &th, &xi, &m, engine, true).unwrap();
            let (dxi, dth) = g.unwrap();
            // wrt ξ⁰ and ξ^{pi} (hidden parents only; others are inert)
            let mut x0 = xi.xi0.clone();
            x0.extend_from_slice(&xi.xie);
            let mut an = dxi.xi0.clone();
            let active = third::active_edges(&sbn, &ev);
            an.extend(
                (0..sbn.n_edges()).map(|e| if active.contains(&e) { dxi.xie[e] } else { 0.0 }),
            );
            let n = sbn.n_units();
            check_fd("dB/dxi", &an, &x0, 1e-5, 1e-6, |x| {
                let mut xx = xi.clone();
                xx.xi0.copy_from_slice(&x[..n]);
                for e in 0..sbn.n_edges() {
                    if active.contains(&e) {
                        xx.xie[e] = x[n + e];
                    }
                }
                third::third_order(&sbn, &ev, &th, &xx, &m, engine, false)
                    .unwrap()
                    .0
                    .bound
            });
            // wrt θ
            let mut t0 = th.theta_e.clone();
            t0.extend_from_slice(&th.theta_b);
            let mut an = dth.theta_e.clone();
            an.extend_from_slice(&dth.theta_b);
            let ne = sbn.n_edges();
            check_fd("dB/dtheta", &an, &t0, 1e-5, 1e-6, |x| {
                let tt = PmParams {
                    theta_e: x[..ne].to_vec(),
                    theta_b: x[ne..].to_vec(),
                };
                third::third_order(&sbn, &ev, &tt, &xi, &m, engine, false)
                    .unwrap()
                    .0
                    .bound
            });
        }
    }
}

#[test]
fn sbn_first_order_gradient_matches_finite_differences() {
    let (sbn, ev) = random_sbn(3, 7, 3, 0.6, 1.2);
    let th = PmParams::from_sbn(&sbn);
    let xi = random_xi(&sbn, 9);
    let m = random_m(ev.hidden().len(), 4);
    let (_, dxi, dth) = third::first_order(&sbn, &ev, &th, &xi, &m).unwrap();
    let n = sbn.n_units();
    check_fd("first dxi0", &dxi.xi0, &xi.xi0, 1e-5, 1e-7, |x| {
        let mut xx = xi.clone();
        xx.xi0.copy_from_slice(&x[..n]);
        third::first_order(&sbn, &ev, &th, &xx, &m).unwrap().0
    });
    check_fd(
        "first dtheta_b",
        &dth.theta_b,
        &th.theta_b,
        1e-5,
        1e-7,
        |x| {
            let tt = PmParams {
                theta_e: th.theta_e.clone(),
                theta_b: x.to_vec(),
            };
            third::first_order(&sbn, &ev, &tt, &xi, &m).unwrap().0
        },
    );
}

#[test]
fn sbn_saul_bound_equals_first_order_bound_at_converted_parameters() {
    // Saul's bound = Leisink & Kappen (41) + a free offset per unit (docs/seed-corrections.md).
    for seed in 0..5 {
        let (sbn, ev) = random_sbn(seed + 50, 8, 3, 0.5, 1.5);
        let fit = mf::fit(&sbn, &ev, &MfOptions::default()).unwrap();
        let (m, xi) = third::from_saul(&sbn, &ev, &fit.state);
        let th = PmParams::from_sbn(&sbn);
        let lk = third::first_order(&sbn, &ev, &th, &xi, &m).unwrap().0;
        assert!(
            (lk - fit.bound).abs() < 1e-9 * (1.0 + lk.abs()),
            "seed {seed}: {lk} vs {}",
            fit.bound
        );
    }
}

#[test]
fn sbn_third_order_is_a_bound_on_the_exact_likelihood_of_an_unclamped_cascade() {
    // LK Fig. 10 setting: nothing clamped, exact ln 𝓛 = 0.
    let sbn = occam_binary::sbn::gen::cascade(4, 0.1, 0.1, 7).unwrap();
    let ev = occam_binary::sbn::Evidence::none(sbn.n_units());
    let fit = mf::fit(&sbn, &ev, &MfOptions::default()).unwrap();
    let ch = third::chain_from_mf(&sbn, &ev, &fit, &third::LkOptions::default()).unwrap();
    let ll = exact::log_likelihood(&sbn, &ev).unwrap();
    assert!(ll.abs() < 1e-12);
    assert!(ch.saul <= ch.first.bound + 1e-12 && ch.first.bound <= ch.third.bound + 1e-12);
    assert!(
        ch.third.bound <= 1e-12 && ch.third.bound > ch.saul,
        "{ch:?}"
    );
}

fn cell(a: f64, b: f64, networks: usize) -> occam_binary::sbn::repro::LkTableCell {
    lk_table_cell(&LkTableOptions {
        a,
        b,
        networks,
        seed: 1,
    })
    .unwrap()
}

#[test]
fn sbn_lk_table1_centre_cell_and_fig8_factor_of_ten() {
    let c = cell(1.0, 1.0, 200);
    assert_eq!(c.order_violations, 0);
    assert!((c.eta - 0.906).abs() <= 0.02, "{c:?}");
    let ratio = c.rel_err_mf / c.rel_err_third;
    assert!(
        (7.0..=14.0).contains(&ratio),
        "MF/third error ratio {ratio}: {c:?}"
    );
    assert!((c.rel_err_mf - 0.015).abs() < 0.004, "{c:?}");
}

#[test]
fn sbn_lk_table1_cells_b_half_and_two() {
    let c = cell(1.0, 0.5, 200);
    assert_eq!(c.order_violations, 0);
    assert!((c.eta - 0.968).abs() <= 0.03, "{c:?}");
    let c = cell(1.0, 2.0, 200);
    assert_eq!(c.order_violations, 0);
    assert!((c.eta - 0.769).abs() <= 0.03, "{c:?}");
}

#[test]
fn sbn_mismatched_shapes_are_errors() {
    let (sbn, ev) = random_sbn(1, 6, 2, 0.6, 1.0);
    let th = PmParams::from_sbn(&sbn);
    let xi = random_xi(&sbn, 1);
    let m = random_m(ev.hidden().len() + 1, 2);
    let e = third::third_order(&sbn, &ev, &th, &xi, &m, MomentEngine::Auto, true).unwrap_err();
    assert!(
        matches!(e, occam_binary::sbn::SbnError::Length { .. }),
        "{e}"
    );
    assert!(third::first_order(&sbn, &ev, &th, &xi, &m).is_err());
}
