//! k-means clustering for initialising mixture indices: greedy k-means++ seeding (Arthur &
//! Vassilvitskii 2007, with 2 + ⌊ln k⌋ candidates per seed as in scikit-learn) followed by Lloyd
//! iterations until no point changes cluster.
//!
//! Plain k-means++ seeding alone often puts two seeds in one cluster and none in another; VMP then
//! starts from one component covering two clusters and two splitting one, a local optimum it
//! rarely leaves (and `compare` over K then picks the wrong K). The greedy choice and a few Lloyd
//! steps remove most of these starts at a cost of O(iterations · n · k · width).

use rand::Rng as _;
use rayon::prelude::*;

/// The most Lloyd iterations run (they usually stop far earlier, when no label changes).
pub const MAX_LLOYD: usize = 100;

/// Points × centres × width above which an assignment step runs on the thread pool.
const PARALLEL_WORK: usize = 1 << 18;

/// Labels in `0..k.min(n)` for the `n` rows of `x` (row-major, `width` values each), from seeds
/// drawn with `rng`. Ties go to the lower label. Deterministic given the generator's state.
pub fn kmeans(x: &[f64], n: usize, width: usize, k: usize, rng: &mut crate::Rng) -> Vec<usize> {
    assert_eq!(x.len(), n * width, "kmeans: data length");
    if n == 0 || k == 0 {
        return vec![0; n];
    }
    let k = k.min(n);
    let (centres, mut label) = seeds(x, n, width, k, rng);
    lloyd(x, n, width, k, &centres, &mut label);
    label
}

/// Greedy k-means++ seeding of `k ≤ n` centres: the centres (k rows of `width`) and each point's
/// nearest seed.
///
/// Each new seed is the best, by the resulting potential Σ min d², of a few candidates drawn with
/// probability ∝ d² to the seeds so far. The candidates of one seed are drawn first (a draw
/// depends on the seeds so far, not on another candidate's trial, so the generator is used as if
/// each were drawn before its trial); one pass over the points then gives every candidate's
/// potential ([`Potential::trials`]), and a second the chosen one's distances
/// ([`Potential::try_centre`]). Both work per block of [`BLOCK`] points on a transposed copy of
/// the data (contiguous along the points, so every step vectorises) with the same arithmetic
/// ([`block_potential`]): the chosen candidate's potential is the same number in both. A
/// candidate is drawn by walking the block sums, then the points of one block. The sums are added
/// in a fixed order (four lanes within a block, then the blocks in order), whatever the number of
/// threads: the seeds depend on the generator's state alone.
fn seeds(
    x: &[f64],
    n: usize,
    width: usize,
    k: usize,
    rng: &mut crate::Rng,
) -> (Vec<f64>, Vec<usize>) {
    let row = |j: usize| &x[j * width..(j + 1) * width];
    let trials = 2 + (k as f64).ln().floor() as usize;
    let (xt, mut centres, mut nearest) = first_seed(x, n, width, rng);
    let mut next = Potential::new(n);
    let mut label = vec![0usize; n];
    let mut candidates = Vec::with_capacity(trials);
    let mut rows = Vec::with_capacity(trials * width);
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
        let totals = nearest.trials(&xt, n, &rows, trials);
        // The first candidate with the smallest potential.
        let mut best = 0;
        for (t, total) in totals.iter().enumerate().skip(1) {
            if *total < totals[best] {
                best = t;
            }
        }
        let c = candidates[best];
        next.try_centre(&xt, n, row(c), &nearest.d2);
        // A select rather than a branch: the loop vectorises.
        for (l, (old, new)) in label.iter_mut().zip(nearest.d2.iter().zip(&next.d2)) {
            *l = if new < old { s } else { *l };
        }
        std::mem::swap(&mut nearest, &mut next);
        centres.extend_from_slice(row(c));
    }
    (centres, label)
}

/// The seeding's start: the points transposed (width × n, contiguous along the points), the
/// first seed drawn uniformly, and every point's potential with that one seed.
fn first_seed(
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
const BLOCK: usize = 256;

/// Points × width above which a seeding pass runs on the thread pool.
const PARALLEL_SEEDING: usize = 1 << 16;

/// The potential of the block of points starting at `j0` (`d2.len()` of them; `xt` is width × n)
/// with `centre` added to the seeds whose distances are `nearest` (the block's): each point's
/// `d2 = min(nearest, |x − centre|²)`, summed in four lanes.
fn block_potential(
    xt: &[f64],
    n: usize,
    j0: usize,
    centre: &[f64],
    nearest: &[f64],
    d2: &mut [f64],
) -> f64 {
    let m = d2.len();
    d2.iter_mut().for_each(|d| *d = 0.0);
    for (w, &cv) in centre.iter().enumerate() {
        for (d, &xv) in d2.iter_mut().zip(&xt[w * n + j0..w * n + j0 + m]) {
            let e = xv - cv;
            *d += e * e;
        }
    }
    let mut lanes = [0.0f64; 4];
    let mut chunks = d2.chunks_exact_mut(4);
    let mut near = nearest.chunks_exact(4);
    for (d, o) in (&mut chunks).zip(&mut near) {
        for ((l, d), &o) in lanes.iter_mut().zip(d).zip(o) {
            *d = if *d < o { *d } else { o };
            *l += *d;
        }
    }
    for ((l, d), &o) in lanes
        .iter_mut()
        .zip(chunks.into_remainder())
        .zip(near.remainder())
    {
        *d = if *d < o { *d } else { o };
        *l += *d;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// Every point's squared distance to its nearest seed (with a candidate included, during a
/// trial), the sums of those distances per block of [`BLOCK`] points, and their total.
struct Potential {
    d2: Vec<f64>,
    blocks: Vec<f64>,
    total: f64,
}

impl Potential {
    fn new(n: usize) -> Potential {
        Potential {
            d2: vec![0.0; n],
            blocks: vec![0.0; n.div_ceil(BLOCK)],
            total: 0.0,
        }
    }

    /// `d2[j] = min(nearest[j], |x_j − centre|²)` for every point of `xt` (width × n), with the
    /// block sums and the total.
    fn try_centre(&mut self, xt: &[f64], n: usize, centre: &[f64], nearest: &[f64]) {
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

    /// The total [`Potential::try_centre`] would give for each of the `count` centres (rows of
    /// `centres`) added to these distances, in one pass over the points of `xt` (width × n) and
    /// without writing any distance: the same block sums, added in the same order.
    fn trials(&self, xt: &[f64], n: usize, centres: &[f64], count: usize) -> Vec<f64> {
        let width = centres.len() / count;
        let centre = |c: usize| &centres[c * width..(c + 1) * width];
        let mut sums = vec![0.0; self.blocks.len() * count];
        let pass = |(b, sums): (usize, &mut [f64])| {
            let j0 = b * BLOCK;
            let m = BLOCK.min(n - j0);
            let mut d2 = [0.0f64; BLOCK];
            for (c, sum) in sums.iter_mut().enumerate() {
                *sum = block_potential(xt, n, j0, centre(c), &self.d2[j0..j0 + m], &mut d2[..m]);
            }
        };
        if n * width >= PARALLEL_SEEDING {
            sums.par_chunks_mut(count).enumerate().for_each(pass);
        } else {
            sums.chunks_mut(count).enumerate().for_each(pass);
        }
        (0..count)
            .map(|c| sums.iter().skip(c).step_by(count).sum())
            .collect()
    }

    /// The point where the running sum of `d2` reaches `r` (0 ≤ r ≤ total): the block first,
    /// then the point within it. Should rounding leave `r` unreached, the last point with a
    /// positive distance.
    fn draw(&self, mut r: f64) -> usize {
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
fn lloyd(x: &[f64], n: usize, width: usize, k: usize, centres: &[f64], label: &mut [usize]) {
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
    let mut old = ct.clone();
    let mut shift = vec![0.0; k];
    let mut half = vec![0.0; k];
    let mut upper = vec![f64::INFINITY; n];
    let mut lower = vec![0.0; n];
    for step in 0..MAX_LLOYD {
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
                    ct[w * k + c] = sums[c * width + w] / m as f64;
                }
            }
        }
        let bounded = step > 0;
        // The largest shift and the largest among the other centres', for the lower bounds.
        let (mut top, mut top_at, mut second) = (0.0f64, usize::MAX, 0.0f64);
        if bounded {
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
        }
        let ct = &ct;
        let (shift, half) = (&shift, &half);
        let assign = |(j, (l, (up, lo))): (usize, (&mut usize, (&mut f64, &mut f64)))| {
            let a = *l;
            if bounded {
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
            }
            let (best, near, next) = nearest(row(j), ct, k);
            (*up, *lo) = (near.sqrt(), next.sqrt());
            *l = best;
            best != a
        };
        let changed = if n * k * width >= PARALLEL_WORK {
            label
                .par_iter_mut()
                .zip(upper.par_iter_mut().zip(lower.par_iter_mut()))
                .enumerate()
                .map(assign)
                .reduce(|| false, |a, b| a | b)
        } else {
            label
                .iter_mut()
                .zip(upper.iter_mut().zip(lower.iter_mut()))
                .enumerate()
                .map(assign)
                .fold(false, |a, b| a | b)
        };
        if !changed {
            break;
        }
    }
}

/// The nearest of the `k` centres `ct` (transposed, width × k) to point `p`: its label (the lower
/// one on a tie), its squared distance and the squared distance to the next nearest (∞ if k = 1).
fn nearest(p: &[f64], ct: &[f64], k: usize) -> (usize, f64, f64) {
    let mut acc = [0.0f64; 64];
    let (mut best, mut near, mut next) = (0, f64::INFINITY, f64::INFINITY);
    // Blocks of up to 64 centres keep the accumulator on the stack.
    for c0 in (0..k).step_by(64) {
        let m = (k - c0).min(64);
        let acc = &mut acc[..m];
        acc.iter_mut().for_each(|a| *a = 0.0);
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Three well-separated groups of points with uneven sizes: every seed recovers them
    /// (one label per group), and the result depends only on the seed.
    #[test]
    fn recovers_separated_groups_for_every_seed() {
        let centres = [[0.0, 0.0], [6.0, 0.0], [3.0, 5.0]];
        let mut x = Vec::new();
        let mut truth = Vec::new();
        for (g, c) in centres.iter().enumerate() {
            for i in 0..(20 + 15 * g) {
                let t = i as f64 * 0.7;
                x.extend([c[0] + t.sin(), c[1] + (1.3 * t).cos()]);
                truth.push(g);
            }
        }
        let n = truth.len();
        for seed in 0..50 {
            let mut rng = crate::Rng::seed_from_u64(seed);
            let l = kmeans(&x, n, 2, 3, &mut rng);
            for a in 0..n {
                for b in 0..n {
                    assert_eq!(truth[a] == truth[b], l[a] == l[b], "seed {seed}");
                }
            }
            let mut again = crate::Rng::seed_from_u64(seed);
            assert_eq!(kmeans(&x, n, 2, 3, &mut again), l);
        }
    }

    /// The plain Lloyd step, every distance computed for every point (the algorithm before
    /// Hamerly's bounds): the reference the bounded steps must reproduce label for label.
    fn plain_lloyd(x: &[f64], width: usize, k: usize, centres: &[f64], label: &mut [usize]) {
        let mut ct = vec![0.0; width * k];
        for (c, centre) in centres.chunks(width).enumerate() {
            for (w, &v) in centre.iter().enumerate() {
                ct[w * k + c] = v;
            }
        }
        for _ in 0..MAX_LLOYD {
            let mut sums = vec![0.0; k * width];
            let mut counts = vec![0usize; k];
            for (j, &l) in label.iter().enumerate() {
                counts[l] += 1;
                for w in 0..width {
                    sums[l * width + w] += x[j * width + w];
                }
            }
            for (c, &m) in counts.iter().enumerate() {
                if m > 0 {
                    for w in 0..width {
                        ct[w * k + c] = sums[c * width + w] / m as f64;
                    }
                }
            }
            let mut changed = false;
            for (j, l) in label.iter_mut().enumerate() {
                let mut best = (f64::INFINITY, 0);
                for c in 0..k {
                    let mut d2 = 0.0;
                    for w in 0..width {
                        let d = x[j * width + w] - ct[w * k + c];
                        d2 += d * d;
                    }
                    if d2 < best.0 {
                        best = (d2, c);
                    }
                }
                changed |= best.1 != *l;
                *l = best.1;
            }
            if !changed {
                break;
            }
        }
    }

    /// Hamerly's bounds change no label: clustered data, data on an integer grid (exact ties
    /// between centres), duplicate points, more than 64 centres (two accumulator blocks), large
    /// offsets, and a problem large enough to run on the thread pool, each against the plain
    /// algorithm from the same seeds.
    #[test]
    fn bounded_steps_equal_the_plain_algorithm() {
        use rand::Rng as _;
        let cases = [
            (300, 2, 5, 0),
            (500, 3, 12, 1),
            (400, 1, 7, 2),
            (200, 2, 70, 0),
            (250, 4, 9, 3),
            (3000, 3, 30, 0),
        ];
        for (case, &(n, width, k, shape)) in cases.iter().enumerate() {
            for seed in 0..6u64 {
                let mut rng = crate::Rng::seed_from_u64(1000 * case as u64 + seed);
                let groups = 1 + k / 2;
                let anchors: Vec<f64> = (0..groups * width)
                    .map(|_| rng.random_range(-20.0..20.0))
                    .collect();
                let x: Vec<f64> = (0..n * width)
                    .map(|v| {
                        let g = (v / width) % groups;
                        let a = anchors[g * width + v % width];
                        match shape {
                            // Integer grid: many exact ties.
                            1 => (a / 4.0).round() + rng.random_range(0..3) as f64,
                            // Half the points duplicated.
                            2 if (v / width) % 2 == 1 => {
                                anchors[(g * width + v % width) % anchors.len()]
                            }
                            // A large offset: distances cancel the offset exactly or not at all.
                            3 => 1e7 + a + rng.random::<f64>(),
                            _ => a + 2.0 * rng.random::<f64>(),
                        }
                    })
                    .collect();
                let (centres, seeded) = seeds(&x, n, width, k, &mut rng);
                let (mut fast, mut slow) = (seeded.clone(), seeded);
                lloyd(&x, n, width, k, &centres, &mut fast);
                plain_lloyd(&x, width, k, &centres, &mut slow);
                assert_eq!(fast, slow, "case {case}, seed {seed}");
            }
        }
    }

    /// The seeding as first written, each candidate drawn and tried in turn: the reference the
    /// one-pass trials must reproduce bit for bit.
    fn seeds_one_by_one(
        x: &[f64],
        n: usize,
        width: usize,
        k: usize,
        rng: &mut crate::Rng,
    ) -> (Vec<f64>, Vec<usize>) {
        let row = |j: usize| &x[j * width..(j + 1) * width];
        let trials = 2 + (k as f64).ln().floor() as usize;
        let (xt, mut centres, mut nearest) = first_seed(x, n, width, rng);
        let mut trial = Potential::new(n);
        let mut best_trial = Potential::new(n);
        let mut label = vec![0usize; n];
        for s in 1..k {
            let mut best: Option<(f64, usize)> = None;
            for _ in 0..trials {
                let c = if nearest.total > 0.0 {
                    nearest.draw(rng.random::<f64>() * nearest.total)
                } else {
                    rng.random_range(0..n)
                };
                trial.try_centre(&xt, n, row(c), &nearest.d2);
                if best.is_none_or(|b| trial.total < b.0) {
                    best = Some((trial.total, c));
                    std::mem::swap(&mut trial, &mut best_trial);
                }
            }
            let (_, c) = best.unwrap();
            for (l, (old, new)) in label.iter_mut().zip(nearest.d2.iter().zip(&best_trial.d2)) {
                if new < old {
                    *l = s;
                }
            }
            std::mem::swap(&mut nearest, &mut best_trial);
            centres.extend_from_slice(row(c));
        }
        (centres, label)
    }

    /// The one-pass trials choose the seeds and labels of the one-by-one seeding, bit for bit,
    /// and leave the generator in the same state: clustered data, an integer grid (ties between
    /// candidates' potentials), all points equal (zero potential: uniform draws), one and four
    /// dimensions, block remainders, and sizes that run on the thread pool.
    #[test]
    fn one_pass_trials_equal_the_one_by_one_seeding() {
        use rand::Rng as _;
        for (case, &(n, width, k, shape)) in [
            (300, 2, 5, 0),
            (257, 1, 12, 1),
            (100, 3, 8, 2),
            (1000, 4, 30, 0),
            (40_000, 2, 10, 0),
            (70_000, 1, 6, 1),
        ]
        .iter()
        .enumerate()
        {
            for seed in 0..4u64 {
                let mut rng = crate::Rng::seed_from_u64(77 * case as u64 + seed);
                let x: Vec<f64> = (0..n * width)
                    .map(|v| match shape {
                        1 => ((v * 7919) % 13) as f64,
                        2 => 1.5,
                        _ => ((v / width) % 9) as f64 * 4.0 + rng.random::<f64>(),
                    })
                    .collect();
                let mut a = crate::Rng::seed_from_u64(seed);
                let mut b = a.clone();
                let fast = seeds(&x, n, width, k, &mut a);
                let slow = seeds_one_by_one(&x, n, width, k, &mut b);
                let bits = |c: &[f64]| c.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&fast.0), bits(&slow.0), "case {case}, seed {seed}");
                assert_eq!(fast.1, slow.1, "case {case}, seed {seed}");
                assert_eq!(a.random::<u64>(), b.random::<u64>());
            }
        }
    }

    /// A candidate is drawn where the running sum of the distances reaches `r`, across block
    /// boundaries: on integer distances (exact sums) every `r` gives the first point whose
    /// cumulative distance is ≥ r, as the point-by-point walk does.
    #[test]
    fn draws_follow_the_running_sum() {
        let n = 3 * BLOCK + 17;
        let mut p = Potential::new(n);
        for (j, d) in p.d2.iter_mut().enumerate() {
            // Zeros (points that are seeds already) among positive distances.
            *d = ((j * 7) % 5) as f64;
        }
        for (b, s) in p.blocks.iter_mut().enumerate() {
            *s = p.d2[b * BLOCK..((b + 1) * BLOCK).min(n)].iter().sum();
        }
        p.total = p.blocks.iter().sum();
        let mut cumulative = 0.0;
        for (j, &d) in p.d2.iter().enumerate() {
            let before = cumulative;
            cumulative += d;
            if d > 0.0 {
                assert_eq!(p.draw(before + 0.5), j);
                assert_eq!(p.draw(cumulative), j);
            }
        }
        assert!(p.d2[p.draw(p.total)] > 0.0);
    }

    /// The seeds and the labels are the same bits on 1, 2 and 3 threads, for a problem large
    /// enough that the seeding and the Lloyd steps run on the pool.
    #[test]
    fn the_same_clusters_on_any_number_of_threads() {
        use rand::Rng as _;
        let (n, width, k) = (40_000, 2, 12);
        let mut rng = crate::Rng::seed_from_u64(3);
        let x: Vec<f64> = (0..n * width)
            .map(|v| ((v / width) % k) as f64 * 3.0 + rng.random::<f64>())
            .collect();
        assert!(n * width >= PARALLEL_SEEDING && n * k * width >= PARALLEL_WORK);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut rng = crate::Rng::seed_from_u64(11);
                let (centres, seeded) = seeds(&x, n, width, k, &mut rng);
                let mut rng = crate::Rng::seed_from_u64(11);
                (centres, seeded, kmeans(&x, n, width, k, &mut rng))
            })
        };
        let one = run(1);
        for threads in [2, 3] {
            let other = run(threads);
            assert_eq!(
                one.0.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                other.0.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(one.1, other.1);
            assert_eq!(one.2, other.2);
        }
    }

    /// Fewer points than clusters, duplicate points and k = 1 are handled.
    #[test]
    fn degenerate_inputs() {
        let mut rng = crate::Rng::seed_from_u64(1);
        assert_eq!(kmeans(&[1.0, 2.0], 2, 1, 5, &mut rng).len(), 2);
        assert_eq!(kmeans(&[3.0; 8], 4, 2, 3, &mut rng), vec![0; 4]);
        assert_eq!(kmeans(&[1.0, 9.0, 4.0], 3, 1, 1, &mut rng), vec![0; 3]);
        assert!(kmeans(&[], 0, 2, 3, &mut rng).is_empty());
    }
}
