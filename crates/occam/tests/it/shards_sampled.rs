//! Importance-sampled nodes (Winn §4.4) in sharded fits: a local sampled node (one per row of the
//! data plate) updates on its shard with its draws keyed by its element's index in the whole data,
//! so uneven shards sweep as one process, sweep by sweep, to 1e-10 relative in the bound and every
//! posterior (`shards::same_as_single`); a global one with only Gaussian children updates from the
//! summed messages on every replica alike; a global one read by Student-t values along the data
//! plate is a located refusal that says why.

use super::shards::{rows, same_as_single, uneven};
use occam::DataSet;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal, StudentT};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Robust regression: each row's mean f_n is a latent Gaussian around the line, observed through
/// Student-t noise, so every f_n is importance sampled (with Winn's proposal (4.16)).
const ROBUST: &str = "\
plates N, C from data X
data X[N] over C
w over C ~ MvGaussian(mean = 0, precision = identity * 0.01)
tau ~ Gamma(shape = 2, rate = 0.1)
f[N] ~ Gaussian(mean = dot(X[N], w), precision = tau)
y[N] ~ StudentT(nu = 3, scale = 0.5, mean = f[N])
observe y
";

/// A truncated prior on a local, read by Student-t values (sampled through the tilted prior's
/// proposal) and by Gaussian values whose precision is a global.
const TRUNCATED: &str = "\
plates N from data y
tau ~ Gamma(shape = 2, rate = 1)
u[N] ~ TruncatedGaussian(mean = 0, precision = 0.25, lower = 0, upper = 20)
v[N] ~ Gaussian(mean = u[N], precision = tau)
y[N] ~ StudentT(nu = 4, scale = 0.5, mean = u[N])
observe y
observe v
";

/// A global with a mixture prior (spike and slab intercept) and only Gaussian children: q in
/// closed form from the summed messages.
const GLOBAL_MIXTURE: &str = "\
plates N, C from data X
data X[N] over C
w over C ~ MvGaussian(mean = 0, precision = identity * 0.01)
b ~ GaussianMixture2(weight = 0.5, mean1 = 0, precision1 = 100, mean2 = 0, precision2 = 0.1)
tau ~ Gamma(shape = 1e-3, rate = 1e-3)
y[N] ~ Gaussian(mean = dot(X[N], w) + b, precision = tau)
observe y
";

/// Rows [1, x_n] and y_n = 1 + 2 x_n + t₃ noise (scale 0.3), every seventh row an outlier (+8).
fn line_data(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let t = StudentT::new(3.0).unwrap();
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for k in 0..n {
        let x: f64 = StandardNormal.sample(&mut rng);
        let e: f64 = t.sample(&mut rng);
        let outlier = if k % 7 == 3 { 8.0 } else { 0.0 };
        xs.extend([1.0, x]);
        ys.push(1.0 + 2.0 * x + 0.3 * e + outlier);
    }
    (xs, ys)
}

/// Node `name` of the model is importance sampled, one sampled element per row (so the tests
/// below exercise the sampler, not the closed form).
fn sampled_per_row(text: &str, tables: &[(&str, usize, &[f64])], n: usize, name: &str) {
    let mut v = super::shards::compile(text, &rows(tables, 0, n));
    v.initialize(1).unwrap();
    let s = v.sampled_nodes();
    assert!(
        s.iter().any(|s| s.name == name && s.samples.len() == n),
        "{s:?}"
    );
}

#[test]
fn student_t_robust_regression_on_four_uneven_shards_sweeps_as_one_process() {
    let n = 67;
    let (xs, ys) = line_data(n, 3);
    sampled_per_row(ROBUST, &[("X", 2, &xs), ("y", 1, &ys)], n, "f");
    same_as_single(
        ROBUST,
        &[("X", 2, &xs), ("y", 1, &ys)],
        n,
        &uneven(n, &[3, 11, 1, 6]),
    );
}

#[test]
fn a_truncated_local_read_by_student_t_values_on_three_uneven_shards_sweeps_as_one_process() {
    let n = 41;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let (mut y, mut v) = (Vec::new(), Vec::new());
    for k in 0..n {
        let u = 0.3 * k as f64 % 5.0;
        let a: f64 = StandardNormal.sample(&mut rng);
        let b: f64 = StandardNormal.sample(&mut rng);
        y.push(u + 0.5 * a + if k % 9 == 4 { -6.0 } else { 0.0 });
        v.push(u + b);
    }
    sampled_per_row(TRUNCATED, &[("y", 1, &y), ("v", 1, &v)], n, "u");
    same_as_single(
        TRUNCATED,
        &[("y", 1, &y), ("v", 1, &v)],
        n,
        &uneven(n, &[7, 2, 4]),
    );
}

#[test]
fn a_global_mixture_prior_on_five_uneven_shards_sweeps_as_one_process() {
    let n = 53;
    let (xs, ys) = line_data(n, 4);
    same_as_single(
        GLOBAL_MIXTURE,
        &[("X", 2, &xs), ("y", 1, &ys)],
        n,
        &uneven(n, &[2, 5, 1, 8, 3]),
    );
}

/// A global mean read by Student-t values along the data plate cannot be split: a located error
/// naming the node, the values and what to do.
#[test]
fn a_global_read_by_student_t_rows_is_a_located_refusal() {
    let src = "plates N from data y\nmu ~ Gaussian(0, 0.01)\n\
               y[N] ~ StudentT(nu = 3, scale = 0.8, mean = mu)\nobserve y\n";
    let mut d = DataSet::new();
    d.insert_array("y", 4, 1, vec![1.0, 2.0, 1.5, 9.0], None)
        .unwrap();
    let err = occam::shard::Shard::new("t.occam", src, &d, None)
        .err()
        .expect("a refusal")
        .to_string();
    for needle in [
        "t.occam:2:1",
        "`mu`",
        "Student-t values `y`",
        "likelihood summed over every shard at each draw",
        "give `mu` the data plate",
    ] {
        assert!(err.contains(needle), "`{needle}` in {err}");
    }
}
