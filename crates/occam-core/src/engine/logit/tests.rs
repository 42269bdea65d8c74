//! The data-times-vector kernel against the element-by-element path (`Graph::compile_generic`):
//! random logistic, Binomial and log-link Poisson regressions, with and without an offset, w
//! full-covariance or ARD, every node's moments and bound term after every update; the bound never
//! decreases; the same bits on one and two threads.

use crate::prelude::*;
use rand::{Rng as _, SeedableRng};

/// The child family of η.
#[derive(Clone, Copy, Debug)]
enum Family {
    Bernoulli,
    Binomial,
    /// The Jaakkola–Jordan bound (`BernoulliLogit`).
    JaakkolaJordan,
    Poisson,
}

/// One random model: y[N] ~ family(dot(x_n, w) (+ b)), x_n ~ U(−1.5, 1.5)^D, N rows, D inputs.
#[derive(Clone, Copy, Debug)]
struct Case {
    seed: u64,
    n: usize,
    d: usize,
    family: Family,
    offset: bool,
    ard: bool,
    /// dot(w, x) instead of dot(x, w).
    swap: bool,
    /// A fraction of y missing.
    missing: bool,
}

fn model(k: Case) -> Graph {
    let mut rng = crate::Rng::seed_from_u64(k.seed);
    let (n, d) = (k.n, k.d);
    let mut g = Graph::new();
    let (np, dp) = (g.plate("N", n), g.plate("D", d));
    let xs: Vec<f64> = (0..n * d)
        .map(|_| 3.0 * rng.random::<f64>() - 1.5)
        .collect();
    let x = g
        .constant("X", MomentKind::Gaussian { d }, &[np], &xs)
        .unwrap();
    let w = if k.ard {
        let alpha = g
            .add("alpha", Gamma { shape: 1.0 }, &[dp], [c(1.0)])
            .unwrap();
        g.add("w", GaussianArd { d }, &[], [c(0.0), p(alpha)])
            .unwrap()
    } else {
        let mut prec = vec![0.1; d * d];
        (0..d).for_each(|i| prec[i * d + i] = 0.8);
        g.add("w", MvGaussian { d }, &[], [cv(vec![0.2; d]), cv(prec)])
            .unwrap()
    };
    let parents = if k.swap { [p(w), p(x)] } else { [p(x), p(w)] };
    let mut eta = g.deterministic("F", Dot { d }, &[np], parents).unwrap();
    if k.offset {
        let b = g.add("b", Gaussian, &[], [c(0.0), c(1.0)]).unwrap();
        eta = g
            .deterministic("eta", Sum { n: 3, d: 1 }, &[np], [p(eta), p(b), c(0.25)])
            .unwrap();
    }
    let (y, values): (NodeId, Vec<f64>) = match k.family {
        Family::Bernoulli => (
            g.add("y", BernoulliLogitQuad, &[np], [p(eta)]).unwrap(),
            (0..n).map(|_| rng.random_range(0..2) as f64).collect(),
        ),
        Family::JaakkolaJordan => (
            g.add("y", BernoulliLogit, &[np], [p(eta)]).unwrap(),
            (0..n).map(|_| rng.random_range(0..2) as f64).collect(),
        ),
        Family::Binomial => (
            g.add("y", BinomialLogitQuad { trials: 4 }, &[np], [p(eta)])
                .unwrap(),
            (0..n).map(|_| rng.random_range(0..5) as f64).collect(),
        ),
        Family::Poisson => (
            g.add("y", PoissonLog, &[np], [p(eta)]).unwrap(),
            (0..n).map(|_| rng.random_range(0..6) as f64).collect(),
        ),
    };
    let mask: Vec<bool> = (0..n)
        .map(|_| !k.missing || rng.random::<f64>() > 0.2)
        .collect();
    g.observe_masked(y, &values, Some(&mask)).unwrap();
    g
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

/// Every node's moments (η's too) and every bound term agree to `tol` (relative, 1 + |b|).
fn compare(fast: &Vmp, generic: &Vmp, when: &str, tol: f64) {
    for (i, b) in generic.nodes.iter().enumerate() {
        if matches!(b.body, super::Body::Constant) {
            continue;
        }
        let u = fast.moments(NodeId(i));
        assert_eq!(u.len(), b.q.u.len(), "{when}: {}", b.name);
        for (x, y) in u.iter().zip(&b.q.u) {
            assert!(close(*x, *y, tol), "{when}, {}: {x} vs {y}", b.name);
        }
    }
    let (fb, gb) = (fast.node_bounds(), generic.node_bounds());
    for (name, (a, b)) in fast.names().iter().zip(fb.into_iter().zip(gb)) {
        assert!(close(a, b, tol), "{when}, bound term of {name}: {a} vs {b}");
    }
}

/// Sweeps the kernel and the element-by-element path in the same order, comparing after every
/// update to `tol`; checks the bound never decreases; returns the kernel's fit.
fn assert_same(k: Case, tol: f64) -> Vmp {
    let mut fast = model(k).compile().unwrap();
    let mut generic = model(k).compile_generic().unwrap();
    let (f, x) = (
        fast.node("F").unwrap().index(),
        fast.node("X").unwrap().index(),
    );
    assert!(fast.logit[f].is_some(), "{k:?}: F should take the kernel");
    assert!(generic.logit.iter().all(Option::is_none));
    // X keeps its values only (no per-row outer products).
    assert!(fast.nodes[x].q.u.is_empty(), "{k:?}");
    assert_eq!(generic.nodes[x].q.u.len(), k.n * (k.d + k.d * k.d));
    fast.initialize(5).unwrap();
    generic.initialize(5).unwrap();
    compare(&fast, &generic, &format!("{k:?} initial state"), tol);
    let order = fast.default_order();
    let mut last = fast.bound();
    for sweep in 0..15 {
        for &id in &order {
            fast.update(id).unwrap();
            generic.update(id).unwrap();
            compare(&fast, &generic, &format!("{k:?} sweep {sweep}"), tol);
            let now = fast.bound();
            assert!(
                now >= last - 1e-9 * (1.0 + last.abs()),
                "{k:?} sweep {sweep}: bound fell from {last} to {now}"
            );
            last = now;
        }
    }
    assert!((fast.bound() - fast.fresh_bound()).abs() <= 1e-10 * (1.0 + last.abs()));
    fast
}

/// Random models: every family, with and without an offset, full-covariance and ARD w, both slot
/// orders, missing observations.
#[test]
fn logit_kernel_equals_the_element_by_element_path() {
    let families = [
        Family::Bernoulli,
        Family::Binomial,
        Family::JaakkolaJordan,
        Family::Poisson,
    ];
    let mut rng = crate::Rng::seed_from_u64(29);
    for seed in 0..16u64 {
        let k = Case {
            seed,
            n: rng.random_range(20..=200),
            d: rng.random_range(1..=6),
            family: families[seed as usize % 4],
            offset: seed % 3 != 0,
            ard: seed % 2 == 1,
            swap: seed % 5 == 2,
            missing: seed % 4 == 3,
        };
        assert_same(k, 1e-10);
    }
}

/// The kernel serves every number of rows (`detect` has no size threshold): one partial chunk
/// (N < CHUNK), exactly one chunk, and several chunks with a partial last one, each against the
/// element-by-element path to 1e-12 after every update, for the quadrature Bernoulli (the
/// estimator's family) with an offset and the Jaakkola–Jordan bound.
#[test]
fn logit_kernel_equals_the_element_by_element_path_below_and_above_a_chunk() {
    let chunk = crate::kernels::CHUNK;
    for (i, n) in [1, 7, chunk - 1, chunk, chunk + 1, 2 * chunk + 37]
        .into_iter()
        .enumerate()
    {
        for family in [Family::Bernoulli, Family::JaakkolaJordan] {
            let k = Case {
                seed: 100 + i as u64,
                n,
                d: 3,
                family,
                offset: i % 2 == 0,
                ard: i % 3 == 1,
                swap: false,
                missing: i == 5,
            };
            assert_same(k, 1e-12);
        }
    }
}

/// The kernel's fit is the same bits on one and two threads (rows in fixed chunks, partial sums
/// added in chunk order); N spans several chunks.
#[test]
fn logit_kernel_gives_the_same_bits_on_one_and_two_threads() {
    let k = Case {
        seed: 3,
        n: 3 * crate::kernels::CHUNK + 17,
        d: 4,
        family: Family::Bernoulli,
        offset: true,
        ard: true,
        swap: false,
        missing: true,
    };
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut v = model(k).compile().unwrap();
            v.initialize(1).unwrap();
            let order = v.default_order();
            for _ in 0..10 {
                for &id in &order {
                    v.update(id).unwrap();
                }
            }
            let w = v.node("w").unwrap();
            let bits: Vec<u64> = v.moments(w).iter().map(|x| x.to_bits()).collect();
            (bits, v.bound().to_bits())
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(1));
}
