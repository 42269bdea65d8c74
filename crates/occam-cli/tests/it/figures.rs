//! Every reproduction of the binary-network studies runs from a seed and writes its tables (CSV,
//! JSON) and its figure (SVG) into `--out DIR`.

use crate::common;
use common::*;

use std::path::Path;

/// Checks `<dir>/<stem>.{csv,json,svg}`: the SVG has one series polyline per expected label, a
/// legend entry per label and per reference line.
fn check_outputs(dir: &Path, stem: &str, labels: &[&str], references: usize) -> String {
    for ext in ["csv", "json"] {
        let p = dir.join(format!("{stem}.{ext}"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        assert!(text.lines().count() >= 2, "{p:?}: {text}");
        if ext == "json" {
            serde_json::from_str::<serde_json::Value>(&text).unwrap();
        }
    }
    let p = dir.join(format!("{stem}.svg"));
    let svg = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(
        svg.matches("<polyline class=\"series\"").count(),
        labels.len(),
        "{svg}"
    );
    for l in labels {
        assert!(
            svg.contains(&format!("<polyline class=\"series\" data-label=\"{l}\"")),
            "no series {l}"
        );
        assert!(
            svg.contains("class=\"legend\"") && svg.contains(&format!(">{l}</text>")),
            "no legend entry {l}"
        );
    }
    assert_eq!(
        svg.matches("class=\"reference\"").count(),
        references,
        "{svg}"
    );
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
    svg
}

fn run(args: &[&str], dir: &Path) {
    let out = occam().args(args).arg("--out").arg(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The report is still printed.
    json(&out);
}

#[test]
fn bm_sk_fig4_figure() {
    let dir = tempfile::tempdir().unwrap();
    run(
        &["bm", "reproduce", "sk-fig4", "--networks", "1"],
        dir.path(),
    );
    check_outputs(dir.path(), "sk_fig4", &["η mf→tm", "η tm→to"], 0);
}

#[test]
fn bm_lawrence_toy_figure() {
    let dir = tempfile::tempdir().unwrap();
    run(
        &["bm", "reproduce", "lawrence-toy", "--seed", "1"],
        dir.path(),
    );
    let svg = check_outputs(
        dir.path(),
        "lawrence_toy",
        &[
            "exact",
            "mean-field",
            "mean-field-from-positive",
            "mixture-2",
        ],
        1,
    );
    assert!(svg.contains("ln 2 / 4 = 0.1733"));
    let trace = std::fs::read_to_string(dir.path().join("lawrence_toy_trace.csv")).unwrap();
    assert_eq!(trace.lines().count(), 1 + 4 * 400);
}

#[test]
fn bm_lawrence_fig4_2_figure() {
    let dir = tempfile::tempdir().unwrap();
    run(
        &["bm", "reproduce", "lawrence-fig4-2", "--networks", "1"],
        dir.path(),
    );
    check_outputs(
        dir.path(),
        "lawrence_fig4_2",
        &["Σ sq. correlation error", "bound gap ln Z − L"],
        0,
    );
}

#[test]
fn sbn_lawrence_fig2_4_figure() {
    let dir = tempfile::tempdir().unwrap();
    run(
        &["sbn", "repro", "lawrence-fig2.4", "--size", "2"],
        dir.path(),
    );
    check_outputs(dir.path(), "lawrence_fig2_4", &["mean relative error"], 0);
    let csv = std::fs::read_to_string(dir.path().join("lawrence_fig2_4.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 5);
}

#[test]
fn sbn_lk_table1_figure() {
    let dir = tempfile::tempdir().unwrap();
    run(&["sbn", "repro", "lk-table1", "--size", "1"], dir.path());
    check_outputs(
        dir.path(),
        "lk_table1",
        &["a = 0.5", "a = 1", "a = 1.5", "a = 2"],
        0,
    );
    let csv = std::fs::read_to_string(dir.path().join("lk_table1.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 16);
}

#[test]
fn sbn_lk_learning_figure() {
    let dir = tempfile::tempdir().unwrap();
    run(
        &["sbn", "repro", "lk-learning", "--size", "1", "--steps", "5"],
        dir.path(),
    );
    check_outputs(dir.path(), "lk_learning", &["mean field", "third order"], 0);
}

#[test]
fn sbn_lawrence_bars_figure() {
    let dir = tempfile::tempdir().unwrap();
    run(
        &[
            "sbn",
            "repro",
            "lawrence-bars",
            "--size",
            "1",
            "--steps",
            "5",
        ],
        dir.path(),
    );
    let svg = check_outputs(dir.path(), "lawrence_bars", &["mean over runs (± s.e.)"], 1);
    assert!(svg.contains("generator bound -3.3791"), "{svg}");
}
