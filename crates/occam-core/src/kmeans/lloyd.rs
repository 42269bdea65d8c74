//! Lloyd iterations with Hamerly's or Elkan's bounds, the same labels as the plain algorithm.

use super::MAX_LLOYD;
use rayon::prelude::*;

/// Points × centres × width above which an assignment step runs on the thread pool.
pub(super) const PARALLEL_WORK: usize = 1 << 18;

/// Lloyd iterations from the seeds' `centres` (k rows of `width`) and `label`: centres to the
/// means of their points (an emptied cluster keeps its centre), points to their nearest centre
/// (ties to the lower label), until no label changes or [`MAX_LLOYD`] steps.
///
/// Hamerly's bounds (Hamerly 2010, "Making k-means even faster") skip most distance computations
/// once the clusters settle, without changing a single label: each point keeps an upper bound on
/// its distance to its own centre and a lower bound on its distance to every other one, moved by
/// the centres' shifts (triangle inequality). A point is only skipped when its own centre is
/// nearer than every other by more than `margin`, far above the rounding of any distance here, so
/// the full scan, which decides every other point exactly as the plain algorithm does, would have
/// kept its label. Each point's label depends on that point alone: the same labels on any number
/// of threads.
pub(super) fn lloyd(
    x: &[f64],
    n: usize,
    width: usize,
    k: usize,
    centres: &[f64],
    label: &mut [usize],
    seeded: &[f64],
) {
    let row = |j: usize| &x[j * width..(j + 1) * width];
    let margin = 1e-9 * diameter(x, width);
    let mut sums = vec![0.0; k * width];
    let mut counts = vec![0usize; k];
    // Centres transposed (width × k): a point's distances to all k centres form one contiguous,
    // vectorisable accumulation.
    let mut ct = vec![0.0; width * k];
    for (c, centre) in centres.chunks(width).enumerate() {
        for (w, &v) in centre.iter().enumerate() {
            ct[w * k + c] = v;
        }
    }
    // The centres row-major too (k × width): one centre's values are contiguous for Elkan's
    // single distances and the distances between centres.
    let mut cr = centres.to_vec();
    let mut old = ct.clone();
    let mut shift = vec![0.0; k];
    let mut half = vec![0.0; k];
    // The seeding's distances bound the first step too: |x − seed| bounds the distance to the
    // point's own centre (before that centre moves), and 0 is a lower bound on every other, so
    // the first step skips every point nearer its centre than half the distance from that
    // centre to any other (a full scan of n × k distances before).
    let mut upper: Vec<f64> = seeded.iter().map(|d| d.sqrt()).collect();
    // Elkan's bounds (one per point and centre) where one lower bound per point is weak: with
    // many centres the second nearest is rarely far, and Hamerly's test fails for most points.
    let per_centre = k > ELKAN_FROM;
    let mut lower = vec![0.0; if per_centre { n * k } else { n }];
    let mut between = vec![0.0; if per_centre { k * k } else { 0 }];
    let parallel = n * k * width >= PARALLEL_WORK;
    for _ in 0..MAX_LLOYD {
        sums.iter_mut().for_each(|v| *v = 0.0);
        counts.iter_mut().for_each(|v| *v = 0);
        for (j, &l) in label.iter().enumerate() {
            counts[l] += 1;
            sums[l * width..(l + 1) * width]
                .iter_mut()
                .zip(row(j))
                .for_each(|(s, v)| *s += v);
        }
        old.copy_from_slice(&ct);
        for (c, &m) in counts.iter().enumerate() {
            if m > 0 {
                for w in 0..width {
                    let v = sums[c * width + w] / m as f64;
                    ct[w * k + c] = v;
                    cr[c * width + w] = v;
                }
            }
        }
        // The largest shift and the largest among the other centres', for the lower bounds.
        let (mut top, mut top_at, mut second) = (0.0f64, usize::MAX, 0.0f64);
        for (c, s) in shift.iter_mut().enumerate() {
            *s = (0..width)
                .map(|w| (ct[w * k + c] - old[w * k + c]).powi(2))
                .sum::<f64>()
                .sqrt();
            if *s > top {
                (second, top, top_at) = (top, *s, c);
            } else if *s > second {
                second = *s;
            }
        }
        if per_centre {
            // Half the distance between every two centres (each pair once: the squared
            // difference is the same either way round), and half the distance from each centre
            // to its nearest other: the smallest of its row, since the square root is monotone
            // and halving exact, the same bits as halving the root of the smallest square.
            for c in 0..k {
                between[c * k + c] = 0.0;
                for o in c + 1..k {
                    let d = 0.5
                        * cr[c * width..(c + 1) * width]
                            .iter()
                            .zip(&cr[o * width..(o + 1) * width])
                            .map(|(a, b)| (a - b).powi(2))
                            .sum::<f64>()
                            .sqrt();
                    between[c * k + o] = d;
                    between[o * k + c] = d;
                }
            }
            for (c, h) in half.iter_mut().enumerate() {
                *h = between[c * k..(c + 1) * k]
                    .iter()
                    .enumerate()
                    .filter(|&(o, _)| o != c)
                    .map(|(_, &d)| d)
                    .fold(f64::INFINITY, f64::min);
            }
            let step = Step {
                x,
                width,
                k,
                cr: &cr,
                shift: &shift,
                half: &half,
                between: &between,
                margin,
            };
            let assign = |j, l: &mut usize, up: &mut f64, lo: &mut [f64]| step.elkan(j, l, up, lo);
            if !assign_all(label, &mut upper, &mut lower, k, parallel, assign) {
                break;
            }
            continue;
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
        let ct = &ct;
        let (shift, half) = (&shift, &half);
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

/// One assignment step: `assign(j, label, upper, lower)` on every point j with its label, its
/// upper bound and its `per` lower bounds (one per centre for Elkan's bounds, one for Hamerly's),
/// on the thread pool when `parallel`; whether any label changed. Each point is decided on its
/// own, so the labels are the same either way.
fn assign_all(
    label: &mut [usize],
    upper: &mut [f64],
    lower: &mut [f64],
    per: usize,
    parallel: bool,
    assign: impl Fn(usize, &mut usize, &mut f64, &mut [f64]) -> bool + Sync,
) -> bool {
    let one =
        |(j, (l, (up, lo))): (usize, (&mut usize, (&mut f64, &mut [f64])))| assign(j, l, up, lo);
    if parallel {
        label
            .par_iter_mut()
            .zip(upper.par_iter_mut().zip(lower.par_chunks_mut(per)))
            .enumerate()
            .map(one)
            .reduce(|| false, |a, b| a | b)
    } else {
        label
            .iter_mut()
            .zip(upper.iter_mut().zip(lower.chunks_mut(per)))
            .enumerate()
            .map(one)
            .fold(false, |a, b| a | b)
    }
}

/// More centres than this take Elkan's bounds, fewer Hamerly's (see [`lloyd`]).
const ELKAN_FROM: usize = 16;

/// One assignment step's centres and bounds, for [`Step::elkan`].
struct Step<'a> {
    x: &'a [f64],
    width: usize,
    k: usize,
    /// The centres, row-major (k × width).
    cr: &'a [f64],
    /// How far each centre moved in this step.
    shift: &'a [f64],
    /// Half the distance from each centre to the nearest other.
    half: &'a [f64],
    /// Half the distance between every two centres (k × k).
    between: &'a [f64],
    margin: f64,
}

impl Step<'_> {
    /// |x_j − centre c|², summed over the values in order as the plain algorithm does.
    fn distance2(&self, j: usize, c: usize) -> f64 {
        let width = self.width;
        self.x[j * width..(j + 1) * width]
            .iter()
            .zip(&self.cr[c * width..(c + 1) * width])
            .map(|(&xv, &cv)| (xv - cv).powi(2))
            .sum::<f64>()
    }

    /// Point `j`'s nearest centre by Elkan's bounds (Elkan 2003, "Using the triangle inequality
    /// to accelerate k-means"): `up` bounds its distance to its centre `l` from above, `lo[c]`
    /// its distance to centre c from below; both are moved by the centres' shifts. A centre is
    /// passed over only when one of them proves it farther, by more than the margin, than the
    /// best centre so far; every other is measured exactly and compared as the plain algorithm
    /// compares (a tie goes to the lower label). Returns whether the label changed.
    ///
    /// Once the point's own centre is measured, one branch-free pass over the centres keeps those
    /// that neither bound (their lower bound, half their distance to the point's centre) rules
    /// out; only they are tested again against the best so far and measured.
    fn elkan(&self, j: usize, l: &mut usize, up: &mut f64, lo: &mut [f64]) -> bool {
        let (a, k) = (*l, self.k);
        *up += self.shift[a];
        for (b, s) in lo.iter_mut().zip(self.shift) {
            *b -= s;
        }
        if *up + self.margin < self.half[a] {
            return false;
        }
        let best_d2 = self.distance2(j, a);
        *up = best_d2.sqrt();
        lo[a] = *up;
        let reach = *up + self.margin;
        if reach < self.half[a] {
            return false;
        }
        // With at most MAX_KEPT centres, the centres not ruled out by `reach < max(lo[c],
        // between[a][c])`, gathered without branches (the point's own centre is left out).
        let best = if k > MAX_KEPT {
            self.scan(j, a, best_d2, up, lo, 0..k)
        } else {
            let mut kept = [0usize; MAX_KEPT];
            let mut count = 0;
            for (c, (&b, &h)) in lo.iter().zip(&self.between[a * k..(a + 1) * k]).enumerate() {
                let bound = if b > h { b } else { h };
                kept[count] = c;
                count += usize::from(reach >= bound && c != a);
            }
            self.scan(j, a, best_d2, up, lo, kept[..count].iter().copied())
        };
        *l = best;
        best != a
    }

    /// The nearest of `a` (at squared distance `a_d2`, `up` its root) and the `centres` (in
    /// increasing order), each passed over when its lower bound or half its distance to the best
    /// so far puts it beyond `up` by more than the margin, every other measured (its lower bound
    /// set to its distance); a tie goes to the lower label.
    fn scan(
        &self,
        j: usize,
        a: usize,
        a_d2: f64,
        up: &mut f64,
        lo: &mut [f64],
        centres: impl Iterator<Item = usize>,
    ) -> usize {
        let k = self.k;
        let (mut best, mut best_d2) = (a, a_d2);
        for c in centres {
            if c == best {
                continue;
            }
            let bound = lo[c].max(self.between[best * k + c]);
            if *up + self.margin < bound {
                continue;
            }
            let d2 = self.distance2(j, c);
            lo[c] = d2.sqrt();
            if d2 < best_d2 || (d2 == best_d2 && c < best) {
                (best, best_d2, *up) = (c, d2, lo[c]);
            }
        }
        best
    }
}

/// The most centres [`Step::elkan`] gathers in its branch-free pass (more take the plain scan).
const MAX_KEPT: usize = 64;

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
