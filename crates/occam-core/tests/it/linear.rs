//! The linear-Gaussian kernels (regression with observed covariates, PCA over crossed plates) give
//! the same bits for any number of threads: their sums run over fixed chunks added in order. With
//! restarts, a latent X kept with one shared covariance is restored from its snapshot exactly.

use occam_core::models::{LinearRegression, Pca};
use occam_core::prelude::*;
use rand::{Rng as _, SeedableRng};

fn uniform(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = occam_core::Rng::seed_from_u64(seed);
    (0..len).map(|_| 2.0 * rng.random::<f64>() - 1.0).collect()
}

/// Bound trace and final moments of every stochastic node, on a pool of `threads` threads.
fn fit_with(threads: usize, build: &(dyn Fn() -> (Graph, Vec<NodeId>) + Sync)) -> Vec<Vec<f64>> {
    occam_core::threads::on_threads(threads, || {
        let (g, nodes) = build();
        let mut vmp = g.compile().unwrap();
        let fit = vmp
            .run(&RunOptions {
                max_iter: 8,
                tol: 0.0,
                seed: 5,
                ..Default::default()
            })
            .unwrap();
        let mut out = vec![fit.bound_trace];
        out.extend(nodes.iter().map(|&n| vmp.moments(n).to_vec()));
        out
    })
    .unwrap()
}

#[test]
fn linear_kernels_do_not_depend_on_the_thread_count() {
    // Regression over 5,000 rows (three chunks) with missing observations.
    let regression = || {
        let (n, c) = (5_000, 6);
        let x = uniform(n * c, 1);
        let y: Vec<f64> = uniform(n, 2)
            .iter()
            .enumerate()
            .map(|(i, e)| x[i * c] - 2.0 * x[i * c + 1] + 0.3 * e)
            .collect();
        let mask: Vec<bool> = (0..n).map(|i| i % 13 != 4).collect();
        let mut g = Graph::new();
        let m = LinearRegression::new()
            .add(&mut g, &x[..], c, &y, Some(&mask))
            .unwrap();
        (g, vec![m.b, m.tau])
    };
    // PCA with 4,500 columns, missing entries: the reductions over columns span three chunks.
    let pca = || {
        let (d, n) = (4, 4_500);
        let y = uniform(d * n, 3);
        let mask: Vec<bool> = (0..d * n).map(|i| i % 7 != 2).collect();
        let mut g = Graph::new();
        let m = Pca::new(3).add(&mut g, &y, d, Some(&mask)).unwrap();
        g.initialize(m.x, Init::Random);
        (g, vec![m.w, m.x, m.alpha, m.tau])
    };
    // PCA on complete data: X keeps one covariance (GEMMs over 4,500 rows of means).
    let pca_complete = || {
        let (d, n) = (4, 4_500);
        let y = uniform(d * n, 4);
        let mut g = Graph::new();
        let m = Pca::new(3).add(&mut g, &y, d, None).unwrap();
        g.initialize(m.x, Init::Random);
        (g, vec![m.w, m.x, m.alpha, m.tau])
    };
    for build in [
        &regression as &(dyn Fn() -> (Graph, Vec<NodeId>) + Sync),
        &pca,
        &pca_complete,
    ] {
        let one = fit_with(1, build);
        assert_eq!(one[0].len(), 8);
        assert!(one[0].windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
        assert_eq!(one, fit_with(2, build));
        assert_eq!(one, fit_with(3, build));
    }
}

/// Restarts keep the best run's state: PCA on complete data (X in the shared form) gives the same
/// bound and moments as the element-by-element path with the same seeds, restarts and order.
#[test]
fn restarts_restore_the_shared_form() {
    let (d, n) = (5, 40);
    let y = uniform(d * n, 6);
    let fit = |generic: bool| {
        let mut g = Graph::new();
        let m = Pca::new(3).add(&mut g, &y, d, None).unwrap();
        g.initialize(m.x, Init::Random);
        let mut vmp = if generic {
            g.compile_generic()
        } else {
            g.compile()
        }
        .unwrap();
        let fit = vmp
            .run(&RunOptions {
                max_iter: 30,
                tol: 0.0,
                seed: 9,
                restarts: 3,
                order: Some(vec![m.w, m.x, m.alpha, m.tau]),
                ..Default::default()
            })
            .unwrap();
        let moments: Vec<Vec<f64>> = [m.w, m.x, m.alpha, m.tau]
            .iter()
            .map(|&id| vmp.moments(id).to_vec())
            .collect();
        (fit.bound, vmp.bound(), moments)
    };
    let (fast, generic) = (fit(false), fit(true));
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + b.abs());
    assert!(close(fast.0, generic.0), "{} vs {}", fast.0, generic.0);
    assert!(
        close(fast.1, fast.0),
        "restored bound {} vs {}",
        fast.1,
        fast.0
    );
    for (a, b) in fast.2.iter().zip(&generic.2) {
        assert_eq!(a.len(), b.len());
        assert!(a.iter().zip(b).all(|(x, y)| close(*x, *y)));
    }
}
