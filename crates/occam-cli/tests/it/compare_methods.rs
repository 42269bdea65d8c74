//! `occam compare --method laplace,cv`, `--average METHOD` (Bayesian model averaging of new
//! rows' predictions, checked by hand against each model's own `fit --predict` output and the
//! weights `compare --json` prints), `--plot FILE`, and `occam fit --evidence`.

use crate::common::*;

const A: &[u8] = b"plates N, C from data X\ndata X[N] over C\nalpha[C] ~ Gamma(1e-3, 1e-3)\n\
w over C ~ GaussianARD(0, alpha)\ntau ~ Gamma(1e-3, 1e-3)\ny[N] ~ Gaussian(dot(X[N], w), tau)\nobserve y\n";
const B: &[u8] = b"plates N, C from data X\ndata X[N] over C\nalpha[C] ~ Gamma(1, 1)\n\
w over C ~ GaussianARD(0, alpha)\ntau ~ Gamma(1e-3, 1e-3)\ny[N] ~ Gaussian(dot(X[N], w), tau)\nobserve y\n";

fn csv(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .skip(1)
        .map(|l| l.split(',').skip(1).map(|v| v.parse().unwrap()).collect())
        .collect()
}

#[test]
fn the_model_average_is_the_weighted_mixture_of_each_models_predictive() {
    let data = |name: &str| {
        root()
            .join("examples/ard_regression")
            .join(name)
            .display()
            .to_string()
    };
    let x = format!("X={}", data("X.csv"));
    let y = format!("y={}", data("y.csv"));
    let new = format!("X={}@..4", data("X.csv"));
    let files: &[(&str, &[u8])] = &[("a.occam", A), ("b.occam", B)];
    // The weights: posterior model probabilities under vb (compare --json); the prior odds
    // offset the bounds' difference (about 24 nats), so that both models count.
    let (code, out, err) = run_in(
        files,
        &[
            "compare", "a.occam", "b.occam", "--data", &x, "--data", &y, "--method", "vb",
            "--json", "--priors", "3e10,1",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let w: Vec<f64> = (0..2)
        .map(|i| v["models"][i]["probability"].as_f64().unwrap())
        .collect();
    assert!(
        w.iter().all(|p| *p > 1e-6),
        "the test needs two models that count: {w:?}"
    );
    // Each model's own predictive, and the average, in one temporary directory.
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let run = |args: &[&str]| {
        let o = assert_cmd::Command::cargo_bin("occam")
            .unwrap()
            .current_dir(dir.path())
            .env("OCCAM_PLAIN", "1")
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    for m in ["a", "b"] {
        let file = format!("{m}.occam");
        let out = format!("{m}.csv");
        let args = [
            "fit",
            &file,
            "--data",
            &x,
            "--data",
            &y,
            "--predict",
            &new,
            "--predict-out",
            &out,
        ];
        run(&args);
    }
    let args = [
        "compare",
        "a.occam",
        "b.occam",
        "--data",
        &x,
        "--data",
        &y,
        "--method",
        "vb",
        "--average",
        "vb",
        "--priors",
        "3e10,1",
        "--predict",
        &new,
        "--predict-out",
        "avg.csv",
    ];
    let stderr = run(&args);
    assert!(stderr.contains("average by vb: a.occam weight"), "{stderr}");
    let read = |f: &str| csv(&std::fs::read_to_string(dir.path().join(f)).unwrap());
    let (a, b, avg) = (read("a.csv"), read("b.csv"), read("avg.csv"));
    assert_eq!(avg.len(), 4);
    for r in 0..4 {
        // Columns: mean, sd, quantiles. Mixture mean and variance by hand.
        let mean = w[0] * a[r][0] + w[1] * b[r][0];
        let second =
            w[0] * (a[r][1].powi(2) + a[r][0].powi(2)) + w[1] * (b[r][1].powi(2) + b[r][0].powi(2));
        let sd = (second - mean * mean).sqrt();
        assert!(
            (avg[r][0] - mean).abs() < 1e-9,
            "row {r}: mean {} vs {mean}",
            avg[r][0]
        );
        assert!(
            (avg[r][1] - sd).abs() < 1e-9,
            "row {r}: sd {} vs {sd}",
            avg[r][1]
        );
    }
}

#[test]
fn laplace_cv_plot_and_fit_evidence_on_the_guides_mixture() {
    let model = root()
        .join("docs/guide/examples/mixture_k.occam")
        .display()
        .to_string();
    let data = format!(
        "x={}",
        root()
            .join("docs/guide/examples/three_clusters.csv")
            .display()
    );
    let (code, out, err) = run_in(
        &[],
        &[
            "compare",
            &model,
            "--data",
            &data,
            "--plate",
            "K=1..3",
            "--method",
            "exact,laplace,cv",
            "--restarts",
            "5",
            "--folds",
            "3",
            "--plot",
            "p.svg",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for m in ["exact", "laplace", "cv"] {
        assert!(
            v["best"][m].as_str().unwrap().ends_with("[K=3]"),
            "{m}: {out}"
        );
    }
    let k3 = &v["models"][2]["evidence"];
    assert_eq!(k3[1]["kind"], "asymptotic O(1/N)");
    assert_eq!(k3[2]["kind"], "held-out, not ln p");
    assert!(k3[2]["se"].as_f64().unwrap() > 0.0);
    // A held-out score is no evidence: no posterior model probability, and no model average.
    assert!(k3[1]["probability"].as_f64().is_some(), "{out}");
    assert!(k3[2]["probability"].is_null(), "{out}");
    let (code, _, err) = run_in(
        &[],
        &[
            "compare",
            &model,
            "--data",
            &data,
            "--plate",
            "K=1..2",
            "--method",
            "cv",
            "--folds",
            "3",
            "--average",
            "cv",
            "--predict",
            &data,
            "--predict-out",
            "avg.csv",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--average cv: a held-out score is not ln p(D | m)"),
        "{err}"
    );
    // Laplace with the relabelling count within 1 nat of the exact evidence on nine points.
    let (e, l) = (
        k3[0]["log_evidence"].as_f64().unwrap(),
        k3[1]["log_evidence"].as_f64().unwrap(),
    );
    assert!((e - l).abs() < 1.0, "exact {e} laplace {l}");
    // fit --evidence prints the same estimates for one model.
    let (code, out, err) = run_in(
        &[],
        &[
            "fit",
            &model,
            "--data",
            &data,
            "--restarts",
            "5",
            "--evidence",
            "exact,laplace,bogus",
        ],
    );
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("--evidence: unknown `bogus`"), "{err}");
    let (code, out, err) = run_in(
        &[],
        &[
            "fit",
            &model,
            "--data",
            &data,
            "--restarts",
            "5",
            "--evidence",
            "exact,laplace",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("evidence (ln p(D), nats):"), "{out}");
    assert!(out.contains("  exact    exact"), "{out}");
    assert!(out.contains("  laplace  asymptotic O(1/N)"), "{out}");
}

#[test]
fn the_plot_draws_one_series_per_method_against_free_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("p.svg");
    let model = root()
        .join("docs/guide/examples/mixture_k.occam")
        .display()
        .to_string();
    let data = format!(
        "x={}",
        root()
            .join("docs/guide/examples/three_clusters.csv")
            .display()
    );
    let (code, _, err) = run_in(
        &[],
        &[
            "compare",
            &model,
            "--data",
            &data,
            "--plate",
            "K=1..3",
            "--method",
            "vb,exact",
            "--plot",
            &svg.display().to_string(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        text.matches("<polyline class=\"series\"").count(),
        2,
        "{text}"
    );
    assert!(text.contains("data-label=\"exact\"") && text.contains("free parameters d"));
}

/// The "best by" lines give each winner's margin over the runner-up and call it weak under one
/// nat (Kass & Raftery's "not worth more than a bare mention") or within two standard errors;
/// when the methods pick different models, one line says so. On the guide's nine points the
/// bound picks K = 2 by 0.55 nats, the exact evidence K = 3 by 0.86: every pick is weak. The JSON
/// carries the same margins.
#[test]
fn best_by_lines_give_the_margin_and_say_when_it_is_weak() {
    let model = root().join("docs/guide/examples/mixture_k.occam");
    let data = format!(
        "x={}",
        root()
            .join("docs/guide/examples/three_clusters.csv")
            .display()
    );
    let args = |json: bool| {
        let mut a = vec![
            "compare".to_string(),
            model.display().to_string(),
            "--data".into(),
            data.clone(),
            "--plate".into(),
            "K=1..3".into(),
            "--method".into(),
            "vb,exact,is".into(),
            "--restarts".into(),
            "5".into(),
        ];
        if json {
            a.push("--json".into());
        }
        a
    };
    let (code, out, err) = run_in(
        &[],
        &args(false).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(code, 0, "{err}");
    let m = |k: u32| format!("{}[K={k}]", model.display());
    let line = |method: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("best by {method}:")))
            .unwrap_or_else(|| panic!("no best-by-{method} line in:\n{out}"))
            .to_string()
    };
    assert_eq!(
        line("vb"),
        format!(
            "best by vb: {} (by 0.55 nats over {}: weak, Bayes factor 1.74 < e: not worth more \
             than a bare mention (Kass & Raftery 1995))",
            m(2),
            m(3)
        )
    );
    assert_eq!(
        line("exact"),
        format!(
            "best by exact: {} (by 0.86 nats over {}: weak, Bayes factor 2.36 < e: not worth \
             more than a bare mention (Kass & Raftery 1995))",
            m(3),
            m(2)
        )
    );
    assert!(
        line("is").starts_with(&format!("best by is: {} (by 0.9", m(3))),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "the methods disagree (vb → {}; exact, is → {}), each by a weak margin: the data do \
             not choose between these models",
            m(2),
            m(3)
        )),
        "{out}"
    );
    // The JSON's margins: the same numbers, the names and why each is weak.
    let (code, out, err) = run_in(
        &[],
        &args(true).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let exact: Vec<f64> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["evidence"][1]["log_evidence"].as_f64().unwrap())
        .collect();
    let g = &v["margin"]["exact"];
    assert_eq!(g["best"], m(3).as_str());
    assert_eq!(g["runner_up"], m(2).as_str());
    assert_eq!(g["nats"].as_f64().unwrap(), exact[2] - exact[1]);
    assert!(g["se"].is_null());
    assert!(g["weak"]
        .as_str()
        .unwrap()
        .starts_with("Bayes factor 2.36 < e"));
    let s = &v["margin"]["is"];
    assert!(s["se"].as_f64().unwrap() > 0.0 && s["weak"].is_string());
}
