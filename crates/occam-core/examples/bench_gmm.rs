//! Occam's side of `bench/peers/compare.sh`: BayesPy's GMM example model (full covariances, Wishart
//! precisions) on a CSV data set, timed per full VMP iteration (sweep + bound), one JSON line out.
//!
//! Usage: bench_gmm --data FILE.csv --k K --iters I [--init LABELS.csv] [--threads T]

mod common;

use common::{cpu_seconds, read_csv, Args};
use occam_core::models::{GaussianMixture, GaussianMixtureNodes};
use occam_core::prelude::*;
use std::time::Instant;

fn main() -> Result<(), String> {
    let args = Args::from_env();
    let data = args.get("--data").ok_or("--data FILE is required")?;
    let k = args.number("--k", None)?;
    let iters = args.number("--iters", Some(50))?;
    args.threads()?;
    let (y, d) = read_csv(&data)?;
    let n = y.len() / d;

    let mut g = Graph::new();
    let GaussianMixtureNodes {
        alpha,
        z,
        mu,
        lambda,
        ..
    } = GaussianMixture::new(k)
        .add(&mut g, &y, d)
        .map_err(|e| e.to_string())?;
    if let Some(init) = args.get("--init") {
        let (labels, _) = read_csv(&init)?;
        let mut r = vec![0.0; n * k];
        labels
            .iter()
            .enumerate()
            .for_each(|(i, &l)| r[i * k + l as usize] = 1.0);
        g.initialize(z, Init::Moments(r));
    }
    let mut vmp = g.compile().map_err(|e| e.to_string())?;
    let order = Some(vec![mu, lambda, z, alpha]);
    let warm = RunOptions {
        max_iter: 1,
        tol: 0.0,
        order: order.clone(),
        ..Default::default()
    };
    vmp.run(&warm).map_err(|e| e.to_string())?;
    let (start, cpu_start) = (Instant::now(), cpu_seconds());
    let fit = vmp
        .run(&RunOptions {
            max_iter: iters,
            // Never "converged": every run does `iters` sweeps, whatever the last bits of the bound.
            tol: -1.0,
            order,
            ..Default::default()
        })
        .map_err(|e| e.to_string())?;
    let ms = start.elapsed().as_secs_f64() * 1e3 / fit.iterations as f64;
    let cpu_ms = cpu_seconds()
        .zip(cpu_start)
        .map_or(f64::NAN, |(b, a)| (b - a) * 1e3 / fit.iterations as f64);
    let components = (0..k)
        .filter(|&j| vmp.moments(z).chunks(k).map(|r| r[j]).sum::<f64>() > 1.0)
        .count();
    println!(
        "{{\"peer\": \"occam\", \"case\": \"{data}\", \"ms_per_iter\": {ms:.4}, \"cpu_ms_per_iter\": {cpu_ms:.4}, \"iterations\": {}, \"bound\": {}, \"components\": {components}}}",
        fit.iterations + 1,
        fit.bound
    );
    Ok(())
}
