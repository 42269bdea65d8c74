//! What a fit writes and says: `posterior.json` without the observed data unless asked, a CSV
//! table per latent variable (means, variances, a mixture index's most probable component),
//! summaries labelled with the data's column names, and why the run stopped.

use occam::{DataSet, Model, Settings, StopReason};
use occam_report::outputs::write_outputs;
use occam_report::FittedReport;

const GMM1D: &str = "\
plate K = 2
plate N from data y
alpha ~ Dirichlet(1) over K
z[N] ~ Categorical(alpha)
mu[K] ~ Gaussian(0, 1e-4)
tau[K] ~ Gamma(1, 1)
y[N] ~ Gaussian(mu[z], tau[z])
";

fn two_clusters() -> DataSet {
    let y: Vec<f64> = (0..20)
        .map(|i| if i < 10 { -5.0 } else { 5.0 } + (i as f64 * 0.7).sin() * 0.3)
        .collect();
    let mut d = DataSet::new();
    d.insert_array("y", 20, 1, y, Some(vec!["height".into()]))
        .unwrap();
    d
}

/// Fits with means and precisions updated before the assignments (the default order updates
/// the assignments first from identical components and may merge the clusters; that default
/// is being changed separately).
fn fit(src: &str, data: &DataSet) -> occam::Fitted {
    let order = ["mu", "tau", "z", "alpha"];
    let settings = Settings {
        order: src
            .contains("z[N]")
            .then(|| order.iter().map(|s| s.to_string()).collect()),
        ..Settings::default()
    };
    Model::from_source("m.occam", src, data)
        .unwrap()
        .fit(&settings)
        .unwrap()
}

#[test]
fn posterior_json_leaves_observed_data_out_unless_asked() {
    let fitted = fit(GMM1D, &two_clusters());
    let dir = tempfile::tempdir().unwrap();
    write_outputs(dir.path(), &fitted, false).unwrap();
    let text = std::fs::read_to_string(dir.path().join("posterior.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let y = &json["variables"]["y"];
    assert_eq!(y["role"], "observed");
    assert!(
        y["omitted"].as_str().unwrap().contains("--include-data"),
        "{y}"
    );
    assert!(y.get("moments").is_none(), "{y}");
    // Latent variables keep their posteriors.
    assert!(json["variables"]["mu"]["parameters"]["mean"].is_array());
    write_outputs(dir.path(), &fitted, true).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("posterior.json")).unwrap())
            .unwrap();
    assert_eq!(
        json["variables"]["y"]["moments"].as_array().unwrap().len(),
        20
    );
}

#[test]
fn a_csv_table_per_latent_variable_gives_cluster_assignments() {
    let fitted = fit(GMM1D, &two_clusters());
    let dir = tempfile::tempdir().unwrap();
    write_outputs(dir.path(), &fitted, false).unwrap();
    let z = std::fs::read_to_string(dir.path().join("posterior_z.csv")).unwrap();
    let mut lines = z.lines();
    assert_eq!(
        lines.next().unwrap(),
        "N,probability[0],probability[1],most_probable"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 20);
    let first = rows[0][3];
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], i.to_string());
        // The two clusters get different components, each row its more probable one.
        assert_eq!(r[3] == first, i < 10, "row {i}: {r:?}");
        let p: Vec<f64> = r[1..3].iter().map(|x| x.parse().unwrap()).collect();
        let best = if p[1] > p[0] { "1" } else { "0" };
        assert_eq!(r[3], best);
    }
    let mu = std::fs::read_to_string(dir.path().join("posterior_mu.csv")).unwrap();
    assert!(mu.starts_with("K,mean,variance\n0,"), "{mu}");
    let tau = std::fs::read_to_string(dir.path().join("posterior_tau.csv")).unwrap();
    assert!(tau.starts_with("K,mean,variance\n"), "{tau}");
    let alpha = std::fs::read_to_string(dir.path().join("posterior_alpha.csv")).unwrap();
    assert!(
        alpha.starts_with("mean[0],mean[1],variance[0],variance[1]\n"),
        "{alpha}"
    );
    // Observed data get no table.
    assert!(!dir.path().join("posterior_y.csv").exists());
}

const REGRESSION: &str = "\
plates N, C from data X
data X[N] over C
B over C ~ MvGaussian(mean = 0, precision = identity * 1e-3)
tau ~ Gamma(shape = 1e-3, rate = 1e-3)
tau_c[C] ~ Gamma(1, 1)
y[N] ~ Gaussian(mean = dot(X[N], B), precision = tau)
observe y
";

#[test]
fn summaries_and_tables_name_the_data_columns() {
    let n = 12;
    let x: Vec<f64> = (0..n).flat_map(|i| [i as f64, 1.0]).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| 2.0 * i as f64 - 1.0 + (i as f64).sin() * 0.1)
        .collect();
    let mut d = DataSet::new();
    d.insert_array("X", n, 2, x, Some(vec!["slope".into(), "intercept".into()]))
        .unwrap();
    d.insert_array("y", n, 1, y, None).unwrap();
    let fitted = fit(REGRESSION, &d);
    let s = fitted.summary();
    assert!(s.contains("[0] slope 1.99"), "{s}");
    assert!(s.contains(", intercept -0.9"), "{s}");
    assert!(s.contains("[slope] "), "{s}");
    assert!(s.contains("[intercept] "), "{s}");
    let dir = tempfile::tempdir().unwrap();
    write_outputs(dir.path(), &fitted, false).unwrap();
    let b = std::fs::read_to_string(dir.path().join("posterior_B.csv")).unwrap();
    assert!(
        b.starts_with("mean[slope],mean[intercept],variance[slope],variance[intercept]\n"),
        "{b}"
    );
    let t = std::fs::read_to_string(dir.path().join("posterior_tau_c.csv")).unwrap();
    assert!(t.starts_with("C,mean,variance\nslope,"), "{t}");
}

#[test]
fn the_outcome_says_why_the_run_stopped() {
    let data = two_clusters();
    let converged = fit(GMM1D, &data);
    let stop = converged.outcome().stop;
    assert_eq!(stop.reason, StopReason::Converged);
    assert_eq!(stop.observed_values, 20);
    let change = stop.change_per_value.unwrap();
    assert!(change <= stop.tol, "{stop:?}");
    assert!(converged
        .summary()
        .contains("stop: converged: |ΔL| per observed value"));
    let json = converged.report_json();
    assert_eq!(json["stop"]["reason"], "converged");
    assert_eq!(json["stop"]["observed_values"], 20);

    let short = Model::from_source("m.occam", GMM1D, &data)
        .unwrap()
        .fit(&Settings {
            max_iter: 2,
            prune: false,
            order: Some(
                ["mu", "tau", "z", "alpha"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            ),
            ..Settings::default()
        })
        .unwrap();
    let stop = short.outcome().stop;
    assert_eq!(stop.reason, StopReason::MaxIter);
    assert!(stop.change_per_value.unwrap() > stop.tol);
    assert!(
        short
            .summary()
            .contains("stop: stopped at the iteration limit 2"),
        "{}",
        short.summary()
    );
}

/// `Fitted::posterior` (arrays straight from the engine) holds exactly the values of the JSON
/// report's `parameters` and `moments` for every variable: scalar and vector Gaussians, Gamma,
/// Wishart, Dirichlet, Categorical, observed data, and a partly observed variable whose missing
/// entries are integrated out (NaN in the arrays, null in the report).
#[test]
fn posterior_arrays_equal_the_json_report() {
    const GMM2D: &str = "\
plate K = 2
plates N, D from data y
pi ~ Dirichlet(0.5) over K
z[N] ~ Categorical(pi)
mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 0.01)
Lambda[K] over D ~ Wishart(dof = 2, rate = identity * 1)
y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
";
    let flat = |v: &serde_json::Value, out: &mut Vec<f64>| {
        fn walk(v: &serde_json::Value, out: &mut Vec<f64>) {
            match v {
                serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
                serde_json::Value::Number(x) => out.push(x.as_f64().unwrap()),
                _ => out.push(f64::NAN),
            }
        }
        walk(v, out)
    };
    let y2: Vec<f64> = (0..24)
        .flat_map(|i| {
            let s = if i % 2 == 0 { -4.0 } else { 4.0 };
            [s + (i as f64).sin(), s + (i as f64 * 1.7).cos()]
        })
        .collect();
    let mut two_d = DataSet::new();
    two_d.insert_array("y", 24, 2, y2, None).unwrap();
    let mut y: Vec<f64> = (0..20)
        .map(|i| if i < 10 { -5.0 } else { 5.0 } + (i as f64 * 0.7).sin() * 0.3)
        .collect();
    y[3] = f64::NAN;
    let mut missing = DataSet::new();
    missing.insert_array("y", 20, 1, y, None).unwrap();
    for (src, data) in [(GMM1D, two_clusters()), (GMM2D, two_d), (GMM1D, missing)] {
        let fitted = if src.contains("tau") {
            fit(src, &data)
        } else {
            Model::from_source("m.occam", src, &data)
                .unwrap()
                .fit(&Settings::default())
                .unwrap()
        };
        let report = fitted.report_json();
        for v in fitted
            .loaded()
            .model
            .variables
            .iter()
            .map(|v| v.name.clone())
        {
            let p = fitted.posterior(&v).unwrap();
            let json = &report["variables"][&v];
            let mut names: Vec<String> = json["parameters"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            names.push("moments".into());
            let ours: Vec<&str> = p.params.iter().map(|q| q.name.as_str()).collect();
            assert_eq!(ours, names, "{v}");
            for q in &p.params {
                let list = if q.name == "moments" {
                    &json["moments"]
                } else {
                    &json["parameters"][&q.name]
                };
                let mut want = Vec::new();
                let items = list.as_array().unwrap();
                let per = q.values.len() / items.len();
                for item in items {
                    if item.is_null() {
                        want.extend(std::iter::repeat_n(f64::NAN, per));
                    } else {
                        flat(item, &mut want);
                    }
                }
                assert_eq!(q.values.len(), want.len(), "{v}.{}", q.name);
                for (a, b) in q.values.iter().zip(&want) {
                    assert!(
                        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                        "{v}.{}: {a} vs {b}",
                        q.name
                    );
                }
            }
            if p.role == "partly observed" {
                for q in &p.params {
                    let per = q.values.len() / 20;
                    assert!(
                        q.values[3 * per..4 * per].iter().all(|x| x.is_nan()),
                        "{}",
                        q.name
                    );
                }
            }
        }
    }
}
