//! Crash classes of issue 13: sizes and numbers from input beyond documented limits, results that
//! would be non-finite, odd model files. Each exits 2 with the limit or the place in the message
//! — never a panic, an abort on allocation, a hang or a NaN with exit 0.

use std::time::{Duration, Instant};

use crate::common;

/// Runs `occam args...` in a scratch directory holding `files` (see [`common::run_in`]).
fn run(files: &[(&str, &[u8])], args: &[&str]) -> (i32, String, String) {
    common::run_in(files, args)
}

fn expect(files: &[(&str, &[u8])], args: &[&str], needles: &[&str]) {
    let (code, _, stderr) = run(files, args);
    assert_eq!(code, 2, "exit code for {args:?}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "expected `{n}` in:\n{stderr}");
    }
}

const BITS: &[u8] = b"1,0\n1,1\n0,0\n";
const HUGE: &str = "18446744073709551615";

#[test]
fn bm_learn_huge_flags_name_the_limit() {
    let f = &[("b.csv", BITS)];
    expect(
        f,
        &["bm", "learn", "b.csv", "--iterations", HUGE],
        &["iterations", "at most 268435456 values"],
    );
    expect(
        f,
        &["bm", "learn", "b.csv", "--hidden", HUGE],
        &["hidden", "limit of 4096 units"],
    );
    expect(
        f,
        &["bm", "learn", "b.csv", "--hidden", "100000"],
        &["hidden", "limit of 4096 units"],
    );
    expect(
        f,
        &[
            "bm",
            "learn",
            "b.csv",
            "--negative",
            &format!("mixture:{HUGE}"),
        ],
        &["negative", "limit of 4096 components"],
    );
    expect(
        f,
        &["bm", "learn", "b.csv", "--iterations", "0"],
        &["iterations", "between 1 and"],
    );
}

#[test]
fn bm_logz_huge_components_name_the_limit() {
    expect(
        &[("w.csv", b"0,0.5\n0.5,0\n"), ("h.csv", b"0.1,-0.2\n")],
        &[
            "bm",
            "logz",
            "--weights",
            "w.csv",
            "--thresholds",
            "h.csv",
            "--method",
            "mixture",
            "--components",
            HUGE,
        ],
        &["components", "between 1 and 4096"],
    );
}

#[test]
fn bm_learn_rate_1e308_is_rejected_not_nan() {
    expect(
        &[("b.csv", BITS)],
        &["bm", "learn", "b.csv", "--rate", "1e308"],
        &["invalid option `--rate`", "at most 1e6"],
    );
    // Within the limit, a rate that still blows up is caught at the step it happens.
    let (code, stdout, stderr) = run(
        &[("b.csv", BITS)],
        &["bm", "learn", "b.csv", "--rate", "1e6", "--negative", "mf"],
    );
    assert!(
        code == 2 && stderr.contains("diverged at step") || code == 0 && !stdout.contains("NaN"),
        "exit {code}: {stdout}{stderr}"
    );
}

#[test]
fn bm_logz_tiny_temperature_is_rejected_not_nan() {
    expect(
        &[("w.csv", b"0,0.5\n0.5,0\n"), ("h.csv", b"0.1,-0.2\n")],
        &[
            "bm",
            "logz",
            "--weights",
            "w.csv",
            "--thresholds",
            "h.csv",
            "--method",
            "exact",
            "--temperature",
            "1e-310",
        ],
        &["temperature", "largest finite number"],
    );
}

#[test]
fn fg_with_too_many_units_names_the_line_and_the_limit() {
    // 4097 unary factors over distinct variables: one more than the limit.
    let mut fg = String::from("4097\n");
    for v in 0..4097 {
        fg.push_str(&format!("\n1\n{v}\n2\n2\n0 1\n1 2\n"));
    }
    expect(
        &[("big.fg", fg.as_bytes())],
        &["bm", "logz", "--fg", "big.fg"],
        &["big.fg:", "limit of 4096 units"],
    );
    // The weights CSV: a column of 5000 rows would ask for 5000² weights before the shape check.
    let w = "0\n".repeat(5000);
    expect(
        &[("w.csv", w.as_bytes()), ("h.csv", b"0\n")],
        &["bm", "logz", "--weights", "w.csv", "--thresholds", "h.csv"],
        &["w.csv", "limit of 4096 units"],
    );
}

#[test]
fn sbn_repro_huge_size_and_steps_name_the_limit() {
    expect(
        &[],
        &["sbn", "repro", "lk-learning", "--size", HUGE],
        &["size", "limit of 100000"],
    );
    expect(
        &[],
        &["sbn", "repro", "lk-learning", "--steps", HUGE],
        &["steps", "limit of 10000000"],
    );
    expect(
        &[("d.csv", b"2\n1\n0\n")],
        &["sbn", "learn", "d.csv", "--layers", "1,2", "--steps", HUGE],
        &["--steps", "limit of 10000000"],
    );
    expect(
        &[("d.csv", b"2\n1\n0\n")],
        &["sbn", "learn", "d.csv", "--layers", &format!("1,{HUGE}")],
        &["layers", "limit of 1048576 units"],
    );
}

/// The library names a bad option by its field (`init_scale`, `learning_rate`); the CLI's
/// message names the flag the user typed.
#[test]
fn binary_option_errors_name_the_flag() {
    expect(
        &[("d.csv", b"2\n1\n0\n")],
        &[
            "sbn",
            "learn",
            "d.csv",
            "--layers",
            "1,2",
            "--init-scale",
            "NaN",
        ],
        &["--init-scale"],
    );
    expect(
        &[("b.csv", BITS)],
        &["bm", "learn", "b.csv", "--rate", "0"],
        &["invalid option `--rate`"],
    );
}

#[test]
fn sbn_unit_index_usize_max_names_the_line() {
    let net = format!("unit,parent,weight\n0,,0.5\n{HUGE},0,1.0\n");
    expect(
        &[("n.csv", net.as_bytes()), ("d.csv", b"0\n1\n0\n")],
        &["sbn", "loglik", "n.csv", "d.csv"],
        &["n.csv, line 3", "limit of 1048576 units"],
    );
    let net = format!("unit,parent,weight\n0,,0.5\n1,{HUGE},1.0\n");
    expect(
        &[("n.csv", net.as_bytes()), ("d.csv", b"0\n1\n0\n")],
        &["sbn", "loglik", "n.csv", "d.csv"],
        &["n.csv, line 3", "parent"],
    );
}

const QUICK: &[u8] = b"plate N from data y\nmu ~ Gaussian(0, 1e-6)\ntau ~ Gamma(1e-6, 1e-6)\ny[N] ~ Gaussian(mu, tau)\n";
const Y: &[u8] = b"y\n1.5\n2.5\n0.5\n";

#[test]
fn a_plate_of_10_to_the_12_names_the_plate_and_the_limit() {
    let m = b"plate K = 1000000000000\nx[K] ~ Gaussian(0, 1)\n";
    for cmd in [&["check"][..], &["fit"], &["sample", "--out", "s.csv"]] {
        expect(
            &[("m.occam", m)],
            &[cmd, &["m.occam"]].concat(),
            &["m.occam:1:11", "limit of 1073741824 elements"],
        );
    }
    // Plates within the limit whose product is not: named by the node.
    let m = b"plate K = 1000000\nplate L = 1000000\nx[K, L] ~ Gaussian(0, 1)\n";
    expect(
        &[("m.occam", m)],
        &["check", "m.occam"],
        &[
            "m.occam:3:1",
            "K = 1000000, L = 1000000",
            "limit of 2147483648 values",
        ],
    );
}

#[test]
fn sample_plate_of_10_to_the_12_names_the_flag_and_the_limit() {
    expect(
        &[("m.occam", QUICK)],
        &[
            "sample",
            "m.occam",
            "--plate",
            "N=1000000000000",
            "--out",
            "s.csv",
        ],
        &["--plate N=1000000000000", "limit of 1073741824"],
    );
}

#[test]
fn check_of_a_long_chain_of_variables_takes_linear_time() {
    // 4·10⁴ chained variables: 1 s of CPU in a debug build; the name lookups, line numbers and
    // the engine's descendant lists were each quadratic, 27 s of CPU (82 s on a loaded machine).
    let mut m = String::from("x0 ~ Gaussian(0, 1)\n");
    for i in 1..40_000 {
        m.push_str(&format!("x{i} ~ Gaussian(x{}, 1)\n", i - 1));
    }
    let start = Instant::now();
    let (code, stdout, stderr) = run(&[("m.occam", m.as_bytes())], &["check", "m.occam"]);
    let took = start.elapsed();
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("x39999"), "{stdout}");
    assert!(took < Duration::from_secs(30), "check took {took:?}");
}

#[test]
fn negative_tol_is_out_of_domain_not_a_separator_hint() {
    let (code, _, stderr) = run(
        &[("m.occam", QUICK), ("y.csv", Y)],
        &["fit", "m.occam", "--tol", "-1"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--tol") && stderr.contains("≥ 0"),
        "{stderr}"
    );
    assert!(!stderr.contains("-- -1"), "{stderr}");
}

#[test]
fn a_model_file_that_is_not_utf8_names_line_column_and_byte() {
    let mut m = b"plate N from data y\nmu ~ Gaussian(0, 1e-6)\ntau ~ Gam".to_vec();
    m.extend([0xff, 0xfe]);
    m.extend(b"ma(1e-6, 1e-6)\ny[N] ~ Gaussian(mu, tau)\n");
    expect(
        &[("m.occam", &m), ("y.csv", Y)],
        &["fit", "m.occam"],
        &["m.occam:3:10", "invalid UTF-8 at byte 52"],
    );
}

#[test]
fn an_empty_model_is_an_error_not_a_fit_with_l_0() {
    for text in [&b""[..], b"# nothing here\n", b"plate K = 3\n"] {
        for cmd in ["fit", "check"] {
            expect(
                &[("m.occam", text)],
                &[cmd, "m.occam"],
                &["m.occam:1:1", "no random variable"],
            );
        }
    }
}
