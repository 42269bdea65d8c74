//! Factor analysis with a Wishart noise precision, y_n ~ N(W x_n, Λ⁻¹), or with `--offset` the model
//! of examples/models/factor_analysis.occam, y_n ~ N(W x_n + μ, Λ⁻¹) with μ over D ~ GaussianARD:
//! the matrix-product kernel (`engine/linear/matvec.rs`) against the element-by-element path on the
//! same data, in the same process, timed per full VMP iteration (sweep + bound); one JSON line per
//! path.
//!
//! Usage: bench_fa [--n N] [--d D] [--q Q] [--iters I] [--offset]

mod common;

use common::Args;
use occam_core::prelude::*;
use rand::{Rng as _, SeedableRng};
use std::time::Instant;

fn build(n: usize, d: usize, q: usize, offset: bool) -> Graph {
    let mut rng = occam_core::Rng::seed_from_u64(7);
    let mut g = Graph::new();
    let (dp, np, qp) = (g.plate("D", d), g.plate("N", n), g.plate("Q", q));
    let alpha = g
        .add("alpha", Gamma { shape: 1e-3 }, &[qp], [c(1e-3)])
        .expect("alpha");
    let w = g
        .add("W", GaussianArd { d: q }, &[dp], [c(0.0), p(alpha)])
        .expect("W");
    let x = g
        .add("x", GaussianArd { d: q }, &[np], [c(0.0), c(1.0)])
        .expect("x");
    let f = g
        .deterministic("F", MatVec { rows: d, cols: q }, &[np], [p(w), p(x)])
        .expect("F");
    let f = if offset {
        let mu = g
            .add("mu", GaussianArd { d }, &[], [c(0.0), c(1e-3)])
            .expect("mu");
        g.deterministic("M", Sum { n: 2, d }, &[np], [p(f), p(mu)])
            .expect("M")
    } else {
        f
    };
    let mut rate = vec![0.0; d * d];
    (0..d).for_each(|i| rate[i * d + i] = 1e-3);
    let lam = g
        .add(
            "Lambda",
            Wishart {
                d,
                dof: d as f64 + 1.0,
            },
            &[],
            [cv(rate)],
        )
        .expect("Lambda");
    let y = g
        .add("y", MvGaussian { d }, &[np], [p(f), p(lam)])
        .expect("y");
    // y = W₀ z + correlated noise, with 3 true factors (+ a mean per dimension with `offset`).
    let w0: Vec<f64> = (0..d * 3)
        .map(|_| rng.random::<f64>() * 2.0 - 1.0)
        .collect();
    let mu0: Vec<f64> = (0..d)
        .map(|i| if offset { 0.5 * i as f64 - 2.0 } else { 0.0 })
        .collect();
    let mut values = Vec::with_capacity(n * d);
    for _ in 0..n {
        let z: Vec<f64> = (0..3).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
        let common = rng.random::<f64>() - 0.5;
        for i in 0..d {
            let mean: f64 = (0..3).map(|k| w0[i * 3 + k] * z[k]).sum();
            values.push(mu0[i] + mean + 0.3 * common + 0.2 * (rng.random::<f64>() - 0.5));
        }
    }
    g.observe(y, &values).expect("data");
    g.initialize(x, Init::Random);
    g
}

fn main() -> Result<(), String> {
    let args = Args::from_env();
    let arg = |name: &str, default: usize| args.number(name, Some(default));
    let (n, d, q, iters) = (
        arg("--n", 2000)?,
        arg("--d", 20)?,
        arg("--q", 5)?,
        arg("--iters", 5)?,
    );
    let offset = args.flag("--offset");
    for generic in [false, true] {
        let g = build(n, d, q, offset);
        let mut vmp = if generic {
            g.compile_generic()
        } else {
            g.compile()
        }
        .map_err(|e| e.to_string())?;
        let warm = RunOptions {
            max_iter: 1,
            tol: 0.0,
            ..Default::default()
        };
        vmp.run(&warm).map_err(|e| e.to_string())?;
        let start = Instant::now();
        let fit = vmp
            .run(&RunOptions {
                max_iter: iters,
                tol: 0.0,
                ..Default::default()
            })
            .map_err(|e| e.to_string())?;
        let ms = start.elapsed().as_secs_f64() * 1e3 / fit.iterations as f64;
        let path = if generic { "generic" } else { "kernel" };
        println!(
            "{{\"path\": \"{path}\", \"offset\": {offset}, \"n\": {n}, \"d\": {d}, \"q\": {q}, \"ms_per_iter\": {ms:.4}, \"bound\": {}}}",
            fit.bound
        );
    }
    Ok(())
}
