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
fn seeds(
    x: &[f64],
    n: usize,
    width: usize,
    k: usize,
    rng: &mut crate::Rng,
) -> (Vec<f64>, Vec<usize>) {
    let row = |j: usize| &x[j * width..(j + 1) * width];
    // Greedy k-means++: each new seed is the best, by the resulting potential Σ min d², of a few
    // candidates drawn with probability ∝ d² to the seeds so far. Distances to one candidate are
    // accumulated over a transposed copy of the data (width × n), contiguous along the points.
    let trials = 2 + (k as f64).ln().floor() as usize;
    let mut xt = vec![0.0; width * n];
    for j in 0..n {
        for (w, &v) in row(j).iter().enumerate() {
            xt[w * n + j] = v;
        }
    }
    let distances = |c: usize, out: &mut [f64]| {
        out.iter_mut().for_each(|o| *o = 0.0);
        for (w, &cv) in row(c).iter().enumerate() {
            for (o, &xv) in out.iter_mut().zip(&xt[w * n..(w + 1) * n]) {
                let d = xv - cv;
                *o += d * d;
            }
        }
    };
    let first = rng.random_range(0..n);
    let mut centres: Vec<f64> = row(first).to_vec();
    let mut nearest = vec![0.0; n];
    distances(first, &mut nearest);
    let mut label = vec![0usize; n];
    let mut trial = vec![0.0; n];
    let mut best_trial = vec![0.0; n];
    for s in 1..k {
        let total: f64 = nearest.iter().sum();
        let mut best: Option<(f64, usize)> = None;
        for _ in 0..trials {
            let c = if total > 0.0 {
                let mut r = rng.random::<f64>() * total;
                nearest
                    .iter()
                    .position(|&d| {
                        r -= d;
                        r <= 0.0
                    })
                    .unwrap_or(n - 1)
            } else {
                rng.random_range(0..n)
            };
            distances(c, &mut trial);
            let mut potential = 0.0;
            for (t, &d) in trial.iter_mut().zip(&nearest) {
                if d < *t {
                    *t = d;
                }
                potential += *t;
            }
            if best.is_none_or(|b| potential < b.0) {
                best = Some((potential, c));
                std::mem::swap(&mut trial, &mut best_trial);
            }
        }
        let (_, c) = best.expect("at least two trials");
        for (l, (old, new)) in label.iter_mut().zip(nearest.iter().zip(&best_trial)) {
            if new < old {
                *l = s;
            }
        }
        std::mem::swap(&mut nearest, &mut best_trial);
        centres.extend_from_slice(row(c));
    }
    (centres, label)
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
