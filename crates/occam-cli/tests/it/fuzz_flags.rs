//! The fuzz harness for command-line flags (stable Rust, proptest): every numeric flag of `fit`,
//! `sample`, `nn`, `latent`, `bm` and `sbn` with values at and beyond the edges of its domain (negative, zero,
//! NaN, ±∞, subnormal, 1e308, 2⁶³, 2⁶⁴, text). Each run either succeeds or exits 2 naming the
//! flag; nothing panics, hangs (a run is killed after 60 s) or exits 0 with a non-finite result.
//!
//! Bounded by default; for a longer local run set `OCCAM_FUZZ_CASES` (runs per property, default
//! 24): `OCCAM_FUZZ_CASES=2000 cargo test -p occam-cli --test it fuzz_flags::`.

#[path = "../../../occam-lang/tests/support/fuzz_config.rs"]
mod fuzz_config;

use std::time::Duration;

use assert_cmd::Command;
use proptest::prelude::*;

/// Values for count flags (the valid ones are small, so every accepted run is quick).
const COUNTS: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "2.5",
    "1e3",
    "",
    "abc",
    "1000000000000",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
];

/// Values for real-valued flags.
const REALS: &[&str] = &[
    "0", "-1", "0.5", "1e-6", "1e-310", "1e308", "-1e308", "NaN", "inf", "-inf", "abc", "",
];

/// One command: its fixed arguments and the flags fuzzed (name, values).
struct Case {
    args: &'static [&'static str],
    flags: &'static [(&'static str, &'static [&'static str])],
}

const CASES: &[Case] = &[
    Case {
        args: &["fit", "m.occam", "--max-iter", "5"],
        flags: &[("--tol", REALS), ("--restarts", COUNTS), ("--seed", COUNTS)],
    },
    Case {
        args: &["fit", "m.occam"],
        flags: &[
            ("--max-iter", COUNTS),
            ("--tol", REALS),
            ("--threads", COUNTS),
        ],
    },
    Case {
        args: &["sample", "m.occam"],
        flags: &[("--seed", COUNTS)],
    },
    Case {
        args: &["bm", "learn", "b.csv", "--iterations", "3"],
        flags: &[("--rate", REALS), ("--hidden", COUNTS)],
    },
    Case {
        args: &["bm", "learn", "b.csv"],
        flags: &[
            ("--iterations", COUNTS),
            (
                "--negative",
                &[
                    "mixture:0",
                    "mixture:3",
                    "mixture:18446744073709551615",
                    "mixture:-1",
                    "mf",
                ],
            ),
        ],
    },
    Case {
        args: &[
            "bm",
            "logz",
            "--weights",
            "w.csv",
            "--thresholds",
            "h.csv",
            "--method",
            "mixture",
        ],
        flags: &[("--temperature", REALS), ("--components", COUNTS)],
    },
    Case {
        args: &["sbn", "learn", "d.csv", "--layers", "1,2", "--steps", "3"],
        flags: &[("--rate", REALS), ("--init-scale", REALS)],
    },
    Case {
        args: &["sbn", "learn", "d.csv", "--sbn", "n.csv"],
        flags: &[("--steps", COUNTS)],
    },
    Case {
        args: &["sbn", "repro", "lk-learning"],
        flags: &[
            (
                "--size",
                &["1000000000000", "18446744073709551615", "-1", "abc"],
            ),
            ("--steps", &["1000000000000", "18446744073709551615", "-1"]),
        ],
    },
];

/// Counts that are refused or quick: a count flag whose valid values would run for minutes at
/// their largest (networks of a reproduction) is fuzzed with these.
const SMALL_OR_REFUSED: &[&str] = &[
    "0",
    "1",
    "-1",
    "abc",
    "1000000000000",
    "4294967297",
    "18446744073709551615",
    "18446744073709551616",
];

/// The cases of the newer commands (`nn`, `latent`, the reproductions and the Monte Carlo and
/// mixture methods of `bm` and `sbn`), whose count flags once panicked on capacity overflow,
/// aborted allocating, or ran without bound.
const NEWER: &[Case] = &[
    Case {
        args: &["nn", "fit", "r.csv", "--out", "net.json", "--target", "y"],
        flags: &[
            ("--hidden", SMALL_OR_REFUSED),
            ("--restarts", SMALL_OR_REFUSED),
            ("--components", SMALL_OR_REFUSED),
        ],
    },
    Case {
        args: &["nn", "fit", "r.csv", "--out", "net.json", "--target", "y"],
        flags: &[
            ("--lags", SMALL_OR_REFUSED),
            ("--structure-cycles", SMALL_OR_REFUSED),
            ("--seed", COUNTS),
        ],
    },
    Case {
        args: &["latent", "ica", "t.csv", "--max-iter", "20"],
        flags: &[
            ("--components", SMALL_OR_REFUSED),
            ("--restarts", SMALL_OR_REFUSED),
            ("--sources", SMALL_OR_REFUSED),
        ],
    },
    Case {
        args: &["bm", "reproduce", "sk-fig4"],
        flags: &[(
            "--networks",
            &["0", "-1", "abc", "1000000000000", "18446744073709551615"],
        )],
    },
    Case {
        args: &[
            "bm",
            "logz",
            "--weights",
            "w.csv",
            "--thresholds",
            "h.csv",
            "--method",
            "gibbs",
        ],
        flags: &[("--samples", SMALL_OR_REFUSED), ("--seed", COUNTS)],
    },
    Case {
        args: &["sbn", "loglik", "n.csv", "d.csv"],
        flags: &[(
            "--method",
            &[
                "mf",
                "first",
                "third",
                "mixture:2",
                "mixture:0",
                "mixture:1000000000000",
                "mixture:18446744073709551615",
                "mixture:-1",
                "gibbs",
                "nonsense",
            ],
        )],
    },
];

const FILES: &[(&str, &str)] = &[
    ("m.occam", "plate N from data y\nmu ~ Gaussian(0, 1e-6)\ntau ~ Gamma(1e-6, 1e-6)\ny[N] ~ Gaussian(mu, tau)\n"),
    ("y.csv", "y\n1.5\n2.5\n0.5\n"),
    ("b.csv", "1,0\n1,1\n0,0\n"),
    ("w.csv", "0,0.5\n0.5,0\n"),
    ("h.csv", "0.1,-0.2\n"),
    ("d.csv", "2\n1\n0\n1\n"),
    ("n.csv", "unit,parent,weight\n0,,0.1\n1,,0.2\n2,0,0.5\n2,1,-0.5\n"),
    ("r.csv", "x,y\n0.1,0.3\n0.5,0.9\n0.9,1.6\n1.3,2.7\n1.7,3.2\n2.1,4.4\n2.5,4.9\n2.9,6.1\n"),
    ("t.csv", "a,b\n0.3,1.2\n-0.7,0.4\n1.1,-0.9\n-0.2,0.8\n0.9,-1.3\n-1.4,0.1\n0.5,0.6\n-0.6,-0.4\n"),
];

/// Runs one fuzzed command line and checks the outcome.
fn run(case: &Case, picks: &[(usize, bool)]) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in FILES {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let mut args: Vec<String> = case.args.iter().map(|s| s.to_string()).collect();
    let mut given = Vec::new();
    for (&(flag, values), &(i, equals)) in case.flags.iter().zip(picks) {
        let v = values[i % values.len()];
        // Both spellings: `--flag=value` and `--flag value`.
        if equals {
            args.push(format!("{flag}={v}"));
        } else {
            args.push(flag.to_string());
            args.push(v.to_string());
        }
        given.push(flag);
    }
    let out = Command::cargo_bin("occam")
        .unwrap()
        .current_dir(dir.path())
        .env("OCCAM_PLAIN", "1")
        .args(&args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let code = out.status.code();
    assert!(
        !stderr.contains("internal error") && !stderr.contains("panicked"),
        "{args:?}: {stderr}"
    );
    match code {
        Some(0) => assert!(
            !stdout.contains("NaN") && !stdout.to_lowercase().contains("\"inf"),
            "{args:?} succeeded with a non-finite result:\n{stdout}"
        ),
        Some(2) => {
            // The message names a flag we gave (clap quotes it as `--flag <VALUE>`), or the
            // option (`invalid option `rate``), or a file of the command.
            let named = given
                .iter()
                .any(|f| stderr.contains(*f) || stderr.contains(&f[2..].replace('-', "_")))
                || FILES.iter().any(|(n, _)| stderr.contains(n));
            assert!(named, "{args:?}: exit 2 without naming a flag:\n{stderr}");
        }
        other => panic!("{args:?}: exit {other:?} (killed after 60 s if None)\n{stderr}"),
    }
}

proptest! {
    #![proptest_config(fuzz_config::config(24))]

    #[test]
    fn newer_commands_count_flags_are_accepted_or_rejected_by_name(
        which in 0..NEWER.len(),
        picks in proptest::collection::vec((any::<usize>(), any::<bool>()), 3),
    ) {
        run(&NEWER[which], &picks);
    }

    #[test]
    fn numeric_flags_are_accepted_or_rejected_by_name(
        which in 0..CASES.len(),
        picks in proptest::collection::vec((any::<usize>(), any::<bool>()), 3),
    ) {
        run(&CASES[which], &picks);
    }
}

/// Every value of every flag of the newer commands, one flag at a time (the property above tries
/// random combinations): a bounded sweep CI runs in full.
#[test]
fn every_value_of_every_newer_flag_once() {
    for case in NEWER {
        for (f, &(_, values)) in case.flags.iter().enumerate() {
            for i in 0..values.len() {
                let one = Case {
                    args: case.args,
                    flags: &case.flags[f..=f],
                };
                run(&one, &[(i, i % 2 == 0)]);
            }
        }
    }
}
