//! Time per full VMP iteration (sweep + bound) of BayesPy's GMM model (Wishart precisions) on data
//! generated from a seed: the three cases of issue 2's targets. `bench/peers/compare.sh` runs the
//! peers (BayesPy, scikit-learn) on the same shapes and prints the ratios.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use occam_core::models::GaussianMixture;
use occam_core::prelude::*;
use rand::{Rng as _, SeedableRng};
use rand_distr::{Distribution, Normal};

/// N points from 10 well-separated unit-variance clusters in D dimensions.
fn data(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = occam_core::Rng::seed_from_u64(seed);
    let centres: Vec<f64> = (0..10 * d).map(|_| rng.random_range(-30.0..30.0)).collect();
    let noise = Normal::new(0.0, 1.0).unwrap();
    (0..n)
        .flat_map(|i| {
            (0..d)
                .map(|j| centres[(i % 10) * d + j] + noise.sample(&mut rng))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn model(y: &[f64], d: usize, k: usize) -> (Vmp, RunOptions) {
    let mut g = Graph::new();
    let m = GaussianMixture::new(k).add(&mut g, y, d).unwrap();
    let mut vmp = g.compile().unwrap();
    let opts = RunOptions {
        max_iter: 1,
        tol: 0.0,
        order: Some(vec![m.mu, m.lambda, m.z, m.alpha]),
        ..Default::default()
    };
    vmp.run(&opts).unwrap();
    (vmp, opts)
}

fn gmm(c: &mut Criterion) {
    let mut group = c.benchmark_group("gmm_iteration");
    group.sample_size(20);
    for &(n, d, k) in &[(10_000, 2, 10), (2_000, 10, 40), (100_000, 2, 10)] {
        let y = data(n, d, 7);
        let (mut vmp, opts) = model(&y, d, k);
        group.bench_function(
            BenchmarkId::from_parameter(format!("n{n}_d{d}_k{k}")),
            |b| b.iter(|| vmp.run(&opts).unwrap().bound),
        );
    }
    group.finish();
}

criterion_group!(benches, gmm);
criterion_main!(benches);
