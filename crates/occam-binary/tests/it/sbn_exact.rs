//! Exact enumeration: matches a brute-force sum, marginals match, gradient matches finite
//! differences, result is identical for any thread count, and bad input is an error.

use crate::sbn_common;
use occam_binary::sbn::{exact, Evidence, Sbn, SbnError};
use sbn_common::random_sbn;

fn brute(sbn: &Sbn, ev: &Evidence) -> (f64, Vec<f64>) {
    let n = sbn.n_units();
    let mut tot = 0.0;
    let mut marg = vec![0.0; n];
    for s in 0..1usize << n {
        let x: Vec<f64> = (0..n).map(|i| ((s >> i) & 1) as f64).collect();
        if (0..n).any(|i| ev.get(i).is_some_and(|v| (x[i] > 0.5) != v)) {
            continue;
        }
        let p = sbn.log_joint(&x).exp();
        tot += p;
        for i in 0..n {
            marg[i] += p * x[i];
        }
    }
    (tot.ln(), marg.iter().map(|m| m / tot).collect())
}

#[test]
fn sbn_enumeration_matches_brute_force() {
    for seed in 0..8 {
        let (sbn, ev) = random_sbn(seed, 9, 3, 0.5, 2.0);
        let r = exact::exact(&sbn, &ev).unwrap();
        let (ll, marg) = brute(&sbn, &ev);
        assert!(
            (r.log_likelihood - ll).abs() < 1e-12,
            "{} vs {ll}",
            r.log_likelihood
        );
        for (a, b) in r.marginals.iter().zip(&marg) {
            assert!((a - b).abs() < 1e-12);
        }
    }
}

#[test]
fn sbn_all_visible_distribution_sums_to_one() {
    let (sbn, _) = random_sbn(4, 8, 0, 0.6, 1.5);
    let lp = exact::visible_distribution(&sbn, &[5, 6, 7]).unwrap();
    let s: f64 = lp.iter().map(|l| l.exp()).sum();
    assert!((s - 1.0).abs() < 1e-12);
}

#[test]
fn sbn_exact_gradient_matches_finite_differences() {
    let (sbn, ev) = random_sbn(2, 7, 3, 0.6, 1.0);
    let (_, g) = exact::log_likelihood_grad(&sbn, &ev).unwrap();
    sbn_common::check_fd("exact grad", &g, &sbn.params(), 1e-6, 1e-7, |p| {
        let mut s = sbn.clone();
        s.set_params(p).unwrap();
        exact::log_likelihood(&s, &ev).unwrap()
    });
}

#[test]
fn sbn_result_is_independent_of_thread_count() {
    // 16 hidden units = 16 chunks of 2^12 states
    let (sbn, ev) = random_sbn(9, 18, 2, 0.3, 1.0);
    let run = |threads: usize| {
        occam_core::threads::on_threads(threads, || exact::exact(&sbn, &ev).unwrap()).unwrap()
    };
    let a = run(1);
    let b = run(3);
    assert_eq!(a.log_likelihood.to_bits(), b.log_likelihood.to_bits());
    assert_eq!(a.marginals, b.marginals);
}

#[test]
fn sbn_bad_input_is_an_error_not_a_panic() {
    assert!(matches!(
        Sbn::new(vec![0.0; 2], vec![vec![(1, 1.0)], vec![(0, 1.0)]]),
        Err(SbnError::Cycle { .. })
    ));
    assert!(matches!(
        Sbn::new(vec![0.0; 2], vec![vec![], vec![(5, 1.0)]]),
        Err(SbnError::UnitOutOfRange { .. })
    ));
    assert!(matches!(
        Sbn::new(vec![0.0; 2], vec![vec![], vec![(0, 1.0), (0, 2.0)]]),
        Err(SbnError::DuplicateParent { .. })
    ));
    assert!(matches!(
        Sbn::new(vec![f64::NAN], vec![vec![]]),
        Err(SbnError::NotFinite { .. })
    ));
    let (sbn, _) = random_sbn(1, 5, 1, 0.5, 1.0);
    assert!(matches!(
        exact::exact(&sbn, &Evidence::none(3)),
        Err(SbnError::Length { .. })
    ));
    let big = Sbn::new(vec![0.0; 40], vec![vec![]; 40]).unwrap();
    assert!(matches!(
        exact::exact(&big, &Evidence::none(40)),
        Err(SbnError::TooManyHidden { .. })
    ));
}
