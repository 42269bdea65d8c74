//! The VIBES tutorial (Winn §2.4): the five models compared on data drawn by `occam sample` from
//! the generator; their bounds must be ordered as in the thesis.

use crate::common;
use common::*;

#[test]
fn committed_data_is_what_the_generator_draws() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.csv");
    occam()
        .args(["sample", "examples/vibes_tutorial/generator/generate.occam"])
        .args(["--plate", "N=500", "--plate", "D=2", "--seed", "1", "--out"])
        .arg(&out)
        .assert()
        .success();
    let drawn = std::fs::read_to_string(&out).unwrap();
    let committed = std::fs::read_to_string(root().join("examples/vibes_tutorial/x.csv")).unwrap();
    assert_eq!(drawn, committed);
}

#[test]
fn five_models_in_thesis_order() {
    let models = [
        "single",
        "mixture",
        "shared_gamma",
        "separable",
        "shared_pi_gamma",
    ];
    let out = succeeded(
        occam()
            .arg("compare")
            .args(models.map(|m| format!("examples/vibes_tutorial/{m}.occam")))
            .args(["--data", "x=examples/vibes_tutorial/x.csv", "--json"]),
    );
    let j = json(&out);
    let rows = j["models"].as_array().unwrap();
    let bounds: Vec<f64> = rows.iter().map(|r| r["bound"].as_f64().unwrap()).collect();
    for w in bounds.windows(2) {
        assert!(w[0] < w[1], "thesis order violated: {bounds:?}");
    }
    let probs: Vec<f64> = rows
        .iter()
        .map(|r| r["probability"].as_f64().unwrap())
        .collect();
    assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert_eq!(rows[4]["difference"].as_f64().unwrap(), 0.0);
    assert_eq!(j["best"], "examples/vibes_tutorial/shared_pi_gamma.occam");
}

#[test]
fn mixture_keeps_nine_components() {
    let out = succeeded(occam().args(["fit", "examples/vibes_tutorial/mixture.occam", "--json"]));
    let j = json(&out);
    assert_eq!(components_in_use(&j["variables"]["lambda"]["moments"]), 9);
}
