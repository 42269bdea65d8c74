//! Mixture behaviour of Winn §1.8.7 and §2.4: surplus components are switched off.

use occam_core::models::GaussianMixture;
use occam_core::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

/// 500 points from 9 equal-weight clusters on a 3×3 grid (spacing 4, unit variance).
pub(crate) fn grid_data(seed: u64) -> Vec<f64> {
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

/// The VIBES tutorial mixture (Winn §2.4) of `k` diagonal Gaussians on the 500 points `x` of
/// [`grid_data`]: the compiled model and its index λ.
pub(crate) fn tutorial_mixture(x: &[f64], k: usize) -> (Vmp, NodeId) {
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
    g.observe(xn, x).unwrap();
    (g.compile().unwrap(), lambda)
}

/// The VIBES tutorial mixture (Winn §2.4): K = 20 diagonal Gaussians keep the 9 real clusters.
#[test]
fn twenty_components_on_nine_clusters_keep_nine() {
    let x = grid_data(3);
    let k = 20;
    let (mut vmp, lambda) = tutorial_mixture(&x, k);
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

/// Same seed, same result, whatever the number of threads (fixed chunking, ordered reductions),
/// and whether the run is started inside a pool or from outside one (then each parallel loop is
/// handed to the global pool). The 3000 points make z's loops span two chunks.
#[test]
fn results_do_not_depend_on_the_thread_count() {
    let fit = || {
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
    };
    let fit_with = |threads: usize| occam_core::threads::on_threads(threads, fit).unwrap();
    let one = fit_with(1);
    assert!(one.0.len() == 30);
    assert_eq!(one, fit_with(2));
    assert_eq!(one, fit_with(3));
    assert_eq!(one, fit());
}

/// A settled first sweep (`RunOptions::settle`): from the k-means start, the weights, means and
/// precisions are updated in rounds until they agree before q(z) is first updated. The fit
/// reaches the same optimum as the plain schedule in fewer sweeps, its bound never decreases
/// (strict mode), and its first bound is at least the plain schedule's first bound (the same
/// updates, plus more coordinate-ascent steps before z). A model without an informative start
/// settles nothing: the same trace bit for bit.
#[test]
fn a_settled_first_sweep_reaches_the_same_optimum_in_fewer_sweeps() {
    let x = grid_data(7);
    let fit = |settle: bool| {
        let mut g = Graph::new();
        let gmm = GaussianMixture {
            k: 9,
            weight_concentration: 1.0 / 9.0,
            mean_precision: 0.01,
            wishart_dof: None,
            wishart_scale: 1.0,
        };
        gmm.add(&mut g, &x, 2).unwrap();
        let mut vmp = g.compile().unwrap();
        let opts = RunOptions {
            tol: 1e-9,
            seed: 2,
            decrease_is_error: true,
            settle,
            ..Default::default()
        };
        vmp.run(&opts).unwrap()
    };
    let (plain, settled) = (fit(false), fit(true));
    assert!(plain.converged && settled.converged);
    let (lp, ls) = (plain.bound, settled.bound);
    assert!((lp - ls).abs() < 1e-6 * lp.abs(), "{lp} vs {ls}");
    assert!(
        settled.bound_trace.len() < plain.bound_trace.len(),
        "settled {:?}, plain {:?}",
        settled.bound_trace,
        plain.bound_trace
    );
    assert!(settled.bound_trace[0] >= plain.bound_trace[0]);

    let uninformed = |settle: bool| {
        let mut g = Graph::new();
        let n = g.plate("N", 4);
        let mu = g.add("mu", Gaussian, &[], [c(0.0), c(1e-3)]).unwrap();
        let tau = g.add("tau", Gamma { shape: 1.0 }, &[], [c(1.0)]).unwrap();
        let y = g.add("y", Gaussian, &[n], [p(mu), p(tau)]).unwrap();
        g.observe(y, &[1.0, 2.5, 0.5, 1.5]).unwrap();
        let mut vmp = g.compile().unwrap();
        vmp.run(&RunOptions {
            max_iter: 12,
            tol: 0.0,
            settle,
            ..Default::default()
        })
        .unwrap()
        .bound_trace
    };
    assert_eq!(uninformed(false), uninformed(true));
}
