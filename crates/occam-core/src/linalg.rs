//! Small dense kernels for the per-element d×d matrices of Gaussian and Wishart nodes.
//!
//! These matrices are tiny (d is an event dimension, typically 1–50) and there is one per plate
//! element, so a call into a general library costs more than the arithmetic; a plain Cholesky on
//! a row-major slice is the fastest correct choice here. Large products (sums over plate elements)
//! use faer's GEMM instead (see `engine`). Larger problems with their own submodules: principal
//! axes ([`PrincipalAxes`]) and least squares ([`least_squares`]), with the typed [`LinalgError`].

mod error;
mod lstsq;
mod pca;

pub use error::LinalgError;
pub use lstsq::least_squares;
pub use pca::PrincipalAxes;

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
    gemm(
        faer::MatMut::from_row_major_slice_mut(&mut c, n, m),
        faer::Accum::Replace,
        faer::MatRef::from_row_major_slice(a, n, k),
        faer::MatRef::from_row_major_slice(b, k, m),
    );
    c
}

/// C = A B (`Accum::Replace`) or C += A B (`Accum::Add`) on faer's GEMM, sequential (the same bits
/// on any thread count), then a clean vector state on this thread for the scalar code that
/// follows ([`clean_vector_state`]). Every faer product of the crate goes through
/// here.
pub(crate) fn gemm(
    c: faer::MatMut<'_, f64>,
    accum: faer::Accum,
    a: faer::MatRef<'_, f64>,
    b: faer::MatRef<'_, f64>,
) {
    faer::linalg::matmul::matmul(c, accum, a, b, 1.0, faer::Par::Seq);
    clean_vector_state();
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

/// The lower factor L with LLᵀ = c for a symmetric positive *semi*definite `c` (row-major
/// d×d): where [`cholesky_into`] refuses, a pivot that round-off leaves at or below zero (a
/// direction without variance, as a constant parent's) gets a zero column instead. What a
/// Gaussian quadrature over a possibly degenerate covariance needs (`dist::softmax_quad`).
pub fn cholesky_semidefinite(c: &[f64], d: usize) -> Vec<f64> {
    let mut l = vec![0.0f64; d * d];
    for j in 0..d {
        let pivot = c[j * d + j] - (0..j).map(|i| l[j * d + i].powi(2)).sum::<f64>();
        if pivot <= 1e-14 * c[j * d + j].abs() || pivot <= 0.0 {
            continue;
        }
        let root = pivot.sqrt();
        l[j * d + j] = root;
        for r in j + 1..d {
            let s = c[r * d + j] - (0..j).map(|i| l[r * d + i] * l[j * d + i]).sum::<f64>();
            l[r * d + j] = s / root;
        }
    }
    l
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
mod tests;
