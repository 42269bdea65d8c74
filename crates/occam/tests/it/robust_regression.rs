//! The robust-regression example (examples/robust_regression): 100 points of y = 1 + 2x + noise
//! (sd 0.5) with 10 outliers in the upper right, fitted with Student-t noise of unknown ν (the
//! scale mixture with a random Gamma shape, Winn Example 2.1) and with Gaussian noise. Numbers
//! in the example's README.

use occam::{DataSet, Fitted, Model, Settings};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/robust_regression")
}

fn fit(model: &str) -> Fitted {
    let mut data = DataSet::new();
    data.insert_file("X", &dir().join("X.csv")).unwrap();
    data.insert_file("y", &dir().join("y.csv")).unwrap();
    let fit = Model::from_file(dir().join(model), &data)
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    assert!(fit.outcome().converged);
    let t = &fit.outcome().bound_trace;
    assert!(t.windows(2).all(|w| w[1] >= w[0] - 1e-12 * w[0].abs()));
    fit
}

fn weights(fit: &Fitted) -> Vec<f64> {
    fit.posterior("w")
        .unwrap()
        .param("mean")
        .unwrap()
        .values
        .clone()
}

#[test]
fn student_t_noise_recovers_the_line_that_gaussian_noise_misses() {
    let robust = fit("robust_regression.occam");
    let gaussian = fit("gaussian_regression.occam");
    let (wr, wg) = (weights(&robust), weights(&gaussian));
    let nu = robust
        .posterior("nu")
        .unwrap()
        .param("mean")
        .unwrap()
        .values[0];
    eprintln!(
        "Student-t: w {wr:.4?}, ν {nu:.3}, bound {:.4}; Gaussian: w {wg:.4?}, bound {:.4}",
        robust.bound(),
        gaussian.bound()
    );
    // Truth (1, 2): the robust fit within 0.2, the Gaussian one pulled off by more than 0.5.
    assert!(
        (wr[0] - 1.0).abs() < 0.2 && (wr[1] - 2.0).abs() < 0.2,
        "{wr:?}"
    );
    assert!((wg[1] - 2.0).abs() > 0.5, "{wg:?}");
    // Both bounds are exact ELBOs; the heavy-tailed model explains the outliers far better.
    assert!(robust.bound() > gaussian.bound() + 30.0);
    // The outliers get the smallest weights ⟨λ_n⟩.
    let lam = robust
        .posterior("lam")
        .unwrap()
        .param("mean")
        .unwrap()
        .values
        .clone();
    let rows: Vec<usize> = std::fs::read_to_string(dir().join("outliers.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.parse().unwrap())
        .collect();
    let worst_inlier = (0..lam.len())
        .filter(|i| !rows.contains(i))
        .map(|i| lam[i])
        .fold(f64::INFINITY, f64::min);
    for &r in &rows {
        assert!(
            lam[r] < worst_inlier,
            "outlier {r}: ⟨λ⟩ {} ≥ {worst_inlier}",
            lam[r]
        );
    }
}
