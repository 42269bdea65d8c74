//! Helpers shared by the CLI tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// The workspace root (tests run the binary from there, as the README does).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `occam` run from the workspace root, with plain diagnostics.
pub fn occam() -> Command {
    let mut c = Command::cargo_bin("occam").unwrap();
    c.current_dir(root()).env("OCCAM_PLAIN", "1");
    c
}

/// Runs the command and asserts it succeeded, showing stderr otherwise.
pub fn succeeded(mut cmd: impl std::borrow::BorrowMut<Command>) -> Output {
    let out = cmd.borrow_mut().output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Parses stdout as JSON.
pub fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Numbers of a JSON array (nested arrays flattened).
pub fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(floats).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap()],
        _ => panic!("not numeric: {v}"),
    }
}

/// The BayesPy fixtures of the core's tests (read-only; the same numbers the core is tested on).
pub fn bayespy() -> Value {
    let p = root().join("crates/occam-core/tests/fixtures/bayespy_examples.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Number of mixture components in use: categories with expected count above 0.5.
pub fn components_in_use(index_moments: &Value) -> usize {
    let rows: Vec<Vec<f64>> = index_moments
        .as_array()
        .unwrap()
        .iter()
        .map(floats)
        .collect();
    let k = rows[0].len();
    (0..k)
        .filter(|&j| rows.iter().map(|r| r[j]).sum::<f64>() > 0.5)
        .count()
}

/// The bound never decreases within the VMP run, nor within the pruning stage (which restarts
/// from the state after deleting a component, so the trace may jump where it starts).
pub fn assert_monotone_segments(fit: &Value, what: &str) {
    let trace = floats(&fit["bound_trace"]);
    let cut = fit["prune_start"]
        .as_u64()
        .map_or(trace.len(), |c| c as usize);
    for seg in [&trace[..cut], &trace[cut..]] {
        for w in seg.windows(2) {
            assert!(
                w[1] >= w[0] - 1e-9 * (1.0 + w[0].abs()),
                "{what}: decrease {w:?}"
            );
        }
    }
}

/// Runs `occam args...` in a scratch directory holding `files` (killed after 120 s): (exit code,
/// stdout, stderr). Whatever the outcome, it must not be a panic, an allocation abort or a stack
/// overflow.
pub fn run_in(files: &[(&str, &[u8])], args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let out = Command::cargo_bin("occam")
        .unwrap()
        .current_dir(dir.path())
        .env("OCCAM_PLAIN", "1")
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    for crash in [
        "internal error",
        "memory allocation",
        "overflowed its stack",
    ] {
        assert!(!stderr.contains(crash), "{args:?}: {stderr}");
    }
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}
