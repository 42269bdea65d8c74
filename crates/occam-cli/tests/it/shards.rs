//! `occam fit --shards NAME=GLOB`: the shard files' fit equals the library's sharded fit of the
//! same rows held in memory, and `occam check --split` shows the split or says why there is none.

use occam::data::DataSet;

use crate::common::{json, occam, root, succeeded};

/// The tutorial's data cut into uneven shard files `x-<s>.csv` in `dir`; the shards' data sets.
pub(crate) fn write_shards(dir: &std::path::Path, sizes: &[usize]) -> Vec<DataSet> {
    let mut all = DataSet::new();
    all.insert_file("x", &root().join("examples/vibes_tutorial/x.csv"))
        .unwrap();
    let t = &all.tables["x"];
    assert_eq!(sizes.iter().sum::<usize>(), t.rows);
    let header = t.header.clone().unwrap().join(",");
    let mut out = Vec::new();
    let mut from = 0;
    for (s, &n) in sizes.iter().enumerate() {
        let values = t.values[from * t.cols..(from + n) * t.cols].to_vec();
        let mut text = format!("{header}\n");
        for row in values.chunks(t.cols) {
            let cells: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
            text.push_str(&cells.join(","));
            text.push('\n');
        }
        std::fs::write(dir.join(format!("x-{s}.csv")), text).unwrap();
        let mut d = DataSet::new();
        d.insert_array("x", n, t.cols, values, None).unwrap();
        out.push(d);
        from += n;
    }
    out
}

#[test]
fn shard_files_fit_as_the_same_rows_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let rows = {
        let mut d = DataSet::new();
        d.insert_file("x", &root().join("examples/vibes_tutorial/x.csv"))
            .unwrap();
        d.tables["x"].rows
    };
    let sizes = [
        rows / 5,
        rows / 2,
        rows / 10,
        rows - rows / 5 - rows / 2 - rows / 10,
    ];
    let data = write_shards(dir.path(), &sizes);
    let model = "examples/vibes_tutorial/mixture.occam";
    let glob = format!("x={}/x-*.csv", dir.path().display());
    let out = succeeded(occam().args(["fit", model, "--shards", &glob, "--json", "--seed", "3"]));
    let cli = json(&out);
    let source = std::fs::read_to_string(root().join(model)).unwrap();
    let o = occam::shard::ShardRunOptions {
        method: occam::shard::Method::Batch,
        seed: 3,
        restarts: 1,
        max_iter: 1000,
        tol: 1e-6,
        decrease_is_error: false,
    };
    let lib = occam::shard::fit_shards(model, &source, &data, None, &o, &mut ()).unwrap();
    assert_eq!(cli["bound"].as_f64().unwrap(), lib.bound());
    assert_eq!(cli["shard_rows"], serde_json::json!(sizes));
    assert_eq!(
        cli["bound_trace"].as_array().unwrap().len(),
        lib.bound_trace.len()
    );
    let mu = lib.shards[0].posterior("mu").unwrap();
    let mean = mu.param("mean").unwrap();
    let got: Vec<f64> = cli["globals"]["mu"]["params"]["mean"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(got, mean.values);
    // The bound is the sum of every shard's local terms and the globals' terms: four shards
    // of mu and gamma (20 × 2 elements, 2 moments each) and pi (20), up and down.
    assert_eq!(cli["values_per_sweep"], 2 * 4 * (40 * 2 + 40 * 2 + 20));
}

#[test]
fn check_split_names_the_local_and_global_variables() {
    let out =
        succeeded(occam().args(["check", "examples/vibes_tutorial/mixture.occam", "--split"]));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("data-parallel split along plate N:"),
        "{text}"
    );
    assert!(
        text.contains("local (each shard holds its rows): lambda, x"),
        "{text}"
    );
    assert!(
        text.contains("global (replicated on every shard): pi, mu, gamma"),
        "{text}"
    );
    let out = occam()
        .args([
            "check",
            "examples/vibes_tutorial/mixture.occam",
            "--split",
            "D",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("mixture.occam:") && err.contains("`lambda`"),
        "{err}"
    );
}

/// `occam fit --shards ... --json` with extra arguments, on the tutorial's data in four shards.
pub(crate) fn fit_json(dir: &std::path::Path, seed: &str, extra: &[&str]) -> serde_json::Value {
    let model = "examples/vibes_tutorial/mixture.occam";
    let glob = format!("x={}/x-*.csv", dir.display());
    let mut args = vec!["fit", model, "--shards", &glob, "--json", "--seed", seed];
    args.extend(extra);
    json(&succeeded(occam().args(&args)))
}

pub(crate) fn trace(v: &serde_json::Value) -> Vec<f64> {
    v["bound_trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_f64().unwrap())
        .collect()
}

pub(crate) fn tutorial_rows() -> usize {
    let mut d = DataSet::new();
    d.insert_file("x", &root().join("examples/vibes_tutorial/x.csv"))
        .unwrap();
    d.tables["x"].rows
}

#[test]
fn memoized_vb_from_the_command_line_reaches_the_batch_optimum_monotonely() {
    let dir = tempfile::tempdir().unwrap();
    let rows = tutorial_rows();
    write_shards(
        dir.path(),
        &[
            rows / 4,
            rows / 2,
            rows / 8,
            rows - rows / 4 - rows / 2 - rows / 8,
        ],
    );
    let tight = ["--tol", "1e-13", "--max-iter", "5000"];
    let batch = fit_json(dir.path(), "3", &tight);
    let memo = fit_json(
        dir.path(),
        "3",
        &[&tight[..], &["--vb", "memoized"]].concat(),
    );
    assert_eq!(memo["method"], "memoized");
    assert!(batch["converged"].as_bool().unwrap() && memo["converged"].as_bool().unwrap());
    let (lb, lm) = (
        batch["bound"].as_f64().unwrap(),
        memo["bound"].as_f64().unwrap(),
    );
    assert!(
        (lb - lm).abs() <= 1e-8 * lb.abs(),
        "batch {lb} vs memoized {lm}"
    );
    let t = trace(&memo);
    assert!(
        t.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()),
        "{t:?}"
    );
    assert!(t.len() < trace(&batch).len());
}

#[test]
fn stochastic_vb_from_the_command_line_is_fixed_by_its_seed_and_checks_its_steps() {
    let dir = tempfile::tempdir().unwrap();
    let rows = tutorial_rows();
    write_shards(
        dir.path(),
        &[rows / 4, rows / 4, rows / 4, rows - 3 * (rows / 4)],
    );
    let args = [
        "--vb",
        "svi",
        "--max-iter",
        "20",
        "--tol",
        "0",
        "--bound-every",
        "4",
    ];
    let a = fit_json(dir.path(), "3", &args);
    let b = fit_json(dir.path(), "3", &args);
    assert_eq!(a["method"], "svi");
    assert_eq!(a["epochs"], serde_json::json!([4, 8, 12, 16, 20]));
    assert_eq!(a["steps"], 80);
    assert_eq!(a["bound_trace"], b["bound_trace"]);
    assert_eq!(a["globals"], b["globals"]);
    let c = fit_json(dir.path(), "4", &args);
    assert_ne!(a["bound_trace"], c["bound_trace"]);
    let out = occam()
        .args([
            "fit",
            "examples/vibes_tutorial/mixture.occam",
            "--shards",
            &format!("x={}/x-*.csv", dir.path().display()),
            "--vb",
            "svi",
            "--kappa",
            "0.4",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("κ = 0.4"), "{err}");
}
