//! The per-point quantities of the bound written out term by term as matrix products over all
//! points (faer's GEMM, sequential): the projections (t_n − ⟨μ_m⟩)ᵀ⟨W_m⟩, the expected squared
//! residuals of (3.27) and the log-weights ℓ_nm of (3.29)–(3.30). [`Mbpca::bound`] and the
//! single updates use them; the sweep ([`super::sweep`]) reaches the same numbers from
//! responsibility-weighted sums without the residuals.
//!
//! Component m's columns of the N × K·q arrays (the projections P, the means m_nm) enter the
//! products as strided views, never as copies.

use faer::{Accum, MatMut, MatRef};

use super::{Expect, Mbpca};
use crate::latent::dense::{mul, mul_nt};
use crate::latent::synth::Matrix;

/// Component m's columns of a row-major N × (K·w) array as an N × w view (row stride K·w).
pub(super) fn cols(a: &[f64], n: usize, k: usize, w: usize, m: usize) -> MatRef<'_, f64> {
    MatRef::from_row_major_slice(a, n, k * w).subcols(m * w, w)
}

/// C = A B, sequential, overwriting C (and leaving the vector state clean).
pub(super) fn gemm(c: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    crate::latent::dense::gemm(c, Accum::Replace, a, b);
}

/// Σ_i a_ni b_ni over component m's w columns of two row-major N × (K·w) arrays `a` and `b`,
/// where `b_stride` is the row stride of `b` (K·w, or w for an N × w block), in index order.
fn row_dot(a: &[f64], b: &[f64], b_stride: usize, k: usize, w: usize, m: usize, i: usize) -> f64 {
    let x = &a[i * k * w + m * w..i * k * w + (m + 1) * w];
    let off = if b_stride == w {
        i * w
    } else {
        i * k * w + m * w
    };
    x.iter().zip(&b[off..off + w]).map(|(u, v)| u * v).sum()
}

impl Mbpca {
    /// P (N × K·q), block m of row n = (t_n − ⟨μ_m⟩)ᵀ⟨W_m⟩, by one product T [W_1 … W_K].
    pub(super) fn projections_into(&self, t: &Matrix, p: &mut Vec<f64>) {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        let mut wcat = vec![0.0; d * k * q];
        for m in 0..k {
            for r in 0..d {
                wcat[r * k * q + m * q..r * k * q + (m + 1) * q]
                    .copy_from_slice(&self.w[(m * d + r) * q..(m * d + r + 1) * q]);
            }
        }
        p.resize(n * k * q, 0.0);
        gemm(
            MatMut::from_row_major_slice_mut(p, n, k * q),
            MatRef::from_row_major_slice(&t.values, n, d),
            MatRef::from_row_major_slice(&wcat, d, k * q),
        );
        // μ_mᵀ W_m, subtracted from every row.
        let muw = mul(&self.mu, &wcat, k, d, k * q);
        for row in p.chunks_exact_mut(k * q) {
            for m in 0..k {
                for i in 0..q {
                    row[m * q + i] -= muw[m * k * q + m * q + i];
                }
            }
        }
    }

    /// R (N × K): E‖t_n − W_m x_n − μ_m‖² under q(x_n | s_n = m) q(W_m) q(μ_m), the bracket of
    /// (3.27): ‖t_n − ⟨μ_m⟩‖² + d Var μ_m + tr(⟨W_mᵀW_m⟩(Σ_x + m m ᵀ)) − 2 (t_n − ⟨μ_m⟩)ᵀ⟨W_m⟩m_nm.
    pub(super) fn residuals(&self, e: &Expect, t: &Matrix) -> Vec<f64> {
        let mut p = Vec::new();
        self.projections_into(t, &mut p);
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        let tt: Vec<f64> = t
            .values
            .chunks_exact(d)
            .map(|r| r.iter().map(|v| v * v).sum())
            .collect();
        let tm = mul_nt(&t.values, &self.mu, n, d, k);
        let mut out = vec![0.0; n * k];
        let mut block = vec![0.0; n * q];
        for m in 0..k {
            let wtw = &e.wtw[m * q * q..(m + 1) * q * q];
            let sx = &self.x_cov[m * q * q..(m + 1) * q * q];
            let fixed = e.mu2[m] + (0..q * q).map(|i| wtw[i] * sx[i]).sum::<f64>();
            gemm(
                MatMut::from_row_major_slice_mut(&mut block, n, q),
                cols(&self.x, n, k, q, m),
                MatRef::from_row_major_slice(wtw, q, q),
            );
            for i in 0..n {
                let quad = row_dot(&self.x, &block, q, k, q, m, i);
                let cross = row_dot(&p, &self.x, k * q, k, q, m, i);
                out[i * k + m] = tt[i] - 2.0 * tm[i * k + m] + fixed + quad - 2.0 * cross;
            }
        }
        out
    }

    /// ℓ (N × K): ⟨ln π_m⟩ + ⟨ln p(t_n | x_n, m)⟩ + ⟨ln p(x_n)⟩ + H[q(x_n | m)], the log of the
    /// unnormalised q(s_n = m) of (3.29)–(3.30) (it carries the +½ ln|Σ_x^(m)| term).
    pub(super) fn ells(&self, e: &Expect, t: &Matrix, logdet_x: &[f64]) -> Vec<f64> {
        self.ells_from(e, self.residuals(e, t), logdet_x)
    }

    /// [`ells`](Self::ells) from the residuals R of the current q, overwriting them.
    pub(super) fn ells_from(&self, e: &Expect, mut out: Vec<f64>, logdet_x: &[f64]) -> Vec<f64> {
        let (q, k) = (self.q, self.k);
        let d = self.d as f64;
        let trace_x: Vec<f64> = (0..k)
            .map(|m| (0..q).map(|i| self.x_cov[m * q * q + i * q + i]).sum())
            .collect();
        for (row, x) in out.chunks_exact_mut(k).zip(self.x.chunks_exact(k * q)) {
            for m in 0..k {
                let xx: f64 = x[m * q..(m + 1) * q].iter().map(|v| v * v).sum();
                row[m] = e.ln_pi[m] + 0.5 * d * (e.ln_tau - occam_core::special::LN_2PI)
                    - 0.5 * e.tau * row[m]
                    - 0.5 * (trace_x[m] + xx)
                    + 0.5 * q as f64
                    + 0.5 * logdet_x[m];
            }
        }
        out
    }
}
