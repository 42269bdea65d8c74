//! The text report fills a missing entry of an observed variable with its posterior predictive
//! (it printed `0.0000 ± 0.0000` before), and a saved fit predicts as the live one.

use occam::{DataSet, Model, Settings};
use occam_report::FittedReport;

const REGRESSION: &str = "plates N, C from data X\ndata X[N] over C\n\
    w over C ~ MvGaussian(mean = 0, precision = identity * 2)\n\
    y[N] ~ Gaussian(mean = dot(X[N], w), precision = 4)\nobserve y\n";

pub fn regression_data(missing: bool) -> DataSet {
    let x = vec![1.0, 0.5, 1.0, -1.0, 1.0, 2.0, 1.0, 0.0, 1.0, 1.5, 1.0, -0.3];
    let mut y = vec![1.2, -0.7, 2.9, 0.4, 2.1, 0.1];
    if missing {
        y[2] = f64::NAN;
    }
    let mut d = DataSet::new();
    d.insert_array("X", 6, 2, x, None).unwrap();
    d.insert_array("y", 6, 1, y, None).unwrap();
    d
}

pub fn regression(missing: bool) -> occam::Fitted {
    Model::from_source("reg.occam", REGRESSION, &regression_data(missing))
        .unwrap()
        .fit(&Settings::default())
        .unwrap()
}

#[test]
fn a_missing_entry_is_reported_with_its_predictive() {
    let fit = regression(true);
    let text = fit.summary();
    // Closed form (Bishop (3.58)–(3.59)) at x = (1, 2) from the five observed rows:
    // mean x'μ and sd √(1/β + x'Σx), as the facade's predictive test checks to 1e-10.
    let p = fit.predict_missing(&Default::default()).unwrap();
    let line = format!(
        "[2] {:.4} ± {:.4} (missing: predictive)",
        p[0].mean[2], p[0].sd[2]
    );
    assert!(text.contains(&line), "{text}");
    assert!(!text.contains("[2] 0.0000 ± 0.0000"), "{text}");
    assert!(p[0].sd[2] > 0.5 && p[0].mean[2] > 2.0, "{:?}", p[0].mean);
}

fn new_rows() -> DataSet {
    let mut new = DataSet::new();
    new.insert_array("X", 2, 2, vec![1.0, 3.0, 1.0, -2.0], None)
        .unwrap();
    new
}

#[test]
fn a_saved_fit_predicts_the_same_bits_and_warm_starts_converged() {
    use occam::saved::SavedFit;
    let fit = regression(false);
    let opts = occam::predict::PredictOptions::default();
    let sizes = Default::default();
    let live = fit.predict(&new_rows(), &sizes, &opts).unwrap();
    let text = fit.saved().to_json();
    let back = SavedFit::from_json("fit.json", &text).unwrap();
    assert_eq!(back, fit.saved());
    let loaded = occam::Fitted::from_saved(&back).unwrap();
    assert_eq!(loaded.posteriors(), fit.posteriors());
    let again = loaded.predict(&new_rows(), &sizes, &opts).unwrap();
    assert_eq!(again, live, "save → load → predict gives the same bits");
    // Warm start on the same data: the saved q is converged, the run stops at once.
    let model = Model::from_source("reg.occam", REGRESSION, &regression_data(false)).unwrap();
    let warm = model
        .fit_from(&Settings::default(), &back, &mut ())
        .unwrap();
    assert!(
        warm.outcome().iterations <= 2,
        "{:?}",
        warm.outcome().bound_trace
    );
    assert!((warm.bound() - fit.bound()).abs() < 1e-9 * fit.bound().abs());
    assert!(fit.outcome().iterations >= 2);
}

#[test]
fn an_old_or_damaged_fit_file_is_a_clear_error() {
    use occam::saved::SavedFit;
    let text = regression(false).saved().to_json();
    let old = text.replacen("\"version\":1", "\"version\":0", 1);
    let e = SavedFit::from_json("old/fit.json", &old)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("old/fit.json") && e.contains("version 0") && e.contains("version 1"),
        "{e}"
    );
    for cut in [0, 1, text.len() / 3, text.len() - 1] {
        let e = SavedFit::from_json("cut.json", &text[..cut])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cut.json") && e.contains("truncated or damaged"),
            "{e}"
        );
    }
    let e = SavedFit::from_json("x.json", "{\"a\": 1}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an Occam fit file"), "{e}");
    // A changed number in the data breaks its hash.
    let tampered = text.replacen("-0.7", "-0.8", 1);
    let saved = SavedFit::from_json("t.json", &tampered).unwrap();
    let e = occam::Fitted::from_saved(&saved).err().unwrap().to_string();
    assert!(e.contains("hash"), "{e}");
}

/// A warm start from a fit stopped early reaches the full run's bound in at most the
/// iterations the full run had left: the saved q is where the stopped run was, and the
/// warm run's sweeps are the full run's from there on.
#[test]
fn a_warm_start_from_a_stopped_fit_needs_at_most_the_remaining_iterations() {
    use occam::saved::SavedFit;
    let src = "plates N from data x\nmu ~ Gaussian(mean = 0, precision = 1e-3)\n\
        tau ~ Gamma(shape = 1e-3, rate = 1e-3)\nx[N] ~ Gaussian(mean = mu, precision = tau)\n";
    let xs: Vec<f64> = (0..30)
        .map(|i| 5.0 + ((i * 37 % 17) as f64 - 8.0) * 0.4)
        .collect();
    let mut d = DataSet::new();
    d.insert_array("x", xs.len(), 1, xs, None).unwrap();
    let model = Model::from_source("normal.occam", src, &d).unwrap();
    let settings = Settings {
        tol: 1e-12,
        ..Settings::default()
    };
    let full = model.fit(&settings).unwrap();
    let n = full.outcome().iterations;
    assert!(full.outcome().converged && n >= 6, "{n}");
    for stop in [1, 3, n / 2] {
        let early = model
            .fit(&Settings {
                max_iter: stop,
                ..settings.clone()
            })
            .unwrap();
        assert!(!early.outcome().converged);
        let saved = SavedFit::from_json("fit.json", &early.saved().to_json()).unwrap();
        let warm = model.fit_from(&settings, &saved, &mut ()).unwrap();
        let m = warm.outcome().iterations;
        println!("stopped at {stop}: warm start {m} sweeps, full run {n}");
        assert!(warm.outcome().converged);
        assert!(
            m <= n - stop,
            "{m} sweeps after {stop}, the full run took {n}"
        );
        assert!(
            (warm.bound() - full.bound()).abs() <= 1e-10 * full.bound().abs(),
            "{} {}",
            warm.bound(),
            full.bound()
        );
    }
}

#[test]
fn predicting_from_a_model_that_observes_nothing_is_an_error() {
    // REGRESSION without its `observe` line and without y's data: nothing is observed, and the
    // predictive of new rows would be empty (it was returned empty and written as nothing).
    let text = REGRESSION.replace("observe y\n", "");
    let mut d = DataSet::new();
    let x = regression_data(false).tables["X"].clone();
    d.tables.insert("X".into(), x.clone());
    let f = Model::from_source("reg.occam", &text, &d)
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    let mut new = DataSet::new();
    new.tables.insert("X".into(), x);
    let e = f
        .predict(&new, &Default::default(), &Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("reg.occam") && e.contains("nothing to predict") && e.contains("observe y"),
        "{e}"
    );
    // With y observed the same call predicts.
    let p = regression(false)
        .predict(&new, &Default::default(), &Default::default())
        .unwrap();
    assert_eq!(p.len(), 1);
}
