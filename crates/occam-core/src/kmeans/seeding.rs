//! Greedy k-means++ seeding: candidates drawn ∝ d², tried in one pass over the points.

use rand::Rng as _;
use rayon::prelude::*;

/// Greedy k-means++ seeding of `k ≤ n` centres: the centres (k rows of `width`), each point's
/// nearest seed and its squared distance to it.
///
/// Each new seed is the best, by the resulting potential Σ min d², of a few candidates drawn with
/// probability ∝ d² to the seeds so far. The candidates of one seed are drawn first (a draw
/// depends on the seeds so far, not on another candidate's trial, so the generator is used as if
/// each were drawn before its trial); one pass over the points then gives every candidate's
/// potential and distances ([`Potential::trials`]), and the chosen one's are kept. The pass works
/// per block of [`BLOCK`] points on a transposed copy of the data (contiguous along the points,
/// so every step vectorises) with the arithmetic of [`Potential::try_centre`], which places the
/// first seed ([`block_potential`]): the numbers of trying each candidate in turn. A candidate
/// is drawn by walking the block sums, then the points of one block. The sums are added
/// in a fixed order (four lanes within a block, then the blocks in order), whatever the number of
/// threads: the seeds depend on the generator's state alone.
pub(super) fn seeds(
    x: &[f64],
    n: usize,
    width: usize,
    k: usize,
    rng: &mut crate::Rng,
) -> (Vec<f64>, Vec<usize>, Vec<f64>) {
    let row = |j: usize| &x[j * width..(j + 1) * width];
    let trials = 2 + (k as f64).ln().floor() as usize;
    let (xt, mut centres, mut nearest) = first_seed(x, n, width, rng);
    let mut next = Potential::new(n);
    let mut label = vec![0usize; n];
    let mut candidates = Vec::with_capacity(trials);
    let mut rows = Vec::with_capacity(trials * width);
    // Narrow points are cheaper to measure again than to store and load back (the chosen
    // candidate's distances are recomputed); wide ones keep every candidate's distances.
    let mut tried = Tried {
        keep: width > NARROW,
        ..Tried::default()
    };
    for s in 1..k {
        candidates.clear();
        rows.clear();
        for _ in 0..trials {
            let c = if nearest.total > 0.0 {
                nearest.draw(rng.random::<f64>() * nearest.total)
            } else {
                rng.random_range(0..n)
            };
            candidates.push(c);
            rows.extend_from_slice(row(c));
        }
        let totals = nearest.trials(&xt, n, &rows, trials, &mut tried);
        // The first candidate with the smallest potential.
        let mut best = 0;
        for (t, total) in totals.iter().enumerate().skip(1) {
            if *total < totals[best] {
                best = t;
            }
        }
        let c = candidates[best];
        if tried.keep {
            tried.take(best, totals[best], &mut next);
        } else {
            // The same function on the same numbers: the same distances, block sums and total.
            next.try_centre(&xt, n, row(c), &nearest.d2);
        }
        // A select rather than a branch: the loop vectorises.
        for (l, (old, new)) in label.iter_mut().zip(nearest.d2.iter().zip(&next.d2)) {
            *l = if new < old { s } else { *l };
        }
        std::mem::swap(&mut nearest, &mut next);
        centres.extend_from_slice(row(c));
    }
    (centres, label, nearest.d2)
}

/// The seeding's start: the points transposed (width × n, contiguous along the points), the
/// first seed drawn uniformly, and every point's potential with that one seed.
pub(super) fn first_seed(
    x: &[f64],
    n: usize,
    width: usize,
    rng: &mut crate::Rng,
) -> (Vec<f64>, Vec<f64>, Potential) {
    let row = |j: usize| &x[j * width..(j + 1) * width];
    let mut xt = vec![0.0; width * n];
    for j in 0..n {
        for (w, &v) in row(j).iter().enumerate() {
            xt[w * n + j] = v;
        }
    }
    let first = rng.random_range(0..n);
    let none = vec![f64::INFINITY; n];
    let mut nearest = Potential::new(n);
    nearest.try_centre(&xt, n, row(first), &none);
    (xt, row(first).to_vec(), nearest)
}

/// Points per block of the seeding's partial sums.
pub(super) const BLOCK: usize = 256;

/// The widest points with their own distance kernel (`squared_distances::<1..=4>`).
const NARROW: usize = 4;

/// Points × width above which a seeding pass runs on the thread pool.
pub(super) const PARALLEL_SEEDING: usize = 1 << 16;

/// The potential of the block of points starting at `j0` (`d2.len()` of them; `xt` is width × n)
/// with `centre` added to the seeds whose distances are `nearest` (the block's): each point's
/// `d2 = min(nearest, |x − centre|²)`, summed in four lanes. Compiled for AVX-512 and AVX2 too:
/// no fused multiply-add, each point's sum and the four lanes in the same order, so the same bits
/// on every target.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
fn block_potential(
    xt: &[f64],
    n: usize,
    j0: usize,
    centre: &[f64],
    nearest: &[f64],
    d2: &mut [f64],
) -> f64 {
    match centre.len() {
        1 => squared_distances::<1>(xt, n, j0, centre, nearest, d2),
        2 => squared_distances::<2>(xt, n, j0, centre, nearest, d2),
        3 => squared_distances::<3>(xt, n, j0, centre, nearest, d2),
        4 => squared_distances::<4>(xt, n, j0, centre, nearest, d2),
        _ => wide_squared_distances(xt, n, j0, centre, nearest, d2),
    }
    let mut lanes = [0.0f64; 4];
    let mut chunks = d2.chunks_exact(4);
    for d in &mut chunks {
        for (l, &d) in lanes.iter_mut().zip(d) {
            *l += d;
        }
    }
    for (l, &d) in lanes.iter_mut().zip(chunks.remainder()) {
        *l += d;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// The nearer of a point's squared distance `d` to a candidate and `o` to the seeds so far.
#[inline(always)]
fn nearer(d: f64, o: f64) -> f64 {
    if d < o {
        d
    } else {
        o
    }
}

/// `d2[j] = min(nearest[j], |x_{j0+j} − centre|²)` for the block's points of `xt` (width × n)
/// with `W` values per point, in one pass (the general path makes a pass per value): the same
/// sum, from 0 over the values in order, so the same bits. Each value is written once (a
/// conditional write after the sum was a masked store that stalled the next read).
#[inline(always)]
fn squared_distances<const W: usize>(
    xt: &[f64],
    n: usize,
    j0: usize,
    centre: &[f64],
    nearest: &[f64],
    d2: &mut [f64],
) {
    let m = d2.len();
    let cols: [&[f64]; W] = std::array::from_fn(|w| &xt[w * n + j0..][..m]);
    let c: [f64; W] = std::array::from_fn(|w| centre[w]);
    let nearest = &nearest[..m];
    // Every column is m long, as are d2 and nearest: the indexing below needs no checks and
    // vectorises.
    for (j, d) in d2[..m].iter_mut().enumerate() {
        let mut s = 0.0;
        for w in 0..W {
            let e = cols[w][j] - c[w];
            s += e * e;
        }
        *d = nearer(s, nearest[j]);
    }
}

/// Points per group of [`wide_squared_distances`]: their sums stay in vector registers (four
/// AVX-512 registers, so four independent chains of additions).
const GROUP: usize = 32;

/// [`squared_distances`] for any width: groups of [`GROUP`] points, each point's sum kept in a
/// register across the values (one pass over `d2`, not one per value), from 0 over the values in
/// order, so the same bits; the nearer of it and `nearest` written.
#[inline(always)]
fn wide_squared_distances(
    xt: &[f64],
    n: usize,
    j0: usize,
    centre: &[f64],
    nearest: &[f64],
    d2: &mut [f64],
) {
    let m = d2.len();
    let full = m - m % GROUP;
    for g0 in (0..full).step_by(GROUP) {
        // A fixed-size group: the sums stay in registers across the values.
        let mut acc = [0.0f64; GROUP];
        for (w, &cv) in centre.iter().enumerate() {
            let col: &[f64; GROUP] = xt[w * n + j0 + g0..][..GROUP].try_into().unwrap();
            for (a, &xv) in acc.iter_mut().zip(col) {
                let e = xv - cv;
                *a += e * e;
            }
        }
        let near: &[f64; GROUP] = nearest[g0..g0 + GROUP].try_into().unwrap();
        let out: &mut [f64; GROUP] = (&mut d2[g0..g0 + GROUP]).try_into().unwrap();
        for i in 0..GROUP {
            out[i] = nearer(acc[i], near[i]);
        }
    }
    // The last few points: a pass per value.
    let rest = &mut d2[full..];
    rest.iter_mut().for_each(|d| *d = 0.0);
    for (w, &cv) in centre.iter().enumerate() {
        for (d, &xv) in rest.iter_mut().zip(&xt[w * n + j0 + full..w * n + j0 + m]) {
            let e = xv - cv;
            *d += e * e;
        }
    }
    for (d, &o) in rest.iter_mut().zip(&nearest[full..m]) {
        *d = nearer(*d, o);
    }
}

/// Every point's squared distance to its nearest seed (with a candidate included, during a
/// trial), the sums of those distances per block of [`BLOCK`] points, and their total.
pub(super) struct Potential {
    pub(super) d2: Vec<f64>,
    pub(super) blocks: Vec<f64>,
    pub(super) total: f64,
}

impl Potential {
    pub(super) fn new(n: usize) -> Potential {
        Potential {
            d2: vec![0.0; n],
            blocks: vec![0.0; n.div_ceil(BLOCK)],
            total: 0.0,
        }
    }

    /// `d2[j] = min(nearest[j], |x_j − centre|²)` for every point of `xt` (width × n), with the
    /// block sums and the total.
    pub(super) fn try_centre(&mut self, xt: &[f64], n: usize, centre: &[f64], nearest: &[f64]) {
        let pass = |(b, (d2, sum)): (usize, (&mut [f64], &mut f64))| {
            let j0 = b * BLOCK;
            *sum = block_potential(xt, n, j0, centre, &nearest[j0..j0 + d2.len()], d2);
        };
        if n * centre.len() >= PARALLEL_SEEDING {
            self.d2
                .par_chunks_mut(BLOCK)
                .zip(self.blocks.par_iter_mut())
                .enumerate()
                .for_each(pass);
        } else {
            self.d2
                .chunks_mut(BLOCK)
                .zip(self.blocks.iter_mut())
                .enumerate()
                .for_each(pass);
        }
        self.total = self.blocks.iter().sum();
    }

    /// What [`Potential::try_centre`] would give for each of the `count` centres (rows of
    /// `centres`) added to these distances, in one pass over the points of `xt` (width × n):
    /// every total, and in `tried` each candidate's block sums and, if it keeps them, distances,
    /// for [`Tried::take`].
    pub(super) fn trials(
        &self,
        xt: &[f64],
        n: usize,
        centres: &[f64],
        count: usize,
        tried: &mut Tried,
    ) -> Vec<f64> {
        let width = centres.len() / count;
        let centre = |c: usize| &centres[c * width..(c + 1) * width];
        tried.count = count;
        tried.sums.clear();
        tried.sums.resize(self.blocks.len() * count, 0.0);
        if tried.keep {
            tried.d2.resize(n * count, 0.0);
        }
        // Block b's sums, and, when kept, its candidates' distances in turn: count × (its
        // points).
        let block = |b: usize, sums: &mut [f64], mut kept: Option<&mut [f64]>| {
            let j0 = b * BLOCK;
            let m = BLOCK.min(n - j0);
            let mut scratch = [0.0; BLOCK];
            for (c, sum) in sums.iter_mut().enumerate() {
                let d2 = match kept.as_deref_mut() {
                    Some(d2) => &mut d2[c * m..(c + 1) * m],
                    None => &mut scratch[..m],
                };
                *sum = block_potential(xt, n, j0, centre(c), &self.d2[j0..j0 + m], d2);
            }
        };
        let (sums, d2) = (&mut tried.sums, &mut tried.d2);
        match (tried.keep, n * width >= PARALLEL_SEEDING) {
            (true, true) => sums
                .par_chunks_mut(count)
                .zip(d2.par_chunks_mut(count * BLOCK))
                .enumerate()
                .for_each(|(b, (s, d))| block(b, s, Some(d))),
            (true, false) => sums
                .chunks_mut(count)
                .zip(d2.chunks_mut(count * BLOCK))
                .enumerate()
                .for_each(|(b, (s, d))| block(b, s, Some(d))),
            (false, true) => sums
                .par_chunks_mut(count)
                .enumerate()
                .for_each(|(b, s)| block(b, s, None)),
            (false, false) => sums
                .chunks_mut(count)
                .enumerate()
                .for_each(|(b, s)| block(b, s, None)),
        }
        (0..count)
            .map(|c| tried.sums.iter().skip(c).step_by(count).sum())
            .collect()
    }

    /// The point where the running sum of `d2` reaches `r` (0 ≤ r ≤ total): the block first,
    /// then the point within it. Should rounding leave `r` unreached, the last point with a
    /// positive distance.
    pub(super) fn draw(&self, mut r: f64) -> usize {
        for (b, &s) in self.blocks.iter().enumerate() {
            if r > s {
                r -= s;
                continue;
            }
            let j0 = b * BLOCK;
            let block = &self.d2[j0..(j0 + BLOCK).min(self.d2.len())];
            if let Some(i) = block.iter().position(|&d| {
                r -= d;
                r <= 0.0
            }) {
                return j0 + i;
            }
            break;
        }
        self.d2.iter().rposition(|&d| d > 0.0).unwrap_or(0)
    }
}

/// The candidates' distances and block sums from [`Potential::trials`].
#[derive(Default)]
pub(super) struct Tried {
    /// Whether each candidate's distances are kept (for [`Tried::take`]) or only its sums.
    keep: bool,
    count: usize,
    /// Per block of [`BLOCK`] points, each candidate's distances in turn.
    d2: Vec<f64>,
    /// Per block, each candidate's sum.
    sums: Vec<f64>,
}

impl Tried {
    /// Candidate `c`'s distances, block sums and `total` into `into`: what
    /// [`Potential::try_centre`] computes for it (the same function on the same numbers).
    pub(super) fn take(&self, c: usize, total: f64, into: &mut Potential) {
        let n = into.d2.len();
        for (b, (d2, sum)) in into.d2.chunks_mut(BLOCK).zip(&mut into.blocks).enumerate() {
            let m = d2.len();
            d2.copy_from_slice(&self.d2[b * BLOCK * self.count + c * m..][..m]);
            *sum = self.sums[b * self.count + c];
        }
        debug_assert_eq!(n.div_ceil(BLOCK), into.blocks.len());
        into.total = total;
    }
}
