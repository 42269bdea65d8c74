//! k-means alone (greedy k-means++ seeding and Lloyd steps, `occam_core::kmeans::kmeans`) on one
//! data set, timed per call on one thread and on a pool of two, interleaved round by round; one
//! JSON line per pool out, with the labels' checksum (two builds that agree print the same one).
//!
//! Usage: bench_kmeans [--data FILE.csv] [--k K] [--reps R] [--seed S] [--whiten]
//!
//! `--data`: a CSV with a header row (`bench/peers/gen_data.py`'s files; case b is
//! `n2k_d10_k40.csv` with `--k 40`); without it, 2000 points in 10 dimensions from 10
//! unit-variance clusters (case b's shape). `--whiten` maps every row to `L⁻¹ (x − x̄)` with `L`
//! the Cholesky factor of the sample covariance, as `occam.sklearn.BayesianGaussianMixture`
//! does before it fits (so the k-means of a case-b fit sees data like this).

mod common;

use common::{clustered, cpu_seconds, read_csv, Args};
use occam_core::kmeans::kmeans;
use rand::SeedableRng;
use std::time::Instant;

/// Every row to `L⁻¹ (x − x̄)`, `L L' ` the sample covariance (divisor n − 1).
fn whiten(x: &mut [f64], n: usize, width: usize) -> Result<(), String> {
    let mut mean = vec![0.0; width];
    for row in x.chunks(width) {
        mean.iter_mut()
            .zip(row)
            .for_each(|(m, v)| *m += v / n as f64);
    }
    for row in x.chunks_mut(width) {
        row.iter_mut().zip(&mean).for_each(|(v, m)| *v -= m);
    }
    let mut l = vec![0.0; width * width];
    for row in x.chunks(width) {
        for a in 0..width {
            for b in 0..=a {
                l[a * width + b] += row[a] * row[b] / (n - 1) as f64;
            }
        }
    }
    for a in 0..width {
        for b in 0..=a {
            let s = l[a * width + b]
                - (0..b)
                    .map(|c| l[a * width + c] * l[b * width + c])
                    .sum::<f64>();
            if a == b {
                if s <= 0.0 {
                    return Err("--whiten: the covariance is singular".into());
                }
                l[a * width + a] = s.sqrt();
            } else {
                l[a * width + b] = s / l[b * width + b];
            }
        }
    }
    for row in x.chunks_mut(width) {
        for a in 0..width {
            let s = row[a] - (0..a).map(|c| l[a * width + c] * row[c]).sum::<f64>();
            row[a] = s / l[a * width + a];
        }
    }
    Ok(())
}

fn main() -> Result<(), String> {
    let args = Args::from_env();
    let number = |name: &str, default: usize| args.number(name, Some(default));
    let k = number("--k", 40)?;
    let reps = number("--reps", 200)?;
    let seed = number("--seed", 1)? as u64;
    let (mut x, width) = match args.get("--data") {
        Some(path) => read_csv(&path)?,
        None => (clustered(2000, 10, 10, 5), 10),
    };
    let n = x.len() / width;
    if args.flag("--whiten") {
        whiten(&mut x, n, width)?;
    }
    let run = || kmeans(&x, n, width, k, &mut occam_core::Rng::seed_from_u64(seed));
    let checksum: usize = run().iter().enumerate().map(|(i, l)| i * l).sum();
    let pools: Vec<(usize, rayon::ThreadPool)> = [1, 2]
        .into_iter()
        .map(|t| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build();
            pool.map(|p| (t, p)).map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    let mut wall = vec![Vec::with_capacity(reps); pools.len()];
    let mut cpu = vec![0.0; pools.len()];
    // Rounds of ten calls per pool, alternating, so that the machine's load falls on both alike.
    for _ in 0..reps.div_ceil(10) {
        for (p, (_, pool)) in pools.iter().enumerate() {
            let c0 = cpu_seconds().unwrap_or(f64::NAN);
            for _ in 0..10 {
                let t0 = Instant::now();
                std::hint::black_box(pool.install(run));
                wall[p].push(t0.elapsed().as_secs_f64());
            }
            cpu[p] += cpu_seconds().unwrap_or(f64::NAN) - c0;
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    for (p, (threads, _)) in pools.iter().enumerate() {
        let w = &mut wall[p];
        w.sort_by(f64::total_cmp);
        println!(
            "{{\"n\": {n}, \"width\": {width}, \"k\": {k}, \"threads\": {threads}, \"calls\": {}, \
             \"min_ms\": {:.4}, \"median_ms\": {:.4}, \"cpu_ms_per_call\": {:.4}, \
             \"checksum\": {checksum}, \"load\": \"{}\"}}",
            w.len(),
            1e3 * w[0],
            1e3 * w[w.len() / 2],
            1e3 * cpu[p] / w.len() as f64,
            load.trim()
        );
    }
    Ok(())
}
