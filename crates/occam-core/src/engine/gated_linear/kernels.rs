//! The per-point passes of the block update, one component per task (rayon; each task sequential
//! and every sum across components or points taken in a fixed order afterwards, so the results
//! are the same bits for any thread count). Matrix products are faer's GEMM, sequential.
//!
//! 1. q(x_n, s_n) (Winn (3.20)–(3.21), (3.29)–(3.30)): the projections p_nk = ⟨W_k⟩ᵀ(y_n − ⟨μ_k⟩)
//!    and the means m_nk = ⟨τ⟩ Σ_k p_nk, two products per component. The log-weights need no
//!    third product: with Σ_k⁻¹ = I + ⟨τ⟩⟨W_kᵀW_k⟩ and m_nk = ⟨τ⟩ Σ_k p_nk, the quadratic term
//!    ⟨τ⟩ m_nkᵀ⟨W_kᵀW_k⟩m_nk of the expected squared residual equals ⟨τ⟩ p_nkᵀm_nk − ‖m_nk‖², and
//!    the ‖m_nk‖² cancels against ⟨ln p(x_nk)⟩, leaving
//!    ℓ_nk = c_k − ½⟨τ⟩‖y_n − ⟨μ_k⟩‖² + ½⟨τ⟩ p_nkᵀ m_nk.
//! 2. The responsibility-weighted sums of [`Sums`], two products per component: every message
//!    and bound term of the block reads only these (and Σ_n r_nk ‖y_n − ⟨μ_k⟩‖², a pass over the
//!    data), so nothing is projected again after W changes.
//!
//! Each pass goes over the points in blocks of [`BLOCK`] rows, so that a block's projections and
//! means are still in cache for the per-point sums that follow the products.

use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

use super::{Inputs, Layout};
use crate::linalg::Cholesky;
use crate::special::{log_sum_exp, LN_2PI};

/// Rows per block of a component's pass over the points: the block's data, projections and
/// means (3 × 256 × ~50 values) stay in cache between the products and the per-point sums.
const BLOCK: usize = 256;

/// C = A B (`Accum::Replace`) or C += A B, sequential, then a clean vector state.
pub(super) fn gemm(c: MatMut<'_, f64>, accum: Accum, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    faer::linalg::matmul::matmul(c, accum, a, b, 1.0, Par::Seq);
    crate::linalg::clean_vector_state();
}

/// Σ_i f(a_i, b_i) in eight interleaved partial sums (a fixed order that the compiler can keep
/// in one vector register, where a single running sum waits on every addition).
fn sum8(a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) -> f64 {
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(&x, &y)| f(x, y))
        .sum();
    let mut acc = [0.0; 8];
    for (x, y) in ac.zip(bc) {
        for ((s, &u), &v) in acc.iter_mut().zip(x).zip(y) {
            *s += f(u, v);
        }
    }
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail
}

/// Σ_i (a_i − b_i)² (see [`sum8`]).
pub(super) fn dist2(a: &[f64], b: &[f64]) -> f64 {
    sum8(a, b, |x, y| (x - y) * (x - y))
}

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    sum8(a, b, |x, y| x * y)
}

/// The columns of a row-major N × (K·w) array as K disjoint N × w views.
fn col_blocks(a: &mut [f64], n: usize, k: usize, w: usize) -> Vec<MatMut<'_, f64>> {
    let mut rest = MatMut::from_row_major_slice_mut(a, n, k * w);
    let mut out = Vec::with_capacity(k);
    for _ in 0..k {
        let (block, tail) = rest.split_at_col_mut(w);
        out.push(block);
        rest = tail;
    }
    out
}

/// Row i of a row-major view (unit column stride) as a slice.
fn row(a: MatRef<'_, f64>, i: usize) -> &[f64] {
    a.row(i)
        .try_as_row_major()
        .expect("row-major view")
        .as_slice()
}

/// A failed [`solve`]: the component whose precision has no Cholesky factor and the untouched
/// buffers.
pub(super) type Failed = (usize, Vec<f64>, [Vec<f64>; 3]);

/// The optimal q(x, s) of [`solve`]: `x` holds m_nk (N·K·q) then Σ_k (K·q²), `logdet` ln |Σ_k|,
/// `ell` ℓ_nk, `r` the responsibilities and `lse` ln Σ_k exp ℓ_nk.
pub(super) struct Solved {
    pub x: Vec<f64>,
    pub logdet: Vec<f64>,
    pub ell: Vec<f64>,
    pub r: Vec<f64>,
    pub lse: Vec<f64>,
}

/// The optimal q(x, s) given the parents' expectations `e` and the data `y` (step 1), reusing
/// `x`'s buffer and s's previous (ℓ, r, ln Σ exp ℓ) arrays `old_index`; `Err((k, x, old_index))`:
/// component k's precision I + ⟨τ⟩⟨W_kᵀW_k⟩ is not positive definite (the buffers returned
/// untouched).
pub(super) fn solve(
    l: &Layout,
    e: &Inputs,
    y: &[f64],
    mut x: Vec<f64>,
    old_index: [Vec<f64>; 3],
) -> Result<Solved, Failed> {
    let (n, d, q, k) = (l.n, l.d, l.q, l.k);
    let tau = e.tau;
    // Σ_k first: on failure `x` is untouched.
    let mut covs = vec![0.0; k * q * q];
    let mut logdet = vec![0.0; k];
    for (c, ld) in logdet.iter_mut().enumerate() {
        let mut a: Vec<f64> = e.wm.wtw[c * q * q..(c + 1) * q * q]
            .iter()
            .map(|v| tau * v)
            .collect();
        for i in 0..q {
            a[i * q + i] += 1.0;
        }
        let Some(ch) = Cholesky::new(&a, q) else {
            return Err((c, x, old_index));
        };
        ch.inverse_into(&mut covs[c * q * q..(c + 1) * q * q]);
        *ld = -ch.log_det();
    }
    // Every value of `x` is overwritten below: a buffer of the right size is reused as it is.
    x.resize(n * k * q + k * q * q, 0.0);
    let (xm, x_cov) = x.split_at_mut(n * k * q);
    x_cov.copy_from_slice(&covs);
    // c_k: every term of ℓ_nk that does not depend on n.
    let consts: Vec<f64> = (0..k)
        .map(|c| {
            let wtw = &e.wm.wtw[c * q * q..(c + 1) * q * q];
            let sx = &x_cov[c * q * q..(c + 1) * q * q];
            let tr_wsx = dot(wtw, sx);
            let tr_sx: f64 = (0..q).map(|i| sx[i * q + i]).sum();
            e.ln_pi[c] + 0.5 * d as f64 * (e.ln_tau - LN_2PI)
                - 0.5 * tau * (e.mu_var[c] + tr_wsx)
                - 0.5 * tr_sx
                + 0.5 * q as f64
                + 0.5 * logdet[c]
        })
        .collect();
    let (w, mu, x_cov) = (&e.wm.w, &e.mu, &*x_cov);
    let tv = MatRef::from_row_major_slice(y, n, d);
    let cols: Vec<Vec<f64>> = col_blocks(xm, n, k, q)
        .into_par_iter()
        .enumerate()
        .map(|(c, mut x)| {
            let wm = &w[c * d * q..(c + 1) * d * q];
            let mum = &mu[c * d..(c + 1) * d];
            // ⟨μ_k⟩ᵀ⟨W_k⟩, subtracted from every projection.
            let muw: Vec<f64> = (0..q)
                .map(|i| (0..d).map(|j| mum[j] * wm[j * q + i]).sum())
                .collect();
            let sx: Vec<f64> = x_cov[c * q * q..(c + 1) * q * q]
                .iter()
                .map(|v| tau * v)
                .collect();
            let mut p = vec![0.0; BLOCK.min(n) * q];
            let mut ell = Vec::with_capacity(n);
            for start in (0..n).step_by(BLOCK) {
                let rows = BLOCK.min(n - start);
                let pb = &mut p[..rows * q];
                gemm(
                    MatMut::from_row_major_slice_mut(pb, rows, q),
                    Accum::Replace,
                    tv.subrows(start, rows),
                    MatRef::from_row_major_slice(wm, d, q),
                );
                for row in pb.chunks_exact_mut(q) {
                    for (v, m) in row.iter_mut().zip(&muw) {
                        *v -= m;
                    }
                }
                let mut xb = x.rb_mut().subrows_mut(start, rows);
                gemm(
                    xb.rb_mut(),
                    Accum::Replace,
                    MatRef::from_row_major_slice(pb, rows, q),
                    MatRef::from_row_major_slice(&sx, q, q),
                );
                for (i, pi) in pb.chunks_exact(q).enumerate() {
                    let pm = dot(pi, row(xb.rb(), i));
                    let yn = &y[(start + i) * d..(start + i + 1) * d];
                    ell.push(consts[c] - 0.5 * tau * dist2(yn, mum) + 0.5 * tau * pm);
                }
            }
            ell
        })
        .collect();
    // s's previous arrays are reused: every value is overwritten below.
    let [mut ell, mut r, mut lse] = old_index;
    ell.resize(n * k, 0.0);
    r.resize(n * k, 0.0);
    lse.resize(n, 0.0);
    for i in 0..n {
        let li = &mut ell[i * k..(i + 1) * k];
        for (lm, col) in li.iter_mut().zip(&cols) {
            *lm = col[i];
        }
        let z = log_sum_exp(li);
        lse[i] = z;
        for (ri, v) in r[i * k..(i + 1) * k].iter_mut().zip(li.iter()) {
            *ri = (v - z).exp();
        }
    }
    Ok(Solved {
        x,
        logdet,
        ell,
        r,
        lse,
    })
}

/// The responsibility-weighted sums of q(x, s), per component k (step 2), kept in x's φ as
/// [N_k (K) | Σ r m (K·q) | Σ r m mᵀ (K·q²) | Σ r y mᵀ (K·D·q) | Σ r y (D·K)].
pub(super) struct Sums<'a> {
    pub nm: &'a [f64],
    pub sx: &'a [f64],
    pub xx: &'a [f64],
    pub tx: &'a [f64],
    pub tr: &'a [f64],
}

impl<'a> Sums<'a> {
    pub(super) fn of(l: &Layout, phi: &'a [f64]) -> Self {
        let (k, q, d) = (l.k, l.q, l.d);
        let (nm, rest) = phi.split_at(k);
        let (sx, rest) = rest.split_at(k * q);
        let (xx, rest) = rest.split_at(k * q * q);
        let (tx, rest) = rest.split_at(k * d * q);
        Sums {
            nm,
            sx,
            xx,
            tx,
            tr: &rest[..d * k],
        }
    }
}

/// One component's N_k, Σ r m, Σ r m mᵀ and Σ r y mᵀ.
type Part = (f64, Vec<f64>, Vec<f64>, Vec<f64>);

/// The sums of [`Sums`] of q(x, s) = (`xm` means N·K·q, `r`) into `out` (resized).
pub(super) fn sums(l: &Layout, y: &[f64], xm: &[f64], r: &[f64], out: &mut Vec<f64>) {
    let (n, d, q, k) = (l.n, l.d, l.q, l.k);
    let tv = MatRef::from_row_major_slice(y, n, d);
    let parts: Vec<Part> = (0..k)
        .into_par_iter()
        .map(|c| {
            let (mut nm, mut sx) = (0.0, vec![0.0; q]);
            let (mut xx, mut tx) = (vec![0.0; q * q], vec![0.0; d * q]);
            let mut rx = vec![0.0; BLOCK.min(n) * q];
            for start in (0..n).step_by(BLOCK) {
                let rows = BLOCK.min(n - start);
                let rb = &mut rx[..rows * q];
                for (i, row) in rb.chunks_exact_mut(q).enumerate() {
                    let ri = r[(start + i) * k + c];
                    nm += ri;
                    let at = ((start + i) * k + c) * q;
                    for ((acc, v), xi) in sx.iter_mut().zip(row).zip(&xm[at..at + q]) {
                        *v = xi * ri;
                        *acc += *v;
                    }
                }
                let rb = MatRef::from_row_major_slice(rb, rows, q);
                gemm(
                    MatMut::from_row_major_slice_mut(&mut xx, q, q),
                    Accum::Add,
                    rb.transpose(),
                    MatRef::from_row_major_slice(xm, n, k * q)
                        .subcols(c * q, q)
                        .subrows(start, rows),
                );
                gemm(
                    MatMut::from_row_major_slice_mut(&mut tx, d, q),
                    Accum::Add,
                    tv.subrows(start, rows).transpose(),
                    rb,
                );
            }
            (nm, sx, xx, tx)
        })
        .collect();
    out.clear();
    out.reserve(l.sums_len());
    out.extend(parts.iter().map(|p| p.0));
    for p in &parts {
        out.extend_from_slice(&p.1);
    }
    for p in &parts {
        out.extend_from_slice(&p.2);
    }
    for p in &parts {
        out.extend_from_slice(&p.3);
    }
    // Σ_n r_nk y_n as D × K (Yᵀ R).
    let start = out.len();
    out.resize(start + d * k, 0.0);
    gemm(
        MatMut::from_row_major_slice_mut(&mut out[start..], d, k),
        Accum::Replace,
        tv.transpose(),
        MatRef::from_row_major_slice(r, n, k),
    );
}

/// Σ_n r_nk E‖y_n − W_k x_nk − μ_k‖² per component under q (the bracket of Winn (3.27) summed
/// over n), from the sums of q(x, s) and the parents' moments: Σ_n r_nk ‖y_n − ⟨μ_k⟩‖² plus
/// N_k (Σ_d Var μ_kd + tr(⟨W_kᵀW_k⟩Σ_k)) plus tr(⟨W_kᵀW_k⟩ Σ_n r_nk m_nk m_nkᵀ) minus
/// 2 tr(⟨W_k⟩ᵀ Σ_n r_nk (y_n − ⟨μ_k⟩) m_nkᵀ), with `data` the first of these per component
/// (`residual::ResidualCache`).
pub(super) fn weighted_residuals(
    l: &Layout,
    e: &Inputs,
    data: &[f64],
    x_cov: &[f64],
    sums: &Sums<'_>,
) -> Vec<f64> {
    let (d, q, k) = (l.d, l.q, l.k);
    (0..k)
        .map(|c| {
            let mum = &e.mu[c * d..(c + 1) * d];
            let mut s = data[c];
            let wtw = &e.wm.wtw[c * q * q..(c + 1) * q * q];
            let sx = &x_cov[c * q * q..(c + 1) * q * q];
            let nm = sums.nm[c];
            s += nm * (e.mu_var[c] + dot(wtw, sx));
            s += dot(wtw, &sums.xx[c * q * q..(c + 1) * q * q]);
            let mut cross = 0.0;
            let sxm = &sums.sx[c * q..(c + 1) * q];
            for (j, &muj) in mum.iter().enumerate() {
                let at = (c * d + j) * q;
                let (wj, txj) = (&e.wm.w[at..at + q], &sums.tx[at..at + q]);
                for ((w, tx), sx) in wj.iter().zip(txj).zip(sxm) {
                    cross += w * (tx - muj * sx);
                }
            }
            s - 2.0 * cross
        })
        .collect()
}
