//! Bound kinds: a fit whose bound is a lower bound on the ELBO (`sigmoid_jj`) says so and names
//! the variable; `compare` refuses to rank an exact ELBO beside it (exit 2, each model's kind and
//! the variable's place) unless `--mixed-bounds`, and then prints the kinds under the table.

use crate::common::run_in;

const X: &str = "x\n-1.2\n0.3\n1.5\n-0.4\n0.8\n2.1\n-1.9\n0.1\n";
const Y: &str = "y\n0\n1\n1\n0\n0\n1\n0\n1\n";
const EXACT: &str = "plates N from data x\ndata x[N]\nb ~ Gaussian(0, 1)\nw ~ Gaussian(0, 1)\ny[N] ~ Bernoulli(sigmoid(w * x[N] + b))\nobserve y\n";

fn files(jj: &str) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("x.csv", X.as_bytes().to_vec()),
        ("y.csv", Y.as_bytes().to_vec()),
        ("exact.occam", EXACT.as_bytes().to_vec()),
        ("jj.occam", jj.as_bytes().to_vec()),
    ]
}

#[test]
fn mixed_bound_kinds_are_labelled_and_not_ranked_without_the_flag() {
    let jj = EXACT.replace("sigmoid(", "sigmoid_jj(");
    let owned = files(&jj);
    let f: Vec<(&str, &[u8])> = owned.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    // The exact fit prints no kind line; the JJ fit names its kind and variable.
    let (code, out, err) = run_in(&f, &["fit", "exact.occam"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("bound kind"), "{out}");
    let (code, out, err) = run_in(&f, &["fit", "jj.occam"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "bound kind: lower bound: the terms of variable `y` at jj.occam:5:1 are local bounds"
        ),
        "{out}"
    );
    let (code, out, err) = run_in(&f, &["fit", "jj.occam", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["bound_quality"], "lower_bound");
    assert_eq!(v["node_qualities"]["y"], "lower_bound");
    assert_eq!(v["node_qualities"]["w"], "exact");
    // compare refuses, naming each model's kind and the variable's place.
    let args = ["compare", "exact.occam", "jj.occam"];
    let (code, _, err) = run_in(&f, &args);
    assert_eq!(code, 2, "{err}");
    for needle in [
        "the models' bounds are of different kinds",
        "exact.occam: exact",
        "jj.occam: lower bound (variable `y` at jj.occam:5:1)",
        "--mixed-bounds",
    ] {
        assert!(err.contains(needle), "`{needle}` in {err}");
    }
    let (code, _, err) = run_in(&f, &[&args[..], &["--method", "vb,bic"]].concat());
    assert_eq!(code, 2, "{err}");
    // With the flag it ranks them, and says which is which.
    let (code, out, err) = run_in(&f, &[&args[..], &["--mixed-bounds"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("bound kind: exact.occam: exact, jj.occam: lower bound"),
        "{out}"
    );
    let (code, out, err) = run_in(&f, &[&args[..], &["--mixed-bounds", "--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["models"][0].get("bound_quality").is_none(), "{out}");
    assert_eq!(v["models"][1]["bound_quality"], "lower_bound");
    // Two exact models rank as before, without a kind line.
    let (code, out, err) = run_in(&f, &["compare", "exact.occam", "exact.occam"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("bound kind"), "{out}");
}

/// An importance-sampled model (Student-t observations, Winn §4.4): its fit says the bound is
/// approximate and reports S and S_eff; `compare` refuses to rank it beside an exact Gaussian
/// model without `--mixed-bounds`, and ranks two approximate ones.
#[test]
fn approximate_bounds_are_labelled_and_not_ranked_beside_exact_ones_without_the_flag() {
    let y = "y\n1.2\n2.9\n2.1\n1.7\n8.0\n2.4\n-4.0\n2.2\n";
    let gauss =
        "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ Gaussian(mu, 0.25)\nobserve y\n";
    let t = "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ StudentT(nu = 3, scale = 1, mean = mu)\nobserve y\n";
    let f: Vec<(&str, &[u8])> = vec![
        ("y.csv", y.as_bytes()),
        ("gauss.occam", gauss.as_bytes()),
        ("t.occam", t.as_bytes()),
    ];
    let (code, out, err) = run_in(&f, &["fit", "t.occam"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("bound kind: approximate: the terms of variable `mu` at t.occam:2:1, variable `y` at t.occam:3:1 are estimates"),
        "{out}"
    );
    assert!(
        out.contains("importance sampled `mu`: S = 1000, S_eff ≥ "),
        "{out}"
    );
    let (code, out, err) = run_in(&f, &["fit", "t.occam", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["bound_quality"], "approximate");
    assert_eq!(v["node_qualities"]["mu"], "approximate");
    assert!(
        v["sampled"][0]["s_eff"][0].as_f64().unwrap() >= 250.0,
        "{out}"
    );
    let args = ["compare", "gauss.occam", "t.occam"];
    let (code, _, err) = run_in(&f, &args);
    assert_eq!(code, 2, "{err}");
    for needle in [
        "different kinds",
        "gauss.occam: exact",
        "t.occam: approximate",
        "--mixed-bounds",
    ] {
        assert!(err.contains(needle), "`{needle}` in {err}");
    }
    let (code, out, err) = run_in(&f, &[&args[..], &["--mixed-bounds"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("t.occam: approximate"), "{out}");
    // The heavy tails explain the two outliers far better than the Gaussian.
    let rank_t = out.find("t.occam").unwrap();
    let rank_g = out.find("gauss.occam").unwrap();
    assert!(rank_t < rank_g, "{out}");
    let (code, _, err) = run_in(&f, &["compare", "t.occam", "t.occam"]);
    assert_eq!(code, 0, "{err}");
    // By several methods (the library's compare_evidence, also behind --average and --plot)
    // the bound column is refused too, and with the flag `vb` says the bound is approximate.
    let by = [&args[..], &["--method", "vb,bic"]].concat();
    let (code, _, err) = run_in(&f, &by);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("t.occam: approximate"), "{err}");
    let (code, out, err) = run_in(&f, &[&by[..], &["--mixed-bounds", "--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["models"][0]["evidence"][0]["kind"], "lower bound",
        "{out}"
    );
    assert_eq!(
        v["models"][1]["evidence"][0]["kind"], "approximate (IS)",
        "{out}"
    );
    // bic alone ranks no bound.
    let (code, _, err) = run_in(&f, &[&args[..], &["--method", "bic"]].concat());
    assert_eq!(code, 0, "{err}");
}
