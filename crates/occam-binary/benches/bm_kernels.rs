//! Criterion benchmarks of the Boltzmann-machine kernels.
//! Targets: a mean-field sweep of a dense 100-unit BM well under 1 ms; the third-order bound on
//! N = 20 under 10 ms; exact enumeration of 2²⁵ states in seconds on two cores.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use occam_binary::bm::exact::exact_log_z;
use occam_binary::bm::mf::{mean_field, mf_sweep, MeanFieldOptions};
use occam_binary::bm::sk::sk_network;
use occam_binary::bm::third_order::{third_order, third_order_bound, ThirdOrderOptions};
use std::time::Duration;

fn mf_dense_100(c: &mut Criterion) {
    let bm = sk_network(100, 0.1, 1.0, 1).unwrap();
    let mut m: Vec<f64> = (0..100).map(|i| ((i % 7) as f64 - 3.0) * 0.01).collect();
    c.bench_function("mf_sweep_dense_100", |b| {
        b.iter(|| black_box(mf_sweep(&bm, &mut m, 1.0, 0.5)))
    });
}

fn third_order_20(c: &mut Criterion) {
    let bm = sk_network(20, 0.1, 0.5, 2).unwrap();
    let mf = mean_field(&bm, &MeanFieldOptions::default()).unwrap();
    c.bench_function("third_order_bound_eval_n20", |b| {
        b.iter(|| black_box(third_order_bound(&bm, &mf.fields)))
    });
    let tm = ThirdOrderOptions {
        optimise: false,
        ..Default::default()
    };
    c.bench_function("third_order_tm_incl_mf_n20", |b| {
        b.iter(|| black_box(third_order(&bm, &tm).unwrap().log_z))
    });
    let to = ThirdOrderOptions::default();
    c.bench_function("third_order_to_optimised_n20", |b| {
        b.iter(|| black_box(third_order(&bm, &to).unwrap().log_z))
    });
}

fn exact_25(c: &mut Criterion) {
    let bm = sk_network(25, 0.1, 1.0, 3).unwrap();
    let mut g = c.benchmark_group("exact");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("exact_log_z_2pow25", |b| {
        b.iter(|| black_box(exact_log_z(&bm).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, mf_dense_100, third_order_20, exact_25);
criterion_main!(benches);
