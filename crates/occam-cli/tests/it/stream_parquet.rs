//! Parquet data files on every path that reads data: `occam fit --data x=FILE.parquet`,
//! `--shards` over Parquet parts and `--stream x=FILE.parquet` (read from the row groups that
//! hold each block) give the CSV fits of the same values to 1e-10; a bad cell and a file that is
//! not Parquet are located errors.

use crate::common::{json, occam};

/// A Gaussian per column (globals only), as in `stream_csv`.
const MODEL: &str = "\
plates N, D from data x
mu[D] ~ Gaussian(mean = 0, precision = 1e-3)
tau[D] ~ Gamma(shape = 1e-3, rate = 1e-3)
x[N, D] ~ Gaussian(mean = mu[D], precision = tau[D])
";

fn fit(args: &[&str]) -> serde_json::Value {
    let out = occam().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

fn close(a: &serde_json::Value, b: &serde_json::Value) {
    let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
    assert_eq!(a.len(), b.len());
    for (p, q) in a.iter().zip(b) {
        let (p, q) = (p.as_f64().unwrap(), q.as_f64().unwrap());
        assert!((p - q).abs() <= 1e-10 * p.abs().max(1.0), "{p} vs {q}");
    }
}

fn same_fit(a: &serde_json::Value, b: &serde_json::Value) {
    close(&a["bound_trace"], &b["bound_trace"]);
    for g in ["mu", "tau"] {
        for (k, p) in a["globals"][g]["params"].as_object().unwrap() {
            close(&p["values"], &b["globals"][g]["params"][k]["values"]);
        }
    }
}

/// `values` (rows × 3) as a table with columns a, b, c.
fn table(rows: usize, values: &[f64]) -> occam::data::Table {
    occam::data::Table {
        name: "x".into(),
        file: "x".into(),
        rows,
        cols: 3,
        values: values.to_vec().into(),
        present: vec![true; values.len()],
        header: Some(vec!["a".into(), "b".into(), "c".into()]),
        csv: false,
        line_shifts: Vec::new(),
        source_columns: None,
        source_rows: None,
    }
}

fn csv(values: &[f64]) -> String {
    let mut t = String::from("a,b,c\n");
    for row in values.chunks(3) {
        let cells: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
        t.push_str(&cells.join(","));
        t.push('\n');
    }
    t
}

#[test]
fn parquet_files_give_the_csv_fits_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols, chunk) = (1000, 3, 130);
    let values: Vec<f64> = (0..rows * cols)
        .map(|i| (i % cols) as f64 + ((i * 7919 % 1013) as f64 / 1013.0 - 0.5))
        .collect();
    let model = dir.path().join("g.occam");
    std::fs::write(&model, MODEL).unwrap();
    let model = model.to_str().unwrap();
    let (pq, text) = (dir.path().join("x.parquet"), dir.path().join("x.csv"));
    // Row groups of 77 rows: the blocks of 130 rows cross them.
    occam::data::write_parquet(&pq, &table(rows, &values), 77).unwrap();
    std::fs::write(&text, csv(&values)).unwrap();
    for (s, part) in values.chunks(chunk * cols).enumerate() {
        let p = dir.path().join(format!("part-{s:03}.parquet"));
        occam::data::write_parquet(&p, &table(part.len() / cols, part), 50).unwrap();
        std::fs::write(dir.path().join(format!("part-{s:03}.csv")), csv(part)).unwrap();
    }
    let common = ["--max-iter", "4", "--tol", "0", "--json"];
    let run = |how: &str, data: String| {
        let mut a = vec!["fit", model, how, &data];
        if how == "--stream" {
            a.extend(["--chunk-rows", "130"]);
        }
        a.extend(common);
        fit(&a)
    };
    let d = dir.path().display();
    same_fit(
        &run("--stream", format!("x={}", pq.display())),
        &run("--stream", format!("x={}", text.display())),
    );
    same_fit(
        &run("--shards", format!("x={d}/part-*.parquet")),
        &run("--shards", format!("x={d}/part-*.csv")),
    );
    let whole = |f: &std::path::Path| {
        let data = format!("x={}", f.display());
        fit(&["fit", model, "--data", &data, "--json"])
    };
    let (a, b) = (whole(&pq), whole(&text));
    close(&a["bound_trace"], &b["bound_trace"]);
    // Columns chosen by name, as in a CSV.
    let data = format!("x={}:c,a", pq.display());
    let chosen = fit(&["fit", model, "--data", &data, "--json"]);
    let data = format!("x={}:c,a", text.display());
    close(
        &chosen["bound_trace"],
        &fit(&["fit", model, "--data", &data, "--json"])["bound_trace"],
    );
}

#[test]
fn a_bad_cell_or_file_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("g.occam");
    std::fs::write(&model, MODEL).unwrap();
    let model = model.to_str().unwrap();
    let mut values: Vec<f64> = (0..600).map(|i| i as f64 / 100.0).collect();
    values[3 * 150 + 1] = f64::NEG_INFINITY;
    let pq = dir.path().join("bad.parquet");
    occam::data::write_parquet(&pq, &table(200, &values), 64).unwrap();
    let junk = dir.path().join("junk.parquet");
    std::fs::write(&junk, "a,b,c\n1,2,3\n").unwrap();
    let err = |args: &[&str]| {
        let out = occam().args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stderr).unwrap()
    };
    let data = format!("x={}", pq.display());
    let located = format!("{}:151:2: column `b`: -inf is not finite", pq.display());
    for how in [
        vec!["fit", model, "--data", &data],
        vec!["fit", model, "--stream", &data, "--chunk-rows", "100"],
    ] {
        let e = err(&how);
        assert!(e.contains(&located), "{e} (want {located})");
    }
    let data = format!("x={}", junk.display());
    let e = err(&["fit", model, "--stream", &data]);
    assert!(e.contains("junk.parquet: not a Parquet file"), "{e}");
}
