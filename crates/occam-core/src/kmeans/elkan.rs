//! Lloyd's steps with Elkan's bounds (Elkan 2003, "Using the triangle inequality to accelerate
//! k-means"), kept lazily, for many centres.

use super::lloyd::{assign_all, Means, PARALLEL_WORK};
use super::MAX_LLOYD;

/// Lloyd's steps with one lower bound per point and centre, the same labels as the plain
/// algorithm (see [`super::lloyd::lloyd`]).
///
/// The first step measures every distance (exact bounds, and the plain algorithm's labels). After
/// it, a point's bounds are brought up to date only when it is looked at: each point records the
/// step its bounds were last valid at, and the centres' shifts are kept as running sums per step,
/// so one subtraction moves a bound across any number of steps. Besides the per-centre bounds
/// each point keeps one lower bound on its distance to every centre but its own, moved by the
/// largest shift of each step (Hamerly's bound); a point whose own centre is nearer than that,
/// or than half the distance to the nearest other centre, by more than the margin keeps its
/// label at the cost of a few loads, without touching its k bounds.
pub(super) fn lloyd(x: &[f64], means: &mut Means, label: &mut [usize], margin: f64) {
    let (n, k, width) = (label.len(), means.k, means.width);
    let mut state = vec![Bounds::default(); n];
    let mut lower = vec![0.0; n * k];
    // Row t (k values): the sum of every centre's shifts over steps 2..=t (rows 0 and 1 zero;
    // the first step measures everything). `top[t]`: the sum of each step's largest shift.
    let mut moved = vec![0.0; 2 * k];
    let mut top = vec![0.0; 2];
    let mut between = vec![0.0; k * k];
    let mut half = vec![0.0; k];
    let parallel = n * k * width >= PARALLEL_WORK;
    for t in 1..=MAX_LLOYD {
        means.update(x, label);
        if t > 1 {
            let last = moved[(t - 1) * k..t * k].to_vec();
            moved.extend(last.iter().zip(&means.shift).map(|(m, s)| m + s));
            let most = means.shift.iter().copied().fold(0.0, f64::max);
            top.push(top[t - 1] + most);
        }
        half_distances(means, t == 1, &mut between, &mut half);
        let step = Step {
            x,
            width,
            k,
            cr: &means.cr,
            ct: &means.ct,
            half: &half,
            between: &between,
            margin,
            t,
            moved: &moved,
            top: &top,
        };
        let changed = if t == 1 {
            assign_all(label, &mut state, &mut lower, k, parallel, |j, l, s, lo| {
                step.measure_all(j, l, s, lo)
            })
        } else {
            assign_all(label, &mut state, &mut lower, k, parallel, |j, l, s, lo| {
                step.elkan(j, l, s, lo)
            })
        };
        if !changed {
            break;
        }
    }
}

/// Half the distance between every two centres (each pair once: the squared difference is the
/// same either way round; only pairs with a centre that moved unless `all`), and half the
/// distance from each centre to its nearest other: the smallest of its row, since the square root
/// is monotone and halving exact, the same bits as halving the root of the smallest square.
fn half_distances(means: &Means, all: bool, between: &mut [f64], half: &mut [f64]) {
    let (k, width, cr, shift) = (means.k, means.width, &means.cr, &means.shift);
    for c in 0..k {
        between[c * k + c] = 0.0;
        for o in c + 1..k {
            if !all && shift[c] == 0.0 && shift[o] == 0.0 {
                continue;
            }
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
}

/// A point's bounds besides its per-centre ones, valid for the centres of step `stamp`.
#[derive(Clone, Copy, Default)]
struct Bounds {
    /// At least the distance to the point's own centre.
    upper: f64,
    /// At most the distance to any other centre.
    second: f64,
    /// The step whose centres the bounds (these and the per-centre ones) hold for.
    stamp: usize,
}

/// One assignment step's centres and bounds, for [`Step::elkan`].
struct Step<'a> {
    x: &'a [f64],
    width: usize,
    k: usize,
    /// The centres, row-major (k × width).
    cr: &'a [f64],
    /// The centres, transposed (width × k).
    ct: &'a [f64],
    /// Half the distance from each centre to the nearest other.
    half: &'a [f64],
    /// Half the distance between every two centres (k × k).
    between: &'a [f64],
    margin: f64,
    /// This step's number (the first is 1).
    t: usize,
    /// The running sums of the centres' shifts, a row of k per step (see [`lloyd`]).
    moved: &'a [f64],
    /// The running sum of each step's largest shift.
    top: &'a [f64],
}

impl Step<'_> {
    /// |x_j − centre c|², summed over the values in order as the plain algorithm does.
    #[inline(always)]
    fn distance2(&self, j: usize, c: usize) -> f64 {
        let width = self.width;
        self.x[j * width..(j + 1) * width]
            .iter()
            .zip(&self.cr[c * width..(c + 1) * width])
            .map(|(&xv, &cv)| (xv - cv).powi(2))
            .sum::<f64>()
    }

    /// Point `j`'s nearest centre from all its distances, each summed as the plain algorithm
    /// sums it (a tie to the lower label): exact bounds (the distances themselves; `second` the
    /// distance to the nearest other centre). Returns whether the label changed.
    fn measure_all(&self, j: usize, l: &mut usize, s: &mut Bounds, lo: &mut [f64]) -> bool {
        let width = self.width;
        squared_distances(&self.x[j * width..(j + 1) * width], self.ct, lo);
        let mut best = 0;
        for (c, &d) in lo.iter().enumerate().skip(1) {
            if d < lo[best] {
                best = c;
            }
        }
        lo.iter_mut().for_each(|d| *d = d.sqrt());
        let second = lo
            .iter()
            .enumerate()
            .filter(|&(c, _)| c != best)
            .fold(f64::INFINITY, |m, (_, &d)| m.min(d));
        *s = Bounds {
            upper: lo[best],
            second,
            stamp: self.t,
        };
        let changed = best != *l;
        *l = best;
        changed
    }

    /// Point `j`'s nearest centre by Elkan's bounds: `s.upper` bounds its distance to its centre
    /// `l` from above, `lo[c]` its distance to centre c from below, `s.second` its distance to
    /// every centre but `l`, all for the centres of step `s.stamp`. A point whose centre the
    /// single bounds prove nearest (by more than the margin) is left as it is; every other is
    /// [`refreshed`]. Returns whether the label changed.
    fn elkan(&self, j: usize, l: &mut usize, s: &mut Bounds, lo: &mut [f64]) -> bool {
        let (a, k, t) = (*l, self.k, self.t);
        let second = s.second - (self.top[t] - self.top[s.stamp]);
        let up = s.upper + (self.moved[t * k + a] - self.moved[s.stamp * k + a]);
        if up + self.margin < self.half[a].max(second) {
            return false;
        }
        refreshed(self, j, l, s, lo)
    }

    /// The nearest of `a` (at squared distance `a_d2`, `up` its root) and the `centres` (in
    /// increasing order), each passed over when its lower bound or half its distance to the best
    /// so far puts it beyond `up` by more than the margin, every other measured (its lower bound
    /// set to its distance); a tie goes to the lower label.
    #[inline(always)]
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

/// Point `j`'s nearest centre when the single bounds of [`Step::elkan`] cannot keep its label:
/// its per-centre bounds brought to this step, its own centre measured (and kept if the single
/// bounds then suffice), then Elkan's test: a centre is passed over only when its lower bound or
/// half its distance to the best centre so far proves it farther, by more than the margin, than
/// that centre; every other is measured exactly and compared as the plain algorithm compares (a
/// tie goes to the lower label).
///
/// One branch-free pass over the centres tells whether any is left after the test against the
/// point's own centre, and gives the new single lower bound (every other centre c is at least
/// lo[c] away, and at least its distance to the point's centre less the point's distance to
/// that centre, by the triangle inequality); only when some are left are they gathered (up to
/// [`MAX_KEPT`] centres without branches), tested again against the best so far and measured.
/// Compiled for AVX-512 and AVX2 too; every comparison and distance is the same there.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
fn refreshed(step: &Step, j: usize, l: &mut usize, s: &mut Bounds, lo: &mut [f64]) -> bool {
    let (a, k, t) = (*l, step.k, step.t);
    let (now, then) = (
        &step.moved[t * k..(t + 1) * k],
        &step.moved[s.stamp * k..(s.stamp + 1) * k],
    );
    let second = s.second - (step.top[t] - step.top[s.stamp]);
    for ((b, m), o) in lo.iter_mut().zip(now).zip(then) {
        *b -= m - o;
    }
    let best_d2 = step.distance2(j, a);
    let mut up = best_d2.sqrt();
    (s.stamp, s.upper, s.second) = (t, up, second);
    let reach = up + step.margin;
    if reach < step.half[a].max(second) {
        lo[a] = up;
        return false;
    }
    // The point's own centre out of the pass: an infinite lower bound neither is left nor
    // lowers the minimum.
    lo[a] = f64::INFINITY;
    let (left, fresh) = pass(lo, &step.between[a * k..(a + 1) * k], up, reach);
    lo[a] = up;
    if !left {
        s.second = fresh;
        return false;
    }
    let best = if k > MAX_KEPT {
        step.scan(j, a, best_d2, &mut up, lo, 0..k)
    } else {
        let mut kept = [0usize; MAX_KEPT];
        let mut count = 0;
        for (c, (&b, &h)) in lo.iter().zip(&step.between[a * k..(a + 1) * k]).enumerate() {
            let bound = if b > h { b } else { h };
            kept[count] = c;
            count += usize::from(reach >= bound && c != a);
        }
        step.scan(j, a, best_d2, &mut up, lo, kept[..count].iter().copied())
    };
    s.upper = up;
    lo[best] = f64::INFINITY;
    (_, s.second) = pass(lo, &step.between[best * k..(best + 1) * k], up, reach);
    lo[best] = up;
    *l = best;
    best != a
}

/// Lanes of [`pass`]: independent running minima, so that it vectorises.
const LANES: usize = 8;

/// Over the centres c with lower bounds `lo` and half distances `half` to the point's centre (at
/// distance `up`): whether any has `reach ≥ max(lo[c], half[c])` (Elkan's test leaves it), and
/// the least `max(lo[c], 2 half[c] − up)` (a lower bound on the distance to c).
#[inline(always)]
fn pass(lo: &[f64], half: &[f64], up: f64, reach: f64) -> (bool, f64) {
    let mut left = [false; LANES];
    let mut least = [f64::INFINITY; LANES];
    let one = |left: &mut bool, least: &mut f64, b: f64, h: f64| {
        let near = if b > h { b } else { h };
        *left |= reach >= near;
        let far = 2.0 * h - up;
        let bound = if b > far { b } else { far };
        *least = if bound < *least { bound } else { *least };
    };
    let mut chunks = lo.chunks_exact(LANES).zip(half.chunks_exact(LANES));
    for (b, h) in &mut chunks {
        for i in 0..LANES {
            one(&mut left[i], &mut least[i], b[i], h[i]);
        }
    }
    let rest = lo.len() - lo.len() % LANES;
    for (b, h) in lo[rest..].iter().zip(&half[rest..]) {
        one(&mut left[0], &mut least[0], *b, *h);
    }
    let least = least
        .iter()
        .fold(f64::INFINITY, |m, &v| if v < m { v } else { m });
    (left.iter().any(|&l| l), least)
}

/// The most centres [`refreshed`] gathers in its branch-free pass (more take the plain scan).
const MAX_KEPT: usize = 64;

/// `d2[c] = |p − centre c|²` for the centres `ct` (transposed, width × d2.len()), each summed from
/// 0 over the values in order as the plain algorithm sums it; compiled for AVX-512 and AVX2 too
/// (no fused multiply-add, so the same bits on every target).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
fn squared_distances(p: &[f64], ct: &[f64], d2: &mut [f64]) {
    let k = d2.len();
    d2.fill(0.0);
    for (&xv, col) in p.iter().zip(ct.chunks_exact(k)) {
        for (d, &cv) in d2.iter_mut().zip(col) {
            let e = xv - cv;
            *d += e * e;
        }
    }
}
