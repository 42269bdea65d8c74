//! Winn §1.8.7: a K = 5 mixture fitted to 150 points from three 1-D Gaussians. Over 20 seeds most
//! runs keep three components, and the bound never decreases (`--strict` makes a decrease an
//! error).

use crate::common;
use common::*;

#[test]
fn committed_data_is_what_the_generator_draws() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("y.csv");
    occam()
        .args([
            "sample",
            "examples/winn_1d_mixture/generator/generate.occam",
        ])
        .args(["--plate", "N=150", "--seed", "3", "--out"])
        .arg(&out)
        .assert()
        .success();
    let drawn = std::fs::read_to_string(&out).unwrap();
    let committed = std::fs::read_to_string(root().join("examples/winn_1d_mixture/y.csv")).unwrap();
    assert_eq!(drawn, committed);
}

#[test]
fn most_of_twenty_seeds_keep_three_components() {
    let mut three = 0;
    let mut counts = Vec::new();
    for seed in 0..20 {
        let out = occam()
            .args([
                "fit",
                "examples/winn_1d_mixture/mixture.occam",
                "--json",
                "--strict",
            ])
            .args(["--seed", &seed.to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "seed {seed}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j = json(&out);
        assert_monotone_segments(&j, &format!("seed {seed}"));
        let k = components_in_use(&j["variables"]["z"]["moments"]);
        counts.push(k);
        if k == 3 {
            three += 1;
        }
    }
    assert!(three > 10, "components kept per seed: {counts:?}");
}
