//! The fused block update with eight elements per vector ("rows as lanes"): for tiles of eight
//! consecutive elements, each child's run moments are transposed into one vector per moment, then
//! each component's score (Winn (2.53): Θ_k·u − ⟨A_k⟩, plus the prior) is one vector, and the
//! softmax of Winn (2.19) runs down the components — maximum, exps, sum, normalisation, ln of the
//! sum — with no reduction across a vector. The block's sums (column sums of q(z), φ·u, Σ A and
//! each child's S = Wᵀ U) are accumulated in lanes and added across lanes once per block;
//! φ and q(z) go back to the node's row-major layout through in-register 8 × 8 transposes.
//!
//! One body, written over [`Lanes`]: AVX-512 vectors where the CPU has them (elsewhere the
//! row-major kernels of the caller's general path), and plain arrays in the tests, which give the
//! vectors' bits (every step is one IEEE operation per lane; the sums of products in the scores
//! and in S are fused multiply-adds, rounded once in either implementation).

use super::{Child, Sums};
use crate::kernels;
#[cfg(test)]
use crate::lanes::Scalar;
use crate::lanes::{self, Lanes};

/// Whether the tiled path can take blocks of K = `k` components with these children: K and
/// every child's run length fit, and the CPU has AVX-512 (elsewhere the row-major kernels of the
/// general path, vectorised for the machine's own units, are faster than eight plain lanes).
pub(super) fn applies(k: usize, children: &[Child]) -> bool {
    fits(k, children.iter().map(|c| c.len)) && has_avx512()
}

/// K and the run lengths within what the tile kernel handles.
fn fits(k: usize, mut lens: impl Iterator<Item = usize>) -> bool {
    (1..=16).contains(&k) && lens.all(|len| (1..=MAX_LEN).contains(&len))
}

/// Whether the CPU has AVX-512 F and DQ (the tiled path's vectors).
#[cfg(target_arch = "x86_64")]
pub(super) fn has_avx512() -> bool {
    lanes::Avx512::detect().is_some()
}

/// No AVX-512 off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(super) fn has_avx512() -> bool {
    false
}

/// Updates the block of elements from `start` through [`block`] (the caller has checked that
/// every element is latent and takes part and the prior is one for all; `children` built once
/// per update); `false` (nothing usable written) when [`block`] does not handle it. φ is written
/// only if `phi` is given. On success, the block's parts of z's own bound term, z's group sums
/// and each child's S and totals are added to `sums`.
pub(super) fn try_block(
    children: &[TileChild],
    k: usize,
    start: usize,
    phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
    sums: &mut Sums,
) -> bool {
    let rows = a.len();
    let Some(t) = block(children, k, start, phi, u, a) else {
        return false;
    };
    if let Some((gsum, count)) = &mut sums.groups {
        kernels::add_into(gsum, &t.cols);
        count[0] += rows as f64;
    }
    sums.own += t.a - t.dot;
    for ((s, tot), ts) in sums.stats.iter_mut().zip(&t.s) {
        kernels::add_into(s, ts);
        kernels::add_into(tot, &t.cols);
    }
    true
}

/// Leftover groups of at most this many components are written back lane by lane, not
/// transposed (an 8 × 8 transpose of two live vectors costs as much as one of eight).
const NARROW: usize = 2;

/// Longest run of child moments handled here (two transposed groups of eight).
pub(super) const MAX_LEN: usize = 16;

/// One mixture child: its run moments (row-major, `len` per element of z, from element 0), Θ
/// as len × K (see [`transposed`]; the loops over components are then over K, a constant, and
/// unrolled) and the subtracted ⟨A⟩ (K; for the first child, with the prior already taken off).
pub(super) struct TileChild<'a> {
    pub u: &'a [f64],
    pub len: usize,
    pub theta: &'a [f64],
    pub a: &'a [f64],
}

/// What a block adds up: the column sums of q(z) (K), Σ_e A_e, Σ_e φ_e·u_e (a 0 term wherever
/// u = 0) and each child's S (K × len, row-major).
pub(super) struct TileSums {
    pub cols: Vec<f64>,
    pub a: f64,
    pub dot: f64,
    pub s: Vec<Vec<f64>>,
}

/// For the block of `a.len()` elements from `start`: φ (rows × k, if `phi` is given), q(z) into
/// `u`, ln-normalisers into `a`, and the block's sums, for k ≤ 16 components and runs of at most
/// [`MAX_LEN`] moments. `None`: not handled here (no AVX-512, more components, a longer run, or
/// a row whose φ is outside the softmax's domain — the caller then takes the general path,
/// which reports it), with `phi`, `u` and `a` left in an unspecified state.
pub(super) fn block(
    children: &[TileChild],
    k: usize,
    start: usize,
    phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    if !fits(k, children.iter().map(|c| c.len)) {
        return None;
    }
    // Without AVX-512, `None`: the row-major kernels, vectorised for the
    // machine's own units, are faster there than eight plain lanes.
    avx512(children, k, start, phi, u, a).flatten()
}

/// [`block`] with AVX-512 vectors where the CPU has them; `None`: it does not.
#[cfg(target_arch = "x86_64")]
fn avx512(
    children: &[TileChild],
    k: usize,
    start: usize,
    phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
) -> Option<Option<TileSums>> {
    let l = lanes::Avx512::detect()?;
    // SAFETY: the token proves the CPU has AVX-512 F and DQ, the features the function enables.
    Some(unsafe { block_avx512(l, children, k, start, phi, u, a) })
}

/// No AVX-512 off x86-64.
#[cfg(not(target_arch = "x86_64"))]
fn avx512(
    _: &[TileChild],
    _: usize,
    _: usize,
    _: Option<&mut [f64]>,
    _: &mut [f64],
    _: &mut [f64],
) -> Option<Option<TileSums>> {
    None
}

/// [`block`] with AVX-512 vectors, K a compile-time constant.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn block_avx512(
    l: lanes::Avx512,
    children: &[TileChild],
    k: usize,
    start: usize,
    phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    crate::special::with_row_length!(k, tiles_avx512(l, children, start, phi, u, a))
}

/// [`tiles`] compiled for AVX-512, one function per K (not all inlined into one frame).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn tiles_avx512<const K: usize>(
    l: lanes::Avx512,
    children: &[TileChild],
    start: usize,
    phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    tiles::<K, _>(l, children, start, phi, u, a)
}

/// [`block`] with plain arrays: the reference for the vector version's bits.
#[cfg(test)]
fn block_scalar(
    children: &[TileChild],
    k: usize,
    start: usize,
    phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    crate::special::with_row_length!(k, tiles_scalar(children, start, phi, u, a))
}

/// [`tiles`] with plain arrays, one function per K.
#[cfg(test)]
fn tiles_scalar<const K: usize>(
    children: &[TileChild],
    start: usize,
    phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    tiles::<K, _>(Scalar, children, start, phi, u, a)
}

/// [`block`] with K components (1..=16; K = 0, longer rows, is never called) over the tiles of
/// eight rows (the last one, if shorter, through zero-padded copies).
#[inline(always)]
fn tiles<const K: usize, L: Lanes>(
    l: L,
    children: &[TileChild],
    start: usize,
    mut phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    if K == 0 {
        return None;
    }
    let rows = a.len();
    let zero = l.splat(0.0);
    let mut acc = Acc {
        cols: [zero; K],
        dot: zero,
        a: zero,
        s: children.iter().map(|c| vec![zero; K * c.len]).collect(),
        ut: vec![[zero; MAX_LEN]; children.len()],
        sums: [zero; PENDING],
        pending: 0,
        done: 0,
    };
    let full = rows / 8 * 8;
    for r0 in (0..full).step_by(8) {
        let inputs = |ci: usize| {
            let c = &children[ci];
            &c.u[(start + r0) * c.len..(start + r0 + 8) * c.len]
        };
        tile::<K, L>(
            l,
            children,
            inputs,
            phi.as_deref_mut().map(|p| &mut p[r0 * K..(r0 + 8) * K]),
            &mut u[r0 * K..(r0 + 8) * K],
            &mut a[r0..r0 + 8],
            8,
            &mut acc,
        )?;
        if acc.pending == PENDING {
            finish_normalisers(l, &mut a[..r0 + 8], &mut acc);
        }
    }
    if full < rows {
        let valid = rows - full;
        let padded: Vec<Vec<f64>> = children
            .iter()
            .map(|c| {
                let mut p = vec![0.0; 8 * c.len];
                p[..valid * c.len]
                    .copy_from_slice(&c.u[(start + full) * c.len..(start + rows) * c.len]);
                p
            })
            .collect();
        let (mut pt, mut ut, mut at) = ([0.0; 8 * 16], [0.0; 8 * 16], [0.0; 8]);
        tile::<K, L>(
            l,
            children,
            |ci| &padded[ci][..],
            Some(&mut pt[..8 * K]),
            &mut ut[..8 * K],
            &mut at,
            valid,
            &mut acc,
        )?;
        if let Some(phi) = phi {
            phi[full * K..].copy_from_slice(&pt[..valid * K]);
        }
        u[full * K..].copy_from_slice(&ut[..valid * K]);
        a[full..].copy_from_slice(&at[..valid]);
    }
    finish_normalisers(l, a, &mut acc);
    // Added across the lanes in lane order (no closure: a closure is not compiled with the
    // kernel's target features, and would call the vector store out of line).
    let mut cols = vec![0.0; K];
    for (c, v) in cols.iter_mut().zip(acc.cols) {
        *c = l.to_array(v).iter().sum();
    }
    let mut s = Vec::with_capacity(children.len());
    for (c, sc) in children.iter().zip(&acc.s) {
        // From len × K back to K × len.
        let mut out = vec![0.0; sc.len()];
        for (j, sj) in sc.chunks_exact(K).enumerate() {
            for (kk, v) in sj.iter().enumerate() {
                out[kk * c.len + j] = l.to_array(*v).iter().sum();
            }
        }
        s.push(out);
    }
    Some(TileSums {
        cols,
        a: l.to_array(acc.a).iter().sum(),
        dot: l.to_array(acc.dot).iter().sum(),
        s,
    })
}

/// Tiles whose A = m + ln s waits for [`finish_normalisers`] (a fixed buffer on the stack,
/// not an allocation per block).
const PENDING: usize = 32;

/// A block's running sums in lanes (each child's S as len × K), each child's transposed run
/// moments of the current tile, and the softmax sums s of the `pending` tiles after the first
/// `done` rows (for A = m + ln s).
struct Acc<L: Lanes, const K: usize> {
    cols: [L::V; K],
    dot: L::V,
    a: L::V,
    s: Vec<Vec<L::V>>,
    ut: Vec<[L::V; MAX_LEN]>,
    sums: [L::V; PENDING],
    pending: usize,
    done: usize,
}

/// A = m + ln s of the pending tiles (`a[acc.done..]` holds their maxima m, `acc.sums` their
/// sums s), added to the block's ΣA in tile order (a short last tile's padding left out). Done
/// after a run of tiles, so that no tile waits for its logarithm.
#[inline(always)]
fn finish_normalisers<L: Lanes, const K: usize>(l: L, a: &mut [f64], acc: &mut Acc<L, K>) {
    let zero = l.splat(0.0);
    let a = &mut a[acc.done..];
    acc.done += a.len();
    let pending = std::mem::take(&mut acc.pending);
    for (at, s) in a.chunks_mut(8).zip(&acc.sums[..pending]) {
        let av = l.add(l.load(at), lanes::ln_positive(l, *s));
        let w = if at.len() == 8 {
            av
        } else {
            l.select(l.first(at.len()), av, zero)
        };
        acc.a = l.add(acc.a, w);
        l.store(at, av);
    }
}

/// One tile of eight rows (`inputs(c)`: child c's 8 × len run moments; φ written if `phi` is
/// given; `valid`: the rows that are real, the others zero padding left out of the sums).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn tile<'s, const K: usize, L: Lanes>(
    l: L,
    children: &[TileChild],
    inputs: impl Fn(usize) -> &'s [f64],
    phi: Option<&mut [f64]>,
    u: &mut [f64],
    a: &mut [f64],
    valid: usize,
    acc: &mut Acc<L, K>,
) -> Option<()> {
    let zero = l.splat(0.0);
    // Scores: φ_k = Σ_j u_j Θ_kj − ⟨A_k⟩ (j in order), each further child's added.
    // The sums over j run outside the loops over the K components (the same operations in the
    // same order for each component).
    let mut ph = [zero; K];
    for (ci, (c, ut)) in children.iter().zip(&mut acc.ut).enumerate() {
        load_transposed(l, inputs(ci), c.len, ut);
        let (rows, _) = c.theta.as_chunks::<K>();
        let mut s = [zero; K];
        for kk in 0..K {
            s[kk] = l.mul(ut[0], l.splat(rows[0][kk]));
        }
        for (uj, tj) in ut[1..c.len].iter().zip(&rows[1..]) {
            for kk in 0..K {
                s[kk] = l.mul_add(*uj, l.splat(tj[kk]), s[kk]);
            }
        }
        let a = &c.a[..K];
        for kk in 0..K {
            let score = l.sub(s[kk], l.splat(a[kk]));
            ph[kk] = if ci == 0 { score } else { l.add(ph[kk], score) };
        }
    }
    // Softmax down the components: m = max φ, e = exp(φ − m), s = Σ e (in order), u = e/s,
    // A = m + ln s.
    // The maximum by pairs (a shorter chain of dependences than one by one; the same value for
    // any order, and a row with a NaN is out of the domain below either way).
    let mut mx = ph;
    let mut n = K;
    while n > 1 {
        let half = n / 2;
        for i in 0..half {
            mx[i] = l.max(mx[2 * i + 1], mx[2 * i]);
        }
        if n % 2 == 1 {
            mx[half] = mx[n - 1];
        }
        n = half + n % 2;
    }
    let m = mx[0];
    let mut e = [zero; K];
    for kk in 0..K {
        e[kk] = lanes::exp_nonpositive(l, l.sub(ph[kk], m));
    }
    let mut sum = e[0];
    for kk in 1..K {
        sum = l.add(sum, e[kk]);
    }
    // s ≥ 1 unless φ has a NaN or m is ±∞ (then s is NaN): outside the domain.
    if !l.all(l.ge(sum, l.splat(1.0))) {
        return None;
    }
    let inv = l.div(l.splat(1.0), sum);
    let live = l.first(valid);
    // q(z) with the padding rows of a short tile as 0: the weights of the sums.
    let mut w = [zero; K];
    for kk in 0..K {
        e[kk] = l.mul(e[kk], inv);
        w[kk] = if valid == 8 {
            e[kk]
        } else {
            l.select(live, e[kk], zero)
        };
        acc.cols[kk] = l.add(acc.cols[kk], w[kk]);
        // A component of probability 0 (u = 0, φ may be −∞) contributes 0: left out by the
        // mask of one fused multiply-add (one rounding for φ·u + the running sum).
        acc.dot = l.mul_add_where(l.ne(w[kk], zero), ph[kk], w[kk], acc.dot);
    }
    for ((c, sc), ut) in children.iter().zip(&mut acc.s).zip(&acc.ut) {
        let (sc, _) = sc.as_chunks_mut::<K>();
        for (sj, uj) in sc.iter_mut().zip(&ut[..c.len]) {
            for kk in 0..K {
                sj[kk] = l.mul_add(w[kk], *uj, sj[kk]);
            }
        }
    }
    if let Some(phi) = phi {
        store_transposed(l, &ph, phi);
    }
    store_transposed(l, &e, u);
    // A = m + ln s is completed by `finish_normalisers`, off this tile's chain of dependences.
    l.store(a, m);
    acc.sums[acc.pending] = sum;
    acc.pending += 1;
    Some(())
}

/// The eight rows (8 × len, row-major) as one vector per column into `out[..len]`.
#[inline(always)]
fn load_transposed<L: Lanes>(l: L, rows: &[f64], len: usize, out: &mut [L::V; MAX_LEN]) {
    for g in 0..len.div_ceil(8) {
        let (lo, hi) = (8 * g, (8 * g + 8).min(len));
        let v: [L::V; 8] = std::array::from_fn(|r| l.load(&rows[r * len + lo..r * len + hi]));
        let t = l.transpose(v);
        for (o, t) in out[lo..hi].iter_mut().zip(t) {
            *o = t;
        }
    }
}

/// The K vectors `cols` (one per column, a lane per row) into eight row-major rows (8 × K).
#[inline(always)]
fn store_transposed<L: Lanes, const K: usize>(l: L, cols: &[L::V; K], rows: &mut [f64]) {
    for g in 0..K.div_ceil(8) {
        let (lo, hi) = (8 * g, (8 * g + 8).min(K));
        if hi - lo <= NARROW {
            for (i, c) in cols[lo..hi].iter().enumerate() {
                let c = l.to_array(*c);
                for r in 0..8 {
                    rows[r * K + lo + i] = c[r];
                }
            }
            continue;
        }
        let v: [L::V; 8] = std::array::from_fn(|i| {
            if lo + i < hi {
                cols[lo + i]
            } else {
                l.splat(0.0)
            }
        });
        let t = l.transpose(v);
        for (r, tr) in t.into_iter().enumerate() {
            l.store(&mut rows[r * K + lo..r * K + hi], tr);
        }
    }
}

#[cfg(test)]
mod tests;
