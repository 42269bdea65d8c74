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
/// each point keeps a lower bound on its distance to its runner-up (moved by that centre's own
/// shifts) and one on its distance to every other centre but its own (moved by the largest shift
/// among them in each step, as Hamerly's bound); a point whose own centre is nearer than both,
/// or than half the distance to the nearest other centre, by more than the margin keeps its
/// label at the cost of a few loads, without touching its k bounds. The bounds only decide which
/// distances to skip; every label comes from exact distances compared as the plain algorithm
/// compares them, and the running sums' rounding (relative 1e-16 of at most [`MAX_LLOYD`]
/// diameters) is far below the margin.
pub(super) fn lloyd(x: &[f64], means: &mut Means, label: &mut [usize], margin: f64) {
    let (n, k, width) = (label.len(), means.k, means.width);
    let mut state = vec![Bounds::default(); n];
    let mut lower = vec![0.0; n * k];
    // Row t (k values): the sum of every centre's shifts over steps 2..=t (rows 0 and 1 zero;
    // the first step measures everything). `top[t]`: the sum of each step's largest shift; row t
    // of `excess`: the sum, over the steps where a centre moved most, of how much more it moved
    // than the second largest, so that `top` less `excess` for centre a sums the largest shifts
    // among the centres other than a.
    let mut moved = vec![0.0; 2 * k];
    let mut excess = vec![0.0; 2 * k];
    let mut top = vec![0.0; 2];
    let mut between = vec![0.0; k * k];
    let mut half = vec![0.0; k];
    // The first step measures n × k distances; a later one passes over most points in a few
    // loads each, too little work to share below [`PARALLEL_POINTS`] points (the pool's wake-up
    // and idle spinning cost more than they save).
    let parallel = |t: usize| {
        if t == 1 {
            n * k * width >= PARALLEL_WORK
        } else {
            n >= PARALLEL_POINTS
        }
    };
    for t in 1..=MAX_LLOYD {
        means.update(x, label);
        if t > 1 {
            let last = moved[(t - 1) * k..t * k].to_vec();
            moved.extend(last.iter().zip(&means.shift).map(|(m, s)| m + s));
            let (mut most, mut most_at, mut next) = (0.0f64, 0, 0.0f64);
            for (c, &s) in means.shift.iter().enumerate() {
                if s > most {
                    (next, most, most_at) = (most, s, c);
                } else if s > next {
                    next = s;
                }
            }
            top.push(top[t - 1] + most);
            excess.extend_from_within((t - 1) * k..t * k);
            excess[t * k + most_at] += most - next;
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
            excess: &excess,
        };
        let changed = if t == 1 {
            assign_all(
                label,
                &mut state,
                &mut lower,
                k,
                parallel(t),
                |j, l, s, lo| measured(&step, j, l, s, lo),
            )
        } else {
            assign_all(
                label,
                &mut state,
                &mut lower,
                k,
                parallel(t),
                |j, l, s, lo| step.elkan(j, l, s, lo),
            )
        };
        if !changed {
            break;
        }
    }
}

/// Points from which Elkan's steps after the first run on the thread pool.
pub(super) const PARALLEL_POINTS: usize = 1 << 14;

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
    /// At most the distance to centre `runner` (the runner-up when last measured).
    second: f64,
    /// At most the distance to every centre but its own and `runner`.
    third: f64,
    runner: usize,
    /// The step whose centres the bounds (these and the per-centre ones) hold for.
    stamp: usize,
}

impl Bounds {
    /// The point's lower bound on its distance to every centre but its own `a`, for the centres
    /// of step `step.t`: the runner-up's moved by its own shifts, the others' by the largest.
    #[inline(always)]
    fn others(&self, step: &Step, a: usize) -> (f64, f64) {
        let (k, t, r) = (step.k, step.t, self.runner);
        let second = self.second - (step.moved[t * k + r] - step.moved[self.stamp * k + r]);
        (second, self.third - step.others_moved(a, self.stamp))
    }
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
    /// The running sums of how much more each centre moved than any other, per step (see
    /// [`lloyd`]).
    excess: &'a [f64],
}

impl Step<'_> {
    /// At least how far every centre but `a` moved since step `stamp`: the sum of each step's
    /// largest shift among them.
    #[inline(always)]
    fn others_moved(&self, a: usize, stamp: usize) -> f64 {
        let (k, t) = (self.k, self.t);
        (self.top[t] - self.top[stamp]) - (self.excess[t * k + a] - self.excess[stamp * k + a])
    }

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

    /// Point `j`'s nearest centre by Elkan's bounds: `s.upper` bounds its distance to its centre
    /// `l` from above, `lo[c]` its distance to centre c from below, `s.second` its distance to
    /// every centre but `l`, all for the centres of step `s.stamp`. A point whose centre the
    /// single bounds prove nearest (by more than the margin) is left as it is; every other is
    /// [`refreshed`]. Returns whether the label changed.
    fn elkan(&self, j: usize, l: &mut usize, s: &mut Bounds, lo: &mut [f64]) -> bool {
        let (a, k, t) = (*l, self.k, self.t);
        let (second, third) = s.others(self, a);
        let up = s.upper + (self.moved[t * k + a] - self.moved[s.stamp * k + a]);
        if up + self.margin < self.half[a].max(second.min(third)) {
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

/// Point `j`'s nearest centre from all its distances, each summed from 0 over the values in order
/// as the plain algorithm sums it (the first of the nearest: a tie to the lower label), with exact
/// bounds: the distances themselves, and `second` the distance to the nearest other centre.
/// Returns whether the label changed. Compiled for AVX-512 and AVX2 too (no fused multiply-add:
/// the same bits on every target).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
fn measured(step: &Step, j: usize, l: &mut usize, s: &mut Bounds, lo: &mut [f64]) -> bool {
    let (k, width) = (step.k, step.width);
    lo.fill(0.0);
    for (&xv, col) in step.x[j * width..(j + 1) * width]
        .iter()
        .zip(step.ct.chunks_exact(k))
    {
        for (d, &cv) in lo.iter_mut().zip(col) {
            let e = xv - cv;
            *d += e * e;
        }
    }
    // The first centre at the least distance is the plain algorithm's choice (it keeps the
    // first of equal distances); the square root is monotone, so the least root is the root of
    // the least square.
    let nearest = least(lo);
    let best = lo.iter().position(|&d| d == nearest).unwrap_or(0);
    let own = std::mem::replace(&mut lo[best], f64::INFINITY);
    let second = least(lo);
    let runner = lo.iter().position(|&d| d == second).unwrap_or(0);
    let next = std::mem::replace(&mut lo[runner], f64::INFINITY);
    let third = least(lo).sqrt();
    (lo[best], lo[runner]) = (own, next);
    lo.iter_mut().for_each(|d| *d = d.sqrt());
    *s = Bounds {
        upper: lo[best],
        second: second.sqrt(),
        third,
        runner,
        stamp: step.t,
    };
    let changed = best != *l;
    *l = best;
    changed
}

/// The least of `v`, in [`LANES`] running minima (so that it vectorises).
#[inline(always)]
fn least(v: &[f64]) -> f64 {
    let mut lanes = [f64::INFINITY; LANES];
    let mut chunks = v.chunks_exact(LANES);
    for c in &mut chunks {
        for (m, &x) in lanes.iter_mut().zip(c) {
            *m = if x < *m { x } else { *m };
        }
    }
    for (m, &x) in lanes.iter_mut().zip(chunks.remainder()) {
        *m = if x < *m { x } else { *m };
    }
    lanes
        .iter()
        .fold(f64::INFINITY, |m, &x| if x < m { x } else { m })
}

/// Point `j`'s nearest centre when the single bounds of [`Step::elkan`] cannot keep its label:
/// its per-centre bounds brought to this step, its own centre measured (and kept if the single
/// bounds then suffice), then Elkan's test: a centre is passed over only when its lower bound or
/// half its distance to the best centre so far proves it farther, by more than the margin, than
/// that centre; every other is measured exactly and compared as the plain algorithm compares (a
/// tie goes to the lower label).
///
/// One branch-free pass over the centres ([`pass`]) tells whether any is left after the test
/// against the point's own centre, and gives the new lower bounds of [`Bounds`]; only when some
/// are left are they gathered (up to [`MAX_KEPT`] centres without branches), tested again against
/// the best so far and measured.
/// Compiled for AVX-512 and AVX2 too; every comparison and distance is the same there.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
fn refreshed(step: &Step, j: usize, l: &mut usize, s: &mut Bounds, lo: &mut [f64]) -> bool {
    let (a, k, t) = (*l, step.k, step.t);
    let (now, then) = (
        &step.moved[t * k..(t + 1) * k],
        &step.moved[s.stamp * k..(s.stamp + 1) * k],
    );
    let (second, third) = s.others(step, a);
    let best_d2 = step.distance2(j, a);
    let mut up = best_d2.sqrt();
    (s.stamp, s.upper, s.second, s.third) = (t, up, second, third);
    let reach = up + step.margin;
    if reach < step.half[a].max(second.min(third)) {
        for ((b, m), o) in lo.iter_mut().zip(now).zip(then) {
            *b -= m - o;
        }
        lo[a] = up;
        return false;
    }
    // The point's own centre out of the pass: an infinite lower bound neither is left nor
    // lowers the minimum (and stays infinite when moved).
    lo[a] = f64::INFINITY;
    let half = &step.between[a * k..(a + 1) * k];
    let passed = pass(lo, Some((now, then)), half, up, reach);
    if !passed.left {
        (s.second, s.runner, s.third) = (passed.second, passed.runner, passed.third);
        lo[a] = up;
        return false;
    }
    lo[a] = up;
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
    let half = &step.between[best * k..(best + 1) * k];
    let passed = pass(lo, None, half, up, reach);
    (s.second, s.runner, s.third) = (passed.second, passed.runner, passed.third);
    lo[best] = up;
    *l = best;
    best != a
}

/// Lanes of [`pass`]: independent running minima, so that it vectorises.
const LANES: usize = 8;

/// What [`pass`] finds.
struct Passed {
    /// Whether Elkan's test leaves any centre to measure.
    left: bool,
    /// The least lower bound, `runner`'s.
    second: f64,
    runner: usize,
    /// The least lower bound of the others.
    third: f64,
}

/// Over the centres c with lower bounds `lo` and half distances `half` to the point's centre (at
/// distance `up`; its own lower bound ∞): whether any has `reach ≥ max(lo[c], half[c])` (Elkan's
/// test leaves it), and the least two of `max(lo[c], 2 half[c] − up)` (a lower bound on the
/// distance to c, by the triangle inequality), with whose the least is. Each lane keeps its least
/// two and the first's centre, so that the pass vectorises.
///
/// With `moved` (the running sums of the shifts now and at the bounds' step), each lower bound is
/// first moved to this step (in place).
#[inline(always)]
fn pass(
    lo: &mut [f64],
    moved: Option<(&[f64], &[f64])>,
    half: &[f64],
    up: f64,
    reach: f64,
) -> Passed {
    if let Some((now, then)) = moved {
        for ((b, m), o) in lo.iter_mut().zip(now).zip(then) {
            *b -= m - o;
        }
    }
    let lo = &*lo;
    let mut left = [false; LANES];
    let mut first = [f64::INFINITY; LANES];
    let mut next = [f64::INFINITY; LANES];
    // Centre numbers as floats: the same vector width as the bounds.
    let mut at = [0.0f64; LANES];
    // One centre c into a lane's (left, least, next least, whose the least is).
    let one = |(left, first, next, at): (bool, f64, f64, f64), c: usize, b: f64, h: f64| {
        let near = if b > h { b } else { h };
        let far = 2.0 * h - up;
        let bound = if b > far { b } else { far };
        let (below_first, below_next) = (bound < first, bound < next);
        (
            left | (reach >= near),
            if below_first { bound } else { first },
            if below_first {
                first
            } else if below_next {
                bound
            } else {
                next
            },
            if below_first { c as f64 } else { at },
        )
    };
    let mut chunks = lo.chunks_exact(LANES).zip(half.chunks_exact(LANES));
    for (g, (b, h)) in (&mut chunks).enumerate() {
        for i in 0..LANES {
            let lane = (left[i], first[i], next[i], at[i]);
            (left[i], first[i], next[i], at[i]) = one(lane, g * LANES + i, b[i], h[i]);
        }
    }
    let rest = lo.len() - lo.len() % LANES;
    for (c, (&b, &h)) in lo.iter().zip(half).enumerate().skip(rest) {
        (left[0], first[0], next[0], at[0]) = one((left[0], first[0], next[0], at[0]), c, b, h);
    }
    let mut lane = 0;
    for i in 1..LANES {
        if first[i] < first[lane] {
            lane = i;
        }
    }
    let third = (0..LANES)
        .map(|i| if i == lane { next[i] } else { first[i] })
        .fold(f64::INFINITY, |m, v| if v < m { v } else { m });
    Passed {
        left: left.iter().any(|&l| l),
        second: first[lane],
        runner: at[lane] as usize,
        third,
    }
}

/// The most centres [`refreshed`] gathers in its branch-free pass (more take the plain scan).
const MAX_KEPT: usize = 64;
