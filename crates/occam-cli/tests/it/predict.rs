//! `occam predict --fit DIR` and `occam fit --init-from DIR`: predictions from a saved fit, as
//! CSV with a row column; a warm start that converges at once; a fit file of another version
//! refused by name.

use crate::common::*;

const REGRESSION: &str = "plates N, C from data X\ndata X[N] over C\n\
    w over C ~ MvGaussian(mean = 0, precision = identity * 2)\n\
    y[N] ~ Gaussian(mean = dot(X[N], w), precision = 4)\nobserve y\n";
const X: [[f64; 2]; 4] = [[1.0, 0.5], [1.0, -1.0], [1.0, 2.0], [1.0, 0.0]];
const Y: [f64; 4] = [1.2, -0.7, 2.9, 0.4];

/// N(x'μ, 1/β + x'Σx) with Σ = (αI + β X'X)⁻¹, μ = β Σ X'y (Bishop (3.53)–(3.59)).
fn closed_form(x: [f64; 2]) -> (f64, f64) {
    let (alpha, beta) = (2.0, 4.0);
    let mut a = [[alpha, 0.0], [0.0, alpha]];
    let mut b = [0.0; 2];
    for (r, y) in X.iter().zip(Y) {
        for i in 0..2 {
            b[i] += beta * r[i] * y;
            for j in 0..2 {
                a[i][j] += beta * r[i] * r[j];
            }
        }
    }
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    let s = [
        [a[1][1] / det, -a[0][1] / det],
        [-a[1][0] / det, a[0][0] / det],
    ];
    let mu = [
        s[0][0] * b[0] + s[0][1] * b[1],
        s[1][0] * b[0] + s[1][1] * b[1],
    ];
    let quad: f64 = (0..2)
        .map(|i| (0..2).map(|j| x[i] * s[i][j] * x[j]).sum::<f64>())
        .sum();
    (x[0] * mu[0] + x[1] * mu[1], 1.0 / beta + quad)
}

#[test]
fn predict_from_a_saved_fit_writes_the_closed_form() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("reg.occam"), REGRESSION).unwrap();
    let csv = |rows: &[[f64; 2]]| {
        let mut s = String::from("a,b\n");
        rows.iter()
            .for_each(|r| s.push_str(&format!("{},{}\n", r[0], r[1])));
        s
    };
    std::fs::write(d.join("X.csv"), csv(&X)).unwrap();
    let ys: String = Y.iter().map(|y| format!("{y}\n")).collect();
    std::fs::write(d.join("y.csv"), format!("y\n{ys}")).unwrap();
    let new = [[1.0, 3.0], [0.5, -2.0]];
    std::fs::write(d.join("new.csv"), csv(&new)).unwrap();
    succeeded(
        occam()
            .current_dir(d)
            .args(["fit", "reg.occam", "--out", "fit"]),
    );
    assert!(d.join("fit/fit.json").is_file());
    succeeded(occam().current_dir(d).args([
        "predict",
        "--fit",
        "fit",
        "--data",
        "X=new.csv",
        "--out",
        "p.csv",
    ]));
    let text = std::fs::read_to_string(d.join("p.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "row,y_mean,y_sd,y_q0.025,y_q0.5,y_q0.975");
    assert_eq!(lines.len(), 3);
    for (r, x) in new.iter().enumerate() {
        let f: Vec<f64> = lines[r + 1]
            .split(',')
            .map(|v| v.parse().unwrap())
            .collect();
        let (m, v) = closed_form(*x);
        assert_eq!(f[0], r as f64);
        assert!((f[1] - m).abs() < 1e-10 * (1.0 + m.abs()), "{} {m}", f[1]);
        assert!((f[2] * f[2] - v).abs() < 1e-10 * v, "{} {v}", f[2]);
        assert!(f[3] < f[4] && f[4] < f[5]);
    }
    // Printed without --out: the same table.
    let o =
        succeeded(
            occam()
                .current_dir(d)
                .args(["predict", "--fit", "fit", "--data", "X=new.csv"]),
        );
    assert_eq!(String::from_utf8_lossy(&o.stdout), text);
    // New rows without their covariates: a clear error naming the data.
    let o = occam()
        .current_dir(d)
        .args(["predict", "--fit", "fit"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--data X=FILE"));
    // Another format version: refused, naming the file and both versions.
    let f = d.join("fit/fit.json");
    let saved = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, saved.replacen("\"version\":1", "\"version\":2", 1)).unwrap();
    let o = occam()
        .current_dir(d)
        .args(["predict", "--fit", "fit", "--data", "X=new.csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fit/fit.json") && err.contains("version 2") && err.contains("version 1"),
        "{err}"
    );
    // Truncated: an error, not a panic.
    std::fs::write(&f, &saved[..saved.len() / 2]).unwrap();
    let o = occam()
        .current_dir(d)
        .args(["predict", "--fit", "fit", "--data", "X=new.csv"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("truncated or damaged"));
}

#[test]
fn a_warm_start_from_a_saved_mixture_converges_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fit");
    let model = "examples/vibes_tutorial/mixture.occam";
    let cold = json(&succeeded(
        occam()
            .args(["fit", model, "--no-prune", "--json", "--out"])
            .arg(&out),
    ));
    let warm = json(&succeeded(
        occam()
            .args(["fit", model, "--no-prune", "--json", "--init-from"])
            .arg(&out),
    ));
    let iters = |v: &serde_json::Value| v["iterations"].as_u64().unwrap();
    let bound = |v: &serde_json::Value| v["bound"].as_f64().unwrap();
    assert!(iters(&cold) > 10, "{}", iters(&cold));
    assert!(iters(&warm) <= 2, "{}", iters(&warm));
    assert!((bound(&warm) - bound(&cold)).abs() < 1e-6 * bound(&cold).abs());
}

/// `--ahead K` on BayesPy's HMM with known parameters: one line per step, horizon 1 over the
/// 100 steps of the data then 1..3, state probabilities summing to 1, and the 3-step
/// prediction equal to the 1-step one times A twice (A from the example's A.csv).
#[test]
fn predict_ahead_on_a_chain_writes_one_line_per_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fit");
    let model = "examples/bayespy/hmm_known/hmm_known.occam";
    succeeded(occam().args(["fit", model, "--out"]).arg(&out));
    let text = String::from_utf8(
        succeeded(occam().args(["predict", "--ahead", "3", "--fit"]).arg(&out)).stdout,
    )
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "sequence,step,horizon,y_mean,y_sd,y_q0.025,y_q0.5,y_q0.975,z_p_0,z_p_1"
    );
    assert_eq!(lines.len(), 1 + 100 + 3);
    let row = |i: usize| -> Vec<f64> { lines[i].split(',').map(|v| v.parse().unwrap()).collect() };
    assert_eq!(&row(100)[..3], &[0.0, 99.0, 1.0]);
    assert_eq!(&row(103)[..3], &[0.0, 102.0, 3.0]);
    for (i, line) in lines.iter().enumerate().skip(1) {
        let r = row(i);
        assert!((r[8] + r[9] - 1.0).abs() < 1e-12, "{line}");
    }
    let a: Vec<f64> = std::fs::read_to_string(root().join("examples/bayespy/hmm_known/A.csv"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let v: Vec<f64> = l.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            (v.len() == 2).then_some(v)
        })
        .flatten()
        .collect();
    assert_eq!(a.len(), 4, "A.csv");
    let mut p = [row(101)[8], row(101)[9]];
    for _ in 0..2 {
        p = [p[0] * a[0] + p[1] * a[2], p[0] * a[1] + p[1] * a[3]];
    }
    let last = row(103);
    // The CSV prints the shortest round-tripping decimal of each number.
    assert!((last[8] - p[0]).abs() < 1e-14 && (last[9] - p[1]).abs() < 1e-14);
    // Without --ahead a chain model is a usage error that names the flag.
    let e = occam()
        .args(["predict", "--fit"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&e.stderr).contains("--ahead"));
}

/// `occam fit MODEL --predict X=new.csv --predict-out FILE` (fit, then predict, in one command)
/// writes the same bytes as `occam fit --out DIR` then `occam predict --fit DIR --data
/// X=new.csv`; without new rows --predict-out is a usage error.
#[test]
fn fit_and_predict_in_one_command_equals_fit_save_predict() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("reg.occam"), REGRESSION).unwrap();
    let rows: String = X.iter().map(|r| format!("{},{}\n", r[0], r[1])).collect();
    std::fs::write(d.join("X.csv"), format!("a,b\n{rows}")).unwrap();
    let ys: String = Y.iter().map(|y| format!("{y}\n")).collect();
    std::fs::write(d.join("y.csv"), format!("y\n{ys}")).unwrap();
    std::fs::write(d.join("new.csv"), "a,b\n1,3\n0.5,-2\n1,0.25\n").unwrap();
    succeeded(occam().current_dir(d).args([
        "fit",
        "reg.occam",
        "--predict",
        "X=new.csv",
        "--predict-out",
        "one.csv",
    ]));
    succeeded(
        occam()
            .current_dir(d)
            .args(["fit", "reg.occam", "--out", "fit"]),
    );
    succeeded(occam().current_dir(d).args([
        "predict",
        "--fit",
        "fit",
        "--data",
        "X=new.csv",
        "--out",
        "two.csv",
    ]));
    let one = std::fs::read(d.join("one.csv")).unwrap();
    assert_eq!(one, std::fs::read(d.join("two.csv")).unwrap());
    assert_eq!(String::from_utf8(one).unwrap().lines().count(), 4);
    let e = occam()
        .current_dir(d)
        .args(["fit", "reg.occam", "--predict-out", "x.csv"])
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&e.stderr).contains("--predict NAME=FILE"));
}
