//! Row-wise softmax with eight rows per vector ("rows as lanes"): for each tile of eight rows the
//! row-major values are transposed into one vector per column, and the maximum, the exps, the sum,
//! the normalisation and the ln of the sum run down the columns with no reduction across a vector
//! (the row-major version adds each row's K values one after the other, a chain of K dependent
//! additions per row; here one chain serves eight rows).
//!
//! Every step is the row-major [`crate::special::softmax_rows`]'s own operation in the same order
//! (the maximum is exact in any order; the sum runs left to right; u = e · (1/s); A = m + ln s,
//! with the lane versions of `exp_nonpositive` and `ln_positive`, which give the scalar bits), so
//! the result has the same bits as the row-major version (tested).

use super::Lanes;

/// Row lengths handled here: at least [`MIN_K`] (shorter rows have short chains and unrolled
/// row-major loops, `special::with_row_length`) and at most [`MAX_K`] (the tile's columns are
/// held in a buffer on the stack).
pub(crate) const MIN_K: usize = 17;
/// See [`MIN_K`].
pub(crate) const MAX_K: usize = 64;

/// Whether rows of `k` values go through [`tiles`] where the CPU has AVX-512.
pub(crate) fn applies(k: usize) -> bool {
    (MIN_K..=MAX_K).contains(&k)
}

/// The softmax of the rows of `phi` (a whole number of tiles of eight rows of `k` values, `k` with
/// [`applies`]) into `u` (the probabilities) and `a` (the ln-normalisers), with AVX-512 vectors.
/// `false`: not done — no AVX-512 on this CPU, or a row has a NaN, a +∞ or only −∞ entries (the
/// caller then runs the row-major version, which finds and reports it), with `u` and `a` left in an
/// unspecified state.
pub(crate) fn softmax_tiles(phi: &[f64], k: usize, u: &mut [f64], a: &mut [f64]) -> bool {
    avx512(phi, k, u, a)
}

#[cfg(target_arch = "x86_64")]
fn avx512(phi: &[f64], k: usize, u: &mut [f64], a: &mut [f64]) -> bool {
    let Some(l) = super::Avx512::detect() else {
        return false;
    };
    // SAFETY: the token proves the CPU has AVX-512 F and DQ, the features the function enables.
    unsafe { tiles_avx512(l, phi, k, u, a) }
}

#[cfg(not(target_arch = "x86_64"))]
fn avx512(_: &[f64], _: usize, _: &mut [f64], _: &mut [f64]) -> bool {
    false
}

/// [`tiles`] compiled for AVX-512.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn tiles_avx512(l: super::Avx512, phi: &[f64], k: usize, u: &mut [f64], a: &mut [f64]) -> bool {
    tiles(l, phi, k, u, a)
}

/// [`softmax_tiles`] over lanes `l` (the plain arrays in the tests).
#[inline(always)]
pub(crate) fn tiles<L: Lanes>(l: L, phi: &[f64], k: usize, u: &mut [f64], a: &mut [f64]) -> bool {
    if !applies(k) || phi.len() != k * a.len() || u.len() != phi.len() || !a.len().is_multiple_of(8)
    {
        return false;
    }
    let (zero, one) = (l.splat(0.0), l.splat(1.0));
    let mut v = [zero; MAX_K];
    let v = &mut v[..k];
    for ((p, ut), at) in phi
        .chunks_exact(8 * k)
        .zip(u.chunks_exact_mut(8 * k))
        .zip(a.chunks_exact_mut(8))
    {
        load_transposed(l, p, k, v);
        // The maximum in four running maxima (shorter chains; exact in any order when there is
        // no NaN).
        let mut m = [v[0]; 4];
        for (i, x) in v.iter().enumerate() {
            m[i % 4] = l.max(*x, m[i % 4]);
        }
        let m = l.max(l.max(m[0], m[1]), l.max(m[2], m[3]));
        // φ − m is in [−∞, 0] for a row in the domain, and NaN where the row has a NaN, a +∞ (∞ − ∞)
        // or only −∞ entries: summed after clamping at −700 (as the exp does), NaN exactly then.
        let floor = l.splat(-700.0);
        let mut probe = [zero; 4];
        for (i, x) in v.iter_mut().enumerate() {
            let d = l.sub(*x, m);
            probe[i % 4] = l.add(probe[i % 4], l.select(l.lt(d, floor), floor, d));
            *x = super::exp_nonpositive(l, d);
        }
        let probe = l.add(l.add(probe[0], probe[1]), l.add(probe[2], probe[3]));
        // Left to right, as the row-major sum.
        let mut s = v[0];
        for x in &v[1..] {
            s = l.add(s, *x);
        }
        // s ≥ 1 (the largest term is e⁰) for a row in the domain; probe · 0 is 0 there, NaN
        // outside it.
        if !l.all(l.ge(l.add(s, l.mul(probe, zero)), one)) {
            return false;
        }
        let inv = l.div(one, s);
        for x in v.iter_mut() {
            *x = l.mul(*x, inv);
        }
        store_transposed(l, v, k, ut);
        l.store(at, l.add(m, super::ln_positive(l, s)));
    }
    true
}

/// The eight rows of `k` values (row-major) as one vector per column into `out[..k]`.
#[inline(always)]
fn load_transposed<L: Lanes>(l: L, rows: &[f64], k: usize, out: &mut [L::V]) {
    for lo in (0..k).step_by(8) {
        let hi = (lo + 8).min(k);
        let v: [L::V; 8] = std::array::from_fn(|r| l.load(&rows[r * k + lo..r * k + hi]));
        let t = l.transpose(v);
        out[lo..hi].copy_from_slice(&t[..hi - lo]);
    }
}

/// The `k` column vectors (a lane per row) into eight row-major rows of `k` values.
#[inline(always)]
fn store_transposed<L: Lanes>(l: L, cols: &[L::V], k: usize, rows: &mut [f64]) {
    let zero = l.splat(0.0);
    for lo in (0..k).step_by(8) {
        let hi = (lo + 8).min(k);
        let v: [L::V; 8] = std::array::from_fn(|i| if lo + i < hi { cols[lo + i] } else { zero });
        let t = l.transpose(v);
        for (r, tr) in t.into_iter().enumerate() {
            l.store(&mut rows[r * k + lo..r * k + hi], tr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::Scalar;

    fn block(k: usize, rows: usize) -> Vec<f64> {
        let mut phi: Vec<f64> = (0..k * rows)
            .map(|i| ((i * 7919) % 1000) as f64 * 0.9 - 450.0)
            .collect();
        phi[k + 1] = f64::NEG_INFINITY;
        phi[3 * k + 2] = -1e308;
        phi
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// The lanes give the row-major softmax's bits, row for row (plain arrays here; the AVX-512
    /// vectors, where the CPU has them, through `special::softmax_rows` below and here).
    #[test]
    fn tiles_give_the_row_major_bits() {
        for k in [17, 24, 25, 40, 63, 64] {
            let rows = 32;
            let phi = block(k, rows);
            let (mut u0, mut a0) = (vec![0.0; k * rows], vec![0.0; rows]);
            for ((p, u), a) in phi
                .chunks_exact(k)
                .zip(u0.chunks_exact_mut(k))
                .zip(a0.chunks_exact_mut(1))
            {
                // One row at a time: the row-major path (a single row never forms a tile).
                crate::special::softmax_rows(p, k, u, a).unwrap();
            }
            let (mut u1, mut a1) = (vec![0.0; k * rows], vec![0.0; rows]);
            assert!(tiles(Scalar, &phi, k, &mut u1, &mut a1), "k {k}");
            assert_eq!(bits(&u1), bits(&u0), "k {k}");
            assert_eq!(bits(&a1), bits(&a0), "k {k}");
            let (mut u2, mut a2) = (vec![0.0; k * rows], vec![0.0; rows]);
            if softmax_tiles(&phi, k, &mut u2, &mut a2) {
                assert_eq!(bits(&u2), bits(&u0), "k {k}");
                assert_eq!(bits(&a2), bits(&a0), "k {k}");
            }
        }
    }

    /// A NaN, a +∞ or a row of −∞ anywhere in a tile: not done (the caller reports the row).
    #[test]
    fn rows_outside_the_domain_are_refused() {
        let (k, rows) = (20, 16);
        for (at, bad) in [(9 * k + 3, f64::NAN), (15 * k, f64::INFINITY)] {
            let mut phi = block(k, rows);
            phi[at] = bad;
            let (mut u, mut a) = (vec![0.0; k * rows], vec![0.0; rows]);
            assert!(!tiles(Scalar, &phi, k, &mut u, &mut a));
            assert!(!softmax_tiles(&phi, k, &mut u, &mut a));
        }
        let mut phi = block(k, rows);
        phi[4 * k..5 * k].fill(f64::NEG_INFINITY);
        let (mut u, mut a) = (vec![0.0; k * rows], vec![0.0; rows]);
        assert!(!tiles(Scalar, &phi, k, &mut u, &mut a));
        assert!(!softmax_tiles(&phi, k, &mut u, &mut a));
        // Outside the handled shapes.
        let phi = block(16, 8);
        assert!(!tiles(Scalar, &phi, 16, &mut u[..128], &mut a[..8]));
        let phi = block(20, 7);
        assert!(!tiles(Scalar, &phi, 20, &mut u[..140], &mut a[..7]));
    }
}
