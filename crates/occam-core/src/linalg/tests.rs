use super::*;

/// Callable anywhere (a no-op without AVX), from any thread, and the values held across it
/// are unchanged; a product after it gives the same bits as before it.
#[test]
fn clean_vector_state_keeps_values() {
    let v: Vec<f64> = (0..64).map(|i| f64::from(i) * 0.25).collect();
    let w = v.clone();
    let before = mat_mul(&v, &w, 8, 8, 8);
    clean_vector_state();
    assert_eq!(v, w);
    assert_eq!(mat_mul(&v, &w, 8, 8, 8), before);
    std::thread::spawn(clean_vector_state).join().unwrap();
    let logs: Vec<f64> = v.iter().map(|x| (x + 1.0).ln()).collect();
    clean_vector_state();
    let again: Vec<f64> = v.iter().map(|x| (x + 1.0).ln()).collect();
    assert_eq!(logs, again);
}

#[test]
fn transpose_swaps_rows_and_columns() {
    // 2 × 3 → 3 × 2, and back.
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let t = transpose(&a, 2, 3);
    assert_eq!(t, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert_eq!(transpose(&t, 3, 2), a.to_vec());
    // Square: element (i, j) goes to (j, i).
    let s: Vec<f64> = (0..9).map(f64::from).collect();
    let st = transpose(&s, 3, 3);
    for (i, j) in (0..3).flat_map(|i| (0..3).map(move |j| (i, j))) {
        assert_eq!(st[j * 3 + i], s[i * 3 + j]);
    }
}

#[test]
fn cholesky_solves_inverts_and_gives_log_det() {
    let a = [4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0];
    let c = Cholesky::new(&a, 3).unwrap();
    let mut inv = [0.0; 9];
    c.inverse_into(&mut inv);
    for i in 0..3 {
        for j in 0..3 {
            let p: f64 = (0..3).map(|k| a[i * 3 + k] * inv[k * 3 + j]).sum();
            assert!((p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
        }
    }
    let det = 4.0 * (3.0 * 2.0 - 0.04) - 1.0 * (2.0 - 0.1) + 0.5 * (0.2 - 1.5);
    assert!((c.log_det() - f64::ln(det)).abs() < 1e-12);
    assert!(Cholesky::new(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
}

/// The slice kernels against the definitions: the factor of a scaled matrix has the bits of
/// the factor of the matrix scaled first (powers of two), L Lᵀ = A, the inverse (by L⁻¹)
/// against A⁻¹ solved column by column, exactly symmetric, and a non-positive-definite or
/// non-finite matrix refused.
#[test]
fn slice_kernels_factor_solve_and_invert() {
    use rand::SeedableRng as _;
    let mut rng = crate::Rng::seed_from_u64(5);
    for d in [1, 2, 3, 6, 10, 17] {
        let a = random_spd(&mut rng, d);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut l = vec![f64::NAN; d * d];
        for scale in [-1.0, -2.0] {
            let phi: Vec<f64> = a.iter().map(|v| v / scale).collect();
            assert!(cholesky_into(&phi, scale, d, &mut l));
            let mut direct = vec![0.0; d * d];
            assert!(cholesky_into(&a, 1.0, d, &mut direct));
            assert_eq!(bits(&l), bits(&direct), "d = {d}");
        }
        for i in 0..d {
            for j in 0..d {
                let p: f64 = (0..d).map(|k| l[i * d + k] * l[j * d + k]).sum();
                assert!((p - a[i * d + j]).abs() < 1e-12 * (1.0 + a[i * d + j].abs()));
            }
        }
        let (mut inv, mut work) = (vec![f64::NAN; d * d], vec![f64::NAN; d * d]);
        chol_inverse_into(&l, d, &mut inv, &mut work);
        for j in 0..d {
            let mut col = vec![0.0; d];
            col[j] = 1.0;
            chol_solve_in_place(&l, d, &mut col);
            for i in 0..d {
                let scale = 1.0 + col[i].abs();
                assert!((inv[i * d + j] - col[i]).abs() < 1e-12 * scale, "d = {d}");
                assert_eq!(inv[i * d + j].to_bits(), inv[j * d + i].to_bits());
            }
        }
    }
    let mut l = [0.0; 4];
    assert!(!cholesky_into(&[1.0, 2.0, 2.0, 1.0], 1.0, 2, &mut l));
    assert!(!cholesky_into(&[f64::NAN, 0.0, 0.0, 1.0], 1.0, 2, &mut l));
    assert!(!cholesky_into(
        &[1.0, f64::INFINITY, f64::INFINITY, 1.0],
        1.0,
        2,
        &mut l
    ));
}

/// The log-determinant by one logarithm of the mantissas' product agrees with the sum of
/// the diagonal's logarithms, over diagonals from 1e-300 to 1e300, and falls back on
/// subnormal, negative or non-finite entries.
#[test]
fn log_det_by_one_logarithm_equals_the_sum_of_logarithms() {
    use rand::{Rng as _, SeedableRng as _};
    let mut rng = crate::Rng::seed_from_u64(9);
    for d in [1, 2, 5, 16, 64, 65] {
        for _ in 0..200 {
            let mut l = vec![0.0; d * d];
            for i in 0..d {
                l[i * d + i] = 10f64.powf(rng.random_range(-300.0..300.0) / d as f64);
            }
            let direct = 2.0 * (0..d).map(|i| l[i * d + i].ln()).sum::<f64>();
            let fast = chol_log_det(&l, d);
            assert!(
                (fast - direct).abs() <= 1e-13 * (1.0 + direct.abs()),
                "{fast} {direct}"
            );
        }
    }
    let l = [1e-310, 0.0, 0.0, 4.0];
    assert_eq!(chol_log_det(&l, 2), 2.0 * (1e-310f64.ln() + 4f64.ln()));
    assert!(chol_log_det(&[f64::NAN], 1).is_nan());
    assert!(chol_log_det(&[-2.0], 1).is_nan());
    assert_eq!(chol_log_det(&[f64::INFINITY], 1), f64::INFINITY);
}

/// A nested use of the scratch buffer gets its own buffer: the outer contents survive.
#[test]
fn nested_scratch_buffers_are_distinct() {
    with_scratch(8, |outer| {
        outer.iter_mut().for_each(|v| *v = 1.0);
        with_scratch(8, |inner| inner.iter_mut().for_each(|v| *v = 2.0));
        assert!(outer.iter().all(|&v| v == 1.0));
    });
}

#[test]
fn lower_times_rows_has_the_bits_of_lower_times_row_by_row() {
    use rand::{Rng as _, SeedableRng as _};
    let mut rng = crate::Rng::seed_from_u64(7);
    for d in [1, 2, 5, 40] {
        let a = random_spd(&mut rng, d);
        let c = Cholesky::new(&a, d).unwrap();
        // 150 rows: two full blocks and a partial one; signed zeros and tiny values included.
        let mut z: Vec<f64> = (0..150 * d).map(|_| rng.random::<f64>() - 0.5).collect();
        z[0] = -0.0;
        z[d] = 1e-300;
        let mut rows = vec![f64::NAN; z.len()];
        c.lower_times_rows(&z, &mut rows);
        let mut one = vec![0.0; d];
        for (zr, rr) in z.chunks_exact(d).zip(rows.chunks_exact(d)) {
            c.lower_times(zr, &mut one);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&one), bits(rr));
        }
    }
}

#[test]
fn lu_inverts_a_general_matrix_and_gives_log_abs_det() {
    // Not symmetric, needs a row swap, negative determinant: det = −1·(2·4 − 0·1) = −8.
    let a = [0.0, 1.0, 0.0, 2.0, 3.0, 0.0, 1.0, 0.0, 4.0];
    let (inv, log_det) = inverse_and_log_det(&a, 3).unwrap();
    for i in 0..3 {
        for j in 0..3 {
            let p: f64 = (0..3).map(|k| a[i * 3 + k] * inv[k * 3 + j]).sum();
            assert!((p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
        }
    }
    assert!((log_det - 8f64.ln()).abs() < 1e-12, "{log_det}");
    assert!(inverse_and_log_det(&[1.0, 2.0, 2.0, 4.0], 2).is_none());
    assert!(inverse_and_log_det(&[f64::NAN, 0.0, 0.0, 1.0], 2).is_none());
}

/// On a positive definite matrix the semidefinite factor is the Cholesky factor; on a
/// rank-deficient one (a direction without variance) it still reproduces the matrix, with a zero
/// column where the pivot vanishes, where `cholesky_into` refuses.
#[test]
fn semidefinite_cholesky_keeps_the_factor_and_zeroes_a_degenerate_column() {
    let a = [4.0, 2.0, 0.4, 2.0, 3.0, 0.5, 0.4, 0.5, 2.0];
    let mut l = [0.0; 9];
    assert!(cholesky_into(&a, 1.0, 3, &mut l));
    let s = cholesky_semidefinite(&a, 3);
    for (x, y) in s.iter().zip(&l) {
        assert!((x - y).abs() <= 1e-15 * (1.0 + y.abs()), "{s:?} vs {l:?}");
    }
    // c = v vᵀ + e₃e₃ᵀ with v = (1, 2, 0): rank 2, the second pivot is 0.
    let c = [1.0, 2.0, 0.0, 2.0, 4.0, 0.0, 0.0, 0.0, 1.0];
    assert!(!cholesky_into(&c, 1.0, 3, &mut l));
    let s = cholesky_semidefinite(&c, 3);
    assert_eq!([s[4], s[7]], [0.0, 0.0], "{s:?}");
    for i in 0..3 {
        for j in 0..3 {
            let llt: f64 = (0..3).map(|k| s[i * 3 + k] * s[j * 3 + k]).sum();
            assert!(
                (llt - c[i * 3 + j]).abs() <= 1e-15,
                "({i}, {j}): {llt} vs {}",
                c[i * 3 + j]
            );
        }
    }
}
