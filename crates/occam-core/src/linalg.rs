//! Small dense kernels for the per-element d×d matrices of Gaussian and Wishart nodes.
//!
//! These matrices are tiny (d is an event dimension, typically 1–50) and there is one per plate
//! element, so a call into a general library costs more than the arithmetic; a plain Cholesky on
//! a row-major slice is the fastest correct choice here. Large products (sums over plate elements)
//! use faer's GEMM instead (see `engine`).

/// C (n × m) = A B for row-major A (n × k) and B (k × m) on faer's GEMM, sequential (the same bits
/// on any thread count). Shared by the engine's rotations and the facade's latent-variable models.
pub fn mat_mul(a: &[f64], b: &[f64], n: usize, k: usize, m: usize) -> Vec<f64> {
    let mut c = vec![0.0; n * m];
    faer::linalg::matmul::matmul(
        faer::MatMut::from_row_major_slice_mut(&mut c, n, m),
        faer::Accum::Replace,
        faer::MatRef::from_row_major_slice(a, n, k),
        faer::MatRef::from_row_major_slice(b, k, m),
        1.0,
        faer::Par::Seq,
    );
    c
}

/// Cholesky factor L (row-major, lower triangular) of a symmetric positive-definite matrix.
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
        for i in 0..d {
            for j in 0..=i {
                let mut s = 0.5 * (a[i * d + j] + a[j * d + i]);
                for k in 0..j {
                    s -= l[i * d + k] * l[j * d + k];
                }
                if i == j {
                    if s <= 0.0 || !s.is_finite() {
                        return None;
                    }
                    l[i * d + i] = s.sqrt();
                } else {
                    l[i * d + j] = s / l[j * d + j];
                }
            }
        }
        Some(Cholesky { l, d })
    }

    /// log |A|.
    pub fn log_det(&self) -> f64 {
        (0..self.d)
            .map(|i| self.l[i * self.d + i].ln())
            .sum::<f64>()
            * 2.0
    }

    /// Solves A x = b in place.
    pub fn solve_in_place(&self, b: &mut [f64]) {
        let d = self.d;
        for i in 0..d {
            let mut s = b[i];
            for k in 0..i {
                s -= self.l[i * d + k] * b[k];
            }
            b[i] = s / self.l[i * d + i];
        }
        for i in (0..d).rev() {
            let mut s = b[i];
            for k in i + 1..d {
                s -= self.l[k * d + i] * b[k];
            }
            b[i] = s / self.l[i * d + i];
        }
    }

    /// A⁻¹ (row-major, symmetric) written into `out`.
    pub fn inverse_into(&self, out: &mut [f64]) {
        let d = self.d;
        let mut col = vec![0.0; d];
        for j in 0..d {
            col.iter_mut().for_each(|c| *c = 0.0);
            col[j] = 1.0;
            self.solve_in_place(&mut col);
            for i in 0..d {
                out[i * d + j] = col[i];
            }
        }
        for i in 0..d {
            for j in 0..i {
                let s = 0.5 * (out[i * d + j] + out[j * d + i]);
                out[i * d + j] = s;
                out[j * d + i] = s;
            }
        }
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
pub fn inverse_and_log_det(a: &[f64], d: usize) -> Option<(Vec<f64>, f64)> {
    use faer::linalg::solvers::DenseSolveCore;
    if a.len() != d * d || a.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let m = faer::MatRef::from_row_major_slice(a, d, d);
    let lu = m.partial_piv_lu();
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
