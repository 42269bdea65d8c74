//! `occam fit --shards NAME=GLOB`: the shard files' fit equals the library's sharded fit of the
//! same rows held in memory, and `occam check --split` shows the split or says why there is none.

use occam::data::DataSet;

use crate::common::{json, occam, root, succeeded};

/// The tutorial's data cut into uneven shard files `x-<s>.csv` in `dir`; the shards' data sets.
fn write_shards(dir: &std::path::Path, sizes: &[usize]) -> Vec<DataSet> {
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
    let lib = occam::shard::fit_shards(model, &source, &data, None, 3, 1000, 1e-6).unwrap();
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
