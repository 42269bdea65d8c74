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

/// Böhning's bound on the softmax (`softmax_bohning`, or `softmax` with K > 3) understates the
/// posterior sds of the weights in its logits: the fit's summary (a line and the posterior's own
/// label), its JSON report and `occam check` say so, with the measured numbers; the exact
/// `softmax` (K ≤ 3) says nothing of the kind.
#[test]
fn bohning_softmax_says_its_sds_are_understated() {
    let x = "a,b\n-1.2,0.4\n0.3,-0.8\n1.5,1.1\n-0.4,-1.3\n0.8,0.2\n2.1,-0.6\n-1.9,1.7\n0.1,0.9\n\
             1.1,-1.5\n-0.7,0.6\n0.5,1.4\n-1.4,-0.2\n";
    let c = "c\n0\n1\n2\n1\n0\n2\n3\n0\n1\n2\n3\n0\n";
    let c3 = "c\n0\n1\n2\n1\n0\n2\n1\n0\n1\n2\n2\n0\n";
    let model = |k: usize, link: &str| {
        format!(
            "plate K = {k}\nplates N, D from data X\ndata X[N] over D\n\
             w[K] over D ~ MvGaussian(mean = 0, precision = identity)\n\
             c[N] ~ Categorical({link}(w @ X[N]))\nobserve c\n"
        )
    };
    let (bohning, exact, four) = (
        model(3, "softmax_bohning"),
        model(3, "softmax"),
        model(4, "softmax"),
    );
    let dir3: Vec<(&str, &[u8])> = vec![
        ("X.csv", x.as_bytes()),
        ("c.csv", c3.as_bytes()),
        ("bohning.occam", bohning.as_bytes()),
        ("exact.occam", exact.as_bytes()),
    ];
    let line = |file: &str| {
        format!(
            "posterior sds understated: `w` (Böhning's bound in the logits of variable `c` at \
             {file}:5:1): Böhning's bound understates their posterior sds (on 30 points, 3 \
             classes, against the exact posterior: sds 8–15% and class-contrast sds 28–49% too \
             small; `softmax` is exact for K ≤ 3)"
        )
    };
    let label = "(latent; q: one Gaussian over every class's weights, `joint_covariance`; sds \
                 understated: Böhning's bound)";
    let (code, out, err) = run_in(&dir3, &["fit", "bohning.occam"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&line("bohning.occam")), "{out}");
    assert!(out.contains(label), "{out}");
    let (code, out, err) = run_in(&dir3, &["fit", "bohning.occam", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let why = v["sds_understated"]["w"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("variable `c` at bohning.occam:5:1: Böhning's bound understates")
            && why.contains("class-contrast sds 28–49% too small"),
        "{out}"
    );
    let (code, out, err) = run_in(&dir3, &["check", "bohning.occam"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&line("bohning.occam")), "{out}");
    // The exact softmax (K = 3): no such line, label or key.
    for args in [&["fit", "exact.occam"][..], &["check", "exact.occam"]] {
        let (code, out, err) = run_in(&dir3, args);
        assert_eq!(code, 0, "{err}");
        assert!(!out.contains("understated"), "{out}");
    }
    let (code, out, err) = run_in(&dir3, &["fit", "exact.occam", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("sds_understated").is_none(), "{out}");
    assert!(v.get("bound_quality").is_none(), "{out}");
    // `softmax` with K = 4 is Böhning's bound: `check` names the family built and says so.
    let dir4: Vec<(&str, &[u8])> = vec![
        ("X.csv", x.as_bytes()),
        ("c.csv", c.as_bytes()),
        ("four.occam", four.as_bytes()),
    ];
    let (code, out, err) = run_in(&dir4, &["check", "four.occam"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("CategoricalSoftmax (K > 3)"), "{out}");
    assert!(out.contains(&line("four.occam")), "{out}");
    let (code, out, err) = run_in(&dir4, &["fit", "four.occam"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&line("four.occam")) && out.contains(label),
        "{out}"
    );
    assert!(
        out.contains("bound kind: lower bound: the terms of variable `c` at four.occam:5:1"),
        "{out}"
    );
}
