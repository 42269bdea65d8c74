//! Time per full VMP iteration (sweep + bound) and set-up time of BayesPy's regression and PCA
//! example models (`models::LinearRegression`, `models::Pca`), with the linear-Gaussian kernel and,
//! for comparison at a small size, the element-by-element path (`Graph::compile_generic`).
//! `bench/peers/compare_linear.py` runs BayesPy on the same shapes in the same run and prints ratios.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use occam_core::models::{LinearRegression, Pca};
use occam_core::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

fn normal(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = occam_core::Rng::seed_from_u64(seed);
    let z = Normal::new(0.0, 1.0).unwrap();
    (0..len).map(|_| z.sample(&mut rng)).collect()
}

/// y = X b + noise, X standard normal (n × c).
fn regression_data(n: usize, c: usize) -> (Vec<f64>, Vec<f64>) {
    let (x, b, e) = (normal(n * c, 1), normal(c, 2), normal(n, 3));
    let y = (0..n)
        .map(|i| (0..c).map(|j| x[i * c + j] * b[j]).sum::<f64>() + 0.5 * e[i])
        .collect();
    (x, y)
}

fn regression(x: &[f64], y: &[f64], c: usize, generic: bool) -> (Vmp, RunOptions) {
    let mut g = Graph::new();
    let m = LinearRegression::new().add(&mut g, x, c, y, None).unwrap();
    let mut vmp = if generic {
        g.compile_generic()
    } else {
        g.compile()
    }
    .unwrap();
    let opts = RunOptions {
        max_iter: 1,
        tol: 0.0,
        order: Some(vec![m.b, m.tau]),
        ..Default::default()
    };
    vmp.run(&opts).unwrap();
    (vmp, opts)
}

/// D × N data from 10 latent dimensions plus noise.
fn pca_data(n: usize, d: usize) -> Vec<f64> {
    let (w, x, e) = (normal(d * 10, 4), normal(10 * n, 5), normal(d * n, 6));
    (0..d * n)
        .map(|i| {
            let (r, col) = (i / n, i % n);
            (0..10).map(|k| w[r * 10 + k] * x[k * n + col]).sum::<f64>() + 0.3 * e[i]
        })
        .collect()
}

fn pca(y: &[f64], d: usize, q: usize, generic: bool) -> (Vmp, RunOptions) {
    let mut g = Graph::new();
    let m = Pca::new(q).add(&mut g, y, d, None).unwrap();
    g.initialize(m.x, Init::Random);
    let mut vmp = if generic {
        g.compile_generic()
    } else {
        g.compile()
    }
    .unwrap();
    let opts = RunOptions {
        max_iter: 1,
        tol: 0.0,
        order: Some(vec![m.w, m.x, m.alpha, m.tau]),
        seed: 1,
        ..Default::default()
    };
    vmp.run(&opts).unwrap();
    (vmp, opts)
}

fn iterations(c: &mut Criterion) {
    let mut group = c.benchmark_group("linear_iteration");
    group.sample_size(10);
    for &(n, cc, generic) in &[
        (100_000, 20, false),
        (10_000, 20, false),
        (10_000, 20, true),
    ] {
        let (x, y) = regression_data(n, cc);
        let (mut vmp, opts) = regression(&x, &y, cc, generic);
        let name = format!(
            "regression_n{n}_c{cc}{}",
            if generic { "_generic" } else { "" }
        );
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| vmp.run(&opts).unwrap().bound)
        });
    }
    for &(n, d, q, generic) in &[
        (2_000, 100, 40, false),
        (500, 50, 10, false),
        (500, 50, 10, true),
    ] {
        let y = pca_data(n, d);
        let (mut vmp, opts) = pca(&y, d, q, generic);
        let name = format!(
            "pca_n{n}_d{d}_q{q}{}",
            if generic { "_generic" } else { "" }
        );
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| vmp.run(&opts).unwrap().bound)
        });
    }
    group.finish();
}

fn setup(c: &mut Criterion) {
    let mut group = c.benchmark_group("linear_setup");
    group.sample_size(10);
    let (x, y) = regression_data(100_000, 20);
    group.bench_function("regression_n100000_c20", |b| {
        b.iter(|| {
            let mut g = Graph::new();
            let m = LinearRegression::new()
                .add(&mut g, &x[..], 20, &y, None)
                .unwrap();
            let mut vmp = g.compile().unwrap();
            vmp.initialize(0).unwrap();
            vmp.elements(m.y)
        })
    });
    group.finish();
}

criterion_group!(benches, iterations, setup);
criterion_main!(benches);
