//! Tests of k-means: bounded steps and one-pass trials against their plain references.

use super::elkan::PARALLEL_POINTS;
use super::lloyd::{lloyd, PARALLEL_WORK};
use super::seeding::{first_seed, seeds, Potential, BLOCK, PARALLEL_SEEDING};
use super::*;
use rand::Rng as _;
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

/// Hamerly's bounds (up to 16 centres) and Elkan's (more) change no label: clustered data, data
/// on an integer grid (exact ties between centres), duplicate points, more than 64 centres (five
/// accumulator blocks), large offsets, near-ties (differences far below the bounds' margin), case
/// b's shape, and a problem large enough to run on the thread pool, each against the plain
/// algorithm from the same seeds.
#[test]
fn bounded_steps_equal_the_plain_algorithm() {
    let cases = [
        (300, 2, 5, 0),
        (500, 3, 12, 1),
        (400, 1, 7, 2),
        (200, 2, 70, 0),
        (250, 4, 9, 3),
        (3000, 3, 30, 0),
        (600, 10, 40, 0),
        (400, 10, 40, 1),
        (300, 5, 80, 0),
        // Case b's shape (some 30 steps: bounds carried across many steps).
        (2000, 10, 40, 0),
        (500, 3, 24, 4),
        (800, 2, 20, 4),
        (600, 10, 40, 4),
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
                        // Near-ties: a coarse grid moved by far less than the bounds' margin,
                        // so that centres and distances differ in the last bits only.
                        4 => {
                            (a / 3.0).round()
                                + rng.random_range(0..2) as f64
                                + 1e-13 * rng.random::<f64>()
                        }
                        _ => a + 2.0 * rng.random::<f64>(),
                    }
                })
                .collect();
            let (centres, seeded, d2) = seeds(&x, n, width, k, &mut rng);
            let (mut fast, mut slow) = (seeded.clone(), seeded);
            lloyd(&x, n, width, k, &centres, &mut fast, &d2);
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
    for (case, &(n, width, k, shape)) in [
        (300, 2, 5, 0),
        (257, 1, 12, 1),
        (100, 3, 8, 2),
        (1000, 4, 30, 0),
        (40_000, 2, 10, 0),
        (70_000, 1, 6, 1),
        // Wide points keep every candidate's distances: serial and on the pool.
        (2000, 10, 40, 0),
        (300, 5, 7, 1),
        (20_000, 6, 8, 0),
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
    let (n, width, k) = (40_000, 2, 12);
    let mut rng = crate::Rng::seed_from_u64(3);
    let x: Vec<f64> = (0..n * width)
        .map(|v| ((v / width) % k) as f64 * 3.0 + rng.random::<f64>())
        .collect();
    assert!(n * width >= PARALLEL_SEEDING && n * k * width >= PARALLEL_WORK);
    let run = |threads: usize| {
        crate::threads::on_threads(threads, || {
            let mut rng = crate::Rng::seed_from_u64(11);
            let (centres, seeded, _) = seeds(&x, n, width, k, &mut rng);
            let mut rng = crate::Rng::seed_from_u64(11);
            (centres, seeded, kmeans(&x, n, width, k, &mut rng))
        })
        .unwrap()
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

/// Elkan's steps (more than 16 centres) give the same labels on 1, 2 and 3 threads, with enough
/// points that the first step and the later ones run on the pool, and the same labels as the
/// plain algorithm.
#[test]
fn many_centres_the_same_on_any_number_of_threads() {
    let (n, width, k) = (20_000, 2, 20);
    let mut rng = crate::Rng::seed_from_u64(5);
    let x: Vec<f64> = (0..n * width)
        .map(|v| ((v / width) % 7) as f64 * 2.0 + rng.random::<f64>())
        .collect();
    assert!(n * k * width >= PARALLEL_WORK && n >= PARALLEL_POINTS);
    let run = |threads: usize| {
        crate::threads::on_threads(threads, || {
            let mut rng = crate::Rng::seed_from_u64(2);
            let (centres, seeded, d2) = seeds(&x, n, width, k, &mut rng);
            let mut label = seeded.clone();
            lloyd(&x, n, width, k, &centres, &mut label, &d2);
            (centres, seeded, label)
        })
        .unwrap()
    };
    let (centres, seeded, one) = run(1);
    let mut plain = seeded;
    plain_lloyd(&x, width, k, &centres, &mut plain);
    assert_eq!(one, plain);
    for threads in [2, 3] {
        assert_eq!(run(threads).2, one, "{threads} threads");
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

/// Wider points (more than four values) take the grouped distance pass: every point's squared
/// distance is the plain sum from 0 over the values in order, bit for bit, with the seeds so far
/// kept where nearer, over block and group remainders.
#[test]
fn wide_distances_are_the_plain_sums() {
    let n = 2 * BLOCK + 37;
    let mut rng = crate::Rng::seed_from_u64(9);
    for width in [5, 7, 10, 17] {
        let x: Vec<f64> = (0..n * width)
            .map(|_| rng.random_range(-5.0..5.0))
            .collect();
        let (xt, _, _) = first_seed(&x, n, width, &mut rng);
        let centre: Vec<f64> = (0..width).map(|_| rng.random_range(-5.0..5.0)).collect();
        let nearest: Vec<f64> = (0..n)
            .map(|j| if j % 3 == 0 { 1.0 } else { f64::INFINITY })
            .collect();
        let mut p = Potential::new(n);
        p.try_centre(&xt, n, &centre, &nearest);
        for (j, (&d, &o)) in p.d2.iter().zip(&nearest).enumerate() {
            let mut plain = 0.0;
            for (xv, cv) in x[j * width..(j + 1) * width].iter().zip(&centre) {
                plain += (xv - cv) * (xv - cv);
            }
            let want = if plain < o { plain } else { o };
            assert_eq!(d.to_bits(), want.to_bits(), "width {width}, point {j}");
        }
    }
}
