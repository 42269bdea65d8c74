use super::*;

#[test]
fn kernels_match_loops() {
    for len in [1, 4] {
        check(5000, 3, len);
    }
    // Rows that do not fill a block of eight (the kernels' leftover loops), one component.
    check(5003, 3, 4);
    check(13, 1, 2);
    // Row by row (up to 16 components over runs up to 16) and by GEMM (longer runs, more
    // components).
    check(777, 10, 6);
    check(301, 17, 3);
    check(301, 4, 20);
}

/// The one-pass column sums and φ·u give `column_sums`' bits and the eight-lane dot's value,
/// with leftover rows and values, and a −∞ φ under a 0 u counted as 0.
#[test]
fn column_sums_and_natural_dot_match_the_separate_sums() {
    for (rows, q) in [(512, 10), (515, 3), (7, 4), (1, 1), (203, 16), (77, 25)] {
        let u: Vec<f64> = (0..rows * q)
            .map(|i| ((i * 7919) % 13) as f64 / 13.0)
            .collect();
        let mut phi: Vec<f64> = (0..rows * q)
            .map(|i| ((i * 104_729) % 17) as f64 - 8.0)
            .collect();
        let mut u = u;
        u[q / 2] = 0.0;
        phi[q / 2] = f64::NEG_INFINITY;
        let mut want = vec![0.0; q];
        column_sums(&u, &mut want);
        let mut got = vec![0.0; q];
        let dot = column_sums_and_natural_dot(&phi, &u, &mut got);
        assert_eq!(got, want, "rows {rows} q {q}");
        let plain: f64 = phi
            .iter()
            .zip(&u)
            .map(|(&p, &v)| if v == 0.0 { 0.0 } else { p * v })
            .sum();
        assert!(
            (dot - plain).abs() <= 1e-12 * plain.abs().max(1.0),
            "{dot} vs {plain}"
        );
    }
}

/// The dispatched row kernels (AVX-512 or AVX2 where the machine has them) give the bits of
/// the same code compiled for the baseline target (this test's own copy, inlined here): plain
/// mul/add in the same order on every target. (It tests vector code in an optimised build,
/// `cargo test --release`; unoptimised, neither copy is vectorised. Both pass.)
#[test]
fn every_target_gives_the_same_bits() {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (rows, q, len) in [
        (512, 10, 6),
        (301, 3, 5),
        (77, 16, 16),
        (9, 1, 1),
        (130, 7, 2),
    ] {
        let noise =
            |i: usize, salt: usize| ((i * 7919 + salt * 104_729) % 1000) as f64 / 1000.0 - 0.5;
        let u: Vec<f64> = (0..rows * len).map(|i| 3.0 * noise(i, 1)).collect();
        let w: Vec<f64> = (0..rows * q).map(|i| noise(i, 2) + 0.5).collect();
        let phi: Vec<f64> = (0..rows * q).map(|i| 40.0 * noise(i, 3)).collect();
        let theta_t: Vec<f64> = (0..len * q).map(|i| 2.0 * noise(i, 4)).collect();
        let a: Vec<f64> = (0..q).map(|i| noise(i, 5)).collect();
        let (mut l1, mut l2) = (vec![0.0; rows * q], vec![0.0; rows * q]);
        scores_rows(&u, len, &theta_t, &a, &mut l1);
        crate::special::with_row_length!(q, scores_fixed(&u, len, &theta_t, &a, &mut l2));
        assert_eq!(bits(&l1), bits(&l2), "scores, q {q} len {len}");
        let (mut s1, mut s2) = (vec![0.0; q * len], vec![0.0; q * len]);
        weighted_sums_rows(&w, q, &u, len, &mut s1);
        crate::special::with_row_length!(q, weighted_sums_fixed(&w, q, &u, len, &mut s2));
        assert_eq!(bits(&s1), bits(&s2), "S, q {q} len {len}");
        let (mut t1, mut t2) = (vec![0.0; q], vec![0.0; q]);
        let d1 = column_sums_and_natural_dot(&phi, &w, &mut t1);
        let d2 = sums_and_dot(&phi, &w, &mut t2);
        assert_eq!((bits(&t1), d1.to_bits()), (bits(&t2), d2.to_bits()));
    }
}

fn check(n: usize, q: usize, len: usize) {
    let w: Vec<f64> = (0..n * q)
        .map(|i| ((i * 7919) % 13) as f64 / 13.0)
        .collect();
    let u: Vec<f64> = (0..n * len)
        .map(|i| ((i * 104_729) % 17) as f64 - 8.0)
        .collect();
    let (s, t) = weighted_sums(&w, q, &u, len);
    for k in 0..q {
        let tk: f64 = (0..n).map(|e| w[e * q + k]).sum();
        assert!((t[k] - tk).abs() < 1e-9);
        for j in 0..len {
            let sk: f64 = (0..n).map(|e| w[e * q + k] * u[e * len + j]).sum();
            assert!((s[k * len + j] - sk).abs() < 1e-8 * (1.0 + sk.abs()));
        }
    }
    let theta: Vec<f64> = (0..q * len).map(|i| i as f64 * 0.1 - 0.5).collect();
    let a: Vec<f64> = (0..q).map(|k| [0.5, -1.0, 2.0][k % 3] + k as f64).collect();
    let mut l = vec![0.0; n * q];
    scores(&u, len, &theta, &a, &mut l);
    for e in (0..n).step_by(97) {
        for k in 0..q {
            let want: f64 = (0..len)
                .map(|j| u[e * len + j] * theta[k * len + j])
                .sum::<f64>()
                - a[k];
            assert!((l[e * q + k] - want).abs() < 1e-10);
        }
    }
}
