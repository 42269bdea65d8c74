//! Choosing columns and rows of a data file on every command that reads one
//! (`--data NAME=FILE:COLUMNS@ROWS`, and the data file of `nn` and `latent`), and the outputs
//! that must not change for it: `compare`'s table and a chain's files.

use crate::common;
use common::*;

/// A faithful-like table with an R row-name column: `rownames,eruptions,waiting`, 30 rows.
fn faithful(dir: &std::path::Path) -> std::path::PathBuf {
    let csv = dir.join("faithful.csv");
    let mut text = String::from("rownames,eruptions,waiting\n");
    for r in 1..=30 {
        text += &format!(
            "{r},{:.3},{}\n",
            1.5 + (r % 7) as f64 * 0.5,
            50 + (r * 13) % 40
        );
    }
    std::fs::write(&csv, &text).unwrap();
    csv
}

const MODEL: &str = "plates N, D from data x\nmu[D] ~ Gaussian(0, 1e-4)\ntau[D] ~ Gamma(1e-3, 1e-3)\nx[N, D] ~ Gaussian(mu, tau)\n";

/// An R export's row names left out by choosing the columns (by name, position or range), and a
/// train/test split of one file by rows; errors name the file, the argument and the nearest
/// column.
#[test]
fn data_columns_and_rows_are_chosen_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let csv = faithful(dir.path());
    let model = dir.path().join("m.occam");
    std::fs::write(&model, MODEL).unwrap();
    let fit = |spec: &str| {
        json(&succeeded(occam().args([
            "fit",
            "--json",
            model.to_str().unwrap(),
            "--data",
            &format!("x={}{spec}", csv.display()),
        ])))
    };
    let whole = fit("");
    let warned = |v: &serde_json::Value| {
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("looks like a row index"))
    };
    assert!(warned(&whole), "{}", whole["warnings"]);
    let named = fit(":eruptions,waiting");
    assert!(!warned(&named), "{}", named["warnings"]);
    // Positions count from 0: 1..3 and 1.. and 1,2 are `eruptions`, `waiting`.
    for same in [":1..3", ":1..", ":1,2"] {
        assert_eq!(named["bound"], fit(same)["bound"], "{same}");
    }
    assert_eq!(
        named["variables"]["mu"]["parameters"]["mean"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Train on rows 0..20 and test on 20..: the plate N is 20, then 10; by fraction the same.
    let train = fit(":eruptions,waiting@..20");
    assert_eq!(train["variables"]["x"]["plates"][0]["size"], 20);
    let test = fit(":eruptions,waiting@20..");
    assert_eq!(test["variables"]["x"]["plates"][0]["size"], 10);
    assert_eq!(fit(":1..@..66.7%")["bound"], train["bound"]);
    // A seeded random split: the same rows for the same seed, complementary parts.
    let a = fit(":1..@..80%,shuffle=3");
    let b = fit(":1..@80%..,shuffle=3");
    assert_eq!(a["variables"]["x"]["plates"][0]["size"], 24);
    assert_eq!(b["variables"]["x"]["plates"][0]["size"], 6);
    assert_eq!(a["bound"], fit(":1..@..80%,shuffle=3")["bound"]);
    assert_ne!(a["bound"], fit(":1..@..80%")["bound"]);
    // `check` says what was chosen, in the syntax it was written in.
    let check = String::from_utf8(
        succeeded(occam().args([
            "check",
            model.to_str().unwrap(),
            "--data",
            &format!("x={}:eruptions,waiting@..20", csv.display()),
        ]))
        .stdout,
    )
    .unwrap();
    assert!(
        check.contains(&format!(
            "20×2 from {} (columns eruptions, waiting; rows 0..20)",
            csv.display()
        )),
        "{check}"
    );
    let fails = |spec: &str, cmd: &str| {
        let mut c = occam();
        c.args([cmd, model.to_str().unwrap(), "--data"])
            .arg(format!("x={}{spec}", csv.display()));
        match cmd {
            "graph" => c.arg("--out").arg(dir.path().join("g.svg")),
            "sample" => c.arg("--out").arg(dir.path().join("sampled")),
            _ => &mut c,
        };
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{spec}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // The same errors from every command that takes --data.
    for cmd in ["fit", "check", "graph", "compare", "sample"] {
        let e = fails(":wait", cmd);
        assert!(
            e.contains("faithful.csv: no column `wait` in --data `x=")
                && e.contains("did you mean `waiting`? (columns: rownames, eruptions, waiting; or positions 0 to 2)"),
            "{cmd}: {e}"
        );
    }
    let e = fails(":1..3@20..40", "fit");
    assert!(
        e.contains("rows 20..40 in --data") && e.contains("the file has 30 data rows (0..30)"),
        "{e}"
    );
    // The earlier 1-based `cut -f` forms are refused, never read shifted by one.
    let e = fails(":2-3", "fit");
    assert!(e.contains("a range of positions is written A..B"), "{e}");
    let e = fails(":1..@1-20", "fit");
    assert!(e.contains("write rows as A..B, counted from 0"), "{e}");
    // A cell of a chosen part is named by the file's own line and column.
    std::fs::write(&csv, "a,b,c\n1,2,3\n4,x,6\n7,8,9\n").unwrap();
    let e = fails(":1..@1..", "fit");
    assert!(e.contains("faithful.csv:3:2: column `b`"), "{e}");
}

/// `occam predict --data X=FILE@ROWS` predicts chosen rows of a file: rows 1..3 of the file are
/// rows 1 and 2 of the prediction for the whole file (the same means and sds).
#[test]
fn predict_takes_chosen_rows() {
    let dir = tempfile::tempdir().unwrap();
    let fit = dir.path().join("fit");
    succeeded(occam().args([
        "fit",
        "examples/ard_regression/regression.occam",
        "--out",
        fit.to_str().unwrap(),
    ]));
    let predict = |spec: &str| {
        let out = succeeded(occam().args([
            "predict",
            "--fit",
            fit.to_str().unwrap(),
            "--data",
            &format!("X=examples/ard_regression/X.csv{spec}"),
        ]));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let all = predict("");
    let part = predict("@1..3");
    // The mean and sd (closed forms); the quantiles come from draws, which depend on the rows.
    let values = |line: &str| {
        line.split(',')
            .skip(1)
            .take(2)
            .collect::<Vec<_>>()
            .join(",")
    };
    let all: Vec<&str> = all.lines().collect();
    let part: Vec<&str> = part.lines().collect();
    assert_eq!(part.len(), 3, "{part:?}");
    assert_eq!(part[0], all[0]);
    assert_eq!(values(part[1]), values(all[2]));
    assert_eq!(values(part[2]), values(all[3]));
}

/// `occam nn fit FILE@ROWS` trains on the first rows and `occam nn predict FILE@ROWS` predicts
/// the rest, its row column naming the file's own rows.
#[test]
fn nn_trains_and_predicts_on_chosen_rows() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let mut text = String::from("year,value\n");
    for i in 0..60 {
        text += &format!("{},{}\n", 1900 + i, 50.0 + 40.0 * (i as f64 * 0.6).sin());
    }
    std::fs::write(&csv, text).unwrap();
    let spec = dir.path().join("spec.json");
    std::fs::write(
        &spec,
        r#"{"hidden": 2, "restarts": 1, "cycles": 2, "iters_per_cycle": 50}"#,
    )
    .unwrap();
    let net = dir.path().join("net.json");
    let c = csv.display().to_string();
    succeeded(occam().args([
        "nn",
        "fit",
        &format!("{c}@..40"),
        "--target",
        "1",
        "--lags",
        "3",
        "--spec",
        spec.to_str().unwrap(),
        "--out",
        net.to_str().unwrap(),
    ]));
    let out = succeeded(occam().args([
        "nn",
        "predict",
        net.to_str().unwrap(),
        &format!("{c}@40.."),
        "--time",
        "0",
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("row,year,mean"), "{text}");
    assert!(lines.next().unwrap().starts_with("43,1943,"), "{text}");
    assert_eq!(text.lines().count(), 1 + 17);
}

/// A chain's marginals (steps × states) are drawn as `chain_z.svg`, never as a Hinton diagram
/// of thousands of squares; the Hinton diagrams of the other matrices stay.
#[test]
fn a_chain_gets_its_own_figure_and_no_hinton_diagram() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fit");
    succeeded(occam().args([
        "fit",
        "examples/models/hmm_chain.occam",
        "--data",
        "y=examples/models/hmm_chain/y.csv",
        "--data",
        "L=examples/models/hmm_chain/L.csv",
        "--out",
        out.to_str().unwrap(),
    ]));
    for f in ["chain_z.csv", "chain_z.svg", "hinton_A.svg"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert!(!out.join("hinton_z.svg").exists());
}
