//! Malformed inputs: each exits with code 2 and a message naming the place — `file:line:column`
//! of the model, or `file:row:column` of the data — and no panic reaches the user.

use crate::common;

use assert_cmd::Command;

/// A scratch directory holding `files`; runs `occam args...` there.
fn run(files: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let out = Command::cargo_bin("occam")
        .unwrap()
        .current_dir(dir.path())
        .env("OCCAM_PLAIN", "1")
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("internal error"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

fn expect(files: &[(&str, &str)], args: &[&str], code: i32, needles: &[&str]) {
    let (got, stderr) = run(files, args);
    assert_eq!(got, code, "exit code for {args:?}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "expected `{n}` in:\n{stderr}");
    }
}

const QUICK: &str = "plate N from data y\nmu ~ Gaussian(0, 1e-6)\ntau ~ Gamma(1e-6, 1e-6)\ny[N] ~ Gaussian(mu, tau)\n";
const Y: &str = "y\n1.5\n2.5\n0.5\n";

#[test]
fn syntax_error() {
    expect(
        &[
            (
                "m.occam",
                "plate N from data y\nmu ~ Gaussian(0, 1\ny[N] ~ Gaussian(mu, 1)\n",
            ),
            ("y.csv", Y),
        ],
        &["fit", "m.occam"],
        2,
        &["m.occam:2:19", "expected `)`"],
    );
}

#[test]
fn unknown_distribution() {
    expect(
        &[
            (
                "m.occam",
                "plate N from data y\nmu ~ Gausian(0, 1)\ny[N] ~ Gaussian(mu, 1)\n",
            ),
            ("y.csv", Y),
        ],
        &["check", "m.occam"],
        2,
        &[
            "m.occam:2:6",
            "unknown distribution `Gausian`",
            "did you mean `Gaussian`?",
        ],
    );
}

#[test]
fn misspelled_variable() {
    expect(
        &[
            (
                "m.occam",
                "plate N from data y\nmu ~ Gaussian(0, 1)\ny[N] ~ Gaussian(muu, 1)\n",
            ),
            ("y.csv", Y),
        ],
        &["fit", "m.occam"],
        2,
        &[
            "m.occam:3:17",
            "unknown variable `muu`",
            "did you mean `mu`?",
        ],
    );
}

#[test]
fn non_conjugate_parent() {
    expect(
        &[("m.occam", "plate N from data y\nmu ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mean = 0, precision = mu)\n"), ("y.csv", Y)],
        &["fit", "m.occam"],
        2,
        &["m.occam:3:39", "precision of Gaussian must be Gamma-distributed"],
    );
}

#[test]
fn plate_mismatch() {
    expect(
        &[("m.occam", "plate K = 3\nplate N from data y\nmu[K] ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mu, 1)\n"), ("y.csv", Y)],
        &["fit", "m.occam"],
        2,
        &["m.occam:4:17", "plate mismatch"],
    );
}

#[test]
fn negative_plate_size() {
    expect(
        &[("m.occam", "plate K = -3\nmu[K] ~ Gaussian(0, 1)\n")],
        &["check", "m.occam"],
        2,
        &["m.occam:1:"],
    );
}

#[test]
fn data_with_wrong_columns() {
    expect(
        &[("m.occam", "plate D = 2\nplate N from data x\nmu[D] ~ Gaussian(0, 1)\nx[N, D] ~ Gaussian(mu, 1)\n"), ("x.csv", "a,b,c\n1,2,3\n4,5,6\n")],
        &["fit", "m.occam"],
        2,
        &["m.occam:4:1", "data `x` has shape 2 × 3"],
    );
}

#[test]
fn ragged_data_row() {
    expect(
        &[("m.occam", QUICK), ("y.csv", "y,z\n1,2\n3\n")],
        &["fit", "m.occam"],
        2,
        &["y.csv:3:", "fields but the header has 2"],
    );
}

#[test]
fn infinite_value_in_a_numeric_column() {
    expect(
        &[("m.occam", QUICK), ("y.csv", "y\n1\ninf\n")],
        &["fit", "m.occam"],
        2,
        &["y.csv:3:1", "not finite"],
    );
}

#[test]
fn text_in_a_numeric_column() {
    expect(
        &[("m.occam", QUICK), ("d.csv", "y\n1\n2\nseven\n")],
        &["fit", "m.occam", "--data", "y=d.csv"],
        2,
        &["d.csv:4:1", "`seven` is not a number"],
    );
}

#[test]
fn negative_count() {
    expect(
        &[
            (
                "m.occam",
                "plate N from data y\nlam ~ Gamma(1, 1)\ny[N] ~ Poisson(lam)\n",
            ),
            ("y.csv", "y\n1\n-2\n3\n"),
        ],
        &["fit", "m.occam"],
        2,
        &["y.csv:3:1", "-2 is not a non-negative count"],
    );
}

/// A value refused by the model (not by the reader) is placed at its line in the file, past
/// comment and empty lines, with the direct reader and with the `csv` crate's (a quoted cell).
#[test]
fn refused_value_after_comment_lines_names_its_own_line() {
    let model = "plate N from data y\nlam ~ Gamma(1, 1)\ny[N] ~ Poisson(lam)\n";
    for y in [
        "# counts\ny\n1\n\n# second batch\n3\n-2\n",
        "# counts\ny\n\"1\"\n\n# second batch\n3\n-2\n",
    ] {
        expect(
            &[("m.occam", model), ("y.csv", y)],
            &["fit", "m.occam"],
            2,
            &["y.csv:7:1", "-2 is not a non-negative count"],
        );
    }
}

#[test]
fn category_out_of_range() {
    expect(
        &[("m.occam", "plate K = 3\nplate N from data y\np ~ Dirichlet(1) over K\ny[N] ~ Categorical(p)\n"), ("y.csv", "y\n0\n2\n3\n")],
        &["fit", "m.occam"],
        2,
        &["y.csv:4:1", "3 is not a category: the categories are 0 to 2"],
    );
}

#[test]
fn binary_data_that_is_not_binary() {
    expect(
        &[
            (
                "m.occam",
                "plate N from data y\np ~ Beta(1, 1)\ny[N] ~ Bernoulli(p)\n",
            ),
            ("y.csv", "y\n0\n1\n2\n"),
        ],
        &["fit", "m.occam"],
        2,
        &["y.csv:4:1", "2 is not 0 or 1"],
    );
}

#[test]
fn missing_data_file() {
    expect(
        &[("m.occam", QUICK)],
        &["fit", "m.occam", "--data", "y=nope.csv"],
        2,
        &["nope.csv", "no such data file"],
    );
}

#[test]
fn no_data_at_all() {
    expect(
        &[("m.occam", QUICK)],
        &["fit", "m.occam"],
        2,
        &["m.occam:1:19", "no data named `y`"],
    );
}

#[test]
fn header_missing() {
    expect(
        &[("m.occam", QUICK), ("y.csv", "1.5\n2.5\n")],
        &["fit", "m.occam"],
        2,
        &["y.csv:1:1", "header"],
    );
}

#[test]
fn missing_model_file() {
    expect(
        &[],
        &["fit", "nothing.occam"],
        2,
        &["nothing.occam", "no such model file"],
    );
}

#[test]
fn bad_data_argument() {
    expect(
        &[("m.occam", QUICK)],
        &["fit", "m.occam", "--data", "y"],
        2,
        &["expected NAME=FILE"],
    );
}

#[test]
fn cycle() {
    expect(
        &[("m.occam", "a ~ Gaussian(b, 1)\nb ~ Gaussian(a, 1)\n")],
        &["check", "m.occam"],
        2,
        &["m.occam:1:"],
    );
}

#[test]
fn engine_only_restriction_is_mapped_to_the_model() {
    // A rectified Gaussian takes only a constant mean (declared by the core family); the language
    // rejects a random one where it is written.
    expect(
        &[("m.occam", "plate N from data y\nm ~ Gaussian(0, 1)\ny[N] ~ RectifiedGaussian(mean = m, precision = 1)\n"), ("y.csv", Y)],
        &["fit", "m.occam"],
        2,
        &["m.occam:3:33", "must be a constant"],
    );
}

#[test]
fn core_build_error_is_mapped_to_the_variable() {
    // An observed MAP node is rejected when the engine compiles the graph.
    expect(
        &[("m.occam", "plate N from data y\nmu ~ Gaussian(0, 1) map\ny[N] ~ Gaussian(mu, 1)\nobserve mu\n"), ("y.csv", Y), ("mu.csv", "mu\n1\n")],
        &["fit", "m.occam"],
        2,
        &["m.occam:2:1", "observed node cannot be MAP"],
    );
}

#[test]
fn wishart_dof_too_small() {
    expect(
        &[
            ("m.occam", "plate D = 2\nplate N from data y\nL ~ Wishart(dof = 0.5, rate = identity) over D\ny[N] over D ~ MvGaussian(mean = 0, precision = L)\n"),
            ("y.csv", "a,b\n1,2\n3,4\n"),
        ],
        &["fit", "m.occam"],
        2,
        &["m.occam:3:19", "needs dof > 1"],
    );
}

#[test]
fn unknown_node_in_order() {
    expect(
        &[("m.occam", QUICK), ("y.csv", Y)],
        &["fit", "m.occam", "--order", "mu,sigma"],
        2,
        &["no node named `sigma`"],
    );
}

#[test]
fn sample_with_a_negative_plate_size() {
    expect(
        &[("m.occam", QUICK)],
        &["sample", "m.occam", "--plate", "N=-5", "--out", "o.csv"],
        2,
        &["N=-5", "positive integer"],
    );
}

#[test]
fn sample_without_a_plate_size() {
    expect(
        &[("m.occam", QUICK)],
        &["sample", "m.occam", "--out", "o.csv"],
        2,
        &["--plate N=SIZE"],
    );
}

#[test]
fn unknown_subcommand_and_option() {
    expect(&[], &["frobnicate"], 2, &["frobnicate"]);
    expect(
        &[("m.occam", QUICK)],
        &["fit", "m.occam", "--tol", "abc"],
        2,
        &["--tol"],
    );
}

#[test]
fn numerical_breakdown_exits_1_naming_the_node() {
    // Values of 1e200 overflow x² and break the precision's update.
    let (code, stderr) = run(
        &[("m.occam", QUICK), ("y.csv", "y\n1e200\n2\n")],
        &["fit", "m.occam"],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("numerical breakdown") && stderr.contains("m.occam:"),
        "{stderr}"
    );
}

#[test]
fn compare_with_the_wrong_number_of_priors() {
    expect(
        &[("m.occam", QUICK), ("y.csv", Y)],
        &["compare", "m.occam", "m.occam", "--priors", "1"],
        2,
        &["--priors: give 2 positive numbers"],
    );
}

#[test]
fn numeric_flags_out_of_their_domain_name_the_flag_and_the_limit() {
    let files = [("m.occam", QUICK), ("y.csv", Y)];
    for (args, needle) in [
        (
            vec!["--tol", "-1"],
            "--tol must be a finite number ≥ 0, got -1",
        ),
        (vec!["--tol", "inf"], "--tol must be a finite number"),
        (
            vec!["--restarts", "9223372036854775808"],
            "--restarts must be between 1 and 100000",
        ),
        (vec!["--restarts", "0"], "--restarts must be between 1"),
        (vec!["--max-iter", "0"], "--max-iter must be between 1"),
        (
            vec!["--threads", "100000"],
            "--threads must be between 1 and 1024",
        ),
        (vec!["--threads", "0"], "--threads must be between 1"),
    ] {
        let mut all = vec!["fit", "m.occam"];
        all.extend(args);
        expect(&files, &all, 2, &[needle]);
    }
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let root = common::root();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("occam"))
        .current_dir(&root)
        .args([
            "fit",
            "--json",
            "examples/vibes_tutorial/mixture.occam",
            "--data",
            "x=examples/vibes_tutorial/x.csv",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 8];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The reader is gone (as after `| head -c 8`): the rest of the output has nowhere to go.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The start of the one-line JSON object (its keys are sorted).
    assert!(first.starts_with(b"{\""), "{first:?}");
    assert!(!stderr.contains("internal error"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn an_unusable_output_directory_is_reported_before_fitting() {
    let (code, stderr) = run(
        &[("m.occam", QUICK), ("y.csv", Y), ("afile", "")],
        &[
            "fit",
            "m.occam",
            "--out",
            "afile/sub",
            "--max-iter",
            "100000000",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("afile/sub: cannot write output here"),
        "{stderr}"
    );
}
