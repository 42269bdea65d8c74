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
//! vectors' bits (every step is one IEEE operation per lane, no fused multiply-add).

use super::{Child, Node, Sums};
use crate::kernels;
#[cfg(test)]
use crate::lanes::Scalar;
use crate::lanes::{self, Lanes};

/// Updates a block through [`block`] when every element is latent and takes part, the priors are
/// one for all elements and the shapes fit; `false` (nothing usable written) otherwise. On
/// success, the block's parts of z's own bound term, z's group sums and each child's S and totals
/// are added to `sums`.
#[allow(clippy::too_many_arguments)]
pub(super) fn try_block(
    z: &Node,
    children: &[Child],
    priors: &Option<(Vec<f64>, Vec<f64>)>,
    start: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
    sums: &mut Sums,
) -> bool {
    let (k, rows) = (z.len, a.len());
    let (Some((gphi, _)), Some((_, reps))) = (priors, &z.groups) else {
        return false;
    };
    if reps.len() != 1
        || z.map
        || children.is_empty()
        || !children.iter().all(|c| c.all)
        || !z.observed.none_in(start..start + rows)
    {
        return false;
    }
    // One prior for every element: subtracted with the first child's ⟨A⟩, Θ u − (⟨A⟩ − φ_prior).
    let a_minus_prior = super::a_minus_prior(&children[0], &gphi[..k]);
    let tile_children: Vec<TileChild> = children
        .iter()
        .enumerate()
        .map(|(i, c)| TileChild {
            u: &c.u[start * c.len..(start + rows) * c.len],
            len: c.len,
            theta: &c.theta,
            a: if i == 0 { &a_minus_prior } else { &c.a },
        })
        .collect();
    let Some(t) = block(&tile_children, k, phi, u, a) else {
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

/// One mixture child over the block: its run moments (rows × len, row-major), Θ (K × len) and the
/// subtracted ⟨A⟩ (K; for the first child, with the prior already taken off).
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

/// φ (rows × k), q(z) into `u`, ln-normalisers into `a`, and the block's sums, for k ≤ 16
/// components and runs of at most [`MAX_LEN`] moments. `None`: not handled here (no AVX-512, more
/// components, a longer run, or a row whose φ is outside the softmax's domain — the caller then
/// takes the general path, which reports it), with `phi`, `u` and `a` left in an unspecified
/// state.
pub(super) fn block(
    children: &[TileChild],
    k: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    if !(1..=16).contains(&k) || children.iter().any(|c| !(1..=MAX_LEN).contains(&c.len)) {
        return None;
    }
    // Without AVX-512, `None`: the row-major kernels, vectorised for the
    // machine's own units, are faster there than eight plain lanes.
    avx512(children, k, phi, u, a).flatten()
}

/// [`block`] with AVX-512 vectors where the CPU has them; `None`: it does not.
#[cfg(target_arch = "x86_64")]
fn avx512(
    children: &[TileChild],
    k: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
) -> Option<Option<TileSums>> {
    let l = lanes::Avx512::detect()?;
    // SAFETY: the token proves the CPU has AVX-512 F and DQ, the features the function enables.
    Some(unsafe { block_avx512(l, children, k, phi, u, a) })
}

/// No AVX-512 off x86-64.
#[cfg(not(target_arch = "x86_64"))]
fn avx512(
    _: &[TileChild],
    _: usize,
    _: &mut [f64],
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
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    crate::special::with_row_length!(k, tiles_avx512(l, children, phi, u, a))
}

/// [`tiles`] compiled for AVX-512, one function per K (not all inlined into one frame).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn tiles_avx512<const K: usize>(
    l: lanes::Avx512,
    children: &[TileChild],
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    tiles::<K, _>(l, children, phi, u, a)
}

/// [`block`] with plain arrays: the reference for the vector version's bits.
#[cfg(test)]
fn block_scalar(
    children: &[TileChild],
    k: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    crate::special::with_row_length!(k, tiles_scalar(children, phi, u, a))
}

/// [`tiles`] with plain arrays, one function per K.
#[cfg(test)]
fn tiles_scalar<const K: usize>(
    children: &[TileChild],
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
) -> Option<TileSums> {
    tiles::<K, _>(Scalar, children, phi, u, a)
}

/// [`block`] with K components (1..=16; K = 0, longer rows, is never called) over the tiles of
/// eight rows (the last one, if shorter, through zero-padded copies).
#[inline(always)]
fn tiles<const K: usize, L: Lanes>(
    l: L,
    children: &[TileChild],
    phi: &mut [f64],
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
    };
    let full = rows / 8 * 8;
    for r0 in (0..full).step_by(8) {
        let inputs = |ci: usize| {
            let c = &children[ci];
            &c.u[r0 * c.len..(r0 + 8) * c.len]
        };
        tile::<K, L>(
            l,
            children,
            inputs,
            &mut phi[r0 * K..(r0 + 8) * K],
            &mut u[r0 * K..(r0 + 8) * K],
            &mut a[r0..r0 + 8],
            8,
            &mut acc,
        )?;
    }
    if full < rows {
        let valid = rows - full;
        let padded: Vec<Vec<f64>> = children
            .iter()
            .map(|c| {
                let mut p = vec![0.0; 8 * c.len];
                p[..valid * c.len].copy_from_slice(&c.u[full * c.len..rows * c.len]);
                p
            })
            .collect();
        let (mut pt, mut ut, mut at) = ([0.0; 8 * 16], [0.0; 8 * 16], [0.0; 8]);
        tile::<K, L>(
            l,
            children,
            |ci| &padded[ci][..],
            &mut pt[..8 * K],
            &mut ut[..8 * K],
            &mut at,
            valid,
            &mut acc,
        )?;
        phi[full * K..].copy_from_slice(&pt[..valid * K]);
        u[full * K..].copy_from_slice(&ut[..valid * K]);
        a[full..].copy_from_slice(&at[..valid]);
    }
    // Added across the lanes in lane order (no closure: a closure is not compiled with the
    // kernel's target features, and would call the vector store out of line).
    let mut cols = vec![0.0; K];
    for (c, v) in cols.iter_mut().zip(acc.cols) {
        *c = l.to_array(v).iter().sum();
    }
    let mut s = Vec::with_capacity(children.len());
    for sc in &acc.s {
        let mut out = vec![0.0; sc.len()];
        for (o, v) in out.iter_mut().zip(sc) {
            *o = l.to_array(*v).iter().sum();
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

/// A block's running sums in lanes, and each child's transposed run moments of the current tile.
struct Acc<L: Lanes, const K: usize> {
    cols: [L::V; K],
    dot: L::V,
    a: L::V,
    s: Vec<Vec<L::V>>,
    ut: Vec<[L::V; MAX_LEN]>,
}

/// One tile of eight rows (`inputs(c)`: child c's 8 × len run moments; `valid`: the rows that are
/// real, the others zero padding left out of the sums).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn tile<'s, const K: usize, L: Lanes>(
    l: L,
    children: &[TileChild],
    inputs: impl Fn(usize) -> &'s [f64],
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
    valid: usize,
    acc: &mut Acc<L, K>,
) -> Option<()> {
    let zero = l.splat(0.0);
    // Scores: φ_k = Σ_j u_j Θ_kj − ⟨A_k⟩ (j in order), each further child's added.
    let mut ph = [zero; K];
    for (ci, (c, ut)) in children.iter().zip(&mut acc.ut).enumerate() {
        load_transposed(l, inputs(ci), c.len, ut);
        let ut = &ut[..c.len];
        for (kk, (th, ak)) in c.theta.chunks_exact(c.len).zip(c.a).enumerate() {
            let mut s = l.mul(ut[0], l.splat(th[0]));
            for (uj, tj) in ut[1..].iter().zip(&th[1..]) {
                s = l.add(s, l.mul(*uj, l.splat(*tj)));
            }
            let score = l.sub(s, l.splat(*ak));
            ph[kk] = if ci == 0 { score } else { l.add(ph[kk], score) };
        }
    }
    // Softmax down the components: m = max φ, e = exp(φ − m), s = Σ e (in order), u = e/s,
    // A = m + ln s.
    let mut m = ph[0];
    for kk in 1..K {
        m = l.max(ph[kk], m);
    }
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
    let av = l.add(m, lanes::ln_positive(l, sum));
    let live = l.first(valid);
    for kk in 0..K {
        e[kk] = l.mul(e[kk], inv);
        let w = if valid == 8 {
            e[kk]
        } else {
            l.select(live, e[kk], zero)
        };
        acc.cols[kk] = l.add(acc.cols[kk], w);
        // A component of probability 0 (u = 0, φ may be −∞) contributes 0.
        acc.dot = l.add(acc.dot, l.select(l.ne(w, zero), l.mul(ph[kk], w), zero));
    }
    for ((c, sc), ut) in children.iter().zip(&mut acc.s).zip(&acc.ut) {
        for (kk, sk) in sc.chunks_exact_mut(c.len).enumerate() {
            let w = if valid == 8 {
                e[kk]
            } else {
                l.select(live, e[kk], zero)
            };
            for (s, uj) in sk.iter_mut().zip(&ut[..c.len]) {
                *s = l.add(*s, l.mul(w, *uj));
            }
        }
    }
    acc.a = l.add(
        acc.a,
        if valid == 8 {
            av
        } else {
            l.select(live, av, zero)
        },
    );
    store_transposed(l, &ph, phi);
    store_transposed(l, &e, u);
    l.store(a, av);
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
