//! The binary-network tools of occam-binary, wired as `occam bm ...` and `occam sbn ...`.

use crate::common;
use common::*;

fn log_z(method: &str) -> serde_json::Value {
    let out = succeeded(occam().args([
        "bm",
        "logz",
        "--fg",
        "crates/occam-binary/data/grid4x4.fg",
        "--json",
        "--method",
        method,
    ]));
    json(&out)
}

#[test]
fn bm_log_z_bounds_lie_below_the_exact_value() {
    let exact = log_z("exact")["log_z"].as_f64().unwrap();
    for m in ["mf", "mixture"] {
        let r = log_z(m);
        assert_eq!(r["is_lower_bound"], true, "{m}");
        assert!(r["log_z"].as_f64().unwrap() <= exact + 1e-9, "{m}: {r}");
    }
}

#[test]
fn bm_errors_exit_2() {
    occam()
        .args([
            "bm",
            "logz",
            "--fg",
            "crates/occam-binary/data/grid4x4.fg",
            "--method",
            "nope",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown method `nope`"));
    occam()
        .args(["bm", "logz", "--fg", "no/such.fg"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no/such.fg"));
}

#[test]
fn sbn_learn_then_log_likelihoods() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net.csv");
    occam()
        .args([
            "sbn",
            "learn",
            "crates/occam-binary/data/sbn/saul_246_bottom_off.csv",
        ])
        .args(["--layers", "2,4,6", "--steps", "3", "--out"])
        .arg(&net)
        .assert()
        .success();
    let out = succeeded(occam().args(["sbn", "loglik"]).arg(&net).args([
        "crates/occam-binary/data/sbn/saul_246_bottom_off.csv",
        "--method",
        "exact,mf",
    ]));
    let csv = String::from_utf8_lossy(&out.stdout);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("pattern,exact,exact_is_lower_bound,mf,mf_is_lower_bound")
    );
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let (exact, mf): (f64, f64) = (f[1].parse().unwrap(), f[3].parse().unwrap());
        assert!(mf <= exact + 1e-9, "{l}");
    }
}
