//! A square matrix whose ARD precision lives in its row plate, as in BayesPy's LDS example
//! (`A[L] over L ~ GaussianARD(0, alpha)` with `alpha[L]`): the precision gathers along the event
//! plate, one per column, which is what users of BayesPy mean by it. It used to panic in `fit`
//! ("range end index 22 out of range for slice of length 20"): the precision was aligned with the
//! row plate and gathered along it at once.

use occam::{DataSet, Model, Settings};

const SQUARE: &str = "\
plate L = 10
alpha[L] ~ Gamma(1e-5, 1e-5)
A[L] over L ~ GaussianARD(mean = 0, precision = alpha)
x1 over L ~ MvGaussian(mean = 0, precision = identity)
y1[L] ~ Gaussian(mean = dot(A[L], x1), precision = 1)
observe y1
";

/// The same model with the rows in a plate of their own: the precision is plainly per column.
const RENAMED: &str = "\
plate L = 10
plate R = 10
alpha[L] ~ Gamma(1e-5, 1e-5)
A[R] over L ~ GaussianARD(mean = 0, precision = alpha)
x1 over L ~ MvGaussian(mean = 0, precision = identity)
y1[R] ~ Gaussian(mean = dot(A[R], x1), precision = 1)
observe y1
";

fn data() -> DataSet {
    let mut d = DataSet::new();
    let y: Vec<f64> = (0..10).map(|i| (i as f64 * 1.3).sin() * 2.0).collect();
    d.insert_array("y1", 10, 1, y, None).unwrap();
    d
}

#[test]
fn square_ard_in_the_row_plate_means_a_precision_per_column() {
    let settings = Settings {
        max_iter: 30,
        ..Settings::default()
    };
    let square = Model::from_source("square.occam", SQUARE, &data())
        .unwrap()
        .fit(&settings)
        .unwrap();
    let renamed = Model::from_source("renamed.occam", RENAMED, &data())
        .unwrap()
        .fit(&settings)
        .unwrap();
    let (a, b) = (square.bound(), renamed.bound());
    assert!(a.is_finite());
    assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{a} vs {b}");
    let alpha = |f: &occam::Fitted| {
        f.posterior("alpha")
            .unwrap()
            .param("mean")
            .unwrap()
            .values
            .clone()
    };
    let (pa, pb) = (alpha(&square), alpha(&renamed));
    assert_eq!(pa.len(), 10);
    for (x, y) in pa.iter().zip(&pb) {
        assert!((x - y).abs() <= 1e-9 * (1.0 + y.abs()), "{pa:?} vs {pb:?}");
    }
}
