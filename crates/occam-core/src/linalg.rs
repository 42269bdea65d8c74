//! Small dense kernels for the per-element d×d matrices of Gaussian and Wishart nodes.
//!
//! These matrices are tiny (d is an event dimension, typically 1–50) and there is one per plate
//! element, so a call into a general library costs more than the arithmetic; a plain Cholesky on
//! a row-major slice is the fastest correct choice here. Large products (sums over plate elements)
//! use faer's GEMM instead (see `engine`).

/// Aᵀ (cols × rows, row-major) of a row-major rows × cols matrix. Shared by the fused mixture
/// update (Θ as len × K), the engine's rotations and the facade's latent-variable models.
pub fn transpose(a: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    debug_assert_eq!(a.len(), rows * cols);
    (0..rows * cols)
        .map(|c| a[(c % rows) * cols + c / rows])
        .collect()
}

/// C (n × m) = A B for row-major A (n × k) and B (k × m) on faer's GEMM, sequential (the same bits
/// on any thread count), leaving a clean vector state ([`clean_vector_state`]). Shared by the
/// engine's rotations and the facade's latent-variable models.
pub fn mat_mul(a: &[f64], b: &[f64], n: usize, k: usize, m: usize) -> Vec<f64> {
    let mut c = vec![0.0; n * m];
    crate::kernels::gemm(
        faer::MatMut::from_row_major_slice_mut(&mut c, n, m),
        faer::Accum::Replace,
        faer::MatRef::from_row_major_slice(a, n, k),
        faer::MatRef::from_row_major_slice(b, k, m),
    );
    c
}

/// Puts the upper halves of the x86 vector registers back in their clean state (`vzeroupper`)
/// on the calling thread where the CPU has AVX; does nothing elsewhere. Call it right after a
/// faer product or decomposition, on the thread that ran it; no value changes.
///
/// faer's GEMM microkernels (hand-written AVX-512) return without `vzeroupper` and leave the upper
/// bits of the vector registers "dirty". While they are, every instruction of code compiled for
/// the baseline target (SSE encoding: the per-element updates, ln Γ and ψ, the bound terms) pays
/// a state transition, and each call into libm's `log` more: measured on this project's AVX-512
/// machine, a libm `log` took 230 ns with dirty upper halves against 7 ns clean. The crate's own
/// GEMM wrappers ([`mat_mul`], the engine's kernels) and [`inverse_and_log_det`] call it, so
/// their callers need nothing; code that calls faer directly calls it after.
pub fn clean_vector_state() {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX, the one feature `zero_upper` enables.
        unsafe { zero_upper() }
    }
}

/// `vzeroupper`, compiled with AVX enabled.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn zero_upper() {
    std::arch::x86_64::_mm256_zeroupper();
}

/// Cholesky factor L (row-major, lower triangular) of a symmetric positive-definite matrix.
///
/// The factorisation and every use of a factor are also free functions on caller-provided
/// slices ([`cholesky_into`], [`chol_log_det`], [`chol_solve_in_place`], [`chol_inverse_into`]),
/// so the per-element moments of Gaussian and Wishart nodes (one small matrix per plate element,
/// per update) allocate nothing: they work in [`with_scratch`]'s buffer.
#[derive(Clone, Debug)]
pub struct Cholesky {
    l: Vec<f64>,
    d: usize,
}

impl Cholesky {
    /// Factorises the symmetric matrix `a` (row-major d×d); `None` if it is not positive definite
    /// or not finite.
    pub fn new(a: &[f64], d: usize) -> Option<Self> {
        let mut l = vec![0.0; d * d];
        cholesky_into(a, 1.0, d, &mut l).then_some(Cholesky { l, d })
    }

    /// log |A|.
    pub fn log_det(&self) -> f64 {
        chol_log_det(&self.l, self.d)
    }

    /// Solves A x = b in place.
    pub fn solve_in_place(&self, b: &mut [f64]) {
        chol_solve_in_place(&self.l, self.d, b)
    }

    /// A⁻¹ (row-major, symmetric) written into `out`.
    pub fn inverse_into(&self, out: &mut [f64]) {
        let d = self.d;
        with_scratch(d * d, |work| chol_inverse_into(&self.l, d, out, work))
    }

    /// Multiplies L z (used to draw Gaussian samples with covariance A).
    pub fn lower_times(&self, z: &[f64], out: &mut [f64]) {
        let d = self.d;
        for i in 0..d {
            out[i] = (0..=i).map(|k| self.l[i * d + k] * z[k]).sum();
        }
    }

    /// [`Cholesky::lower_times`] of every row of `z` (rows × d, row-major) into `out`, with the
    /// same bits: each entry is the same sum in the same order (from −0.0, as `Sum` starts, over k
    /// ascending), formed for a block of rows at once (rows as vector lanes).
    pub fn lower_times_rows(&self, z: &[f64], out: &mut [f64]) {
        const BLOCK: usize = 64;
        let d = self.d;
        let (mut zt, mut acc) = (vec![0.0; d * BLOCK], vec![0.0; BLOCK]);
        for (zb, ob) in z.chunks(d * BLOCK).zip(out.chunks_mut(d * BLOCK)) {
            let rows = zb.len() / d.max(1);
            for (r, row) in zb.chunks_exact(d).enumerate() {
                for (k, &v) in row.iter().enumerate() {
                    zt[k * BLOCK + r] = v;
                }
            }
            for i in 0..d {
                acc[..rows].iter_mut().for_each(|a| *a = -0.0);
                for k in 0..=i {
                    let lik = self.l[i * d + k];
                    let col = &zt[k * BLOCK..k * BLOCK + rows];
                    acc[..rows]
                        .iter_mut()
                        .zip(col)
                        .for_each(|(a, &v)| *a += lik * v);
                }
                for (r, &a) in acc[..rows].iter().enumerate() {
                    ob[r * d + i] = a;
                }
            }
        }
    }
}

/// The lower Cholesky factor of `scale` times the symmetric part of `a` (row-major d×d) into
/// `l` (d×d; its upper triangle is zeroed); false if that matrix is not positive definite or
/// not finite. The symmetric part is ½(a_ij + a_ji), formed before the scale: for a power of two
/// (the −1 of a Wishart's −φ₁, the −2 of a Gaussian's −2φ₂) the factor has the bits of the
/// factor of the scaled matrix.
pub fn cholesky_into(a: &[f64], scale: f64, d: usize, l: &mut [f64]) -> bool {
    let (a, l) = (&a[..d * d], &mut l[..d * d]);
    l.iter_mut().for_each(|v| *v = 0.0);
    for i in 0..d {
        let (done, rest) = l.split_at_mut(i * d);
        let row = &mut rest[..d];
        for j in 0..i {
            let mut s = scale * (0.5 * (a[i * d + j] + a[j * d + i]));
            for (x, y) in row[..j].iter().zip(&done[j * d..j * d + j]) {
                s -= x * y;
            }
            row[j] = s / done[j * d + j];
        }
        let mut s = scale * a[i * d + i];
        for x in &row[..i] {
            s -= x * x;
        }
        if s <= 0.0 || !s.is_finite() {
            return false;
        }
        row[i] = s.sqrt();
    }
    true
}

/// log |A| from A's Cholesky factor `l` (d×d): 2 Σ ln L_ii, with one logarithm for the whole
/// sum where it can. Each L_ii = m_i 2^{e_i} with m_i in [1, 2) (its bits), so Σ ln L_ii =
/// ln Π m_i + (Σ e_i) ln 2; the product of up to 64 mantissas stays below 2^64, far from
/// overflow. A non-positive, subnormal, infinite or NaN diagonal (no valid factor has one) takes
/// the logarithm of each entry instead.
pub fn chol_log_det(l: &[f64], d: usize) -> f64 {
    const MANTISSA: u64 = (1 << 52) - 1;
    const ONE: u64 = 1023 << 52;
    let diagonal = || (0..d).map(|i| l[i * d + i]);
    if d > 64 || !diagonal().all(|v| v.is_normal() && v > 0.0) {
        return diagonal().map(f64::ln).sum::<f64>() * 2.0;
    }
    let (mut product, mut exponent) = (1.0f64, 0i64);
    for v in diagonal() {
        let bits = v.to_bits();
        product *= f64::from_bits((bits & MANTISSA) | ONE);
        exponent += ((bits >> 52) & 0x7ff) as i64 - 1023;
    }
    2.0 * (product.ln() + exponent as f64 * std::f64::consts::LN_2)
}

/// Solves A x = b in place, from A's Cholesky factor `l` (d×d): L y = b, then Lᵀ x = y.
pub fn chol_solve_in_place(l: &[f64], d: usize, b: &mut [f64]) {
    let b = &mut b[..d];
    for i in 0..d {
        let row = &l[i * d..i * d + i];
        let mut s = b[i];
        for (x, y) in row.iter().zip(&b[..i]) {
            s -= x * y;
        }
        b[i] = s / l[i * d + i];
    }
    for i in (0..d).rev() {
        let mut s = b[i];
        for k in i + 1..d {
            s -= l[k * d + i] * b[k];
        }
        b[i] = s / l[i * d + i];
    }
}

/// A⁻¹ (row-major, exactly symmetric) into `out`, from A's Cholesky factor `l` (d×d), with
/// `work` (d×d) as scratch: W = L⁻¹ by forward substitution (row i of W from the rows above
/// it), then A⁻¹ = Wᵀ W, (A⁻¹)_ij = Σ_{k ≥ max(i, j)} W_ki W_kj. About d³/3 multiply-adds
/// where solving A x = e_j for every column costs d³, and each entry is formed once, so the
/// result needs no symmetrising.
pub fn chol_inverse_into(l: &[f64], d: usize, out: &mut [f64], work: &mut [f64]) {
    let (w, out) = (&mut work[..d * d], &mut out[..d * d]);
    w.iter_mut().for_each(|v| *v = 0.0);
    for i in 0..d {
        let inv = 1.0 / l[i * d + i];
        let (done, rest) = w.split_at_mut(i * d);
        let row = &mut rest[..d];
        // W_ij = −(Σ_{j ≤ k < i} L_ik W_kj) / L_ii for j < i; W_ii = 1 / L_ii.
        for (k, &lik) in l[i * d..i * d + i].iter().enumerate() {
            for (x, y) in row[..=k].iter_mut().zip(&done[k * d..k * d + k + 1]) {
                *x -= lik * y;
            }
        }
        row[..i].iter_mut().for_each(|x| *x *= inv);
        row[i] = inv;
    }
    for i in 0..d {
        for j in 0..=i {
            let mut s = 0.0;
            for k in i..d {
                s += w[k * d + i] * w[k * d + j];
            }
            out[i * d + j] = s;
            out[j * d + i] = s;
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Calls `f` with a buffer of `len` values (contents unspecified) from this thread's scratch,
/// allocated once and reused: the per-element work of small dense kernels allocates nothing.
/// A nested call (while the buffer is out) gets a fresh buffer.
pub fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [f64]) -> R) -> R {
    let mut buf = SCRATCH.with(|c| c.take());
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    let r = f(&mut buf[..len]);
    SCRATCH.with(|c| c.set(buf));
    r
}

/// tr(A B) for row-major d×d matrices (A B symmetric or not).
pub fn trace_of_product(a: &[f64], b: &[f64], d: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..d {
        for j in 0..d {
            s += a[i * d + j] * b[j * d + i];
        }
    }
    s
}

/// y = A x for a row-major d×d matrix.
pub fn mat_vec(a: &[f64], x: &[f64], y: &mut [f64]) {
    let d = x.len();
    for i in 0..d {
        y[i] = (0..d).map(|j| a[i * d + j] * x[j]).sum();
    }
}

/// xᵀ A y.
pub fn quad_form(x: &[f64], a: &[f64], y: &[f64]) -> f64 {
    let d = x.len();
    let mut s = 0.0;
    for i in 0..d {
        for j in 0..d {
            s += x[i] * a[i * d + j] * y[j];
        }
    }
    s
}

/// A⁻¹ and ln|det A| of a general (not necessarily symmetric) row-major d×d matrix, by faer's
/// LU with partial pivoting; `None` if A is not finite or is singular to working precision.
/// Leaves a clean vector state ([`clean_vector_state`]).
pub fn inverse_and_log_det(a: &[f64], d: usize) -> Option<(Vec<f64>, f64)> {
    use faer::linalg::solvers::DenseSolveCore;
    if a.len() != d * d || a.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let m = faer::MatRef::from_row_major_slice(a, d, d);
    let lu = m.partial_piv_lu();
    // The logarithms below and the caller's scalar code: from a clean vector state.
    clean_vector_state();
    let u = lu.U();
    let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let mut log_det = 0.0;
    for i in 0..d {
        let p = u[(i, i)].abs();
        if !(p > f64::EPSILON * scale * d as f64) {
            return None;
        }
        log_det += p.ln();
    }
    let inv = lu.inverse();
    clean_vector_state();
    let out: Vec<f64> = (0..d * d).map(|k| inv[(k / d, k % d)]).collect();
    out.iter().all(|v| v.is_finite()).then_some((out, log_det))
}

use rand::Rng as _;

/// A random symmetric positive-definite d×d matrix (row-major), well conditioned.
pub(crate) fn random_spd(rng: &mut crate::Rng, d: usize) -> Vec<f64> {
    let b: Vec<f64> = (0..d * d).map(|_| rng.random::<f64>() - 0.5).collect();
    let mut a = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            a[i * d + j] = (0..d).map(|k| b[i * d + k] * b[j * d + k]).sum::<f64>();
        }
        a[i * d + i] += 0.5 + rng.random::<f64>();
    }
    a
}

#[cfg(test)]
mod tests {
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
}
