//! The predictive of a multinomial regression whose weights have one Gaussian q over every
//! class's (the engine's softmax q-block): new rows' classes are drawn with the weights drawn
//! from that joint q, not class by class from its marginals — which would lose the cross-class
//! covariance (the data inform the contrasts w_k − w_0; the classes' common direction keeps its
//! prior) and give wider contrasts, so probabilities pulled towards uniform.
//!
//! The reference is E_q[softmax(W x*)] by Monte Carlo in this test (its own generator, 200,000
//! draws of W from N(m, Σ) with the fit's `mean` and `joint_covariance`), and beside it the same
//! with W drawn from the per-class marginals (block-diagonal Σ), which the test asserts to lie far
//! from the joint one, so that it tells the two apart.

use occam::{DataSet, Model, Settings};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

const MODEL: &str = "plate K = 3\nplates N, D from data X\ndata X[N] over D\n\
    w[K] over D ~ MvGaussian(mean = 0, precision = identity)\n\
    c[N] ~ Categorical(softmax(w @ X[N]))\nobserve c\n";

/// Ten rows of two inputs and their classes (separated by the sign of the inputs), then the rows
/// `extra` with their classes missing.
fn data_with(extra: &[[f64; 2]]) -> DataSet {
    let mut x = vec![
        [1.3, 1.2],
        [1.5, 0.4],
        [0.9, 1.6],
        [-1.1, 1.3],
        [-1.4, 0.6],
        [-0.6, 1.8],
        [-0.9, -1.1],
        [0.1, -1.7],
        [-1.2, -0.8],
        [0.8, -0.2],
    ];
    let mut c = vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 0.0];
    x.extend_from_slice(extra);
    c.extend(extra.iter().map(|_| f64::NAN));
    let mut d = DataSet::new();
    d.insert_array("X", x.len(), 2, x.concat(), None).unwrap();
    d.insert_array("c", c.len(), 1, c, None).unwrap();
    d
}

fn data() -> DataSet {
    data_with(&[])
}

/// The model fitted to `d` with the defaults.
fn fit(d: &DataSet) -> occam::Fitted {
    Model::from_source("m.occam", MODEL, d)
        .unwrap()
        .fit(&Settings::default())
        .unwrap()
}

/// 20,000 draws, seed 11.
const DRAWS: usize = 20_000;

fn draw_options() -> occam::predict::PredictOptions {
    occam::predict::PredictOptions {
        draws: DRAWS,
        seed: 11,
        ..Default::default()
    }
}

/// E[softmax(W x)] for W ~ N(mean, cov) over its K·D = 6 weights (class-major), by Monte Carlo.
fn expected_softmax(mean: &[f64], cov: &[f64], x: [f64; 2], draws: usize, seed: u64) -> [f64; 3] {
    let j = 6;
    let mut l = vec![0.0; j * j];
    assert!(occam_core::linalg::cholesky_into(cov, 1.0, j, &mut l));
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut acc = [0.0; 3];
    let mut z = [0.0; 6];
    for _ in 0..draws {
        z.iter_mut()
            .for_each(|v| *v = StandardNormal.sample(&mut rng));
        let w: Vec<f64> = (0..j)
            .map(|a| mean[a] + (0..=a).map(|b| l[a * j + b] * z[b]).sum::<f64>())
            .collect();
        let eta: Vec<f64> = (0..3)
            .map(|k| w[2 * k] * x[0] + w[2 * k + 1] * x[1])
            .collect();
        let top = eta.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = eta.iter().map(|v| (v - top).exp()).collect();
        let total: f64 = e.iter().sum();
        for k in 0..3 {
            acc[k] += e[k] / total;
        }
    }
    acc.map(|v| v / draws as f64)
}

/// The fit's `mean` and `joint_covariance` of w, and the joint's diagonal blocks (the per-class
/// marginals).
fn joint_and_marginal(fitted: &occam::Fitted) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let post = fitted.posterior("w").unwrap();
    let mean = post.param("mean").unwrap().values.clone();
    let joint = post.param("joint_covariance").unwrap().values.clone();
    assert_eq!((mean.len(), joint.len()), (6, 36));
    let mut marginal = vec![0.0; 36];
    for k in 0..3 {
        for a in 0..2 {
            for b in 0..2 {
                let at = (2 * k + a) * 6 + 2 * k + b;
                marginal[at] = joint[at];
            }
        }
    }
    (mean, joint, marginal)
}

/// The classes' frequencies among the draws `samples` (draw-major, `rows` per draw) at row
/// `row` of the draws, against E_q[softmax(W x)] under the joint q (within 4 standard errors);
/// the largest distance of the per-class reference from the joint one, in standard errors.
fn check_row(fitted: &occam::Fitted, samples: &[f64], rows: usize, row: usize, x: [f64; 2]) -> f64 {
    let (mean, joint, marginal) = joint_and_marginal(fitted);
    let draws = samples.len() / rows;
    let want = expected_softmax(&mean, &joint, x, 200_000, 3);
    let apart = expected_softmax(&mean, &marginal, x, 200_000, 3);
    let mut farthest = 0.0f64;
    for k in 0..3 {
        let hits = (0..draws)
            .filter(|&s| samples[s * rows + row] == k as f64)
            .count();
        let freq = hits as f64 / draws as f64;
        // The frequency's sd, and the reference's own (ten times the draws).
        let se = (want[k] * (1.0 - want[k]) / draws as f64).sqrt() * 1.1_f64.sqrt();
        eprintln!(
            "row {row} class {k}: predicted {freq:.4}, joint q {:.4}, per-class q {:.4}, se {se:.4}",
            want[k], apart[k]
        );
        assert!(
            (freq - want[k]).abs() < 4.0 * se,
            "row {row} class {k}: {freq} against the joint q's {}",
            want[k]
        );
        farthest = farthest.max((apart[k] - want[k]).abs() / se);
    }
    farthest
}

#[test]
fn new_rows_are_drawn_with_the_weights_joint_q() {
    let fitted = fit(&data());
    let rows = [[1.2, 0.9], [-0.3, 0.2], [-1.0, -1.4]];
    let mut new = DataSet::new();
    new.insert_array("X", 3, 2, rows.concat(), None).unwrap();
    let (draws, opts) = (DRAWS, draw_options());
    let p = fitted.predict(&new, &Default::default(), &opts).unwrap();
    let c = p.iter().find(|p| p.name == "c").expect("c's predictive");
    assert_eq!((c.rows, c.cols, c.draws), (3, 1, draws));
    let farthest = (0..3)
        .map(|r| check_row(&fitted, &c.samples, 3, r, rows[r]))
        .fold(0.0, f64::max);
    // The two references are far apart: drawing the classes apart would fail the test.
    assert!(
        farthest > 10.0,
        "joint and per-class differ by {farthest} se at most"
    );
}

/// The missing entries of the fitted data: drawn with the weights drawn from the joint q and the
/// logits following each draw (the logits' moments formed from the joint q itself would give
/// every draw the same probabilities, softmax of their means).
#[test]
fn missing_classes_are_drawn_with_the_weights_joint_q() {
    let rows = [[1.2, 0.9], [-0.3, 0.2], [-1.0, -1.4]];
    let fitted = fit(&data_with(&rows));
    let (draws, opts) = (DRAWS, draw_options());
    let p = fitted.predict_missing(&opts).unwrap();
    let c = p.iter().find(|p| p.name == "c").expect("c's predictive");
    assert_eq!((c.rows, c.draws), (13, draws));
    let farthest = (0..3)
        .map(|r| check_row(&fitted, &c.samples, 13, 10 + r, rows[r]))
        .fold(0.0, f64::max);
    assert!(
        farthest > 10.0,
        "joint and per-class differ by {farthest} se at most"
    );
}

/// The same draws from a fit saved and loaded back (the joint q travels with the saved state).
#[test]
fn a_saved_fit_draws_the_same_bits() {
    let fitted = fit(&data());
    let back = occam::saved::SavedFit::from_json("fit.json", &fitted.saved().to_json()).unwrap();
    let loaded = occam::Fitted::from_saved(&back).unwrap();
    let mut new = DataSet::new();
    new.insert_array("X", 1, 2, vec![0.4, -0.7], None).unwrap();
    let opts = occam::predict::PredictOptions {
        draws: 500,
        ..Default::default()
    };
    let live = fitted.predict(&new, &Default::default(), &opts).unwrap();
    let again = loaded.predict(&new, &Default::default(), &opts).unwrap();
    assert_eq!(live, again);
}
