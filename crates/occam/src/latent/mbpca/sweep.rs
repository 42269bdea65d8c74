//! The per-point work of a sweep, one component per task (rayon; each task sequential, and every
//! sum across components or points taken in a fixed order afterwards, so the results are the
//! same bits for any thread count).
//!
//! A sweep touches the N points twice:
//!
//! 1. q(x_n, s_n) (3.20)–(3.21), (3.29)–(3.30): the projections p_nm = ⟨W_m⟩ᵀ(t_n − ⟨μ_m⟩) and the
//!    means m_nm = ⟨τ⟩ Σ_x^(m) p_nm, two products per component. The log-weights then need no
//!    third product: with Σ_x⁻¹ = I + ⟨τ⟩⟨W_mᵀW_m⟩ and m_nm = ⟨τ⟩ Σ_x p_nm, the quadratic term
//!    ⟨τ⟩ m_nmᵀ⟨W_mᵀW_m⟩m_nm of (3.27) equals ⟨τ⟩ p_nmᵀm_nm − ‖m_nm‖², and the ‖m_nm‖² cancels
//!    against the ⟨ln p(x_n)⟩ term, leaving
//!    ℓ_nm = c_m − ½⟨τ⟩‖t_n − ⟨μ_m⟩‖² + ½⟨τ⟩ p_nmᵀ m_nm.
//! 2. The responsibility-weighted sums of [`Sums`], two products per component. q(μ), q(W), q(τ)
//!    and the bound read only these sums (and Σ_n r_nm ‖t_n − ⟨μ_m⟩‖², a pass over the data),
//!    so nothing is projected a second time after q(W) changes.
//!
//! Each pass goes over the points in blocks of [`BLOCK`] rows, so that a block's projections and
//! means are still in cache for the per-point sums that follow the products.

use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef};
use rayon::prelude::*;

use super::kernels::gemm;
use super::{chol, Expect, Mbpca};
use crate::error::Result;
use crate::latent::dense::mul_tn;
use crate::latent::synth::Matrix;

/// The responsibility-weighted sums of the current q(x, s), per component m.
pub(super) struct Sums {
    /// N_m = Σ_n r_nm, length K.
    pub(super) nm: Vec<f64>,
    /// Σ_n r_nm m_nm, K × q.
    pub(super) sx: Vec<f64>,
    /// Σ_n r_nm m_nm m_nmᵀ, K × q × q.
    pub(super) xx: Vec<f64>,
    /// Σ_n r_nm t_n m_nmᵀ, K × d × q.
    pub(super) tx: Vec<f64>,
    /// Σ_n r_nm t_n, d × K.
    pub(super) tr: Vec<f64>,
}

/// One component's N_m, Σ r m, Σ r m mᵀ and Σ r t mᵀ (the fields of [`Sums`]).
type Part = (f64, Vec<f64>, Vec<f64>, Vec<f64>);

/// Rows per block of a component's pass over the points: the block's data, projections and
/// means (3 × 256 × ~50 values) stay in cache between the products and the per-point sums.
const BLOCK: usize = 256;

/// C += A B, sequential (and leaving the vector state clean).
fn gemm_add(c: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    crate::latent::dense::gemm(c, Accum::Add, a, b);
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

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    sum8(a, b, |x, y| (x - y) * (x - y))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    sum8(a, b, |x, y| x * y)
}

impl Mbpca {
    /// Updates q(x_n, s_n) jointly for every n: Σ_x^(m) (3.21), m_nm (3.20), then r_nm by
    /// (3.29)–(3.30) (see the module text, step 1).
    pub fn update_xs(&mut self, t: &Matrix) -> Result<()> {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        let e = self.expect();
        let tau = e.tau;
        let mut logdet = vec![0.0; k];
        for (m, ld) in logdet.iter_mut().enumerate() {
            let mut a: Vec<f64> = e.wtw[m * q * q..(m + 1) * q * q]
                .iter()
                .map(|v| tau * v)
                .collect();
            for i in 0..q {
                a[i * q + i] += 1.0;
            }
            let c = chol(&a, q, "Σ_x")?;
            c.inverse_into(&mut self.x_cov[m * q * q..(m + 1) * q * q]);
            *ld = -c.log_det();
        }
        // c_m: every term of ℓ_nm that does not depend on n.
        let consts: Vec<f64> = (0..k)
            .map(|m| {
                let wtw = &e.wtw[m * q * q..(m + 1) * q * q];
                let sx = &self.x_cov[m * q * q..(m + 1) * q * q];
                let tr_wsx = dot(wtw, sx);
                let tr_sx: f64 = (0..q).map(|i| sx[i * q + i]).sum();
                e.ln_pi[m] + 0.5 * d as f64 * (e.ln_tau - occam_core::special::LN_2PI)
                    - 0.5 * tau * (d as f64 * self.mu_var[m] + tr_wsx)
                    - 0.5 * tr_sx
                    + 0.5 * q as f64
                    + 0.5 * logdet[m]
            })
            .collect();
        let (w, mu, x_cov) = (&self.w, &self.mu, &self.x_cov);
        let tv = MatRef::from_row_major_slice(&t.values, n, d);
        let ell: Vec<Vec<f64>> = col_blocks(&mut self.x, n, k, q)
            .into_par_iter()
            .enumerate()
            .map(|(m, mut x)| {
                let wm = &w[m * d * q..(m + 1) * d * q];
                let mum = &mu[m * d..(m + 1) * d];
                // ⟨μ_m⟩ᵀ⟨W_m⟩, subtracted from every projection.
                let muw: Vec<f64> = (0..q)
                    .map(|i| (0..d).map(|j| mum[j] * wm[j * q + i]).sum())
                    .collect();
                let sx: Vec<f64> = x_cov[m * q * q..(m + 1) * q * q]
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
                        tv.subrows(start, rows),
                        MatRef::from_row_major_slice(wm, d, q),
                    );
                    for row in pb.chunks_exact_mut(q) {
                        for (v, c) in row.iter_mut().zip(&muw) {
                            *v -= c;
                        }
                    }
                    let mut xb = x.rb_mut().subrows_mut(start, rows);
                    gemm(
                        xb.rb_mut(),
                        MatRef::from_row_major_slice(pb, rows, q),
                        MatRef::from_row_major_slice(&sx, q, q),
                    );
                    for (i, pi) in pb.chunks_exact(q).enumerate() {
                        let pm = dot(pi, row(xb.rb(), i));
                        let tn = t.row(start + i);
                        ell.push(consts[m] - 0.5 * tau * dist2(tn, mum) + 0.5 * tau * pm);
                    }
                }
                ell
            })
            .collect();
        let mut l = vec![0.0; k];
        for (i, r) in self.r.chunks_exact_mut(k).enumerate() {
            for (lm, col) in l.iter_mut().zip(&ell) {
                *lm = col[i];
            }
            let lse = occam_core::special::log_sum_exp(&l);
            for (ri, li) in r.iter_mut().zip(&l) {
                *ri = (li - lse).exp();
            }
        }
        Ok(())
    }

    /// The [`Sums`] of the current q(x, s) (step 2).
    pub(super) fn sums(&self, t: &Matrix) -> Sums {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        let tv = MatRef::from_row_major_slice(&t.values, n, d);
        let xv = &self.x;
        let r = &self.r;
        let parts: Vec<Part> = (0..k)
            .into_par_iter()
            .map(|m| {
                let (mut nm, mut sx) = (0.0, vec![0.0; q]);
                let (mut xx, mut tx) = (vec![0.0; q * q], vec![0.0; d * q]);
                let mut rx = vec![0.0; BLOCK.min(n) * q];
                for start in (0..n).step_by(BLOCK) {
                    let rows = BLOCK.min(n - start);
                    let rb = &mut rx[..rows * q];
                    for (i, row) in rb.chunks_exact_mut(q).enumerate() {
                        let ri = r[(start + i) * k + m];
                        nm += ri;
                        let at = ((start + i) * k + m) * q;
                        for ((acc, v), xi) in sx.iter_mut().zip(row).zip(&xv[at..at + q]) {
                            *v = xi * ri;
                            *acc += *v;
                        }
                    }
                    let rb = MatRef::from_row_major_slice(rb, rows, q);
                    gemm_add(
                        MatMut::from_row_major_slice_mut(&mut xx, q, q),
                        rb.transpose(),
                        super::kernels::cols(xv, n, k, q, m).subrows(start, rows),
                    );
                    gemm_add(
                        MatMut::from_row_major_slice_mut(&mut tx, d, q),
                        tv.subrows(start, rows).transpose(),
                        rb,
                    );
                }
                (nm, sx, xx, tx)
            })
            .collect();
        let mut sums = Sums {
            nm: Vec::with_capacity(k),
            sx: Vec::with_capacity(k * q),
            xx: Vec::with_capacity(k * q * q),
            tx: Vec::with_capacity(k * d * q),
            tr: mul_tn(&t.values, &self.r, n, d, k),
        };
        for (nm, sx, xx, tx) in parts {
            sums.nm.push(nm);
            sums.sx.extend(sx);
            sums.xx.extend(xx);
            sums.tx.extend(tx);
        }
        sums
    }

    /// Σ_n r_nm E‖t_n − W_m x_n − μ_m‖² per component for the current q (the bracket of (3.27)
    /// summed over n), from the sums of the unchanged q(x, s): Σ_n r_nm ‖t_n − ⟨μ_m⟩‖²
    /// plus N_m (d Var μ_m + tr(⟨W_mᵀW_m⟩Σ_x^(m))) plus tr(⟨W_mᵀW_m⟩ Σ_n r_nm m_nm m_nmᵀ)
    /// minus 2 tr(⟨W_m⟩ᵀ Σ_n r_nm (t_n − ⟨μ_m⟩) m_nmᵀ).
    pub(super) fn weighted_residuals(&self, t: &Matrix, e: &Expect, sums: &Sums) -> Vec<f64> {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        (0..k)
            .into_par_iter()
            .map(|m| {
                let mum = &self.mu[m * d..(m + 1) * d];
                let mut s = 0.0;
                for i in 0..n {
                    s += self.r[i * k + m] * dist2(t.row(i), mum);
                }
                let wtw = &e.wtw[m * q * q..(m + 1) * q * q];
                let sx = &self.x_cov[m * q * q..(m + 1) * q * q];
                let nm = sums.nm[m];
                s += nm * (d as f64 * self.mu_var[m] + dot(wtw, sx));
                s += dot(wtw, &sums.xx[m * q * q..(m + 1) * q * q]);
                let mut cross = 0.0;
                let sxm = &sums.sx[m * q..(m + 1) * q];
                for (j, &muj) in mum.iter().enumerate() {
                    let at = (m * d + j) * q;
                    let (wj, txj) = (&self.w[at..at + q], &sums.tx[at..at + q]);
                    for ((w, tx), sx) in wj.iter().zip(txj).zip(sxm) {
                        cross += w * (tx - muj * sx);
                    }
                }
                s - 2.0 * cross
            })
            .collect()
    }

    /// Σ_n Σ_m r_nm (ℓ_nm − ln r_nm), the data part of the bound, from the sums of
    /// [`weighted_residuals`](Self::weighted_residuals) (`sr`) and `sums`.
    pub(super) fn data_bound_from_sums(&self, e: &Expect, sums: &Sums, sr: &[f64]) -> f64 {
        let (d, q, k) = (self.d as f64, self.q, self.k);
        let logdet = self.logdet_x();
        let mut l = 0.0;
        for m in 0..k {
            let sx = &self.x_cov[m * q * q..(m + 1) * q * q];
            let tr_sx: f64 = (0..q).map(|i| sx[i * q + i]).sum();
            let tr_xx: f64 = (0..q).map(|i| sums.xx[m * q * q + i * q + i]).sum();
            l += sums.nm[m]
                * (e.ln_pi[m] + 0.5 * d * (e.ln_tau - occam_core::special::LN_2PI) - 0.5 * tr_sx
                    + 0.5 * q as f64
                    + 0.5 * logdet[m])
                - 0.5 * e.tau * sr[m]
                - 0.5 * tr_xx;
        }
        for &r in &self.r {
            if r > 0.0 {
                l -= r * r.ln();
            }
        }
        l
    }
}
