//! The linear-Gaussian kernel against the element-by-element path (`Graph::compile_generic`): every
//! stochastic node's φ and moments and every bound term, after every update.

use super::super::NodeState;
use crate::prelude::*;
use rand::{Rng as _, SeedableRng};

/// Where y's precision lives.
#[derive(Clone, Copy, Debug)]
pub(in crate::engine) enum Prec {
    Shared,
    Constant,
    /// One Gamma per element of the first factor's plate.
    PerRow,
    /// One Gamma per element of the second factor's plate.
    PerColumn,
}

/// y[D, N] (or y[N, D]) ~ N(dot(W[D], X[N]), τ⁻¹): W with ARD columns, X standard normal, a
/// fraction of y missing; with `const_w`, y[N] ~ N(dot(c, X[N]), τ⁻¹) for a constant c.
pub(in crate::engine) fn pca(
    seed: u64,
    prec: Prec,
    swap: bool,
    missing: f64,
    const_w: bool,
) -> Graph {
    pca_with(seed, prec, swap, missing, const_w, false, 7)
}

/// `pca` with `n` columns, and dot(X[N], W[D]) when `x_first` (X then indexes the rows when τ
/// allows).
fn pca_with(
    seed: u64,
    prec: Prec,
    swap: bool,
    missing: f64,
    const_w: bool,
    x_first: bool,
    n: usize,
) -> Graph {
    pca_offsets(seed, prec, swap, missing, const_w, x_first, n, Mean::None)
}

/// What y's mean adds to the dot product.
#[derive(Clone, Copy, Debug)]
enum Mean {
    None,
    /// + μ[D] (BPCA's mean).
    PerRow,
    /// + μ[D] + ν[N] + 0.5 + a shared scalar s.
    All,
}

/// `pca_with` with y's mean dot(W[D], X[N]) plus the terms of `mean`.
#[allow(clippy::too_many_arguments)]
fn pca_offsets(
    seed: u64,
    prec: Prec,
    swap: bool,
    missing: f64,
    const_w: bool,
    x_first: bool,
    n: usize,
    mean: Mean,
) -> Graph {
    let mut rng = crate::Rng::seed_from_u64(seed);
    let (d, q) = (5, 3);
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
    let factors = if x_first { [p(x), left] } else { [left, p(x)] };
    let f = g
        .deterministic("F", Dot { d: q }, &plates, factors)
        .unwrap();
    let tau = match prec {
        Prec::Constant => c(2.5),
        Prec::Shared => p(g.add("tau", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap()),
        Prec::PerRow => p(g.add("tau", Gamma { shape: 2.0 }, &[dp], [c(1.0)]).unwrap()),
        Prec::PerColumn => p(g.add("tau", Gamma { shape: 2.0 }, &[np], [c(1.0)]).unwrap()),
    };
    let f = match mean {
        Mean::None => f,
        Mean::PerRow | Mean::All => {
            let mu_plates: &[PlateId] = if const_w { &[] } else { &[dp] };
            let mu = g.add("mu", Gaussian, mu_plates, [c(0.3), c(0.5)]).unwrap();
            let mut terms = vec![p(f), p(mu)];
            if matches!(mean, Mean::All) {
                let nu = g.add("nu", Gaussian, &[np], [c(0.0), c(2.0)]).unwrap();
                let s = g.add("s", Gaussian, &[], [c(-0.2), c(1.0)]).unwrap();
                terms.extend([p(nu), c(0.5), p(s)]);
            }
            let sum = Sum {
                n: terms.len(),
                d: 1,
            };
            g.deterministic("S", sum, &plates, terms).unwrap()
        }
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

/// Every stochastic node's φ, moments and mean (per element, also for a node in the shared form)
/// and every bound term agree to 1e-10.
pub(super) fn compare(fast: &Vmp, generic: &Vmp, when: &str, bounds: bool) {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * (1.0 + b.abs());
    for (i, b) in generic.nodes.iter().enumerate() {
        if !matches!(b.body, super::Body::Stochastic(_)) {
            continue;
        }
        let (u, phi) = (fast.moments(NodeId(i)), fast.natural(NodeId(i)));
        assert_eq!((u.len(), phi.len()), (b.q.u.len(), b.q.phi.len()));
        for (u, v) in u.iter().zip(&b.q.u).chain(phi.iter().zip(&b.q.phi)) {
            assert!(close(*u, *v), "{when}, node {i} {}: {u} vs {v}", b.name);
        }
        let (fm, gm) = (
            fast.mean(NodeId(i)).unwrap(),
            generic.mean(NodeId(i)).unwrap(),
        );
        assert_eq!(fm.len(), gm.len());
        for (a, b) in fm.iter().zip(&gm) {
            assert!(close(*a, *b), "{when}, mean of node {i}: {a} vs {b}");
        }
    }
    // Bound terms exist only for a consistent q. A drawn start is one (centred on the draw with
    // the prior's spread), so they agree from the initial state on; a start from given moments
    // (a point, say) is not until the node's first update, and the two paths' entropy terms (the
    // generic one from φ, the shared form's from its moments) legitimately differ until then.
    if !bounds {
        return;
    }
    let (fb, gb) = (fast.node_bounds(), generic.node_bounds());
    for (name, (a, b)) in fast.names().iter().zip(fb.into_iter().zip(gb)) {
        assert!(close(a, b), "{when}, bound term of {name}: {a} vs {b}");
    }
}

/// Sweeps both compilations in the same order and compares every stochastic node's φ and
/// moments (per element, also for a node in the shared form) and every bound term after every
/// update; returns the fast one.
pub(super) fn assert_same(fast: Graph, generic: Graph, points: bool) -> Vmp {
    assert_same_from(fast, generic, points, true)
}

/// [`assert_same`]; bound terms are compared from the start only if `consistent` (no node
/// starts from given moments), otherwise from the second sweep on.
fn assert_same_from(fast: Graph, generic: Graph, points: bool, consistent: bool) -> Vmp {
    let mut fast = fast.compile().unwrap();
    let mut generic = generic.compile_generic().unwrap();
    let f = fast.node("F").unwrap().index();
    let lin = fast.linear[f]
        .clone()
        .expect("F should take the linear kernel");
    assert_eq!(lin.points, points);
    assert!(generic.linear.iter().all(Option::is_none));
    assert!(generic.shared.iter().all(Option::is_none));
    fast.initialize(3).unwrap();
    generic.initialize(3).unwrap();
    compare(&fast, &generic, "initial state", consistent);
    let order = fast.default_order();
    for sweep in 0..12 {
        for &id in &order {
            fast.update(id).unwrap();
            generic.update(id).unwrap();
            compare(
                &fast,
                &generic,
                &format!("sweep {sweep}"),
                consistent || sweep > 0,
            );
        }
    }
    assert!((fast.bound() - fast.fresh_bound()).abs() <= 1e-10 * (1.0 + fast.bound().abs()));
    fast
}

/// The kernel gives the element-by-element path's φ, moments and bound terms, sweep after
/// sweep, over crossed plates in both orders, every placement of the precision, missing entries
/// and a constant factor. With complete data and a precision the same for every x_n, X keeps one
/// covariance for all its elements (`shared`): n·q + q² moments instead of n·(q + q²).
#[test]
fn linear_kernel_equals_the_generic_path() {
    let precs = [Prec::Shared, Prec::Constant, Prec::PerRow, Prec::PerColumn];
    for (case, &prec) in precs.iter().enumerate() {
        let uniform = !matches!(prec, Prec::PerColumn);
        for swap in [false, true] {
            for missing in [0.0, 0.3] {
                let seed = 10 * case as u64 + swap as u64 + (missing > 0.0) as u64 * 5;
                let build = || pca(seed, prec, swap, missing, false);
                let fast = assert_same(build(), build(), false);
                let x = &fast.nodes[fast.node("X").unwrap().index()];
                let (n, q) = (7, 3);
                let shared = uniform && missing == 0.0;
                assert_eq!(super::shared::is_shared(x), shared, "{prec:?} {missing}");
                let stored = if shared {
                    n * q + q * q
                } else {
                    n * (q + q * q)
                };
                assert_eq!((x.q.u.len(), x.q.phi.len()), (stored, stored));
            }
        }
        // dot(X[N], W[D]): X indexes the rows unless τ varies over D.
        for missing in [0.0, 0.3] {
            let build = || pca_with(40 + case as u64, prec, false, missing, false, true, 7);
            let fast = assert_same(build(), build(), false);
            let (x, f) = (fast.node("X").unwrap(), fast.node("F").unwrap());
            let row = fast.linear[f.index()].as_ref().unwrap().row_slot == 0;
            assert_eq!(row, !matches!(prec, Prec::PerRow));
            let shared = missing == 0.0 && !matches!(prec, Prec::PerColumn);
            assert_eq!(
                super::shared::is_shared(&fast.nodes[x.index()]),
                shared,
                "{prec:?}"
            );
        }
        if !matches!(prec, Prec::PerRow) {
            // dot(c, X[N]) with a constant c.
            let build = || pca(case as u64, prec, false, 0.2, true);
            assert_same(build(), build(), false);
            let build = || pca(case as u64, prec, false, 0.0, true);
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
        assert!(
            vmp.nodes[x.index()].q.u.is_empty(),
            "X keeps its values only"
        );
        // The data keep no u(y), f(y); a precision without plates is read by the broadcast rule.
        let y = &vmp.nodes[vmp.node("y").unwrap().index()];
        assert!(y.q.u.is_empty() && y.q.a.is_empty());
        assert_eq!(y.parents[1].rule.is_broadcast(), !grouped);
        assert_eq!(vmp.mean(x).unwrap().len(), 3 * 6 * 4);
        // Its moments are still available on request, equal to the generic path's.
        let generic = build().compile_generic().unwrap();
        assert_eq!(vmp.moments(x), generic.moments(x));
    }
}

/// Central difference of `f` at `x[k]`.
fn derivative(x: &mut [f64], k: usize, f: &dyn Fn(&[f64]) -> f64) -> f64 {
    let (h, x0) = (1e-5, x[k]);
    x[k] = x0 + h;
    let up = f(x);
    x[k] = x0 - h;
    let down = f(x);
    x[k] = x0;
    (up - down) / (2.0 * h)
}

/// The shared form's moments are the gradient of its log-partition Σ_n A_n(φ₁ₙ, Φ₂): ∂/∂φ₁ₙ = m_n
/// and ∂/∂Φ₂ = Σ_n (m_n m_nᵀ + Σ) (Winn (2.13)), by central differences.
#[test]
fn shared_moments_are_the_gradient_of_the_log_partition() {
    let (n, q) = (4, 3);
    let mut rng = crate::Rng::seed_from_u64(4);
    let dist = crate::dist::Dist::from(GaussianArd { d: q });
    let phi1: Vec<f64> = (0..n * q).map(|_| rng.random::<f64>() - 0.5).collect();
    let l: Vec<f64> = (0..q * q).map(|_| rng.random::<f64>() - 0.5).collect();
    // Φ₂ = −½ (L Lᵀ + I).
    let phi2: Vec<f64> = (0..q * q)
        .map(|ab| {
            let (a, b) = (ab / q, ab % q);
            let llt: f64 = (0..q).map(|k| l[a * q + k] * l[b * q + k]).sum();
            -0.5 * (llt + f64::from(u8::from(a == b)))
        })
        .collect();
    let NodeState { u, a, .. } =
        super::shared::shared_moments(&dist, phi1.clone(), &phi2, q).unwrap();
    let (m, cov) = u.split_at(n * q);
    let total = |p1: &[f64], p2: &[f64]| -> f64 {
        let NodeState { a, .. } = super::shared::shared_moments(&dist, p1.to_vec(), p2, q).unwrap();
        a.iter().sum()
    };
    assert!((a.iter().sum::<f64>() - total(&phi1, &phi2)).abs() < 1e-12);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-7 * (1.0 + b.abs());
    let mut p1 = phi1.clone();
    for k in 0..n * q {
        let fd = derivative(&mut p1, k, &|p| total(p, &phi2));
        assert!(close(fd, m[k]), "∂A/∂φ₁[{k}]: {fd} vs {}", m[k]);
    }
    for a in 0..q {
        for b in a..q {
            // Φ₂ stays symmetric: (a, b) and (b, a) move together.
            let pair = |t: &[f64]| {
                let mut p2 = phi2.clone();
                p2[a * q + b] += t[0];
                if a != b {
                    p2[b * q + a] += t[0];
                }
                total(&phi1, &p2)
            };
            let fd = derivative(&mut [0.0], 0, &pair);
            let second: f64 = (0..n)
                .map(|e| m[e * q + a] * m[e * q + b] + cov[a * q + b])
                .sum();
            let want = if a == b { second } else { 2.0 * second };
            assert!(close(fd, want), "∂A/∂Φ₂[{a},{b}]: {fd} vs {want}");
        }
    }
}

/// The messages through F are the gradient of y's bound term with respect to each parent's
/// moments (Winn (2.17)), by central differences: per element with missing entries and a precision
/// per row, and in the shared form (∂/∂m_n = first_n + (S + Sᵀ) m_n, ∂/∂Σ = n S for the shared
/// second part S).
#[test]
fn kernel_messages_are_the_gradient_of_the_bound() {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * (1.0 + b.abs());
    for (prec, missing) in [(Prec::PerRow, 0.3), (Prec::Shared, 0.0)] {
        let mut vmp = pca(21, prec, false, missing, false).compile().unwrap();
        vmp.initialize(2).unwrap();
        for id in vmp.default_order() {
            vmp.update(id).unwrap();
        }
        let f = vmp.node("F").unwrap().index();
        let lin = vmp.linear[f].clone().unwrap();
        let q = 3;
        for s in 0..2 {
            let super::Source::Node(p) = vmp.nodes[f].parents[s].source else {
                unreachable!("both factors are random")
            };
            let msg = lin.grid_message(&vmp.nodes, &Default::default(), s);
            let shared = super::shared::is_shared(&vmp.nodes[p]);
            assert_eq!(shared, missing == 0.0 && s == 1);
            let mut u = vmp.nodes[p].q.u.clone();
            let n = vmp.nodes[p].n;
            let qq = q * q;
            for k in 0..u.len() {
                let want = if !shared {
                    let (e, c) = (k / (q + qq), k % (q + qq));
                    if c < q {
                        msg.first[e * q + c]
                    } else if msg.shared {
                        msg.second[c - q]
                    } else {
                        msg.second[e * qq + c - q]
                    }
                } else if k < n * q {
                    let (e, a) = (k / q, k % q);
                    let m = &u[e * q..(e + 1) * q];
                    msg.first[k]
                        + (0..q)
                            .map(|b| (msg.second[a * q + b] + msg.second[b * q + a]) * m[b])
                            .sum::<f64>()
                } else {
                    n as f64 * msg.second[k - n * q]
                };
                let fd = derivative(&mut u, k, &|u| {
                    let mut nodes = vmp.nodes.clone();
                    nodes[p].q.u = u.to_vec();
                    lin.bound(&nodes, &Default::default())
                });
                assert!(
                    close(fd, want),
                    "{prec:?} slot {s} entry {k}: {fd} vs {want}"
                );
            }
        }
    }
}

/// X starts in the shared form from the prior, a random draw or given moments with one covariance,
/// and per element from moments without one (then takes the shared form at its first update); each
/// start equals the element-by-element path's.
#[test]
fn initial_states_equal_the_generic_path() {
    let (n, q) = (7, 3);
    let mut rng = crate::Rng::seed_from_u64(8);
    let mut points = Vec::new();
    let mut spread = Vec::new();
    for e in 0..n {
        let m: Vec<f64> = (0..q).map(|_| rng.random::<f64>() - 0.5).collect();
        for u in [&mut points, &mut spread] {
            u.extend_from_slice(&m);
        }
        points.extend((0..q * q).map(|ab| m[ab / q] * m[ab % q]));
        // A different variance per element.
        spread.extend((0..q * q).map(|ab| {
            m[ab / q] * m[ab % q]
                + if ab % (q + 1) == 0 {
                    0.1 * (e + 1) as f64
                } else {
                    0.0
                }
        }));
    }
    for (init, shared_at_start) in [
        (Init::Prior, true),
        (Init::Random, true),
        (Init::Moments(points), true),
        (Init::Moments(spread), false),
    ] {
        let build = || {
            let mut g = pca(30, Prec::Shared, false, 0.0, false);
            let x = g.node("X").unwrap();
            g.initialize(x, init.clone());
            g
        };
        let mut vmp = build().compile().unwrap();
        vmp.initialize(3).unwrap();
        let x = vmp.node("X").unwrap().index();
        assert_eq!(super::shared::is_shared(&vmp.nodes[x]), shared_at_start);
        let consistent = !matches!(init, Init::Moments(_));
        let fast = assert_same_from(build(), build(), false, consistent);
        assert!(super::shared::is_shared(&fast.nodes[x]));
    }
}

/// More columns than one block of the grid products (`grid`): the blocks' partial products add up
/// to the element-by-element path's sums, with X on either side.
#[test]
fn blocks_of_columns_equal_the_generic_path() {
    for (prec, missing, x_first) in [
        (Prec::PerRow, 0.3, false),
        (Prec::Shared, 0.0, false),
        (Prec::Shared, 0.0, true),
        (Prec::PerColumn, 0.2, true),
    ] {
        let build = || pca_with(50, prec, false, missing, false, x_first, 1_100);
        assert_same(build(), build(), false);
    }
}

/// A product whose factors both start at zero is reported with X in the shared form as with X per
/// element (its means are read where the shared form keeps them).
#[test]
fn zero_products_see_the_shared_form() {
    for (x_init, zero) in [(Init::Prior, true), (Init::Random, false)] {
        let mut g = pca(60, Prec::Shared, false, 0.0, false);
        let (w, x) = (g.node("W").unwrap(), g.node("X").unwrap());
        g.initialize(w, Init::Prior);
        g.initialize(x, x_init);
        let mut vmp = g.compile().unwrap();
        vmp.initialize(1).unwrap();
        assert!(super::shared::is_shared(&vmp.nodes[x.index()]));
        assert_eq!(vmp.zero_products().len(), usize::from(zero));
    }
}

/// y's mean with offsets — dot(W[D], X[N]) + μ[D] (BPCA), and + ν[N] + a constant + a shared
/// scalar — gives the element-by-element path's φ, moments and bound terms, with every placement
/// of the precision, missing entries, either order of the factors and a constant factor; X keeps
/// one covariance when the data are complete and τ is the same for every x_n.
#[test]
fn offsets_equal_the_generic_path() {
    let precs = [Prec::Shared, Prec::Constant, Prec::PerRow, Prec::PerColumn];
    for (case, &prec) in precs.iter().enumerate() {
        for mean in [Mean::PerRow, Mean::All] {
            for (swap, x_first, missing) in
                [(false, false, 0.0), (true, false, 0.3), (false, true, 0.2)]
            {
                let seed = 70 + 10 * case as u64 + swap as u64 + 2 * x_first as u64;
                let build = || pca_offsets(seed, prec, swap, missing, false, x_first, 7, mean);
                let fast = assert_same(build(), build(), false);
                let (f, x) = (fast.node("F").unwrap(), fast.node("X").unwrap());
                let lin = fast.linear[f.index()].as_ref().unwrap();
                assert_eq!(lin.sum, fast.node("S").map(|s| s.index()));
                let shared = missing == 0.0 && !matches!(prec, Prec::PerColumn);
                assert_eq!(super::shared::is_shared(&fast.nodes[x.index()]), shared);
            }
        }
        if !matches!(prec, Prec::PerRow) {
            // dot(c, X[N]) + μ with a constant c: the grid path (not the sums of covariates).
            let build = || pca_offsets(case as u64, prec, false, 0.2, true, false, 7, Mean::All);
            assert_same(build(), build(), false);
        }
    }
}

/// More columns than one block of the grid products, with offsets per row and per column.
#[test]
fn offsets_over_blocks_of_columns_equal_the_generic_path() {
    for (prec, missing) in [(Prec::PerRow, 0.3), (Prec::Shared, 0.0)] {
        let build = || pca_offsets(80, prec, false, missing, false, false, 1_100, Mean::All);
        assert_same(build(), build(), false);
    }
}
