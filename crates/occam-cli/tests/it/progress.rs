//! `fit --progress`: progress lines on stderr when stderr is not a terminal (as in a pipe or a
//! log), the first without a change (there is none yet, it used to read `change NaN`); and
//! `fit --out` writing the per-variable tables and leaving observed data out of
//! `posterior.json` unless `--include-data` is given.

use crate::common;

use common::{occam, succeeded};

#[test]
fn progress_lines_every_n_iterations_without_nan() {
    let out = succeeded(occam().args([
        "fit",
        "examples/bayespy/quickstart/quickstart.occam",
        "--progress",
        "2",
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The set-up and the end are timed from the command's start, around the iterations.
    let all: Vec<&str> = stderr.lines().collect();
    assert!(all[0].starts_with("fit: read the data ("), "{stderr}");
    assert!(all[1].starts_with("fit: loaded the model ("), "{stderr}");
    assert!(all[all.len() - 1].starts_with("fit: fitted ("), "{stderr}");
    let lines: Vec<&str> = all
        .iter()
        .copied()
        .filter(|l| l.starts_with("fit: iteration"))
        .collect();
    assert!(lines.len() >= 2, "{stderr}");
    assert!(lines[0].ends_with(" s since the start)"), "{stderr}");
    assert!(
        lines[0].starts_with("fit: iteration 1/1000 bound -"),
        "{stderr}"
    );
    assert!(!lines[0].contains("change"), "{stderr}");
    assert!(
        lines[1].starts_with("fit: iteration 2/1000 bound -") && lines[1].contains(" change "),
        "{stderr}"
    );
    assert!(!stderr.contains("NaN"), "{stderr}");
    // Without a value: every 10 iterations (and the first).
    let out = succeeded(occam().args([
        "fit",
        "examples/vibes_tutorial/mixture.occam",
        "--data",
        "x=examples/vibes_tutorial/x.csv",
        "--progress",
        "--no-prune",
        "--max-iter",
        "25",
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let its: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("fit: iteration "))
        .map(|l| l.split('/').next().unwrap())
        .collect();
    assert_eq!(its, ["1", "10", "20"], "{stderr}");
    // Without --progress, nothing on stderr (not a terminal).
    let out = succeeded(occam().args(["fit", "examples/bayespy/quickstart/quickstart.occam"]));
    assert!(out.stderr.is_empty());
    // Zero is not a period.
    let out = occam()
        .args([
            "fit",
            "examples/bayespy/quickstart/quickstart.occam",
            "--progress",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--progress 0"));
}

#[test]
fn fit_out_writes_tables_and_leaves_data_out_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    succeeded(occam().args([
        "fit",
        "examples/winn_1d_mixture/mixture.occam",
        "--out",
        a.to_str().unwrap(),
    ]));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("posterior.json")).unwrap()).unwrap();
    assert!(json["variables"]["y"]["omitted"].is_string());
    let z = std::fs::read_to_string(a.join("posterior_z.csv")).unwrap();
    assert!(z.starts_with("N,probability[0],"), "{z}");
    assert!(z.lines().next().unwrap().ends_with(",most_probable"));
    assert_eq!(z.lines().count(), 151);
    let b = dir.path().join("b");
    succeeded(occam().args([
        "fit",
        "examples/winn_1d_mixture/mixture.occam",
        "--out",
        b.to_str().unwrap(),
        "--include-data",
    ]));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("posterior.json")).unwrap()).unwrap();
    assert_eq!(
        json["variables"]["y"]["moments"].as_array().unwrap().len(),
        150
    );
    // --include-data without --out is a usage error.
    let out = occam()
        .args([
            "fit",
            "examples/winn_1d_mixture/mixture.occam",
            "--include-data",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out"));
}
