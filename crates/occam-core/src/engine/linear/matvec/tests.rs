//! `W @ x` with a multivariate Gaussian child against the element-by-element path
//! (`Graph::compile_generic`): every stochastic node's φ, moments and bound term after every update.

use crate::engine::linear::tests::assert_same;
use crate::prelude::*;
use rand::{Rng as _, SeedableRng};

/// y's noise precision.
#[derive(Clone, Copy, Debug)]
enum Noise {
    /// Λ ~ Wishart(D + 2, R) with a full constant rate R.
    Wishart,
    /// A full constant precision.
    Constant,
}

/// An offset μ in y's mean, shared by every n.
#[derive(Clone, Copy, Debug)]
enum Offset {
    /// y's mean is W x_n.
    None,
    /// μ ~ GaussianARD over D (or MvGaussian with a full precision when `full`).
    Latent { full: bool },
    /// A constant vector.
    Constant,
}

/// y[N] ~ MvGaussian(W @ x[N], Λ) with W[D] over Q (ARD columns or a full-covariance prior), x[N]
/// latent (standard normal) or observed covariates, a fraction of the y_n missing.
fn factor_analysis(seed: u64, noise: Noise, ard: bool, observed_x: bool, missing: f64) -> Graph {
    factor_analysis_with(seed, noise, ard, observed_x, missing, Offset::None)
}

/// [`factor_analysis`] with y's mean W @ x[N] + μ (`offset`).
fn factor_analysis_with(
    seed: u64,
    noise: Noise,
    ard: bool,
    observed_x: bool,
    missing: f64,
    offset: Offset,
) -> Graph {
    let mut rng = crate::Rng::seed_from_u64(seed);
    let (d, q, n) = (4, 2, 9);
    let mut g = Graph::new();
    let (dp, np, qp) = (g.plate("D", d), g.plate("N", n), g.plate("Q", q));
    let w = if ard {
        let alpha = g
            .add("alpha", Gamma { shape: 1.5 }, &[qp], [c(0.7)])
            .unwrap();
        g.add("W", GaussianArd { d: q }, &[dp], [c(0.0), p(alpha)])
            .unwrap()
    } else {
        let prec = vec![0.8, 0.3, 0.3, 1.2];
        g.add(
            "W",
            MvGaussian { d: q },
            &[dp],
            [cv(vec![0.1, -0.2]), cv(prec)],
        )
        .unwrap()
    };
    let x = if observed_x {
        let xs: Vec<f64> = (0..n * q)
            .map(|_| 2.0 * rng.random::<f64>() - 1.0)
            .collect();
        g.constant("x", MomentKind::Gaussian { d: q }, &[np], &xs)
            .unwrap()
    } else {
        g.add("x", GaussianArd { d: q }, &[np], [c(0.0), c(1.0)])
            .unwrap()
    };
    let f = g
        .deterministic("F", MatVec { rows: d, cols: q }, &[np], [p(w), p(x)])
        .unwrap();
    let mu = match offset {
        Offset::None => None,
        Offset::Latent { full: false } => Some(p(g
            .add("mu", GaussianArd { d }, &[], [c(0.2), c(0.5)])
            .unwrap())),
        Offset::Latent { full: true } => {
            let prec: Vec<f64> = (0..d * d)
                .map(|ij| if ij / d == ij % d { 0.9 } else { 0.2 })
                .collect();
            let mean: Vec<f64> = (0..d).map(|i| 0.3 - 0.2 * i as f64).collect();
            Some(p(g
                .add("mu", MvGaussian { d }, &[], [cv(mean), cv(prec)])
                .unwrap()))
        }
        Offset::Constant => Some(cv((0..d).map(|i| 0.5 * i as f64 - 0.7).collect())),
    };
    let f = match mu {
        None => f,
        Some(mu) => g
            .deterministic("M", Sum { n: 2, d }, &[np], [p(f), mu])
            .unwrap(),
    };
    // A full, well-conditioned symmetric matrix: 1.5 on the diagonal, ±0.3 off it.
    let full: Vec<f64> = (0..d * d)
        .map(|ij| {
            let (i, j) = (ij / d, ij % d);
            if i == j {
                1.5
            } else if (i + j) % 2 == 0 {
                0.3
            } else {
                -0.3
            }
        })
        .collect();
    let lam = match noise {
        Noise::Constant => cv(full),
        Noise::Wishart => p(g
            .add(
                "Lambda",
                Wishart {
                    d,
                    dof: d as f64 + 2.0,
                },
                &[],
                [cv(full)],
            )
            .unwrap()),
    };
    let y = g.add("y", MvGaussian { d }, &[np], [p(f), lam]).unwrap();
    let values: Vec<f64> = (0..n * d)
        .map(|_| 4.0 * rng.random::<f64>() - 2.0)
        .collect();
    let mask: Vec<bool> = (0..n).map(|_| rng.random::<f64>() >= missing).collect();
    g.observe_masked(y, &values, Some(&mask)).unwrap();
    if !observed_x {
        g.initialize(x, Init::Random);
    }
    g
}

/// The matrix-product path gives the element-by-element path's φ, moments and bound terms, sweep
/// after sweep: Wishart or constant noise, ARD or full-covariance rows, latent or observed x, with
/// and without missing y_n. With complete data x keeps one covariance for all its elements, and F
/// keeps no moments; the bound never decreases.
#[test]
fn matvec_kernel_equals_the_generic_path() {
    let mut seed = 0;
    for noise in [Noise::Wishart, Noise::Constant] {
        for ard in [true, false] {
            for observed_x in [false, true] {
                for missing in [0.0, 0.3] {
                    seed += 1;
                    let build = || factor_analysis(seed, noise, ard, observed_x, missing);
                    let fast = assert_same(build(), build(), false);
                    let (f, x) = (fast.node("F").unwrap(), fast.node("x").unwrap());
                    assert!(fast.moments(f).is_empty(), "F keeps no moments");
                    let shared = crate::engine::linear::shared::is_shared(&fast.nodes[x.index()]);
                    assert_eq!(shared, !observed_x && missing == 0.0, "{noise:?} {missing}");
                    let mut vmp = build().compile().unwrap();
                    vmp.initialize(5).unwrap();
                    let order = vmp.default_order();
                    let mut last = vmp.bound();
                    for _ in 0..20 {
                        for &id in &order {
                            vmp.update(id).unwrap();
                            let now = vmp.bound();
                            assert!(
                                now >= last - 1e-9 * last.abs(),
                                "{seed} {:?}: {last} → {now}",
                                fast.names()[id.index()]
                            );
                            last = now;
                        }
                    }
                }
            }
        }
    }
}

/// With an offset, y_n ~ N(W x_n + μ, Λ⁻¹): latent μ (ARD or a full precision) or a constant, Wishart
/// or constant noise, latent or observed x, with and without missing y_n — every node's φ, moments
/// and bound term equal the element-by-element path's after every update; the bound never
/// decreases.
#[test]
fn matvec_kernel_with_an_offset_equals_the_generic_path() {
    let mut seed = 100;
    let offsets = [
        Offset::Latent { full: false },
        Offset::Latent { full: true },
        Offset::Constant,
    ];
    for offset in offsets {
        for noise in [Noise::Wishart, Noise::Constant] {
            for (observed_x, missing) in [(false, 0.0), (false, 0.3), (true, 0.3)] {
                seed += 1;
                let build = || factor_analysis_with(seed, noise, true, observed_x, missing, offset);
                let fast = assert_same(build(), build(), false);
                let f = fast.node("F").unwrap();
                assert!(fast.moments(f).is_empty(), "F keeps no moments");
                assert!(
                    fast.moments(fast.node("M").unwrap()).is_empty(),
                    "nor the sum"
                );
                let mut vmp = build().compile().unwrap();
                vmp.initialize(5).unwrap();
                let order = vmp.default_order();
                let mut last = vmp.bound();
                for _ in 0..20 {
                    for &id in &order {
                        vmp.update(id).unwrap();
                        let now = vmp.bound();
                        assert!(
                            now >= last - 1e-9 * last.abs(),
                            "{seed} {offset:?}: {last} → {now}"
                        );
                        last = now;
                    }
                }
            }
        }
    }
}
