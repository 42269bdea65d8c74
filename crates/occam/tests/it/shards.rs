//! Data-parallel VMP (`occam_core::engine::Sharded`): a model split along its data plate into
//! uneven shards, each its own compiled model, sweeps to the single-process bound and posteriors
//! (to 1e-10 relative, same start and schedule), sweep by sweep — a GMM, a Bernoulli mixture,
//! Bayesian linear regression, ragged HMM sequences and Bayesian PCA; memoized VB reaches the batch
//! optimum with a bound that never decreases; models that cannot be split say why.

use occam::{DataSet, Model};
use occam_core::engine::{Sharded, SplitError, Vmp};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

pub(crate) const GMM: &str = "\
plate K = 3
plates N, D from data x
pi ~ Dirichlet(1) over K
z[N] ~ Categorical(pi)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-2)
Lambda[K] over D ~ Wishart(dof = 3, rate = identity * 1)
x[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
";

const BERNOULLI: &str = "\
plate K = 4
plates N, D from data x
R ~ Dirichlet(1) over K
z[N] ~ Categorical(R)
P[K, D] ~ Beta(0.5, 0.5)
x[N, D] ~ Bernoulli(prob = P[z, D])
init z = random
";

const REGRESSION: &str = "\
plates N, C from data X
data X[N] over C
alpha[C] ~ Gamma(shape = 1e-3, rate = 1e-3)
w over C ~ GaussianARD(mean = 0, precision = alpha)
tau ~ Gamma(shape = 1e-3, rate = 1e-3)
y[N] ~ Gaussian(mean = dot(X[N], w), precision = tau)
observe y
";

const HMM: &str = "\
plate K = 3
plates S, T from data y
data L[S]
p0 ~ Dirichlet(1) over K
A[K] ~ Dirichlet(1) over K
z[S] over T ~ MarkovChain(initial = p0, transition = A, lengths = L)
mu[K] ~ Gaussian(mean = 0, precision = 1e-2)
tau[K] ~ Gamma(shape = 1e-3, rate = 1e-3)
y[S, T] ~ Gaussian(mean = mu[z], precision = tau[z])
init mu = random
";

/// Uneven shard sizes summing to `n`.
pub(crate) fn uneven(n: usize, parts: &[usize]) -> Vec<usize> {
    let total: usize = parts.iter().sum();
    let mut sizes: Vec<usize> = parts.iter().map(|p| p * n / total).collect();
    let used: usize = sizes.iter().sum();
    *sizes.last_mut().unwrap() += n - used;
    sizes
}

/// Data of a three-cluster 2-D mixture, N × 2.
pub(crate) fn gmm_data(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let centres = [[-4.0, 0.0], [3.0, 3.0], [2.0, -4.0]];
    let mut x = Vec::with_capacity(2 * n);
    for _ in 0..n {
        let c = centres[rng.random_range(0..3)];
        for v in c {
            let e: f64 = StandardNormal.sample(&mut rng);
            x.push(v + e);
        }
    }
    x
}

/// Tables `(name, cols, values)` cut to rows `from..to`.
pub(crate) fn rows(tables: &[(&str, usize, &[f64])], from: usize, to: usize) -> DataSet {
    let mut d = DataSet::new();
    for &(name, cols, values) in tables {
        let v = values[from * cols..to * cols].to_vec();
        d.insert_array(name, to - from, cols, v, None).unwrap();
    }
    d
}

/// A compiled model of `text` on `data`.
pub(crate) fn compile(text: &str, data: &DataSet) -> Vmp {
    let model = Model::from_source("model.occam", text, data).unwrap();
    model.loaded().compile(true).unwrap().vmp
}

fn close(a: f64, b: f64, what: &str) {
    let rel = (a - b).abs() / (1.0 + a.abs().max(b.abs()));
    assert!(rel <= 1e-10, "{what}: {a} vs {b} (relative {rel:e})");
}

/// Sweeps a single-process model and a sharded one from the same start with the same schedule;
/// compares the bound after every sweep and every latent node's moments at the end.
pub(crate) fn same_as_single(
    text: &str,
    tables: &[(&str, usize, &[f64])],
    n: usize,
    sizes: &[usize],
) {
    let mut full = compile(text, &rows(tables, 0, n));
    full.initialize(11).unwrap();
    let order = full.default_order();
    let mut shards = Vec::new();
    let mut from = 0;
    for &s in sizes {
        shards.push(compile(text, &rows(tables, from, from + s)));
        from += s;
    }
    assert_eq!(from, n);
    let mut sharded = Sharded::new(shards, None, Some(order.clone())).unwrap();
    sharded.start_from(&full).unwrap();
    close(full.bound(), sharded.bound(), "bound at the start");
    for sweep in 1..=30 {
        for &id in &order {
            full.update(id).unwrap();
        }
        let l = sharded.sweep().unwrap();
        close(full.bound(), l, &format!("bound after sweep {sweep}"));
    }
    let split = sharded.split().clone();
    for name in full.names() {
        let id = full.node(name).unwrap();
        if full.natural(id).is_empty() && full.moments(id).is_empty() {
            continue;
        }
        let single = full.moments(id).to_vec();
        let parts: Vec<f64> = if split.is_local(id) {
            sharded
                .shards()
                .iter()
                .flat_map(|v| v.moments(id).to_vec())
                .collect()
        } else {
            sharded.shards()[0].moments(id).to_vec()
        };
        assert_eq!(single.len(), parts.len(), "{name}");
        for (a, b) in single.iter().zip(&parts) {
            close(*a, *b, name);
        }
    }
}

#[test]
fn a_gaussian_mixture_on_five_uneven_shards_sweeps_as_one_process() {
    let x = gmm_data(301, 1);
    same_as_single(GMM, &[("x", 2, &x)], 301, &uneven(301, &[1, 7, 3, 12, 2]));
}

#[test]
fn a_bernoulli_mixture_on_four_uneven_shards_sweeps_as_one_process() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let (n, d) = (173, 6);
    let protos = [
        [0.9, 0.9, 0.1, 0.1, 0.8, 0.2],
        [0.1, 0.2, 0.9, 0.8, 0.1, 0.7],
    ];
    let mut x = Vec::new();
    for _ in 0..n {
        let p = protos[rng.random_range(0..2)];
        x.extend(
            p.iter()
                .map(|&q| f64::from(u8::from(rng.random::<f64>() < q))),
        );
    }
    assert_eq!(x.len(), n * d);
    same_as_single(BERNOULLI, &[("x", d, &x)], n, &uneven(n, &[5, 1, 9, 3]));
}

#[test]
fn a_bayesian_linear_regression_on_seven_uneven_shards_sweeps_as_one_process() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    let (n, c) = (211, 4);
    let w = [1.5, -2.0, 0.0, 0.5];
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let row: Vec<f64> = (0..c).map(|_| StandardNormal.sample(&mut rng)).collect();
        let e: f64 = StandardNormal.sample(&mut rng);
        ys.push(row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + 0.3 * e);
        xs.extend(row);
    }
    let sizes = uneven(n, &[2, 9, 1, 4, 6, 3, 5]);
    same_as_single(REGRESSION, &[("X", c, &xs), ("y", 1, &ys)], n, &sizes);
}

#[test]
fn ragged_hmm_sequences_on_five_uneven_shards_sweep_as_one_process() {
    // One chain per sequence (row of y), lengths 3..=14, NaN after each sequence's end: a shard
    // holds whole sequences.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
    let (s, t) = (41, 14);
    let means = [-3.0, 0.0, 3.0];
    let (mut y, mut lengths) = (Vec::new(), Vec::new());
    for _ in 0..s {
        let len = rng.random_range(3..=t);
        let mut state = rng.random_range(0..3);
        for step in 0..t {
            if step < len {
                if rng.random::<f64>() < 0.2 {
                    state = rng.random_range(0..3);
                }
                let e: f64 = StandardNormal.sample(&mut rng);
                y.push(means[state] + 0.5 * e);
            } else {
                y.push(f64::NAN);
            }
        }
        lengths.push(len as f64);
    }
    let sizes = uneven(s, &[3, 1, 5, 2, 4]);
    same_as_single(HMM, &[("y", t, &y), ("L", 1, &lengths)], s, &sizes);
}

#[test]
fn bayesian_pca_on_four_uneven_shards_sweeps_as_one_process() {
    // examples/bpca: y[N, D] = W x_n + mu + noise, the latent x_n local with one shared
    // covariance (`linear::shared`), W, alpha, mu and tau global. Data of rank 3 in D = 10.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/bpca/bpca.occam"
    ))
    .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let (n, d, q) = (97, 10, 3);
    let mut normal = || -> f64 { StandardNormal.sample(&mut rng) };
    let w: Vec<f64> = (0..d * q).map(|_| normal()).collect();
    let mut y = Vec::with_capacity(n * d);
    for _ in 0..n {
        let x: Vec<f64> = (0..q).map(|_| normal()).collect();
        for r in 0..d {
            let wx: f64 = (0..q).map(|k| w[r * q + k] * x[k]).sum();
            y.push(wx + 0.1 * normal());
        }
    }
    same_as_single(&text, &[("y", d, &y)], n, &uneven(n, &[4, 1, 3, 2]));
}

#[test]
fn memoized_vb_reaches_the_batch_optimum_with_a_bound_that_never_decreases() {
    let n = 240;
    let x = gmm_data(n, 3);
    let tables: &[(&str, usize, &[f64])] = &[("x", 2, &x)];
    let sizes = uneven(n, &[3, 1, 4, 2]);
    let shards = |sizes: &[usize]| {
        let mut out = Vec::new();
        let mut from = 0;
        for &s in sizes {
            out.push(compile(GMM, &rows(tables, from, from + s)));
            from += s;
        }
        out
    };
    let mut full = compile(GMM, &rows(tables, 0, n));
    full.initialize(2).unwrap();
    let order = full.default_order();
    let mut batch = Sharded::new(shards(&sizes), None, Some(order.clone())).unwrap();
    let mut memo = Sharded::new(shards(&sizes), None, Some(order)).unwrap();
    batch.start_from(&full).unwrap();
    memo.start_from(&full).unwrap();
    let b = batch.run(2000, 1e-13, false).unwrap();
    let m = memo.run(2000, 1e-13, true).unwrap();
    assert!(b.converged && m.converged);
    // `run` fails on a decrease; the trace says so too.
    assert!(m
        .bound_trace
        .windows(2)
        .all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
    let (lb, lm) = (batch.bound(), memo.bound());
    assert!(
        (lb - lm).abs() <= 1e-8 * lb.abs(),
        "batch {lb} vs memoized {lm}"
    );
    let mu = full.node("mu").unwrap();
    let (a, c) = (batch.shards()[0].moments(mu), memo.shards()[0].moments(mu));
    for (p, q) in a.iter().zip(c) {
        assert!((p - q).abs() <= 1e-5 * (1.0 + p.abs()), "⟨mu⟩ {p} vs {q}");
    }
    // Memoized passes update the globals once per shard: fewer passes than batch sweeps to come
    // within 1e-9 (relative) of the optimum. (Counted to the stopping rule at tol = 1e-13, a
    // change of a few hundred ulps of the bound, both stop after 6 since the sums are exact:
    // which run crosses that rule first is decided by round-off, not by the method.)
    let near = |trace: &[f64]| {
        trace
            .iter()
            .position(|&l| (lb - l).abs() <= 1e-9 * lb.abs())
    };
    let (pm, pb) = (near(&m.bound_trace), near(&b.bound_trace));
    assert!(
        pm.unwrap() < pb.unwrap(),
        "{pm:?} vs {pb:?}: memoized {:?}, batch {:?}",
        m.bound_trace,
        b.bound_trace
    );
}

#[test]
fn a_start_without_the_full_data_converges_and_its_bound_never_decreases() {
    let n = 300;
    let x = gmm_data(n, 4);
    let tables: &[(&str, usize, &[f64])] = &[("x", 2, &x)];
    let mut shards = Vec::new();
    let mut from = 0;
    for s in uneven(n, &[2, 3, 1, 4]) {
        shards.push(compile(GMM, &rows(tables, from, from + s)));
        from += s;
    }
    let mut sharded = Sharded::new(shards, None, None).unwrap();
    sharded.start(0).unwrap();
    let fit = sharded.run(500, 1e-8, false).unwrap();
    assert!(fit.converged);
    // Three well-separated clusters: each gets about a third of the points.
    let pi = sharded.shards()[0].node("pi").unwrap();
    let mean = sharded.shards()[0].mean(pi).unwrap();
    assert!(mean.iter().all(|&p| (0.2..0.5).contains(&p)), "{mean:?}");
}

#[test]
fn the_data_plate_is_inferred_and_an_unknown_one_is_an_error() {
    let x = gmm_data(20, 1);
    let v = compile(GMM, &rows(&[("x", 2, &x)], 0, 20));
    assert_eq!(v.data_plate(), Some("N"));
    let split = v.split(None).unwrap();
    for (name, local) in [
        ("z", true),
        ("x", true),
        ("mu", false),
        ("Lambda", false),
        ("pi", false),
    ] {
        assert_eq!(split.is_local(v.node(name).unwrap()), local, "{name}");
    }
    let err = v.split(Some("M")).unwrap_err();
    assert!(
        matches!(&err, SplitError::NoPlate(m) if m.contains("`M`")),
        "{err}"
    );
}

#[test]
fn a_mixture_index_without_the_data_plate_cannot_be_split_and_says_why() {
    // Split along D: the index z[N] and everything of N would be global, read by the local x.
    let x = gmm_data(20, 1);
    let v = compile(
        BERNOULLI,
        &rows(
            &[(
                "x",
                2,
                &x.iter()
                    .map(|v| f64::from(u8::from(*v > 0.0)))
                    .collect::<Vec<_>>(),
            )],
            0,
            20,
        ),
    );
    let err = v.split(Some("D")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`z`") && text.contains("mixture index"),
        "{text}"
    );
}

/// The bound after each of `sweeps` sweeps and every latent node's moments (a local node's in
/// the rows' order) of a GMM on shards `sizes`, started from one single-process start and
/// swept with the shards held in the order `perm` (shard `perm[k]` in place k).
fn swept_in_order(
    x: &[f64],
    sizes: &[usize],
    perm: &[usize],
    sweeps: usize,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let tables: &[(&str, usize, &[f64])] = &[("x", 2, x)];
    let n = sizes.iter().sum();
    let mut full = compile(GMM, &rows(tables, 0, n));
    full.initialize(11).unwrap();
    let order = full.default_order();
    let mut shards = Vec::new();
    let mut from = 0;
    for &s in sizes {
        shards.push(compile(GMM, &rows(tables, from, from + s)));
        from += s;
    }
    // Started in the rows' order (each shard from its own rows of the start), then permuted.
    let mut started = Sharded::new(shards, None, Some(order.clone())).unwrap();
    started.start_from(&full).unwrap();
    let mut held: Vec<Option<Vmp>> = started.into_shards().into_iter().map(Some).collect();
    let permuted: Vec<Vmp> = perm.iter().map(|&s| held[s].take().unwrap()).collect();
    let mut sharded = Sharded::new(permuted, None, Some(order)).unwrap();
    let trace: Vec<f64> = (0..sweeps).map(|_| sharded.sweep().unwrap()).collect();
    let split = sharded.split().clone();
    let mut place = vec![0; perm.len()];
    for (k, &s) in perm.iter().enumerate() {
        place[s] = k;
    }
    let moments = full
        .names()
        .iter()
        .map(|name| {
            let id = full.node(name).unwrap();
            if split.is_local(id) {
                place
                    .iter()
                    .flat_map(|&k| sharded.shards()[k].moments(id).to_vec())
                    .collect()
            } else {
                sharded.shards()[0].moments(id).to_vec()
            }
        })
        .collect();
    (trace, moments)
}

#[test]
fn any_order_of_the_shards_gives_the_same_bits() {
    // The reduction sums the shards' messages and local bound terms exactly and rounds once
    // (`occam_core::exactsum`), so the order in which the shards are held changes no bit of
    // the bound or of any posterior. (Summed in the shards' order, the bounds of these orders
    // differed in their last bits.)
    let n = 2000;
    let x = gmm_data(n, 9);
    let sizes = uneven(n, &[1, 7, 3, 12, 2, 5]);
    let (trace, moments) = swept_in_order(&x, &sizes, &[0, 1, 2, 3, 4, 5], 25);
    let rel = |a: f64, b: f64| (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE);
    // Over every order, sweep and value: how many differ in any bit, and by how much at most.
    let (mut bounds, mut values, mut worst_bound, mut worst_value) = (0, 0, 0.0f64, 0.0f64);
    for perm in [[5, 4, 3, 2, 1, 0], [3, 0, 5, 1, 4, 2], [1, 2, 0, 4, 5, 3]] {
        let (t, m) = swept_in_order(&x, &sizes, &perm, 25);
        for (a, b) in trace.iter().zip(&t) {
            bounds += usize::from(a.to_bits() != b.to_bits());
            worst_bound = worst_bound.max(rel(*a, *b));
        }
        for (a, b) in moments.iter().flatten().zip(m.iter().flatten()) {
            values += usize::from(a.to_bits() != b.to_bits());
            worst_value = worst_value.max(rel(*a, *b));
        }
    }
    assert!(
        bounds == 0 && values == 0,
        "{bounds} of 75 bounds differ (at most {worst_bound:e} relative), {values} moments \
         (at most {worst_value:e})"
    );
}
