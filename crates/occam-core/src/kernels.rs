//! Dense kernels over all plate elements of a mixture node, with faer's GEMM: the sufficient
//! statistics of every component, S = Wᵀ U, and the expected log-densities of every element under
//! every component, L = U Θᵀ (Winn (2.52–2.53) written as matrix products).
//!
//! Rows are split into fixed chunks of `CHUNK` elements processed in parallel; partial sums are added
//! in chunk order, so results do not depend on the number of threads.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

/// Rows per parallel chunk.
pub(crate) const CHUNK: usize = 2048;

/// Elements per parallel chunk of a node whose elements hold `len` values each: `CHUNK` for short
/// rows, fewer for long ones (e.g. the Q + Q² moments of a latent vector) so that both cores share
/// a node of a few thousand elements. Depends on the layout only, never on the thread count.
pub(crate) fn elements_per_chunk(len: usize) -> usize {
    (CHUNK * 8 / len.max(1)).clamp(1, CHUNK)
}

/// S (q × len) = Wᵀ U for row-major W (n × q) and U (n × len); also the column sums of W.
pub(crate) fn weighted_sums(w: &[f64], q: usize, u: &[f64], len: usize) -> (Vec<f64>, Vec<f64>) {
    let n = w.len() / q;
    let partials: Vec<(Vec<f64>, Vec<f64>)> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            let mut s = vec![0.0; q * len];
            let mut totals = vec![0.0; q];
            weighted_sums_block(&w[lo * q..hi * q], q, &u[lo * len..hi * len], len, &mut s);
            column_sums(&w[lo * q..hi * q], &mut totals);
            (s, totals)
        })
        .collect();
    let mut s = vec![0.0; q * len];
    let mut totals = vec![0.0; q];
    for (ps, pt) in partials {
        add_into(&mut s, &ps);
        add_into(&mut totals, &pt);
    }
    (s, totals)
}

/// s (q × len) = Wᵀ U for one block of rows, on the calling thread (overwrites s).
pub(crate) fn weighted_sums_block(w: &[f64], q: usize, u: &[f64], len: usize, s: &mut [f64]) {
    let rows = w.len() / q;
    matmul(
        MatMut::from_row_major_slice_mut(s, q, len),
        Accum::Replace,
        MatRef::from_row_major_slice(w, rows, q).transpose(),
        MatRef::from_row_major_slice(u, rows, len),
        1.0,
        Par::Seq,
    );
}

/// S (k × width) = Wᵀ V for row-major W (n × k) and V the columns `offset..offset + width` of the
/// rows of a row-major array with row length `stride` (e.g. the second moments of a Gaussian node's
/// elements, read in place). Chunks of `CHUNK` rows in parallel, partial sums added in chunk order.
pub(crate) fn weighted_sums_strided(
    w: &[f64],
    k: usize,
    v: &[f64],
    (offset, width, stride): (usize, usize, usize),
) -> Vec<f64> {
    let n = w.len() / k;
    let view = |lo: usize, hi: usize| {
        MatRef::from_row_major_slice_with_stride(
            &v[lo * stride + offset..(hi - 1) * stride + offset + width],
            hi - lo,
            width,
            stride,
        )
    };
    let partials: Vec<Vec<f64>> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            let mut s = vec![0.0; k * width];
            matmul(
                MatMut::from_row_major_slice_mut(&mut s, k, width),
                Accum::Replace,
                MatRef::from_row_major_slice(&w[lo * k..hi * k], hi - lo, k).transpose(),
                view(lo, hi),
                1.0,
                Par::Seq,
            );
            s
        })
        .collect();
    let mut s = vec![0.0; k * width];
    for p in partials {
        add_into(&mut s, &p);
    }
    s
}

/// P (rows × width) = A V for row-major A (rows × k) and V (k × width) read as in
/// [`weighted_sums_strided`]; blocks of `CHUNK` rows of A in parallel (no reduction across tasks).
pub(crate) fn product_strided(
    a: &[f64],
    k: usize,
    v: &[f64],
    (offset, width, stride): (usize, usize, usize),
) -> Vec<f64> {
    let rows = a.len() / k;
    let mut out = vec![0.0; rows * width];
    let vv = MatRef::from_row_major_slice_with_stride(
        &v[offset..(k - 1) * stride + offset + width],
        k,
        width,
        stride,
    );
    out.par_chunks_mut(CHUNK * width)
        .zip(a.par_chunks(CHUNK * k))
        .for_each(|(o, ab)| {
            let r = ab.len() / k;
            matmul(
                MatMut::from_row_major_slice_mut(o, r, width),
                Accum::Replace,
                MatRef::from_row_major_slice(ab, r, k),
                vv,
                1.0,
                Par::Seq,
            );
        });
    out
}

/// totals += the column sums of row-major W (rows × totals.len()). Eight rows at a time into
/// eight running sums per column (one contiguous loop over 8 q values, which vectorises even for
/// short rows), then the eight added in order and the leftover rows; the order depends on the
/// shape only.
pub(crate) fn column_sums(w: &[f64], totals: &mut [f64]) {
    let q = totals.len();
    let mut acc = vec![0.0; 8 * q];
    let mut blocks = w.chunks_exact(8 * q);
    for b in &mut blocks {
        add_into(&mut acc, b);
    }
    for part in acc.chunks_exact(q) {
        add_into(totals, part);
    }
    for row in blocks.remainder().chunks_exact(q) {
        add_into(totals, row);
    }
}

/// a += b, elementwise.
pub(crate) fn add_into(a: &mut [f64], b: &[f64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// out (n × q) = U Θᵀ − 1 aᵀ for row-major U (n × len), Θ (q × len) and a (q). (faer's `Accum::Add`
/// gave wrong sums here for an inner dimension of 1, so this overwrites and callers add.)
pub(crate) fn scores(u: &[f64], len: usize, theta: &[f64], a: &[f64], out: &mut [f64]) {
    let q = a.len();
    out.par_chunks_mut(CHUNK * q)
        .zip(u.par_chunks(CHUNK * len))
        .for_each(|(o, uc)| scores_block(uc, len, theta, a, o));
}

/// `scores` for one block of rows, on the calling thread.
pub(crate) fn scores_block(u: &[f64], len: usize, theta: &[f64], a: &[f64], out: &mut [f64]) {
    let (q, rows) = (a.len(), u.len() / len);
    matmul(
        MatMut::from_row_major_slice_mut(&mut *out, rows, q),
        Accum::Replace,
        MatRef::from_row_major_slice(u, rows, len),
        MatRef::from_row_major_slice(theta, q, len).transpose(),
        1.0,
        Par::Seq,
    );
    // a repeated for eight rows, so the subtraction is one contiguous loop over 8 q values.
    let a8: Vec<f64> = a.iter().cycle().take(8 * q).copied().collect();
    let mut blocks = out.chunks_exact_mut(8 * q);
    for b in &mut blocks {
        b.iter_mut().zip(&a8).for_each(|(l, ak)| *l -= ak);
    }
    for row in blocks.into_remainder().chunks_exact_mut(q) {
        row.iter_mut().zip(a).for_each(|(l, ak)| *l -= ak);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_match_loops() {
        for len in [1, 4] {
            check(5000, 3, len);
        }
        // Rows that do not fill a block of eight (the kernels' leftover loops), one component.
        check(5003, 3, 4);
        check(13, 1, 2);
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
        let a = [0.5, -1.0, 2.0][..q].to_vec();
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
}
