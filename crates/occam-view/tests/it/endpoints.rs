//! Each endpoint against the library's own results: the graph's nodes are the model's
//! variables, each posterior is `occam fit --json`'s entry (the same fit, serialised by the same
//! code), the trace ends at the fit's bound, and check's errors carry the right line and column.

use occam::{DataSet, Model};
use occam_report::FittedReport;
use serde_json::{json, Value};

use crate::common::*;

/// `occam fit --json`'s report of `model` with `data` (what fit.rs prints).
pub fn fit_json(model: &str, data: &[String]) -> (Value, occam::Fitted) {
    let given = DataSet::from_args(data).unwrap();
    let m = Model::from_file(examples().join(model), &given).unwrap();
    let fitted = m.fit(&settings()).unwrap();
    let text = serde_json::to_string(&fitted.report(true)).unwrap();
    (serde_json::from_str(&text).unwrap(), fitted)
}

#[test]
fn graph_nodes_and_edges_are_the_models() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    let (status, g) = get_json(v.addr, "/api/graph");
    assert_eq!(status, 200);
    let names: Vec<&str> = g["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    let model = Model::from_file(
        examples().join("vibes_tutorial/mixture.occam"),
        &DataSet::new(),
    )
    .unwrap();
    let want: Vec<&str> = model
        .loaded()
        .model
        .variables
        .iter()
        .map(|x| x.name.as_str())
        .collect();
    assert_eq!(names, want);
    let edges: Vec<(String, String, bool)> = g["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap().to_string();
            (s("from"), s("to"), e["index"].as_bool().unwrap())
        })
        .collect();
    // x's parents: mu and gamma, selected by the index lambda; lambda's parent: pi.
    for (from, to, index) in [
        ("pi", "lambda", false),
        ("mu", "x", false),
        ("gamma", "x", false),
        ("lambda", "x", true),
    ] {
        assert!(
            edges.contains(&(from.into(), to.into(), index)),
            "{from} → {to} missing in {edges:?}"
        );
    }
    assert_eq!(edges.len(), 4);
    let plates: Vec<&str> = g["plates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    for p in ["K = 20", "N = 500", "D = 2"] {
        assert!(plates.contains(&p), "plate {p} missing in {plates:?}");
    }
}

#[test]
fn posteriors_equal_fit_json_and_the_trace_ends_at_the_bound() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    let status = wait_done(v.addr);
    let (report, fitted) = fit_json("vibes_tutorial/mixture.occam", &[]);
    assert_eq!(status["bound"], report["bound"]);
    for name in ["pi", "mu", "gamma", "lambda", "x"] {
        let (code, p) = get_json(v.addr, &format!("/api/posterior/{name}"));
        assert_eq!(code, 200, "{p}");
        assert_eq!(
            p["variable"], report["variables"][name],
            "posterior of {name}"
        );
    }
    let (code, missing) = get_json(v.addr, "/api/posterior/sigma");
    assert_eq!(code, 404);
    assert!(missing["error"]
        .as_str()
        .unwrap()
        .contains("variables: pi, mu"));

    let events = trace_events(v.addr);
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "done");
    assert_eq!(done["bound"].as_f64().unwrap(), fitted.bound());
    // The kept run's sweeps, in the order the fit made them, end at the fit's bound: the trace
    // of the outcome is the last stretch of the kept restart's points.
    let o = fitted.outcome();
    let kept: Vec<f64> = events
        .iter()
        .filter(|(n, _)| n == "points")
        .flat_map(|(_, d)| d.as_array().unwrap().clone())
        .filter(|p| p[0].as_u64() == Some(o.best_restart as u64) && p[1] != "candidate")
        .map(|p| p[3].as_f64().unwrap())
        .collect();
    // Every sweep the fit kept (its bound trace: the sweeps, then the accepted pruning trials'
    // converged bounds) was sent, in order, among the kept restart's points; rejected trials
    // were sent too, as the fit made them.
    assert_eq!(*o.bound_trace.last().unwrap(), fitted.bound());
    let mut rest = kept.iter();
    for b in &o.bound_trace {
        assert!(rest.any(|k| k == b), "bound {b} of the kept run never sent");
    }
    assert_eq!(
        kept[..o.prune_start.unwrap()],
        o.bound_trace[..o.prune_start.unwrap()]
    );
}
#[test]
fn a_plain_models_trace_is_its_bound_trace_point_for_point() {
    let data = vec![format!(
        "y={}",
        examples().join("winn_1d_mixture/y.csv").display()
    )];
    let model = "models/quickstart.occam";
    let v = start(model, &data);
    wait_done(v.addr);
    let (_, fitted) = fit_json(model, &data);
    let events = trace_events(v.addr);
    let points: Vec<(u64, usize, f64)> = events
        .iter()
        .filter(|(n, _)| n == "points")
        .flat_map(|(_, d)| d.as_array().unwrap().clone())
        .map(|p| {
            (
                p[0].as_u64().unwrap(),
                p[2].as_u64().unwrap() as usize,
                p[3].as_f64().unwrap(),
            )
        })
        .collect();
    let bounds: Vec<f64> = points.iter().map(|p| p.2).collect();
    assert_eq!(bounds, fitted.outcome().bound_trace);
    assert!(points
        .iter()
        .enumerate()
        .all(|(i, p)| p.0 == 0 && p.1 == i + 1));
}

#[test]
fn check_locates_errors_and_fit_refits_the_edited_text() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    let source = std::fs::read_to_string(examples().join("vibes_tutorial/mixture.occam")).unwrap();
    let (code, ok) = post_json(v.addr, "/api/check", &json!({"source": source}));
    assert_eq!(code, 200);
    assert_eq!(ok["ok"], true);
    assert!(ok["report"].as_str().unwrap().contains("K = 20 (fixed)"));

    // A misspelt family on the `x` line: the diagnostic points at the misspelt name.
    let bad = source.replace(
        "~ Gaussian(mean = mu[lambda]",
        "~ Gausian(mean = mu[lambda]",
    );
    let (line, text) = bad
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("Gausian"))
        .unwrap();
    let column = text.find("Gausian").unwrap() + 1;
    let (_, r) = post_json(v.addr, "/api/check", &json!({"source": bad}));
    assert_eq!(r["ok"], false);
    let d = &r["diagnostics"][0];
    assert_eq!(d["line"], line + 1, "{r}");
    assert_eq!(d["column"], column, "{r}");
    assert_eq!(d["end_column"], column + "Gausian".len(), "{r}");
    assert!(d["hint"].as_str().unwrap_or("").contains("Gaussian"), "{r}");
    // A fit of text that does not check returns the same diagnostics and starts nothing.
    let (_, f) = post_json(v.addr, "/api/fit", &json!({"source": bad}));
    assert_eq!(f["ok"], false);
    assert_eq!(f["diagnostics"], r["diagnostics"]);

    // Fewer components: the view's new fit equals the library's fit of the same text.
    let edited = source.replace("plate K = 20", "plate K = 3");
    let (_, f) = post_json(v.addr, "/api/fit", &json!({"source": edited}));
    assert_eq!(f["ok"], true, "{f}");
    let status = wait_done(v.addr);
    let m = Model::from_edited(
        examples().join("vibes_tutorial/mixture.occam"),
        &edited,
        &DataSet::new(),
    )
    .unwrap();
    let fitted = m.fit(&settings()).unwrap();
    assert_eq!(status["bound"].as_f64().unwrap(), fitted.bound());
    assert_eq!(status["source"], edited.as_str());
    let (_, g) = get_json(v.addr, "/api/graph");
    assert!(g["plates"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["label"] == "K = 3"));
    let (_, pi) = get_json(v.addr, "/api/posterior/pi");
    assert_eq!(
        pi["variable"]["parameters"]["mean"][0]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn a_chain_posterior_carries_its_state_marginals() {
    let dir = examples().join("models/hmm_chain");
    let data = vec![
        format!("y={}", dir.join("y.csv").display()),
        format!("L={}", dir.join("L.csv").display()),
    ];
    let v = start("models/hmm_chain.occam", &data);
    wait_done(v.addr);
    let (report, _) = fit_json("models/hmm_chain.occam", &data);
    let (_, z) = get_json(v.addr, "/api/posterior/z");
    assert_eq!(z["variable"], report["variables"]["z"]);
    assert_eq!(z["chain"], report["chains"]["z"]);
    assert_eq!(z["chain"]["marginals"].as_array().unwrap().len(), 3);
}

/// The compare view refuses to rank an exact bound beside an approximate one (a Student-t
/// model, importance sampled) unless `"mixed_bounds": true`, whatever the methods besides `vb`,
/// and refuses a plate sweep of more than 32 models before building any (the plate name
/// below is not even the model's: the count is checked first).
#[test]
fn compare_refuses_mixed_bound_kinds_and_too_long_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write("y.csv", "y\n1.2\n2.9\n2.1\n1.7\n8.0\n2.4\n-4.0\n2.2\n");
    write(
        "gauss.occam",
        "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ Gaussian(mu, 0.25)\nobserve y\n",
    );
    write(
        "t.occam",
        "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ StudentT(nu = 3, scale = 1, mean = mu)\nobserve y\n",
    );
    let data = [format!("y={}", dir.path().join("y.csv").display())];
    let v = start_at(&dir.path().join("gauss.occam"), &data);
    let t = dir.path().join("t.occam").display().to_string();
    let body = json!({"models": [t], "methods": ["vb", "bic"]});
    let (code, r) = post_json(v.addr, "/api/compare", &body);
    assert_eq!(code, 400, "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("different kinds"),
        "{r}"
    );
    let body = json!({"models": [t], "methods": ["vb", "bic"], "mixed_bounds": true});
    let (code, r) = post_json(v.addr, "/api/compare", &body);
    assert_eq!(code, 200, "{r}");
    assert_eq!(r["models"][0]["evidence"][0]["kind"], "lower bound", "{r}");
    assert_eq!(
        r["models"][1]["evidence"][0]["kind"], "approximate (IS)",
        "{r}"
    );
    let (code, r) = post_json(v.addr, "/api/compare", &json!({"plate": "Q=1..40"}));
    assert_eq!(code, 400, "{r}");
    assert!(r["error"].as_str().unwrap().contains("at most 32"), "{r}");
}
