//! Restarts, strict mode and progress of `occam fit --shards` / `--stream`, as a normal fit has
//! them: restart r is the fit from seed + r (its bound bit for bit), the highest final bound is
//! kept (its globals those of that seed's fit), `--strict` refuses stochastic VB (whose bound is
//! not promised to rise) and `--progress N` prints the sweeps of every restart.

use occam::data::DataSet;

use crate::common::{json, occam, root, succeeded};
use crate::shards::{fit_json, trace, tutorial_rows, write_shards};
use crate::stream::write_npy;

fn four_shards(dir: &std::path::Path) {
    let rows = tutorial_rows();
    write_shards(
        dir,
        &[
            rows / 5,
            rows / 2,
            rows / 10,
            rows - rows / 5 - rows / 2 - rows / 10,
        ],
    );
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap()
}

/// The restarts' bounds are the single fits' from seeds s, s + 1, …; the kept one is the first
/// highest, and the result is that seed's fit.
fn check_restarts(restarts: &serde_json::Value, singles: &[serde_json::Value], seed: u64) {
    let bounds: Vec<f64> = singles.iter().map(|s| f(&s["bound"])).collect();
    let got: Vec<f64> = restarts["restart_bounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect();
    assert_eq!(got, bounds);
    let mut best = 0;
    for (r, b) in bounds.iter().enumerate() {
        if *b > bounds[best] {
            best = r;
        }
    }
    assert_eq!(restarts["best_restart"], best);
    assert_eq!(restarts["seed"], seed + best as u64);
    assert_eq!(f(&restarts["bound"]), bounds[best]);
    assert_eq!(trace(restarts), trace(&singles[best]));
    assert_eq!(restarts["globals"], singles[best]["globals"]);
}

#[test]
fn sharded_restarts_keep_the_best_of_the_seeds_fits() {
    let dir = tempfile::tempdir().unwrap();
    four_shards(dir.path());
    for vb in ["batch", "svi"] {
        let extra = ["--vb", vb, "--max-iter", "40", "--bound-every", "4"];
        let singles: Vec<_> = (5..9)
            .map(|s| fit_json(dir.path(), &s.to_string(), &extra))
            .collect();
        let all = fit_json(
            dir.path(),
            "5",
            &[&extra[..], &["--restarts", "4"]].concat(),
        );
        check_restarts(&all, &singles, 5);
        // The restarts differ (else the test could not tell them apart).
        let distinct: std::collections::BTreeSet<u64> =
            singles.iter().map(|s| f(&s["bound"]).to_bits()).collect();
        assert!(distinct.len() > 1, "{vb}: every seed gave one bound");
    }
}

#[test]
fn streamed_restarts_keep_the_best_of_the_seeds_fits() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = DataSet::new();
    d.insert_file("x", &root().join("examples/vibes_tutorial/x.csv"))
        .unwrap();
    let t = &d.tables["x"];
    let file = dir.path().join("x.npy");
    write_npy(&file, t.rows, t.cols, &t.values);
    let run = |seed: &str, extra: &[&str]| {
        let stream = format!("x={}", file.display());
        let mut args = vec![
            "fit",
            "examples/vibes_tutorial/mixture.occam",
            "--stream",
            &stream,
            "--chunk-rows",
            "70",
            "--max-iter",
            "60",
            "--json",
            "--seed",
            seed,
        ];
        args.extend(extra);
        json(&succeeded(occam().args(&args)))
    };
    let singles: Vec<_> = (0..3).map(|s| run(&s.to_string(), &[])).collect();
    check_restarts(&run("0", &["--restarts", "3"]), &singles, 0);
}

/// `--batch-rows` belongs to stochastic VB: with batch or memoized VB it is a usage error (exit
/// 2) that names the flag, not a silently ignored option.
#[test]
fn batch_rows_without_stochastic_vb_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    four_shards(dir.path());
    let glob = format!("x={}/x-*.csv", dir.path().display());
    for vb in ["batch", "memoized"] {
        let out = occam()
            .args([
                "fit",
                "examples/vibes_tutorial/mixture.occam",
                "--shards",
                &glob,
                "--vb",
                vb,
                "--batch-rows",
                "50",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--vb {vb}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("--batch-rows 50") && err.contains("--vb svi"),
            "{err}"
        );
    }
}

#[test]
fn strict_mode_refuses_stochastic_vb_and_keeps_a_monotone_fit() {
    let dir = tempfile::tempdir().unwrap();
    four_shards(dir.path());
    let glob = format!("x={}/x-*.csv", dir.path().display());
    let out = occam()
        .args([
            "fit",
            "examples/vibes_tutorial/mixture.occam",
            "--shards",
            &glob,
            "--vb",
            "svi",
            "--strict",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("strict mode") && err.contains("stochastic VB"),
        "{err}"
    );
    // Batch and memoized never decrease: strict changes nothing, and no warning is reported.
    for vb in ["batch", "memoized"] {
        let loose = fit_json(dir.path(), "2", &["--vb", vb]);
        let strict = fit_json(dir.path(), "2", &["--vb", vb, "--strict"]);
        assert_eq!(trace(&loose), trace(&strict));
        assert_eq!(strict["warnings"], serde_json::json!([]));
    }
}

#[test]
fn progress_lines_show_every_sweep_of_every_restart() {
    let dir = tempfile::tempdir().unwrap();
    four_shards(dir.path());
    let glob = format!("x={}/x-*.csv", dir.path().display());
    let out = succeeded(occam().args([
        "fit",
        "examples/vibes_tutorial/mixture.occam",
        "--shards",
        &glob,
        "--restarts",
        "2",
        "--progress",
        "1",
        "--json",
    ]));
    let v = json(&out);
    let err = String::from_utf8(out.stderr).unwrap();
    for r in 1..=2 {
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with(&format!("fit restart {r}/2: iteration ")))
            .collect();
        assert!(lines.len() > 2, "{err}");
        if r - 1 == v["best_restart"].as_u64().unwrap() as usize {
            assert_eq!(lines.len(), trace(&v).len(), "{err}");
            let last = lines.last().unwrap();
            let bound = format!("bound {}", f(&v["bound"]));
            assert!(last.contains(&bound), "{last} vs {bound}");
        }
    }
}
