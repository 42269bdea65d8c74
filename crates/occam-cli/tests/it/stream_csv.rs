//! `occam fit --stream NAME=FILE.csv`: a CSV file read a block of lines at a time gives the
//! in-memory sharded fit of the same rows (`--shards` over the blocks as CSV files) and the
//! `.npy` stream of the same values, to 1e-10; a bad cell is the error an in-memory read gives,
//! naming the file's own line and column.

use crate::common::{json, occam};
use crate::stream::write_npy;

/// A Gaussian per column (globals only): the chunked batch sweep is the in-memory schedule.
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

#[test]
fn a_csv_streamed_in_blocks_is_the_in_memory_fit() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols, chunk) = (1000, 3, 130);
    let values: Vec<f64> = (0..rows * cols)
        .map(|i| (i % cols) as f64 + ((i * 7919 % 1013) as f64 / 1013.0 - 0.5))
        .collect();
    let model = dir.path().join("g.occam");
    std::fs::write(&model, MODEL).unwrap();
    // The whole file, with a comment and a blank line among its rows, and CRLF line ends;
    // `bad`: row 450's first cell not a number.
    let write = |bad: bool| {
        let mut text = String::from("# made by the test\r\na,b,c\r\n");
        for (r, row) in values.chunks(cols).enumerate() {
            if r == 200 {
                text.push_str("# a note\r\n\r\n");
            }
            let mut cells: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
            if bad && r == 450 {
                cells[0].push('x');
            }
            text.push_str(&cells.join(","));
            text.push_str("\r\n");
        }
        text
    };
    let text = write(false);
    let csv = dir.path().join("x.csv");
    std::fs::write(&csv, &text).unwrap();
    let npy = dir.path().join("x.npy");
    write_npy(&npy, rows, cols, &values);
    for (s, part) in values.chunks(chunk * cols).enumerate() {
        let mut t = String::from("a,b,c\n");
        for row in part.chunks(cols) {
            let cells: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
            t.push_str(&cells.join(","));
            t.push('\n');
        }
        std::fs::write(dir.path().join(format!("part-{s:03}.csv")), t).unwrap();
    }
    let model = model.to_str().unwrap();
    let common = ["--max-iter", "4", "--tol", "0", "--json"];
    let stream = |file: &std::path::Path| {
        let data = format!("x={}", file.display());
        let mut a = vec!["fit", model, "--stream", &data, "--chunk-rows", "130"];
        a.extend(common);
        fit(&a)
    };
    let from_csv = stream(&csv);
    let from_npy = stream(&npy);
    let glob = format!("x={}/part-*.csv", dir.path().display());
    let mut a = vec!["fit", model, "--shards", &glob];
    a.extend(common);
    let memory = fit(&a);
    let expect: Vec<usize> = (0..rows)
        .step_by(chunk)
        .map(|r| chunk.min(rows - r))
        .collect();
    assert_eq!(from_csv["shard_rows"], serde_json::json!(expect));
    for other in [&from_npy, &memory] {
        close(&from_csv["bound_trace"], &other["bound_trace"]);
        for g in ["mu", "tau"] {
            for (k, p) in from_csv["globals"][g]["params"].as_object().unwrap() {
                close(&p["values"], &other["globals"][g]["params"][k]["values"]);
            }
        }
    }
    // A bad cell in the fourth block: the in-memory read's error, at the file's own line.
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, write(true)).unwrap();
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
    let data = format!("x={}", bad.display());
    let streamed = err(&["fit", model, "--stream", &data, "--chunk-rows", "130"]);
    let whole = err(&["fit", model, "--data", &data]);
    let located = format!("{}:{}:1:", bad.display(), 450 + 2 + 1 + 2);
    assert!(streamed.contains(&located), "{streamed} (want {located})");
    assert!(whole.contains(&located), "{whole} (want {located})");
}
