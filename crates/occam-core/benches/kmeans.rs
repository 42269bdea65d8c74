//! k-means start of a mixture index (k-means++ seeding and Lloyd steps) on the GMM benchmark's
//! shapes: N = 10⁴ (the estimator's case a) and N = 10⁶ (`compare_gmm_process.py`), K = 10,
//! D = 2, and N = 2000, K = 40, D = 10 (the estimator's case b), on one thread and on the default
//! pool. Run before and after a change, interleaved (see
//! `bench/README.md`); the labels' checksum printed first tells whether two builds agree.

#[path = "../examples/common/mod.rs"]
mod common;

use common::clustered;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use occam_core::kmeans::kmeans;
use rand::{Rng as _, SeedableRng};
use rand_distr::{Distribution, Normal};

/// N points from 10 unit-variance clusters with centres uniform on [−20, 20]², as the process
/// benchmark's data.
fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = occam_core::Rng::seed_from_u64(seed);
    let centres: Vec<f64> = (0..20).map(|_| rng.random_range(-20.0..20.0)).collect();
    let noise = Normal::new(0.0, 1.0).unwrap();
    (0..n)
        .flat_map(|_| {
            let c = rng.random_range(0..10);
            [
                centres[2 * c] + noise.sample(&mut rng),
                centres[2 * c + 1] + noise.sample(&mut rng),
            ]
        })
        .collect()
}

fn run(x: &[f64], n: usize) -> Vec<usize> {
    let mut rng = occam_core::Rng::seed_from_u64(1);
    kmeans(x, n, 2, 10, &mut rng)
}

/// One thread and the default pool, each with its benchmark name.
fn pools() -> [(&'static str, rayon::ThreadPool); 2] {
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    [("1 thread", pool(1)), ("pool", pool(0))]
}

/// `i · label` summed over the points: two builds that agree print the same.
fn checksum(labels: &[usize]) -> usize {
    labels.iter().enumerate().map(|(i, l)| i * l).sum()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("kmeans");
    group.sample_size(10);
    for n in [10_000, 1_000_000] {
        let x = data(n, 5);
        eprintln!("kmeans n={n}: labels checksum {}", checksum(&run(&x, n)));
        for (name, pool) in pools() {
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, &n| {
                b.iter(|| pool.install(|| run(&x, n)))
            });
        }
    }
    let (n, width, k) = (2000, 10, 40);
    let x = clustered(n, width, 10, 5);
    let labels = |x: &[f64]| {
        let mut rng = occam_core::Rng::seed_from_u64(1);
        kmeans(x, n, width, k, &mut rng)
    };
    eprintln!(
        "kmeans n={n} d={width} k={k}: labels checksum {}",
        checksum(&labels(&x))
    );
    for (name, pool) in pools() {
        group.bench_function(BenchmarkId::new(name, "n2000_d10_k40"), |b| {
            b.iter(|| pool.install(|| labels(&x)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
