//! Exact sums against `math.fsum`'s own cases (CPython's `test_math.testFsum`), sums whose
//! exact value is known by construction, ties to even, the edge cases, and any order.

use super::*;
use crate::Rng;
use rand::seq::SliceRandom;
use rand::{Rng as _, SeedableRng};

fn sum(v: &[f64]) -> f64 {
    exact_sum(v.iter().copied()).unwrap()
}

fn same_bits(a: f64, b: f64, what: &str) {
    assert_eq!(a.to_bits(), b.to_bits(), "{what}: {a:e} vs {b:e}");
}

#[test]
fn the_cases_of_cpythons_fsum_tests() {
    let p = |e: i32| 2f64.powi(e);
    let cases: Vec<(Vec<f64>, f64)> = vec![
        (vec![], 0.0),
        (vec![0.0], 0.0),
        (vec![1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50], 1e-100),
        (vec![p(53), -0.5, -p(-54)], p(53) - 1.0),
        (vec![p(53), 1.0, p(-100)], p(53) + 2.0),
        (vec![p(53) + 10.0, 1.0, p(-100)], p(53) + 12.0),
        (vec![p(53) - 4.0, 0.5, p(-54)], p(53) - 3.0),
        (
            (1..=1000).map(|n| 1.0 / n as f64).collect(),
            f64::from_bits(0x401d_f11f_45f4_e61a),
        ),
        (
            (1..=1000)
                .map(|n| if n % 2 == 1 { -1.0 } else { 1.0 } / n as f64)
                .collect(),
            f64::from_bits(0xbfe6_2a2a_f1bd_3624),
        ),
        (vec![1e16, 1.0, 1e-16], 10000000000000002.0),
        (
            vec![1e16 - 2.0, 1.0 - p(-53), -(1e16 - 2.0), -(1.0 - p(-53))],
            0.0,
        ),
        (
            (-1074..972)
                .step_by(2)
                .map(|n| p(n) - p(n + 50) + p(n + 52))
                .chain([-p(1022)])
                .collect(),
            f64::from_bits(0x7c95_5555_5555_5555),
        ),
        (vec![1e16, 1.0, -1e16], 1.0),
    ];
    for (values, want) in &cases {
        same_bits(sum(values), *want, &format!("{} values", values.len()));
    }
    // Plain addition misses several of them (the test can fail).
    let plain: f64 = [1e16, 1.0, -1e16].iter().sum();
    assert_eq!(plain, 0.0);
}

#[test]
fn ties_round_to_even_and_the_partials_below_break_them() {
    let p = |e: i32| 2f64.powi(e);
    let up = 1.0 + p(-52);
    same_bits(sum(&[1.0, p(-53)]), 1.0, "a tie to the even 1");
    same_bits(sum(&[up, p(-53)]), 1.0 + p(-51), "a tie to the even above");
    same_bits(sum(&[1.0, p(-53), p(-80)]), up, "just above a tie");
    same_bits(sum(&[up, p(-53), -p(-80)]), up, "just below a tie");
    same_bits(
        sum(&[1.0, p(-53), -p(-80)]),
        1.0,
        "below a tie to the even 1",
    );
}

#[test]
fn a_sum_known_by_construction_is_exact_in_any_order() {
    let mut rng = Rng::seed_from_u64(7);
    for trial in 0..200 {
        // Values of wildly different magnitudes, their negatives, and a remainder r: the exact
        // sum is r.
        let r: f64 = rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-20..20));
        let mut v: Vec<f64> = (0..40)
            .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-30..30)))
            .collect();
        let negatives: Vec<f64> = v.iter().map(|x| -x).collect();
        v.extend(negatives);
        v.push(r);
        v.shuffle(&mut rng);
        same_bits(sum(&v), r, &format!("trial {trial}"));
    }
}

#[test]
fn the_edge_cases() {
    let inf = f64::INFINITY;
    same_bits(sum(&[-0.0, -0.0]), -0.0, "only negative zeros");
    same_bits(sum(&[-0.0, 0.0]), 0.0, "mixed zeros");
    same_bits(sum(&[1.0, -1.0]), 0.0, "an exact zero");
    same_bits(sum(&[1.0, inf, -3.0]), inf, "+inf");
    same_bits(sum(&[-inf, 1e308, 1e308]), -inf, "-inf beside an overflow");
    assert_eq!(exact_sum([1.0, f64::NAN]), Err(NotASum::Nan { element: 0 }));
    assert_eq!(
        exact_sum([inf, 2.0, -inf]),
        Err(NotASum::OppositeInfinities { element: 0 })
    );
    assert_eq!(
        exact_sum([f64::MAX, f64::MAX, -f64::MAX]),
        Err(NotASum::Overflow { element: 0 })
    );
    // The largest finite sums do not overflow.
    same_bits(sum(&[f64::MAX, -1.0, 1.0]), f64::MAX, "the largest float");
}

#[test]
fn vectors_sum_element_by_element_and_name_the_element_without_a_sum() {
    let a = [1e16, 1.0, 0.5];
    let b = [1.0, -0.0, 0.25];
    let c = [-1e16, -1.0, 0.25];
    assert_eq!(
        exact_sums([&a[..], &b[..], &c[..]]).unwrap(),
        vec![1.0, 0.0, 1.0]
    );
    let d = [0.0, f64::NAN, 0.0];
    assert_eq!(
        exact_sums([&a[..], &d[..]]),
        Err(NotASum::Nan { element: 1 })
    );
    assert_eq!(
        exact_sums([&a[..], &a[..2]]),
        Err(NotASum::Length {
            expected: 3,
            got: 2
        })
    );
    assert_eq!(exact_sums(std::iter::empty::<&[f64]>()).unwrap(), vec![]);
}

#[test]
fn any_order_and_grouping_gives_the_same_bits() {
    let mut rng = Rng::seed_from_u64(3);
    let vectors: Vec<Vec<f64>> = (0..16)
        .map(|_| {
            (0..5)
                .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-8..8)))
                .collect()
        })
        .collect();
    let want = exact_sums(vectors.iter().map(|v| &v[..])).unwrap();
    let mut plain_differs = false;
    for _ in 0..50 {
        let mut order: Vec<usize> = (0..vectors.len()).collect();
        order.shuffle(&mut rng);
        let got = exact_sums(order.iter().map(|&i| &vectors[i][..])).unwrap();
        for (a, b) in got.iter().zip(&want) {
            same_bits(*a, *b, "a permutation");
        }
        let plain: Vec<f64> = (0..5)
            .map(|j| order.iter().map(|&i| vectors[i][j]).sum::<f64>())
            .collect();
        plain_differs |= plain.iter().zip(&want).any(|(a, b)| a != b);
    }
    assert!(plain_differs, "plain sums never depended on the order here");
}
