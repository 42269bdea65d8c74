//! Crash classes of issue 25: counts and sizes that overflowed a capacity computation (a panic),
//! asked for more memory than the machine has (an abort), recursed past the stack, or ran without
//! bound; non-finite results written with exit 0; error messages echoing megabytes of input. Each
//! is now an error naming the flag, file or model place and the limit, with exit code 2 (or, for
//! the deep chain, a normal fit).

use std::time::{Duration, Instant};

use assert_cmd::Command;

use crate::common;

/// Runs `occam args...` in a scratch directory holding `files` (see [`common::run_in`]).
fn run(files: &[(&str, &[u8])], args: &[&str]) -> (i32, String, String) {
    common::run_in(files, args)
}

fn expect(files: &[(&str, &[u8])], args: &[&str], needles: &[&str]) -> String {
    let (code, _, stderr) = run(files, args);
    assert_eq!(code, 2, "exit code for {args:?}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "expected `{n}` in:\n{stderr}");
    }
    stderr
}

const HUGE: &str = "18446744073709551615";

/// 40 rows of three varying columns.
fn table() -> String {
    let mut s = String::from("a,b,y\n");
    for i in 0..40 {
        let x = i as f64;
        s.push_str(&format!(
            "{},{},{}\n",
            (x * 0.37).sin(),
            (x * 0.11).cos(),
            (x * 0.23).sin()
        ));
    }
    s
}

#[test]
fn nn_fit_huge_counts_name_the_flag_and_the_limit() {
    let t = table();
    let f = &[("d.csv", t.as_bytes())];
    for (flag, limit) in [
        ("--hidden", "at most 1024"),
        ("--restarts", "at most 10000"),
        ("--components", "at most 64"),
    ] {
        for v in [HUGE, "4294967296"] {
            expect(
                f,
                &["nn", "fit", "d.csv", "--out", "n.json", flag, v],
                &[flag, limit],
            );
        }
    }
    expect(
        f,
        &[
            "nn",
            "fit",
            "d.csv",
            "--out",
            "n.json",
            "--prior",
            "nrd",
            "--structure-cycles",
            HUGE,
        ],
        &["--structure-cycles", "at most 1000"],
    );
}

#[test]
fn nn_fit_huge_lags_name_the_series_length() {
    let t = table();
    let stderr = expect(
        &[("d.csv", t.as_bytes())],
        &["nn", "fit", "d.csv", "--out", "n.json", "--lags", HUGE],
        &["--lags", "d.csv", "40 values", "between 1 and 39"],
    );
    assert!(!stderr.contains("at least 0"), "{stderr}");
}

#[test]
fn nn_fit_data_errors_name_the_file_and_column() {
    expect(
        &[("one.csv", b"a,b,y\n1,2,3\n")],
        &["nn", "fit", "one.csv", "--out", "n.json", "--restarts", "1"],
        &["one.csv", "1 training row(s)", "at least 2"],
    );
    expect(
        &[("c.csv", b"a,b,y\n1,2,3\n1,3,4\n1,5,6\n")],
        &["nn", "fit", "c.csv", "--out", "n.json", "--restarts", "1"],
        &["c.csv", "input column `a` is constant"],
    );
    // A target of -1e308 among values near 0: its spread overflows; this fitted with exit 0,
    // "training RMSE inf", and saved "sd":[null] that `nn predict` could not read.
    let t = table();
    let mut lines: Vec<String> = t.lines().map(String::from).collect();
    lines[4] = "0.5,0.5,-1e308".into();
    let t = lines.join("\n") + "\n";
    let (code, _, stderr) = run(
        &[("big.csv", t.as_bytes())],
        &["nn", "fit", "big.csv", "--out", "n.json", "--restarts", "1"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("big.csv")
            && stderr.contains("target column `y`")
            && stderr.contains("overflows"),
        "{stderr}"
    );
}

#[test]
fn latent_ica_huge_flags_name_the_limit() {
    let t = table();
    let f = &[("d.csv", t.as_bytes())];
    for v in [HUGE, "4294967297"] {
        expect(
            f,
            &["latent", "ica", "d.csv", "--components", v],
            &["--components", "between 1 and 64"],
        );
    }
    expect(
        f,
        &["latent", "ica", "d.csv", "--restarts", HUGE],
        &["--restarts", "between 1 and 10000"],
    );
}

#[test]
fn bm_sizes_beyond_memory_name_the_limit() {
    let mut w = String::new();
    let n = 20;
    for i in 0..n {
        let row: Vec<String> = (0..n)
            .map(|j| if i == j { "0".into() } else { "0.1".into() })
            .collect();
        w.push_str(&(row.join(",") + "\n"));
    }
    let h = vec!["0.1"; n].join(",") + "\n";
    let f = &[("w.csv", w.as_bytes()), ("h.csv", h.as_bytes())];
    let base = ["bm", "logz", "--weights", "w.csv", "--thresholds", "h.csv"];
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--method", "mixture", "--components", "4096"])
        .collect();
    expect(
        f,
        &args,
        &[
            "--components",
            "limit of 268435456",
            "at most 3663 components for 20 units",
        ],
    );
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--method", "gibbs", "--samples", HUGE])
        .collect();
    expect(f, &args, &["--samples", "at most 10000000"]);
    expect(
        &[("b.csv", b"1,0\n1,1\n0,0\n")],
        &[
            "bm",
            "learn",
            "b.csv",
            "--hidden",
            "4094",
            "--negative",
            "mixture:4096",
        ],
        &["--negative", "at most 256 components for 4096 units"],
    );
    expect(
        &[],
        &["bm", "reproduce", "sk-fig4", "--networks", HUGE],
        &["--networks", "between 1 and 10000"],
    );
}

#[test]
fn sbn_loglik_slow_methods_name_the_limit() {
    let mut net = String::from("unit,parent,weight\n0,,0.5\n");
    for i in 1..200 {
        net.push_str(&format!("{i},{},0.3\n", i - 1));
    }
    let f = &[("n.csv", net.as_bytes()), ("d.csv", &b"0\n1\n0\n"[..])];
    for m in ["first", "third"] {
        let t = Instant::now();
        expect(
            f,
            &["sbn", "loglik", "n.csv", "d.csv", "--method", m],
            &["--method", "200 units", "limited to 100 units"],
        );
        assert!(t.elapsed() < Duration::from_secs(20));
    }
    expect(
        f,
        &[
            "sbn",
            "loglik",
            "n.csv",
            "d.csv",
            "--method",
            &format!("mixture:{HUGE}"),
        ],
        &["--method", "at most 1024 components"],
    );
    expect(
        f,
        &["sbn", "loglik", "n.csv", "d.csv", "--method", "mixture:100"],
        &[
            "--method",
            "limit of 16777216",
            "at most mixture:7 for 200 units",
        ],
    );
}

#[test]
fn a_plate_of_2_to_the_30_is_a_located_error_not_an_abort() {
    let m = b"plate K = 1073741824\nx[K] ~ Gaussian(0, 1)\n";
    expect(
        &[("m.occam", m)],
        &["check", "m.occam"],
        &["m.occam:2:1", "limit of 1073741824", "`x`"],
    );
}

#[test]
fn a_chain_of_10000_deterministic_nodes_fits() {
    let mut m = String::from("plate N from data y\nd0 ~ Gaussian(0, 1)\n");
    for i in 1..10_000 {
        m.push_str(&format!("d{i} = d{} + 1\n", i - 1));
    }
    m.push_str("y[N] ~ Gaussian(d9999, 1)\n");
    let (code, stdout, stderr) = run(
        &[
            ("m.occam", m.as_bytes()),
            ("y.csv", b"y\n10000\n10001\n9999\n"),
        ],
        &["fit", "m.occam", "--max-iter", "5"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("lower bound"), "{stdout}");
}

#[test]
fn errors_on_long_lines_echo_a_clipped_window() {
    // Every error echoed the whole 38 KB line (253 MB of stderr for a file of such lines).
    let mut m = String::new();
    for i in 0..300 {
        m.push_str(&format!("x{i} ~ Gausian(0, 1) # {}\n", "z".repeat(38_000)));
    }
    let stderr = expect(
        &[("m.occam", m.as_bytes())],
        &["check", "m.occam"],
        &["m.occam:1:6", "Gausian"],
    );
    assert!(stderr.len() < 100_000, "{} bytes of stderr", stderr.len());
    // A 1 MB CSV cell is echoed clipped too.
    let cell = "q".repeat(1_000_000);
    let csv = format!("y\n1\n{cell}\n");
    let stderr = expect(
        &[
            ("m.occam", b"plate N from data y\ny[N] ~ Gaussian(0, 1)\n"),
            ("y.csv", csv.as_bytes()),
        ],
        &["check", "m.occam"],
        &["y.csv", "not a number"],
    );
    assert!(stderr.len() < 2_000, "{} bytes of stderr", stderr.len());
}

const QUICK: &[u8] = b"plate N from data y\nmu ~ Gaussian(0, 1e-6)\ntau ~ Gamma(1e-6, 1e-6)\ny[N] ~ Gaussian(mu, tau)\n";
const Y: &[u8] = b"y\n1.5\n2.5\n0.5\n";

#[test]
fn fit_out_with_a_model_error_creates_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.occam"), b"mu ~ Gaussian(0,\n").unwrap();
    let out = Command::cargo_bin("occam")
        .unwrap()
        .current_dir(dir.path())
        .args(["fit", "bad.occam", "--out", "newdir"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("newdir").exists());
}

#[test]
fn fit_out_replaces_the_previous_run_as_a_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.occam"), QUICK).unwrap();
    std::fs::write(dir.path().join("y.csv"), Y).unwrap();
    let fit = |seed: &str| {
        let o = Command::cargo_bin("occam")
            .unwrap()
            .current_dir(dir.path())
            .args(["fit", "m.occam", "--out", "res", "--seed", seed])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    fit("1");
    // A stale output of another run (a variable since renamed) goes with the replaced run.
    std::fs::write(dir.path().join("res/posterior_old.csv"), b"x\n").unwrap();
    fit("2");
    let names = |p: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let res = names(&dir.path().join("res"));
    assert!(res.contains(&"posterior.json".to_string()), "{res:?}");
    assert!(!res.contains(&"posterior_old.csv".to_string()), "{res:?}");
    // No sibling directory is left behind.
    let top = names(dir.path());
    assert_eq!(top, ["m.occam", "res", "y.csv"], "{top:?}");
    // A directory holding the user's own files is written into, file by file, never replaced.
    std::fs::write(dir.path().join("res/notes.txt"), b"mine").unwrap();
    fit("3");
    assert_eq!(
        std::fs::read(dir.path().join("res/notes.txt")).unwrap(),
        b"mine"
    );
}

#[test]
fn graph_of_20000_variables_names_the_limit_and_dot_still_works() {
    let mut m = String::from("plate N from data y\nd0 ~ Gaussian(0, 1)\n");
    for i in 1..20_000 {
        m.push_str(&format!("d{i} = d{} + 1\n", i - 1));
    }
    m.push_str("y[N] ~ Gaussian(d19999, 1)\n");
    let f = &[("m.occam", m.as_bytes()), ("y.csv", Y)];
    let t = Instant::now();
    expect(
        f,
        &["graph", "m.occam", "--out", "g.svg"],
        &["20001 variables", "at most 1000"],
    );
    assert!(t.elapsed() < Duration::from_secs(30));
    let (code, _, stderr) = run(f, &["graph", "m.occam", "--out", "g.dot"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn check_of_50000_plate_lines_takes_linear_time() {
    let mut m = String::new();
    for i in 0..50_000 {
        m.push_str(&format!("plate P{i} = 2\n"));
    }
    m.push_str("x ~ Gaussian(0, 1)\n");
    let t = Instant::now();
    let (code, _, stderr) = run(&[("m.occam", m.as_bytes())], &["check", "m.occam"]);
    assert_eq!(code, 0, "{stderr}");
    // 74 s (unoptimised) with a scan of the declared plates per plate.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn a_shape_error_on_100000_columns_is_quick() {
    let n = 100_000;
    let names: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    let csv = format!("{}\n{}\n", names.join(","), vec!["1"; n].join(","));
    let m =
        b"plate N from data y\nplate D = 3\nmu[D] ~ Gaussian(0, 1)\ny[N, D] ~ Gaussian(mu, 1)\n";
    let t = Instant::now();
    expect(
        &[("m.occam", m), ("y.csv", csv.as_bytes())],
        &["check", "m.occam"],
        &["1 × 100000", "m.occam:4:1"],
    );
    // 188 s unoptimised with a scan of the earlier column names per column.
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
}

#[test]
fn binary_model_errors_name_their_files_and_lines() {
    // Not symmetric with --coding 01: the message named no file.
    expect(
        &[("w.csv", b"0,0.5\n0.4,0\n"), ("h.csv", b"0.1,-0.2\n")],
        &[
            "bm",
            "logz",
            "--weights",
            "w.csv",
            "--thresholds",
            "h.csv",
            "--coding",
            "01",
            "--method",
            "exact",
        ],
        &["w.csv and h.csv", "not symmetric"],
    );
    // A .fg that is not UTF-8: the line and byte.
    expect(
        &[("bad.fg", b"2\n\n1\n0\n2\n2\n0 1\n\xff\xfe\n")],
        &["bm", "logz", "--fg", "bad.fg"],
        &["bad.fg:8:", "not valid UTF-8"],
    );
    // sbn learn with a network too small for the data's visible units.
    expect(
        &[("d.csv", b"0,1,2,3,4\n0,1,0,1,1\n1,1,0,0,1\n")],
        &["sbn", "learn", "d.csv", "--layers", "1,2"],
        &["d.csv", "unit 3", "only 3 units", "at least 5 units"],
    );
}

#[test]
fn a_wishart_over_30000_data_columns_is_a_located_error() {
    // The D × D rate constant alone was 7.2 GB, allocated before any check.
    let n = 30_000;
    let names: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    let csv = format!(
        "{}\n{}\n{}\n",
        names.join(","),
        vec!["1"; n].join(","),
        vec!["2"; n].join(",")
    );
    let m = b"plates N, D from data y\nmu ~ MvGaussian(mean = 0, precision = identity * 1e-5) over D\nLambda ~ Wishart(dof = 30001, rate = identity * 1e-5) over D\ny[N] over D ~ MvGaussian(mean = mu, precision = Lambda)\n";
    expect(
        &[("m.occam", m), ("y.csv", csv.as_bytes())],
        &["check", "m.occam"],
        &["m.occam:2:1", "limit of 1073741824"],
    );
}
