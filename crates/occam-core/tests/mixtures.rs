//! Mixture behaviour of Winn §1.8.7 and §2.4: surplus components are switched off.

use occam_core::models::GaussianMixture;
use occam_core::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

/// 500 points from 9 equal-weight clusters on a 3×3 grid (spacing 4, unit variance).
fn grid_data(seed: u64) -> Vec<f64> {
    let mut rng = occam_core::Rng::seed_from_u64(seed);
    let noise = Normal::new(0.0, 0.5).unwrap();
    (0..500)
        .flat_map(|i| {
            let c = i % 9;
            let (cx, cy) = ((c % 3) as f64 * 4.0 - 4.0, (c / 3) as f64 * 4.0 - 4.0);
            [cx + noise.sample(&mut rng), cy + noise.sample(&mut rng)]
        })
        .collect()
}

fn retained(vmp: &Vmp, z: NodeId, k: usize) -> usize {
    (0..k)
        .filter(|&j| vmp.moments(z).chunks(k).map(|r| r[j]).sum::<f64>() > 1.0)
        .count()
}

/// The VIBES tutorial mixture (Winn §2.4): K = 20 diagonal Gaussians keep the 9 real clusters.
#[test]
fn twenty_components_on_nine_clusters_keep_nine() {
    let x = grid_data(3);
    let k = 20;
    let mut g = Graph::new();
    let n = g.plate("N", 500);
    let d = g.plate("D", 2);
    let kp = g.plate("K", k);
    let pi = g
        .add(
            "pi",
            Dirichlet {
                concentration: vec![1.0; k],
            },
            &[],
            [],
        )
        .unwrap();
    let mu = g.add("mu", Gaussian, &[kp, d], [c(0.0), c(0.01)]).unwrap();
    let gamma = g
        .add("gamma", Gamma { shape: 1e-3 }, &[kp, d], [c(1e-3)])
        .unwrap();
    let lambda = g.add("lambda", Categorical { k }, &[n], [p(pi)]).unwrap();
    let xn = g
        .add_mixture("x", Gaussian, &[n, d], &[(lambda, kp)], [p(mu), p(gamma)])
        .unwrap();
    g.observe(xn, &x).unwrap();
    let mut vmp = g.compile().unwrap();
    let opts = RunOptions {
        max_iter: 500,
        tol: 1e-8,
        seed: 1,
        decrease_is_error: true,
        prune_components: true,
        ..Default::default()
    };
    let fit = vmp
        .run(&RunOptions {
            restarts: 2,
            ..opts
        })
        .unwrap();
    assert_eq!(retained(&vmp, lambda, k), 9, "bound {}", fit.bound);
}

/// Same seed, same result, whatever the number of threads (fixed chunking, ordered reductions).
#[test]
fn results_do_not_depend_on_the_thread_count() {
    let fit_with = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let x: Vec<f64> = (0..6).flat_map(|_| grid_data(5)).collect();
            let (k, d) = (6, 2);
            let mut g = Graph::new();
            let gmm = GaussianMixture {
                k,
                weight_concentration: 1.0,
                mean_precision: 0.01,
                wishart_dof: None,
                wishart_scale: 1.0,
            };
            let mu = gmm.add(&mut g, &x, d).unwrap().mu;
            let mut vmp = g.compile().unwrap();
            let fit = vmp
                .run(&RunOptions {
                    max_iter: 30,
                    tol: 0.0,
                    seed: 4,
                    ..Default::default()
                })
                .unwrap();
            (fit.bound_trace, vmp.moments(mu).to_vec())
        })
    };
    let one = fit_with(1);
    assert!(one.0.len() == 30);
    assert_eq!(one, fit_with(2));
    assert_eq!(one, fit_with(3));
}
