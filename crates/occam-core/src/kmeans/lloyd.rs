//! Lloyd iterations with Hamerly's or Elkan's bounds, the same labels as the plain algorithm.

use super::MAX_LLOYD;
use rayon::prelude::*;

/// Points × centres × width above which an assignment step runs on the thread pool.
pub(super) const PARALLEL_WORK: usize = 1 << 18;

/// Lloyd iterations from the seeds' `centres` (k rows of `width`) and `label`: centres to the
/// means of their points (an emptied cluster keeps its centre), points to their nearest centre
/// (ties to the lower label), until no label changes or [`MAX_LLOYD`] steps.
///
/// Bounds skip most distance computations once the clusters settle, without changing a single
/// label: Hamerly's (Hamerly 2010, "Making k-means even faster") for up to [`ELKAN_FROM`]
/// centres, Elkan's ([`super::elkan`]) for more. Each point keeps an upper bound on its distance
/// to its own centre and lower bounds on its distances to the others, moved by the centres'
/// shifts (triangle inequality). A point is only skipped when its own centre is nearer than every
/// other by more than `margin`, far above the rounding of any distance here, so the full scan,
/// which decides every other point exactly as the plain algorithm does, would have kept its label.
/// Each point's label depends on that point alone: the same labels on any number of threads.
pub(super) fn lloyd(
    x: &[f64],
    n: usize,
    width: usize,
    k: usize,
    centres: &[f64],
    label: &mut [usize],
    seeded: &[f64],
) {
    let margin = 1e-9 * diameter(x, width);
    let mut means = Means::new(centres, n, k, width);
    if k > ELKAN_FROM {
        // Elkan's bounds (one per point and centre) where one lower bound per point is weak: with
        // many centres the second nearest is rarely far, and Hamerly's test fails for most points.
        super::elkan::lloyd(x, &mut means, label, margin);
    } else {
        hamerly(x, &mut means, label, seeded, margin);
    }
}

/// Lloyd's steps with Hamerly's bounds: one upper bound per point (its distance to its centre)
/// and one lower bound (its distance to any other centre).
fn hamerly(x: &[f64], means: &mut Means, label: &mut [usize], seeded: &[f64], margin: f64) {
    let (k, width) = (means.k, means.width);
    let row = |j: usize| &x[j * width..(j + 1) * width];
    let mut half = vec![0.0; k];
    // The seeding's distances bound the first step too: |x − seed| bounds the distance to the
    // point's own centre (before that centre moves), and 0 is a lower bound on every other, so
    // the first step skips every point nearer its centre than half the distance from that
    // centre to any other (a full scan of n × k distances before).
    let mut upper: Vec<f64> = seeded.iter().map(|d| d.sqrt()).collect();
    let mut lower = vec![0.0; label.len()];
    let parallel = label.len() * k * width >= PARALLEL_WORK;
    for _ in 0..MAX_LLOYD {
        means.update(x, label);
        let (ct, shift) = (&means.ct, &means.shift);
        // The largest shift and the largest among the other centres', for the lower bounds.
        let (mut top, mut top_at, mut second) = (0.0f64, usize::MAX, 0.0f64);
        for (c, &s) in shift.iter().enumerate() {
            if s > top {
                (second, top, top_at) = (top, s, c);
            } else if s > second {
                second = s;
            }
        }
        for (c, h) in half.iter_mut().enumerate() {
            let nearest = (0..k)
                .filter(|&o| o != c)
                .map(|o| {
                    (0..width)
                        .map(|w| (ct[w * k + c] - ct[w * k + o]).powi(2))
                        .sum::<f64>()
                })
                .fold(f64::INFINITY, f64::min);
            *h = 0.5 * nearest.sqrt();
        }
        let half = &half;
        let assign = |j, l: &mut usize, up: &mut f64, lo: &mut [f64]| {
            let lo = &mut lo[0];
            let a = *l;
            *up += shift[a];
            *lo -= if a == top_at { second } else { top };
            let m = half[a].max(*lo);
            if *up + margin < m {
                return false;
            }
            *up = row(j)
                .iter()
                .enumerate()
                .map(|(w, &xv)| (xv - ct[w * k + a]).powi(2))
                .sum::<f64>()
                .sqrt();
            if *up + margin < m {
                return false;
            }
            let (best, near, next) = nearest(row(j), ct, k);
            (*up, *lo) = (near.sqrt(), next.sqrt());
            *l = best;
            best != a
        };
        if !assign_all(label, &mut upper, &mut lower, 1, parallel, assign) {
            break;
        }
    }
}

/// The centres (means of their points) both ways round, with the sums they come from and how far
/// each moved in the last update.
pub(super) struct Means {
    pub(super) k: usize,
    pub(super) width: usize,
    /// The centres transposed (width × k): a point's distances to all k centres form one
    /// contiguous, vectorisable accumulation.
    pub(super) ct: Vec<f64>,
    /// The centres row-major (k × width): one centre's values are contiguous.
    pub(super) cr: Vec<f64>,
    /// How far each centre moved in the last [`Means::update`].
    pub(super) shift: Vec<f64>,
    sums: Vec<f64>,
    counts: Vec<usize>,
    /// Whether each cluster gained or lost a point since its mean was last computed.
    dirty: Vec<bool>,
    /// The labels the means were last computed from.
    last: Vec<usize>,
}

impl Means {
    /// The seeds as centres; every cluster's mean still to compute.
    fn new(centres: &[f64], n: usize, k: usize, width: usize) -> Means {
        let mut ct = vec![0.0; width * k];
        for (c, centre) in centres.chunks(width).enumerate() {
            for (w, &v) in centre.iter().enumerate() {
                ct[w * k + c] = v;
            }
        }
        Means {
            k,
            width,
            ct,
            cr: centres.to_vec(),
            shift: vec![0.0; k],
            sums: vec![0.0; k * width],
            counts: vec![0; k],
            dirty: vec![true; k],
            last: vec![usize::MAX; n],
        }
    }

    /// Every centre to the mean of its points (an emptied cluster keeps its centre), with how far
    /// it moved. Only the clusters that gained or lost a point are summed again: the others have
    /// the same points in the same order, so their sums, means and centres are the same bits, and
    /// they move by 0.
    pub(super) fn update(&mut self, x: &[f64], label: &[usize]) {
        let width = self.width;
        for (last, &l) in self.last.iter_mut().zip(label) {
            if *last != l {
                if *last != usize::MAX {
                    self.dirty[*last] = true;
                }
                self.dirty[l] = true;
                *last = l;
            }
        }
        for (c, &d) in self.dirty.iter().enumerate() {
            if d {
                self.counts[c] = 0;
                self.sums[c * width..(c + 1) * width].fill(0.0);
            }
        }
        for (&l, p) in label.iter().zip(x.chunks_exact(width)) {
            if self.dirty[l] {
                self.counts[l] += 1;
                self.sums[l * width..(l + 1) * width]
                    .iter_mut()
                    .zip(p)
                    .for_each(|(s, v)| *s += v);
            }
        }
        let k = self.k;
        for c in 0..k {
            self.shift[c] = 0.0;
            let m = self.counts[c];
            if !std::mem::take(&mut self.dirty[c]) || m == 0 {
                continue;
            }
            let mut moved = 0.0;
            for w in 0..width {
                let v = self.sums[c * width + w] / m as f64;
                moved += (v - self.ct[w * k + c]).powi(2);
                self.ct[w * k + c] = v;
                self.cr[c * width + w] = v;
            }
            self.shift[c] = f64::sqrt(moved);
        }
    }
}

/// One assignment step: `assign(j, label, state, lower)` on every point j with its label, its
/// `state` (its upper bound, and more for Elkan's bounds) and its `per` lower bounds (one per
/// centre for Elkan's bounds, one for Hamerly's), on the thread pool when `parallel`; whether any
/// label changed. Each point is decided on its own, so the labels are the same either way.
pub(super) fn assign_all<T: Send>(
    label: &mut [usize],
    state: &mut [T],
    lower: &mut [f64],
    per: usize,
    parallel: bool,
    assign: impl Fn(usize, &mut usize, &mut T, &mut [f64]) -> bool + Sync,
) -> bool {
    let one = |(j, (l, (s, lo))): (usize, (&mut usize, (&mut T, &mut [f64])))| assign(j, l, s, lo);
    if parallel {
        label
            .par_iter_mut()
            .zip(state.par_iter_mut().zip(lower.par_chunks_mut(per)))
            .enumerate()
            .map(one)
            .reduce(|| false, |a, b| a | b)
    } else {
        label
            .iter_mut()
            .zip(state.iter_mut().zip(lower.chunks_mut(per)))
            .enumerate()
            .map(one)
            .fold(false, |a, b| a | b)
    }
}

/// More centres than this take Elkan's bounds, fewer Hamerly's (see [`lloyd`]).
const ELKAN_FROM: usize = 16;

/// Centres per block of [`nearest`]'s distances.
const NEAREST_BLOCK: usize = 16;

/// The nearest of the `k` centres `ct` (transposed, width × k) to point `p`: its label (the lower
/// one on a tie), its squared distance and the squared distance to the next nearest (∞ if k = 1).
fn nearest(p: &[f64], ct: &[f64], k: usize) -> (usize, f64, f64) {
    let (mut best, mut near, mut next) = (0, f64::INFINITY, f64::INFINITY);
    // Blocks of up to 16 centres: the accumulator fits in vector registers (a larger array
    // was zeroed in memory for every point).
    for c0 in (0..k).step_by(NEAREST_BLOCK) {
        let m = (k - c0).min(NEAREST_BLOCK);
        let mut acc = [0.0f64; NEAREST_BLOCK];
        let acc = &mut acc[..m];
        for (w, &xv) in p.iter().enumerate() {
            for (a, &cv) in acc.iter_mut().zip(&ct[w * k + c0..w * k + c0 + m]) {
                let d = xv - cv;
                *a += d * d;
            }
        }
        for (c, &d) in acc.iter().enumerate() {
            if d < near {
                (next, near, best) = (near, d, c0 + c);
            } else if d < next {
                next = d;
            }
        }
    }
    (best, near, next)
}

/// The diagonal of the points' bounding box: no distance between points or centres (means of
/// points) exceeds it.
fn diameter(x: &[f64], width: usize) -> f64 {
    (0..width)
        .map(|w| {
            let (lo, hi) = x
                .iter()
                .skip(w)
                .step_by(width)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                });
            (hi - lo).powi(2)
        })
        .sum::<f64>()
        .sqrt()
}
