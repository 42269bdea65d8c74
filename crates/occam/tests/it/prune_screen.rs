//! The pruning screen (`driver/screen.rs`, the engine's `prune::screen`): on data with fewer
//! clusters than components it passes every deletion the unscreened pruning accepts, so both
//! reach the same state bit for bit, with fewer full trials; and it is the same for a seed
//! whatever the number of threads. The N threshold is lowered so that the test runs at N = 20,000
//! (the default screens from N = 10⁵).

use occam::{DataSet, Fitted, Model, Settings};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

const MODEL: &str = "plate K = 6
plates N, D from data y
alpha ~ Dirichlet(1e-5) over K
z[N] ~ Categorical(alpha)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-5)
Lambda[K] over D ~ Wishart(dof = 2, rate = identity * 1e-5)
y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
";

/// Three well-separated clusters, sds (1, 0.5), equal weights: the k-means start of six
/// components splits each in two, and pruning merges them back.
fn data(n: usize) -> DataSet {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    let centres = [[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]];
    let mut values = Vec::with_capacity(2 * n);
    for i in 0..n {
        let c = centres[i % 3];
        let (a, b): (f64, f64) = (
            StandardNormal.sample(&mut rng),
            StandardNormal.sample(&mut rng),
        );
        values.extend([c[0] + a, c[1] + 0.5 * b]);
    }
    let mut data = DataSet::new();
    data.insert_array("y", n, 2, values, None).unwrap();
    data
}

fn model(n: usize) -> Model {
    Model::from_source("three.occam", MODEL, &data(n)).unwrap()
}

fn fit(m: &Model, screen_from: usize, threads: usize) -> Fitted {
    let settings = Settings {
        seed: 1,
        prune_screen_from: screen_from,
        ..Settings::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| m.fit(&settings).unwrap())
}

#[test]
fn the_screen_keeps_every_accepted_deletion_and_skips_rejected_trials() {
    let m = model(20_000);
    let (full_fit, screened_fit) = (fit(&m, usize::MAX, 2), fit(&m, 10_000, 2));
    let (full, screened) = (full_fit.outcome(), screened_fit.outcome());
    assert!(full.prune_screen.is_none());
    let counts = screened.prune_screen.expect("N ≥ the threshold: screened");
    assert_eq!(counts.rows, 2_000, "m = N/10");
    // The unscreened pruning deletes the three surplus components (6 → 3 in use) ...
    assert_eq!(full.components[0].in_use, 3, "{:?}", full.components);
    // ... and so does the screened one, to the same state bit for bit.
    assert_eq!(screened.components, full.components);
    assert_eq!(screened.bound.to_bits(), full.bound.to_bits());
    assert_eq!(screened.bound_trace, full.bound_trace);
    // Every posterior parameter and moment, bit for bit (the per-node terms may differ in the
    // last bits: cached sums of the fused update against sums formed after a restore).
    assert_eq!(
        format!("{:?}", screened_fit.posteriors()),
        format!("{:?}", full_fit.posteriors())
    );
    // The screen rejected some deletions of real clusters, which then had no full trial.
    assert!(counts.screened > counts.passed, "{counts:?}");
    assert!(
        screened.prune_trials < full.prune_trials,
        "{} full trials screened, {} unscreened",
        screened.prune_trials,
        full.prune_trials
    );
}

#[test]
fn the_screen_is_the_same_for_a_seed_whatever_the_threads() {
    let m = model(20_000);
    let (one, two) = (fit(&m, 10_000, 1), fit(&m, 10_000, 2));
    let (one, two) = (one.outcome(), two.outcome());
    assert!(one.prune_screen.is_some());
    assert_eq!(one.prune_screen, two.prune_screen);
    assert_eq!(one.prune_trials, two.prune_trials);
    assert_eq!(one.bound.to_bits(), two.bound.to_bits());
    assert_eq!(one.components, two.components);
}

#[test]
fn below_the_threshold_nothing_is_screened() {
    let m = model(3_000);
    let o = fit(&m, Settings::default().prune_screen_from, 2);
    let o = o.outcome();
    assert!(o.prune_screen.is_none());
    assert!(o.prune_trials > 0);
}

#[test]
fn a_screen_must_be_the_model_on_fewer_rows() {
    let compile = |text: &str, n: usize| {
        let m = Model::from_source("three.occam", text, &data(n)).unwrap();
        m.loaded().compile(true).unwrap().vmp
    };
    let mut full = compile(MODEL, 300);
    let all_rows = full.set_prune_screen(vec![compile(MODEL, 300)]);
    let e = all_rows.unwrap_err().to_string();
    assert!(e.contains("fewer of its 300 rows (got 300)"), "{e}");
    let other = full.set_prune_screen(vec![compile(&MODEL.replace("K = 6", "K = 5"), 30)]);
    let e = other.unwrap_err().to_string();
    assert!(e.contains("fewer of its 300 rows"), "{e}");
    assert!(full
        .set_prune_screen(vec![compile(MODEL, 30), compile(MODEL, 40)])
        .is_ok());
}
