//! The two products of the data grid Y (rows × cols, row-major) with a factor's moments, split into
//! fixed blocks of columns so that both cores share them and the result does not depend on the
//! number of threads.

use crate::kernels::gemm;
use faer::{Accum, MatMut, MatRef};
use rayon::prelude::*;

/// Columns of the grid per parallel block.
const BLOCK: usize = 512;

/// Columns `lo..hi` of the row-major grid `y` (`cols` per row).
fn columns(y: &[f64], cols: usize, lo: usize, hi: usize) -> MatRef<'_, f64> {
    let rows = y.len() / cols;
    MatRef::from_row_major_slice_with_stride(&y[lo..(rows - 1) * cols + hi], rows, hi - lo, cols)
}

/// Rows `lo..hi` of V: columns `offset..offset + width` of rows of length `stride`.
fn rows_of(
    v: &[f64],
    (offset, width, stride): (usize, usize, usize),
    lo: usize,
    hi: usize,
) -> MatRef<'_, f64> {
    MatRef::from_row_major_slice_with_stride(
        &v[lo * stride + offset..(hi - 1) * stride + offset + width],
        hi - lo,
        width,
        stride,
    )
}

/// Y V (rows × width) for V (cols × width) read strided: the inner dimension in blocks of `BLOCK`
/// columns in parallel, the partial products added in block order.
pub(super) fn times(y: &[f64], cols: usize, v: &[f64], view: (usize, usize, usize)) -> Vec<f64> {
    let (rows, width) = (y.len() / cols, view.1);
    let block = |b: usize, out: &mut [f64]| {
        let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(cols));
        gemm(
            MatMut::from_row_major_slice_mut(out, rows, width),
            Accum::Replace,
            columns(y, cols, lo, hi),
            rows_of(v, view, lo, hi),
        );
    };
    let mut out = vec![0.0; rows * width];
    let blocks = cols.div_ceil(BLOCK);
    if blocks <= 1 {
        // One block: its product formed in place, then added to zeros as a partial product is
        // below (0 + x: a −0 becomes +0, the same bits), without the partials' arrays.
        (0..blocks).for_each(|b| block(b, &mut out));
        out.iter_mut().for_each(|o| *o += 0.0);
        return out;
    }
    let partials: Vec<Vec<f64>> = crate::kernels::map_chunks(blocks, |b| {
        let mut out = vec![0.0; rows * width];
        block(b, &mut out);
        out
    });
    for p in partials {
        out.iter_mut().zip(&p).for_each(|(o, v)| *o += v);
    }
    out
}

/// Yᵀ A (cols × width) for a row-major A (rows × width): blocks of `BLOCK` columns of Y in
/// parallel (no reduction across tasks).
pub(super) fn transpose_times(y: &[f64], cols: usize, a: &[f64], width: usize) -> Vec<f64> {
    let mut out = vec![0.0; cols * width];
    transpose_times_into(y, cols, a, width, &mut out);
    out
}

/// [`transpose_times`] into `out` (cols × width; every value written).
pub(super) fn transpose_times_into(
    y: &[f64],
    cols: usize,
    a: &[f64],
    width: usize,
    out: &mut [f64],
) {
    let rows = y.len() / cols;
    let block = |(b, o): (usize, &mut [f64])| {
        let lo = b * BLOCK;
        let hi = lo + o.len() / width;
        gemm(
            MatMut::from_row_major_slice_mut(o, hi - lo, width),
            Accum::Replace,
            columns(y, cols, lo, hi).transpose(),
            MatRef::from_row_major_slice(a, rows, width),
        );
    };
    if cols <= BLOCK {
        // One block (see `kernels::map_chunks`).
        out.chunks_mut(BLOCK * width).enumerate().for_each(block);
    } else {
        out.par_chunks_mut(BLOCK * width)
            .enumerate()
            .for_each(block);
    }
}
