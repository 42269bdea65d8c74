//! The gated q-block from the command line: `fit --json` of the mixture of Bayesian PCA written
//! in the language (`examples/mbpca/mbpca.occam`, `q joint(s, x)`) lists the block in `q_blocks`
//! with its kind, and never lowers its bound (the W·x rotation, which would break q(x, s), is
//! not offered for a member of a q-block).

use crate::common::{floats, json, occam, succeeded};

#[test]
fn fit_json_lists_the_gated_block() {
    let out = succeeded(occam().args([
        "fit",
        "--json",
        "examples/mbpca/mbpca.occam",
        "--data",
        "t=examples/mbpca/sphere.csv",
    ]));
    let v = json(&out);
    let blocks = v["q_blocks"].as_array().expect("q_blocks");
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0]["kind"], "gated");
    assert_eq!(blocks[0]["members"], serde_json::json!(["s", "x"]));
    let trace = floats(&v["bound_trace"]);
    assert!(trace.len() > 2);
    for w in trace.windows(2) {
        assert!(w[1] >= w[0] - 1e-9 * w[0].abs(), "{} then {}", w[0], w[1]);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("decreased"), "{stderr}");
}
