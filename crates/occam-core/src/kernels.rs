//! Dense kernels over all plate elements of a mixture node: the sufficient statistics of every
//! component, S = Wᵀ U, and the expected log-densities of every element under every component,
//! L = U Θᵀ (Winn (2.52–2.53) written as matrix products). Up to 16 components over runs of up to
//! 16 moments (the common mixture) row by row, with the component count a compile-time constant;
//! larger shapes with faer's GEMM, whose packing and tiling do not pay for such short products.
//!
//! Rows are split into fixed chunks of `CHUNK` elements processed in parallel; partial sums are added
//! in chunk order, so results do not depend on the number of threads.

use faer::{Accum, MatMut, MatRef};
use rayon::prelude::*;

/// Every faer product of the crate goes through [`crate::linalg::gemm`] (re-exported here for the
/// engine's kernels).
pub(crate) use crate::linalg::gemm;

/// Rows per parallel chunk.
pub(crate) const CHUNK: usize = 2048;

/// Elements per parallel chunk of a node whose elements hold `len` values each: `CHUNK` for short
/// rows, fewer for long ones (e.g. the Q + Q² moments of a latent vector) so that both cores share
/// a node of a few thousand elements. Depends on the layout only, never on the thread count.
pub(crate) fn elements_per_chunk(len: usize) -> usize {
    (CHUNK * 8 / len.max(1)).clamp(1, CHUNK)
}

/// Values (elements × values each) up to which an element-wise loop runs on the calling thread:
/// one chunk's worth, as [`elements_per_chunk`] counts them. A parallel loop started outside the
/// pool hands its work to a pool thread and sleeps until it is done (two context switches and a
/// futex wake, tens of µs; on the ICA toy of `bench_ica_joint` a third of all samples, before
/// this); a loop this small is done sooner alone, and one chunk gives the pool nothing to share.
/// Chosen by measurement (bench/results/perf_issue27_*.txt). Only the thread computing each
/// element changes, never a value or the order of a sum: the results are the same bits for any
/// thread count either way.
pub(crate) const SEQUENTIAL_UP_TO: usize = CHUNK * 8;

/// Whether a loop over `values` values runs on the calling thread (see [`SEQUENTIAL_UP_TO`]).
pub(crate) fn sequential(values: usize) -> bool {
    values <= SEQUENTIAL_UP_TO
}

/// `f` of each chunk 0..`chunks`, in order: in parallel, or on this thread when there is only one
/// (handing a single task to the pool and waiting for it costs more than the work of a small
/// node, e.g. forty Wisharts' moments, and gains nothing). The same results either way.
pub(crate) fn map_chunks<T: Send>(chunks: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    if chunks <= 1 {
        (0..chunks).map(f).collect()
    } else {
        (0..chunks).into_par_iter().map(f).collect()
    }
}

/// Σ of `f` over chunks 0..`chunks`, added in chunk order: the sum of [`map_chunks`]' results
/// (the same bits), without the array of partial sums when there is one chunk.
pub(crate) fn sum_chunks(chunks: usize, f: impl Fn(usize) -> f64 + Sync + Send) -> f64 {
    if chunks <= 1 {
        (0..chunks).map(f).sum()
    } else {
        map_chunks(chunks, f).iter().sum()
    }
}

/// S (q × len) = Wᵀ U for row-major W (n × q) and U (n × len); also the column sums of W (the
/// tests' form of [`weighted_sums_into`]).
#[cfg(test)]
pub(crate) fn weighted_sums(w: &[f64], q: usize, u: &[f64], len: usize) -> (Vec<f64>, Vec<f64>) {
    let mut s = vec![0.0; q * len];
    let mut totals = vec![0.0; q];
    weighted_sums_into(w, q, u, len, &mut s, &mut totals);
    (s, totals)
}

/// [`weighted_sums`] into `s` (q × len) and `totals` (q), both zero on entry: the chunks' partial
/// sums added to them in chunk order; one chunk's sums formed in place (then added to zero as a
/// partial would be: a −0 becomes +0, the same bits).
pub(crate) fn weighted_sums_into(
    w: &[f64],
    q: usize,
    u: &[f64],
    len: usize,
    s: &mut [f64],
    totals: &mut [f64],
) {
    let n = w.len() / q;
    let chunk = |c: usize, s: &mut [f64], totals: &mut [f64]| {
        let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
        weighted_sums_block(&w[lo * q..hi * q], q, &u[lo * len..hi * len], len, s);
        column_sums(&w[lo * q..hi * q], totals);
    };
    let chunks = n.div_ceil(CHUNK);
    if chunks <= 1 {
        (0..chunks).for_each(|c| chunk(c, s, totals));
        s.iter_mut().for_each(|v| *v += 0.0);
        totals.iter_mut().for_each(|v| *v += 0.0);
        return;
    }
    let partials: Vec<(Vec<f64>, Vec<f64>)> = map_chunks(chunks, |c| {
        let mut ps = vec![0.0; q * len];
        let mut pt = vec![0.0; q];
        chunk(c, &mut ps, &mut pt);
        (ps, pt)
    });
    for (ps, pt) in partials {
        add_into(s, &ps);
        add_into(totals, &pt);
    }
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
    let chunk = |c: usize, s: &mut [f64]| {
        let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
        gemm(
            MatMut::from_row_major_slice_mut(s, k, width),
            Accum::Replace,
            MatRef::from_row_major_slice(&w[lo * k..hi * k], hi - lo, k).transpose(),
            view(lo, hi),
        );
    };
    let mut s = vec![0.0; k * width];
    let chunks = n.div_ceil(CHUNK);
    if chunks <= 1 {
        // One chunk: formed in place, then added to zeros as a partial sum is below (0 + x: a
        // −0 becomes +0, the same bits), without the partials' arrays.
        (0..chunks).for_each(|c| chunk(c, &mut s));
        s.iter_mut().for_each(|v| *v += 0.0);
        return s;
    }
    let partials: Vec<Vec<f64>> = map_chunks(chunks, |c| {
        let mut p = vec![0.0; k * width];
        chunk(c, &mut p);
        p
    });
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
    layout: (usize, usize, usize),
) -> Vec<f64> {
    let mut out = vec![0.0; a.len() / k * layout.1];
    product_strided_into(a, k, v, layout, &mut out);
    out
}

/// [`product_strided`] into `out` (rows × width), without allocating: the same blocks, the same
/// bits.
pub(crate) fn product_strided_into(
    a: &[f64],
    k: usize,
    v: &[f64],
    (offset, width, stride): (usize, usize, usize),
    out: &mut [f64],
) {
    let vv = MatRef::from_row_major_slice_with_stride(
        &v[offset..(k - 1) * stride + offset + width],
        k,
        width,
        stride,
    );
    let block = |(o, ab): (&mut [f64], &[f64])| {
        let r = ab.len() / k;
        gemm(
            MatMut::from_row_major_slice_mut(o, r, width),
            Accum::Replace,
            MatRef::from_row_major_slice(ab, r, k),
            vv,
        );
    };
    if out.len() <= CHUNK * width {
        // One block (see `map_chunks`).
        out.chunks_mut(CHUNK * width)
            .zip(a.chunks(CHUNK * k))
            .for_each(block);
    } else {
        out.par_chunks_mut(CHUNK * width)
            .zip(a.par_chunks(CHUNK * k))
            .for_each(block);
    }
}

/// Zeroed room for 8 running rows of `q` columns: on the stack for up to 16 columns (no
/// allocation per call), else in `heap`.
#[inline(always)]
fn eight_rows<'a>(q: usize, stack: &'a mut [f64; 8 * 16], heap: &'a mut Vec<f64>) -> &'a mut [f64] {
    if q <= 16 {
        &mut stack[..8 * q]
    } else {
        heap.resize(8 * q, 0.0);
        heap
    }
}

/// totals += the column sums of row-major W (rows × totals.len()). Eight rows at a time into
/// eight running sums per column (one contiguous loop over 8 q values, which vectorises even for
/// short rows), then the eight added in order and the leftover rows; the order depends on the
/// shape only.
pub(crate) fn column_sums(w: &[f64], totals: &mut [f64]) {
    let q = totals.len();
    let (mut stack, mut heap) = ([0.0; 8 * 16], Vec::new());
    let acc = eight_rows(q, &mut stack, &mut heap);
    let mut blocks = w.chunks_exact(8 * q);
    for b in &mut blocks {
        add_into(acc, b);
    }
    for part in acc.chunks_exact(q) {
        add_into(totals, part);
    }
    for row in blocks.remainder().chunks_exact(q) {
        add_into(totals, row);
    }
}

/// [`column_sums`] of row-major U (rows × totals.len()) into `totals` and φ·u = Σ_i φ_i u_i over
/// the block (a mixture index's own bound part, Σ_e A_e − φ_e·u_e, Winn (2.34)), in one pass over
/// φ and U eight rows at a time: the same sums in the same order as `column_sums` and a dot
/// product in eight running sums (lane i mod 8 of the flat arrays, the leftover < 8 values apart),
/// compiled for AVX-512 and AVX2 too. A term whose u_i is 0 counts as 0 whatever φ_i: a component
/// of probability 0 under a constant prior has φ_i = −∞ and u_i = 0, and contributes nothing to the
/// bound (0 ln 0 = 0), where the plain product is NaN.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
pub(crate) fn column_sums_and_natural_dot(phi: &[f64], u: &[f64], totals: &mut [f64]) -> f64 {
    sums_and_dot(phi, u, totals)
}

/// [`column_sums_and_natural_dot`] (inlined into each of its target versions).
#[inline(always)]
fn sums_and_dot(phi: &[f64], u: &[f64], totals: &mut [f64]) -> f64 {
    let q = totals.len();
    let term = |p: f64, v: f64| if v != 0.0 { p * v } else { 0.0 };
    let (mut stack, mut heap) = ([0.0; 8 * 16], Vec::new());
    let acc = eight_rows(q, &mut stack, &mut heap);
    let mut dot = [0.0; 8];
    let mut blocks = u.chunks_exact(8 * q).zip(phi.chunks_exact(8 * q));
    for (b, p) in &mut blocks {
        for (a, v) in acc.iter_mut().zip(b) {
            *a += v;
        }
        for (v8, p8) in b.chunks_exact(8).zip(p.chunks_exact(8)) {
            for i in 0..8 {
                dot[i] += term(p8[i], v8[i]);
            }
        }
    }
    for part in acc.chunks_exact(q) {
        for (t, v) in totals.iter_mut().zip(part) {
            *t += v;
        }
    }
    let done = u.len() / (8 * q) * 8 * q;
    let (ur, pr) = (&u[done..], &phi[done..]);
    for row in ur.chunks_exact(q) {
        for (t, v) in totals.iter_mut().zip(row) {
            *t += v;
        }
    }
    let (u8s, p8s) = (ur.chunks_exact(8), pr.chunks_exact(8));
    let tail: f64 = u8s
        .remainder()
        .iter()
        .zip(p8s.remainder())
        .map(|(&v, &p)| term(p, v))
        .sum();
    for (v8, p8) in u8s.zip(p8s) {
        for i in 0..8 {
            dot[i] += term(p8[i], v8[i]);
        }
    }
    dot.iter().sum::<f64>() + tail
}

/// a += b, elementwise.
#[inline]
pub(crate) fn add_into(a: &mut [f64], b: &[f64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// out (n × q) = U Θᵀ − 1 aᵀ for row-major U (n × len), Θ (q × len) and a (q). (faer's `Accum::Add`
/// gave wrong sums here for an inner dimension of 1, so this overwrites and callers add.)
pub(crate) fn scores(u: &[f64], len: usize, theta: &[f64], a: &[f64], out: &mut [f64]) {
    let q = a.len();
    if out.len() <= CHUNK * q {
        // One block (see `map_chunks`).
        return scores_block(u, len, theta, a, out);
    }
    out.par_chunks_mut(CHUNK * q)
        .zip(u.par_chunks(CHUNK * len))
        .for_each(|(o, uc)| scores_block(uc, len, theta, a, o));
}

/// `scores` for one block of rows, on the calling thread. Few components over short runs (the
/// common mixture: a handful of components, a scalar or a small vector per element) go through
/// [`scores_rows`]; larger shapes through faer's GEMM.
pub(crate) fn scores_block(u: &[f64], len: usize, theta: &[f64], a: &[f64], out: &mut [f64]) {
    let q = a.len();
    if q <= 16 && len <= 16 {
        // Θᵀ (len × q), so that each moment of a row scales one contiguous q-vector (on the
        // stack: at most 16 × 16 values, no allocation per block).
        let mut theta_t = [0.0; 256];
        theta_t[..len * q]
            .iter_mut()
            .enumerate()
            .for_each(|(i, t)| *t = theta[(i % q) * len + i / q]);
        return scores_rows(u, len, &theta_t[..len * q], a, out);
    }
    let rows = u.len() / len;
    gemm(
        MatMut::from_row_major_slice_mut(&mut *out, rows, q),
        Accum::Replace,
        MatRef::from_row_major_slice(u, rows, len),
        MatRef::from_row_major_slice(theta, q, len).transpose(),
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

/// out (rows × q) = U Θᵀ − 1 aᵀ row by row from Θᵀ (len × q): each row's q scores as
/// Σ_j u_j Θᵀ_j (in order j = 0, 1, …) then − a, with plain mul/add (the same bits on every
/// target). For a GEMM the inner dimension (a run's few moments) is too short to pay for packing
/// and tiling; here each row is one pass of q-vector operations, with q a compile-time constant up
/// to 16 (vectorised, and compiled for AVX-512 and AVX2 too, chosen at run time).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
fn scores_rows(u: &[f64], len: usize, theta_t: &[f64], a: &[f64], out: &mut [f64]) {
    crate::special::with_row_length!(a.len(), scores_fixed(u, len, theta_t, a, out))
}

/// [`scores_rows`] with Q = q components (1 ≤ q ≤ 16), so that a row's scores are summed in
/// registers.
#[inline(always)]
fn scores_fixed<const Q: usize>(
    u: &[f64],
    len: usize,
    theta_t: &[f64],
    a: &[f64],
    out: &mut [f64],
) {
    if Q == 0 {
        // Only q = 0 (nothing to score) gets here: `scores_block` sends q ≤ 16 alone.
        debug_assert!(a.is_empty());
        return;
    }
    let a: &[f64; Q] = a.try_into().expect("Q components");
    let (first, rest) = theta_t.split_at(Q);
    let first: &[f64; Q] = first.try_into().expect("Q components");
    // Four rows at a time: four independent chains of additions, one pass over Θᵀ.
    let rows4 = out.len() / Q / 4 * 4;
    let (out4, or) = out.split_at_mut(rows4 * Q);
    let (u4, ur) = u.split_at(rows4 * len);
    // (Plain loops, not `std::array::from_fn`: a generic helper that is not inlined would be
    // compiled for the baseline target and called per row group from the AVX versions.)
    for (o, u) in out4.chunks_exact_mut(4 * Q).zip(u4.chunks_exact(4 * len)) {
        let mut acc = [[0.0; Q]; 4];
        for (t, at) in acc.iter_mut().enumerate() {
            let u0 = u[t * len];
            for i in 0..Q {
                at[i] = u0 * first[i];
            }
        }
        for (j, tj) in rest.chunks_exact(Q).enumerate() {
            let tj: &[f64; Q] = tj.try_into().expect("Q components");
            for (t, at) in acc.iter_mut().enumerate() {
                let uj = u[t * len + j + 1];
                for i in 0..Q {
                    at[i] += uj * tj[i];
                }
            }
        }
        for (ot, at) in o.chunks_exact_mut(Q).zip(&acc) {
            let ot: &mut [f64; Q] = ot.try_into().expect("Q components");
            for i in 0..Q {
                ot[i] = at[i] - a[i];
            }
        }
    }
    for (o, ur) in or.chunks_exact_mut(Q).zip(ur.chunks_exact(len)) {
        let mut acc = [0.0; Q];
        for i in 0..Q {
            acc[i] = ur[0] * first[i];
        }
        for (uj, tj) in ur[1..].iter().zip(rest.chunks_exact(Q)) {
            let tj: &[f64; Q] = tj.try_into().expect("Q components");
            for i in 0..Q {
                acc[i] += uj * tj[i];
            }
        }
        for i in 0..Q {
            o[i] = acc[i] - a[i];
        }
    }
}

/// s (q × len) = Wᵀ U for one block of rows, on the calling thread (overwrites s). Few
/// components over short runs go through [`weighted_sums_rows`], larger shapes through faer's GEMM.
pub(crate) fn weighted_sums_block(w: &[f64], q: usize, u: &[f64], len: usize, s: &mut [f64]) {
    if q <= 16 && len <= 16 {
        return weighted_sums_rows(w, q, u, len, s);
    }
    let rows = w.len() / q;
    gemm(
        MatMut::from_row_major_slice_mut(s, q, len),
        Accum::Replace,
        MatRef::from_row_major_slice(w, rows, q).transpose(),
        MatRef::from_row_major_slice(u, rows, len),
    );
}

/// s (q × len) = Wᵀ U: for each moment j, Σ_r u_rj w_r (a q-vector) in four running sums (rows
/// r mod 4, so that the additions overlap in the pipeline), added as (0 + 1) + (2 + 3) at the end;
/// plain mul/add (the same bits on every target). q is a compile-time constant up to 16
/// (vectorised, and compiled for AVX-512 and AVX2 too, chosen at run time).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
fn weighted_sums_rows(w: &[f64], q: usize, u: &[f64], len: usize, s: &mut [f64]) {
    crate::special::with_row_length!(q, weighted_sums_fixed(w, q, u, len, s))
}

/// [`weighted_sums_rows`] with Q = q components (1 ≤ q ≤ 16), so that the running sums stay in
/// registers.
#[inline(always)]
fn weighted_sums_fixed<const Q: usize>(w: &[f64], q: usize, u: &[f64], len: usize, s: &mut [f64]) {
    if Q == 0 {
        // Only q = 0 (no sums) gets here: `weighted_sums_block` sends q ≤ 16 alone.
        debug_assert_eq!(q, 0);
        return;
    }
    // Two moments per pass over the rows (one when one is left): each row's weights are read once
    // for both, which halves the passes over the block (it does not stay in L1).
    let mut j = 0;
    while j < len {
        let two = j + 1 < len;
        let mut acc = [[[0.0; Q]; 4]; 2];
        let (w4, u4) = (w.chunks_exact(4 * Q), u.chunks_exact(4 * len));
        let (wr, ur) = (w4.remainder(), u4.remainder());
        for (w4, u4) in w4.zip(u4) {
            for t in 0..4 {
                let wt: &[f64; Q] = w4[t * Q..(t + 1) * Q].try_into().expect("Q components");
                let uj = u4[t * len + j];
                for i in 0..Q {
                    acc[0][t][i] += uj * wt[i];
                }
                if two {
                    let uj = u4[t * len + j + 1];
                    for i in 0..Q {
                        acc[1][t][i] += uj * wt[i];
                    }
                }
            }
        }
        for (wrow, urow) in wr.chunks_exact(Q).zip(ur.chunks_exact(len)) {
            let wrow: &[f64; Q] = wrow.try_into().expect("Q components");
            for i in 0..Q {
                acc[0][0][i] += urow[j] * wrow[i];
            }
            if two {
                for i in 0..Q {
                    acc[1][0][i] += urow[j + 1] * wrow[i];
                }
            }
        }
        for (h, ah) in acc.iter().enumerate().take(if two { 2 } else { 1 }) {
            for i in 0..Q {
                s[i * len + j + h] = (ah[0][i] + ah[1][i]) + (ah[2][i] + ah[3][i]);
            }
        }
        j += if two { 2 } else { 1 };
    }
}

#[cfg(test)]
mod tests;
