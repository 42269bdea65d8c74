//! The linear-Gaussian kernel against the element-by-element path (`Graph::compile_generic`): every
//! stochastic node's φ and moments and every bound term, after every update.

use crate::prelude::*;
use rand::{Rng as _, SeedableRng};

/// Where y's precision lives.
#[derive(Clone, Copy, Debug)]
enum Prec {
    Shared,
    Constant,
    /// One Gamma per element of the first factor's plate.
    PerRow,
    /// One Gamma per element of the second factor's plate.
    PerColumn,
}

/// y[D, N] (or y[N, D]) ~ N(dot(W[D], X[N]), τ⁻¹): W with ARD columns, X standard normal, a
/// fraction of y missing; with `const_w`, y[N] ~ N(dot(c, X[N]), τ⁻¹) for a constant c.
fn pca(seed: u64, prec: Prec, swap: bool, missing: f64, const_w: bool) -> Graph {
    let mut rng = crate::Rng::seed_from_u64(seed);
    let (d, n, q) = (5, 7, 3);
    let mut g = Graph::new();
    let (dp, np, qp) = (g.plate("D", d), g.plate("N", n), g.plate("Q", q));
    let alpha = g
        .add("alpha", Gamma { shape: 1.5 }, &[qp], [c(0.7)])
        .unwrap();
    let w = if const_w {
        None
    } else {
        Some(
            g.add("W", GaussianArd { d: q }, &[dp], [c(0.0), p(alpha)])
                .unwrap(),
        )
    };
    let x = g
        .add("X", GaussianArd { d: q }, &[np], [c(0.0), c(1.0)])
        .unwrap();
    let plates: Vec<PlateId> = match (const_w, swap) {
        (true, _) => vec![np],
        (false, true) => vec![np, dp],
        (false, false) => vec![dp, np],
    };
    let left = w.map_or(cv(vec![0.5, -1.0, 2.0]), p);
    let f = g
        .deterministic("F", Dot { d: q }, &plates, [left, p(x)])
        .unwrap();
    let tau = match prec {
        Prec::Constant => c(2.5),
        Prec::Shared => p(g.add("tau", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap()),
        Prec::PerRow => p(g.add("tau", Gamma { shape: 2.0 }, &[dp], [c(1.0)]).unwrap()),
        Prec::PerColumn => p(g.add("tau", Gamma { shape: 2.0 }, &[np], [c(1.0)]).unwrap()),
    };
    let y = g.add("y", Gaussian, &plates, [p(f), tau]).unwrap();
    let size = if const_w { n } else { d * n };
    let values: Vec<f64> = (0..size).map(|_| 4.0 * rng.random::<f64>() - 2.0).collect();
    let mask: Vec<bool> = (0..size).map(|_| rng.random::<f64>() >= missing).collect();
    g.observe_masked(y, &values, Some(&mask)).unwrap();
    g.initialize(x, Init::Random);
    g
}

/// y[G, M] ~ N(dot(X[G, M], B), τ⁻¹) with observed covariates X: B full-covariance or ARD, τ
/// shared or one per group G.
fn regression(seed: u64, ard: bool, grouped: bool, missing: f64) -> Graph {
    let mut rng = crate::Rng::seed_from_u64(seed);
    let (groups, per, q) = (3, 6, 4);
    let mut g = Graph::new();
    let (gp, mp, qp) = (g.plate("G", groups), g.plate("M", per), g.plate("Q", q));
    let xs: Vec<f64> = (0..groups * per * q)
        .map(|_| 2.0 * rng.random::<f64>() - 1.0)
        .collect();
    let x = g
        .constant("X", MomentKind::Gaussian { d: q }, &[gp, mp], &xs)
        .unwrap();
    let b = if ard {
        let alpha = g
            .add("alpha", Gamma { shape: 1.0 }, &[qp], [c(1.0)])
            .unwrap();
        g.add("B", GaussianArd { d: q }, &[], [c(0.0), p(alpha)])
            .unwrap()
    } else {
        let mut prec = vec![0.0; q * q];
        (0..q).for_each(|i| prec[i * q + i] = 0.5);
        g.add("B", MvGaussian { d: q }, &[], [cv(vec![0.0; q]), cv(prec)])
            .unwrap()
    };
    let f = g
        .deterministic("F", Dot { d: q }, &[gp, mp], [p(x), p(b)])
        .unwrap();
    let tau_plates: &[PlateId] = if grouped { &[gp] } else { &[] };
    let tau = g
        .add("tau", Gamma { shape: 2.0 }, tau_plates, [c(1.0)])
        .unwrap();
    let y = g.add("y", Gaussian, &[gp, mp], [p(f), p(tau)]).unwrap();
    let values: Vec<f64> = (0..groups * per)
        .map(|_| 3.0 * rng.random::<f64>() - 1.5)
        .collect();
    let mask: Vec<bool> = (0..groups * per)
        .map(|_| rng.random::<f64>() >= missing)
        .collect();
    g.observe_masked(y, &values, Some(&mask)).unwrap();
    g
}

/// Several outputs: y[G, M, D] ~ N(dot(X[G, M], B[D]), τ⁻¹) with observed X, B[D] with ARD, τ
/// shared (`tau` 0), per output D (1) or per group G of rows (2).
fn multi_output(seed: u64, tau: usize, missing: f64) -> Graph {
    let mut rng = crate::Rng::seed_from_u64(seed);
    let (groups, per, outputs, q) = (2, 9, 3, 2);
    let mut g = Graph::new();
    let (gp, mp, dp, qp) = (
        g.plate("G", groups),
        g.plate("M", per),
        g.plate("D", outputs),
        g.plate("Q", q),
    );
    let n = groups * per;
    let xs: Vec<f64> = (0..n * q)
        .map(|_| 2.0 * rng.random::<f64>() - 1.0)
        .collect();
    let x = g
        .constant("X", MomentKind::Gaussian { d: q }, &[gp, mp], &xs)
        .unwrap();
    let alpha = g
        .add("alpha", Gamma { shape: 1.0 }, &[qp], [c(1.0)])
        .unwrap();
    let b = g
        .add("B", GaussianArd { d: q }, &[dp], [c(0.0), p(alpha)])
        .unwrap();
    let f = g
        .deterministic("F", Dot { d: q }, &[gp, mp, dp], [p(x), p(b)])
        .unwrap();
    let tau_plates: &[PlateId] = match tau {
        0 => &[],
        1 => &[dp],
        _ => &[gp],
    };
    let t = g
        .add("tau", Gamma { shape: 2.0 }, tau_plates, [c(1.0)])
        .unwrap();
    let y = g.add("y", Gaussian, &[gp, mp, dp], [p(f), p(t)]).unwrap();
    let values: Vec<f64> = (0..n * outputs)
        .map(|_| 3.0 * rng.random::<f64>() - 1.5)
        .collect();
    let mask: Vec<bool> = (0..n * outputs)
        .map(|_| rng.random::<f64>() >= missing)
        .collect();
    g.observe_masked(y, &values, Some(&mask)).unwrap();
    g
}

/// Observed covariates for several outputs: Σ_i m_ij x_i x_iᵀ and Σ_i m_ij y_ij x_i per output
/// (and precision group) replace the per-element products.
#[test]
fn multi_output_kernel_equals_the_generic_path() {
    for tau in 0..3 {
        for missing in [0.0, 0.3] {
            let build = || multi_output(7 + tau as u64, tau, missing);
            assert_same(build(), build(), true);
        }
    }
}

/// Sweeps both compilations in the same order and compares every stochastic node's φ and
/// moments and every bound term after every update.
fn assert_same(fast: Graph, generic: Graph, points: bool) {
    let mut fast = fast.compile().unwrap();
    let mut generic = generic.compile_generic().unwrap();
    let f = fast.node("F").unwrap().index();
    let lin = fast.linear[f]
        .clone()
        .expect("F should take the linear kernel");
    assert_eq!(lin.points, points);
    assert!(generic.linear.iter().all(Option::is_none));
    fast.initialize(3).unwrap();
    generic.initialize(3).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * (1.0 + b.abs());
    let order = fast.default_order();
    for sweep in 0..12 {
        for &id in &order {
            fast.update(id).unwrap();
            generic.update(id).unwrap();
            for (i, (a, b)) in fast.nodes.iter().zip(&generic.nodes).enumerate() {
                if !matches!(a.body, super::Body::Stochastic(_)) {
                    continue;
                }
                for (u, v) in a.u.iter().zip(&b.u).chain(a.phi.iter().zip(&b.phi)) {
                    assert!(
                        close(*u, *v),
                        "sweep {sweep}, node {i} {}: {u} vs {v}",
                        a.name
                    );
                }
            }
            let (fb, gb) = (fast.node_bounds(), generic.node_bounds());
            for (name, (a, b)) in fast.names().iter().zip(fb.into_iter().zip(gb)) {
                assert!(
                    close(a, b),
                    "sweep {sweep}, bound term of {name}: {a} vs {b}"
                );
            }
        }
    }
    assert!((fast.bound() - fast.fresh_bound()).abs() <= 1e-10 * (1.0 + fast.bound().abs()));
}

/// The kernel gives the element-by-element path's φ, moments and bound terms, sweep after
/// sweep, over crossed plates in both orders, every placement of the precision, missing entries
/// and a constant factor.
#[test]
fn linear_kernel_equals_the_generic_path() {
    let precs = [Prec::Shared, Prec::Constant, Prec::PerRow, Prec::PerColumn];
    for (case, &prec) in precs.iter().enumerate() {
        for swap in [false, true] {
            for missing in [0.0, 0.3] {
                let seed = 10 * case as u64 + swap as u64 + (missing > 0.0) as u64 * 5;
                let build = || pca(seed, prec, swap, missing, false);
                assert_same(build(), build(), false);
            }
        }
        if !matches!(prec, Prec::PerRow) {
            // dot(c, X[N]) with a constant c.
            let build = || pca(case as u64, prec, false, 0.2, true);
            assert_same(build(), build(), false);
        }
    }
}

/// Observed covariates: only XᵀMX and Xᵀ(M∘y) per precision element are used, and X keeps no
/// outer products.
#[test]
fn regression_kernel_equals_the_generic_path() {
    for (seed, ard, grouped, missing) in [
        (1, false, false, 0.0),
        (2, true, false, 0.25),
        (3, false, true, 0.25),
        (4, true, true, 0.0),
    ] {
        let build = || regression(seed, ard, grouped, missing);
        assert_same(build(), build(), true);
        let vmp = build().compile().unwrap();
        let x = vmp.node("X").unwrap();
        assert!(vmp.nodes[x.index()].u.is_empty(), "X keeps its values only");
        assert_eq!(vmp.mean(x).unwrap().len(), 3 * 6 * 4);
        // Its moments are still available on request, equal to the generic path's.
        let generic = build().compile_generic().unwrap();
        assert_eq!(vmp.moments(x), generic.moments(x));
    }
}
