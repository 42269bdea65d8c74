//! Default schedule and initialisation: the common fits come out right without tuning flags.
//!
//! Before the default schedule put nodes with an informative start (k-means++ mixture indices,
//! random factors of products) after the others, a mixture index was updated first from the
//! prior's identical components, which threw its k-means++ start away: BayesPy's GMM (K = 10) on
//! nine clusters ended with one component, `compare` over K = 1..5 picked the wrong K, and
//! Bayesian PCA stayed at W = 0.

use occam::{DataSet, Model, Settings, Warning};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `per` points around each centre (unit spread), as one N × D array.
fn clusters(centres: &[[f64; 2]], per: usize, seed: u64) -> (Vec<f64>, usize) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut x = Vec::new();
    for c in centres {
        for _ in 0..per {
            for m in c {
                let e: f64 = StandardNormal.sample(&mut rng);
                x.push(m + e);
            }
        }
    }
    (x, centres.len() * per)
}

fn data(x: Vec<f64>, n: usize, d: usize) -> DataSet {
    let mut data = DataSet::new();
    data.insert_array("y", n, d, x, None).unwrap();
    data
}

const GMM: &str = "plate K = 10
plates N, D from data y
alpha ~ Dirichlet(1e-5) over K
z[N] ~ Categorical(alpha)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-5)
Lambda[K] over D ~ Wishart(dof = 2, rate = identity * 1e-5)
y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
";

/// BayesPy's GMM example model (K = 10, full covariances, its vague priors) on 900 points from
/// nine well-separated clusters: every seed finds the nine, with the default settings.
#[test]
fn gmm_finds_nine_clusters_by_default() {
    let grid: Vec<[f64; 2]> = (0..9)
        .map(|i| [10.0 * (i % 3) as f64, 10.0 * (i / 3) as f64])
        .collect();
    let (x, n) = clusters(&grid, 100, 1);
    let model = Model::from_source("gmm.occam", GMM, &data(x, n, 2)).unwrap();
    for seed in 0..5 {
        let fit = model
            .fit(&Settings {
                seed,
                ..Settings::default()
            })
            .unwrap();
        let o = fit.outcome();
        assert_eq!(o.components.len(), 1);
        assert_eq!(
            o.components[0].in_use, 9,
            "seed {seed}: {:?}, L = {}",
            o.components, o.bound
        );
        assert!(o.converged, "seed {seed}");
    }
}

fn mixture(k: usize) -> String {
    format!(
        "plate K = {k}
plates N, D from data y
pi ~ Dirichlet(1) over K
mu[K, D] ~ Gaussian(mean = 0, precision = 0.01)
gamma[K, D] ~ Gamma(shape = 1, rate = 1)
z[N] ~ Categorical(pi)
y[N, D] ~ Gaussian(mean = mu[z], precision = gamma[z])
"
    )
}

/// `compare` over K = 1..5 on three clusters picks K = 3 with one restart, for every seed, and
/// K = 3 uses its three components.
#[test]
fn comparison_over_k_picks_three_clusters() {
    let (x, n) = clusters(&[[0.0, 0.0], [6.0, 0.0], [3.0, 5.0]], 100, 2);
    let data = data(x, n, 2);
    let models: Vec<Model> = (1..=5)
        .map(|k| Model::from_source(&format!("k{k}.occam"), &mixture(k), &data).unwrap())
        .collect();
    for seed in 0..10 {
        let settings = Settings {
            seed,
            ..Settings::default()
        };
        let compared = occam::compare(&models, &settings, &[]).unwrap();
        let best = compared
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.probability.total_cmp(&b.1.probability))
            .unwrap()
            .0;
        let bounds: Vec<f64> = compared.iter().map(|c| c.fitted.bound()).collect();
        assert_eq!(best + 1, 3, "seed {seed}: bounds {bounds:?}");
        assert_eq!(compared[2].fitted.outcome().components[0].in_use, 3);
    }
}

fn bpca(init: &str) -> String {
    format!(
        "plates N, D from data y
plate Q = 4
alpha[Q] ~ Gamma(shape = 1e-3, rate = 1e-3)
W[D] over Q ~ GaussianARD(mean = 0, precision = alpha)
X[N] over Q ~ GaussianARD(mean = 0, precision = 1)
tau ~ Gamma(shape = 1e-3, rate = 1e-3)
y[N, D] ~ Gaussian(mean = dot(W[D], X[N]), precision = tau)
{init}"
    )
}

/// Data with two latent directions in five dimensions.
fn low_rank(n: usize) -> DataSet {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let w = [[1.0, 0.5, -1.0, 2.0, 0.0], [0.0, 1.0, 1.0, -0.5, 1.5]];
    let mut x = Vec::with_capacity(n * 5);
    for _ in 0..n {
        let s: [f64; 2] = [
            StandardNormal.sample(&mut rng),
            StandardNormal.sample(&mut rng),
        ];
        for (w0, w1) in w[0].iter().zip(&w[1]) {
            let e: f64 = StandardNormal.sample(&mut rng);
            x.push(s[0] * w0 + s[1] * w1 + 0.1 * e);
        }
    }
    data(x, n, 5)
}

/// Bayesian PCA leaves the all-zero saddle by default (one factor of the product starts from a
/// draw), explains the data (noise precision near 1/0.1²), and says so when a model's own
/// `init` keeps both factors at zero.
#[test]
fn bilinear_models_leave_the_zero_saddle() {
    let data = low_rank(200);
    let fit = Model::from_source("bpca.occam", &bpca(""), &data)
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    let w = fit.posterior("W").unwrap();
    let mean = &w.param("mean").unwrap().values;
    assert!(mean.iter().any(|m| m.abs() > 0.1), "W stayed at zero");
    let tau = fit.posterior("tau").unwrap();
    let tau = tau.param("shape").unwrap().values[0] / tau.param("rate").unwrap().values[0];
    assert!((50.0..200.0).contains(&tau), "noise precision {tau}");
    assert!(!fit
        .outcome()
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::ProductAtZero { .. })));

    let stuck = Model::from_source(
        "bpca.occam",
        &bpca("init W = prior\ninit X = prior\n"),
        &data,
    )
    .unwrap()
    .fit(&Settings::default())
    .unwrap();
    let warning = stuck
        .outcome()
        .warnings
        .iter()
        .find(|w| matches!(w, Warning::ProductAtZero { .. }))
        .expect("a warning for the zero product");
    let text = warning.to_string();
    assert!(
        text.contains("`W` and `X`") && text.contains("bpca.occam:7:1"),
        "{text}"
    );
}
