//! The VIBES tutorial mixture (Winn §2.4) through the Rust API: 500 points from 9 clusters on a 3×3
//! grid, a 20-component diagonal Gaussian mixture; prints the bound and the retained components.
//!
//! `cargo run --release -p occam-core --example vibes_gmm`

use occam_core::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = occam_core::Rng::seed_from_u64(2004);
    let noise = Normal::new(0.0, 0.5)?;
    let x: Vec<f64> = (0..500)
        .flat_map(|i| {
            let c = i % 9;
            [
                (c % 3) as f64 * 4.0 - 4.0 + noise.sample(&mut rng),
                (c / 3) as f64 * 4.0 - 4.0 + noise.sample(&mut rng),
            ]
        })
        .collect();
    let k = 20;
    let mut g = Graph::new();
    let n = g.plate("N", 500);
    let d = g.plate("D", 2);
    let kp = g.plate("K", k);
    let pi = g.add(
        "pi",
        Dirichlet {
            concentration: vec![1.0; k],
        },
        &[],
        [],
    )?;
    let mu = g.add("mu", Gaussian, &[kp, d], [c(0.0), c(0.01)])?;
    let gamma = g.add("gamma", Gamma { shape: 1e-3 }, &[kp, d], [c(1e-3)])?;
    let lambda = g.add("lambda", Categorical { k }, &[n], [p(pi)])?;
    let xs = g.add_mixture("x", Gaussian, &[n, d], &[(lambda, kp)], [p(mu), p(gamma)])?;
    g.observe(xs, &x)?;
    let mut vmp = g.compile()?;
    let opts = RunOptions {
        tol: 1e-8,
        prune_components: true,
        seed: 1,
        ..Default::default()
    };
    let fit = vmp.run(&RunOptions {
        restarts: 3,
        ..opts
    })?;
    println!(
        "lower bound: {:.3} nats after {} iterations (converged: {}; {} surplus components pruned)",
        fit.bound, fit.iterations, fit.converged, fit.pruned_components
    );
    let weights = vmp.mean(pi).unwrap_or_default();
    let means = vmp.mean(mu).unwrap_or_default();
    println!("component  weight   mean");
    for j in (0..k).filter(|&j| vmp.moments(lambda).chunks(k).map(|r| r[j]).sum::<f64>() > 1.0) {
        println!(
            "{j:>9}  {:.3}   ({:+.2}, {:+.2})",
            weights[j],
            means[2 * j],
            means[2 * j + 1]
        );
    }
    Ok(())
}
