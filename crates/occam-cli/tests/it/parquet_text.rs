//! Parquet files with a text column on every path that reads data (`--data`, `--shards`,
//! `--stream`): choosing the numeric columns (`FILE:COLUMNS`) skips the text column and gives
//! the fit of the same columns of a CSV file with the same text column (the reference: a CSV
//! selection skips a text column); asking for the text column, or for every column, is an error
//! naming the file and the column, on every path, where the CSV's is an error too.

use std::path::Path;
use std::sync::Arc;

use parquet::basic::{Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::common::{json, occam};

/// A Gaussian per column (globals only), as in `stream_parquet`.
const MODEL: &str = "\
plates N, D from data x
mu[D] ~ Gaussian(mean = 0, precision = 1e-3)
tau[D] ~ Gamma(shape = 1e-3, rate = 1e-3)
x[N, D] ~ Gaussian(mean = mu[D], precision = tau[D])
";

/// Columns a, name (text), b, c; `values` holds a, b, c per row; row groups of `group` rows.
fn text_parquet(path: &Path, values: &[f64], group: usize) {
    let field = |name: &str, t: Physical| {
        Arc::new(
            Type::primitive_type_builder(name, t)
                .with_repetition(Repetition::REQUIRED)
                .build()
                .unwrap(),
        )
    };
    let fields = vec![
        field("a", Physical::DOUBLE),
        field("name", Physical::BYTE_ARRAY),
        field("b", Physical::DOUBLE),
        field("c", Physical::DOUBLE),
    ];
    let schema = Type::group_type_builder("t")
        .with_fields(fields)
        .build()
        .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), props).unwrap();
    for rows in values.chunks(3 * group) {
        let mut g = w.next_row_group().unwrap();
        for c in 0..4 {
            let mut col = g.next_column().unwrap().unwrap();
            if c == 1 {
                let names: Vec<ByteArray> = (0..rows.len() / 3)
                    .map(|r| ByteArray::from(format!("row {r}").as_str()))
                    .collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&names, None, None)
                    .unwrap();
            } else {
                let k = if c == 0 { 0 } else { c - 1 };
                let v: Vec<f64> = rows.chunks(3).map(|r| r[k]).collect();
                col.typed::<DoubleType>()
                    .write_batch(&v, None, None)
                    .unwrap();
            }
            col.close().unwrap();
        }
        g.close().unwrap();
    }
    w.close().unwrap();
}

/// The same columns as CSV text, the text column quoted-free (`row R`).
fn text_csv(path: &Path, values: &[f64]) {
    let mut t = String::from("a,name,b,c\n");
    for (r, row) in values.chunks(3).enumerate() {
        t.push_str(&format!("{},row {r},{},{}\n", row[0], row[1], row[2]));
    }
    std::fs::write(path, t).unwrap();
}

fn run(args: &[&str]) -> std::process::Output {
    occam().args(args).output().unwrap()
}

fn fit(args: &[&str]) -> serde_json::Value {
    let out = run(args);
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

#[test]
fn a_text_column_left_out_is_skipped_on_every_path_and_asked_for_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, chunk) = (600, 130);
    let values: Vec<f64> = (0..rows * 3)
        .map(|i| (i % 3) as f64 + ((i * 7919 % 1013) as f64 / 1013.0 - 0.5))
        .collect();
    let model = dir.path().join("g.occam");
    std::fs::write(&model, MODEL).unwrap();
    let model = model.to_str().unwrap();
    let (pq, text) = (dir.path().join("t.parquet"), dir.path().join("t.csv"));
    // Row groups of 77 rows: the blocks of 130 rows cross them.
    text_parquet(&pq, &values, 77);
    text_csv(&text, &values);
    for (s, part) in values.chunks(chunk * 3).enumerate() {
        text_parquet(&dir.path().join(format!("p-{s}.parquet")), part, 50);
        text_csv(&dir.path().join(format!("p-{s}.csv")), part);
    }
    let d = dir.path().display();
    let fits = |how: &str, spec: String| {
        let data = format!("x={spec}");
        let mut a = vec!["fit", model, how, &data, "--max-iter", "4", "--tol", "0"];
        if how == "--stream" {
            a.extend(["--chunk-rows", "130"]);
        }
        a.push("--json");
        fit(&a)
    };
    for (how, pq_spec, csv_spec) in [
        (
            "--data",
            format!("{}:a,b,c", pq.display()),
            format!("{}:a,b,c", text.display()),
        ),
        (
            "--stream",
            format!("{}:a,b,c", pq.display()),
            format!("{}:a,b,c", text.display()),
        ),
        (
            "--shards",
            format!("{d}/p-*.parquet:a,b,c"),
            format!("{d}/p-*.csv:a,b,c"),
        ),
        // Positions count the text column: 0, 2 and 3 are a, b and c.
        (
            "--stream",
            format!("{}:0,2..4", pq.display()),
            format!("{}:0,2..4", text.display()),
        ),
    ] {
        let (a, b) = (fits(how, pq_spec.clone()), fits(how, csv_spec));
        close(&a["bound_trace"], &b["bound_trace"]);
        if how == "--data" {
            // A whole fit's JSON: its bound trace is the fit.
            continue;
        }
        for g in ["mu", "tau"] {
            for (k, p) in a["globals"][g]["params"].as_object().unwrap() {
                close(&p["values"], &b["globals"][g]["params"][k]["values"]);
            }
        }
        // The fit read a, b and c: the means are near 0, 1 and 2.
        let mu = a["globals"]["mu"]["params"]["mean"]["values"].clone();
        let mu: Vec<f64> = mu
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        for (k, m) in mu.iter().enumerate() {
            assert!((m - k as f64).abs() < 0.1, "{how} {pq_spec}: {mu:?}");
        }
    }
    // The text column asked for (by name, or by taking every column): a located error on every
    // path, as a CSV file's text column is.
    for (how, spec) in [
        ("--data", format!("{}:a,name", pq.display())),
        ("--data", format!("{}", pq.display())),
        ("--stream", format!("{}:name", pq.display())),
        ("--stream", format!("{}", pq.display())),
        ("--shards", format!("{d}/p-*.parquet:a,name")),
        ("--shards", format!("{d}/p-*.parquet")),
    ] {
        let data = format!("x={spec}");
        let out = run(&["fit", model, how, &data]);
        assert_eq!(out.status.code(), Some(2), "{how} {spec}");
        let e = String::from_utf8(out.stderr).unwrap();
        assert!(
            e.contains(".parquet: column 2 `name` holds BYTE_ARRAY values, not numbers"),
            "{how} {spec}: {e}"
        );
        let csv_spec = spec.replace(".parquet", ".csv");
        let data = format!("x={csv_spec}");
        let out = run(&["fit", model, how, &data]);
        assert_eq!(out.status.code(), Some(2), "{how} {csv_spec}");
        let e = String::from_utf8(out.stderr).unwrap();
        assert!(e.contains(".csv:2:2:"), "{how} {csv_spec}: {e}");
    }
}
