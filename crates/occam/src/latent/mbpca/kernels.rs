//! The per-point work of a sweep written as matrix products over all points at once (faer's GEMM
//! through [`dense`](crate::latent::dense)): the projections (t_n − ⟨μ_m⟩)ᵀ⟨W_m⟩, the expected
//! squared residuals of (3.27) and the log-weights ℓ_nm of (3.29)–(3.30). The sums each update
//! needs (Σ_n r_nm m_nm m_nmᵀ, Σ_n r_nm (t_n − ⟨μ_m⟩) m_nmᵀ, …) are products too.

use super::{Expect, Mbpca};
use crate::latent::dense::{mul, mul_nt, mul_tn};
use crate::latent::synth::Matrix;

/// Component m's block of a row-major N × (K·w) array, as a contiguous N × w copy.
pub(super) fn block(a: &[f64], k: usize, w: usize, m: usize) -> Vec<f64> {
    a.chunks_exact(k * w)
        .flat_map(|row| row[m * w..(m + 1) * w].iter().copied())
        .collect()
}

/// Row-wise dot products of two row-major N × w arrays.
fn row_dots(a: &[f64], b: &[f64], w: usize) -> Vec<f64> {
    a.chunks_exact(w)
        .zip(b.chunks_exact(w))
        .map(|(x, y)| x.iter().zip(y).map(|(u, v)| u * v).sum())
        .collect()
}

impl Mbpca {
    /// P (N × K·q), block m of row n = (t_n − ⟨μ_m⟩)ᵀ⟨W_m⟩, by one product T [W_1 … W_K].
    pub(super) fn projections(&self, t: &Matrix) -> Vec<f64> {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        let mut wcat = vec![0.0; d * k * q];
        for m in 0..k {
            for r in 0..d {
                wcat[r * k * q + m * q..r * k * q + (m + 1) * q]
                    .copy_from_slice(&self.w[(m * d + r) * q..(m * d + r + 1) * q]);
            }
        }
        let mut p = mul(&t.values, &wcat, n, d, k * q);
        // μ_mᵀ W_m, subtracted from every row.
        let muw = mul(&self.mu, &wcat, k, d, k * q);
        for row in p.chunks_exact_mut(k * q) {
            for m in 0..k {
                for i in 0..q {
                    row[m * q + i] -= muw[m * k * q + m * q + i];
                }
            }
        }
        p
    }

    /// R (N × K): E‖t_n − W_m x_n − μ_m‖² under q(x_n | s_n = m) q(W_m) q(μ_m), the bracket of
    /// (3.27): ‖t_n − ⟨μ_m⟩‖² + d Var μ_m + tr(⟨W_mᵀW_m⟩(Σ_x + m m ᵀ)) − 2 (t_n − ⟨μ_m⟩)ᵀ⟨W_m⟩m_nm.
    pub(super) fn residuals(&self, e: &Expect, t: &Matrix) -> Vec<f64> {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        let p = self.projections(t);
        let tt: Vec<f64> = t
            .values
            .chunks_exact(d)
            .map(|r| r.iter().map(|v| v * v).sum())
            .collect();
        let tm = mul_nt(&t.values, &self.mu, n, d, k);
        let mut out = vec![0.0; n * k];
        for m in 0..k {
            let wtw = &e.wtw[m * q * q..(m + 1) * q * q];
            let sx = &self.x_cov[m * q * q..(m + 1) * q * q];
            let fixed = e.mu2[m] + (0..q * q).map(|i| wtw[i] * sx[i]).sum::<f64>();
            let xm = block(&self.x, k, q, m);
            let xw = mul(&xm, wtw, n, q, q);
            let quad = row_dots(&xm, &xw, q);
            let cross = row_dots(&block(&p, k, q, m), &xm, q);
            for i in 0..n {
                out[i * k + m] = tt[i] - 2.0 * tm[i * k + m] + fixed + quad[i] - 2.0 * cross[i];
            }
        }
        out
    }

    /// ℓ (N × K): ⟨ln π_m⟩ + ⟨ln p(t_n | x_n, m)⟩ + ⟨ln p(x_n)⟩ + H[q(x_n | m)], the log of the
    /// unnormalised q(s_n = m) of (3.29)–(3.30) (it carries the +½ ln|Σ_x^(m)| term).
    pub(super) fn ells(&self, e: &Expect, t: &Matrix, logdet_x: &[f64]) -> Vec<f64> {
        let (q, k) = (self.q, self.k);
        let d = self.d as f64;
        let mut out = self.residuals(e, t);
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

    /// The responsibility-weighted sums of component m: N_m = Σ_n r_nm, Σ_n r_nm m_nm (q),
    /// Σ_n r_nm m_nm m_nmᵀ (q × q) and Σ_n r_nm t_n m_nmᵀ (d × q).
    pub(super) fn weighted(&self, t: &Matrix, m: usize) -> (f64, Vec<f64>, Vec<f64>, Vec<f64>) {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        let xm = block(&self.x, k, q, m);
        let mut rx = xm.clone();
        let mut nm = 0.0;
        let mut sx = vec![0.0; q];
        for (i, row) in rx.chunks_exact_mut(q).enumerate() {
            let r = self.r[i * k + m];
            nm += r;
            for (s, v) in sx.iter_mut().zip(row.iter_mut()) {
                *v *= r;
                *s += *v;
            }
        }
        let xx = mul_tn(&rx, &xm, n, q, q);
        let tx = mul_tn(&t.values, &rx, n, d, q);
        (nm, sx, xx, tx)
    }
}
