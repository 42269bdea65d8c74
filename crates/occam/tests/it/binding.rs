//! Data binding: a data name the model does not know is an error naming the nearest names; data
//! the model ignores, or a model that observes nothing, is a visible warning.

use occam::{DataSet, Model, Settings, Warning};
use occam_report::FittedReport;

const OBSERVED: &str = "plate N from data y\nmu ~ Gaussian(0, 1e-6)\ntau ~ Gamma(1e-6, 1e-6)\ny[N] ~ Gaussian(mu, tau)\n";
const FORGETS: &str =
    "plate N = 3\nmu ~ Gaussian(0, 1e-6)\ntau ~ Gamma(1e-6, 1e-6)\ny[N] ~ Gaussian(mu, tau)\n";

fn y() -> DataSet {
    let mut d = DataSet::new();
    d.insert_array("y", 3, 1, vec![1.0, 2.0, 3.0], None)
        .unwrap();
    d
}

#[test]
fn an_unknown_data_name_is_an_error_with_the_nearest_name() {
    let mut data = y();
    data.insert_array("Y", 3, 1, vec![1.0, 2.0, 3.0], None)
        .unwrap();
    let e = Model::from_source("m.occam", OBSERVED, &data)
        .err()
        .expect("accepted unknown data");
    let text = e.to_string();
    assert!(e.is_user_error());
    assert!(
        text.contains("data `Y`") && text.contains("did you mean `y`?"),
        "{text}"
    );
    assert!(text.contains("(variables: mu, tau, y)"), "{text}");
}

#[test]
fn data_beside_a_latent_variable_and_an_unobserved_model_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.occam");
    std::fs::write(&model, FORGETS).unwrap();
    std::fs::write(dir.path().join("y.csv"), "y\n1\n2\n3\n").unwrap();
    let fitted = Model::from_file(&model, &DataSet::new())
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    let w = &fitted.outcome().warnings;
    assert!(
        matches!(&w[0], Warning::DataNotObserved { variable, location, .. }
            if variable == "y" && location.ends_with("m.occam:4:1")),
        "{w:?}"
    );
    assert!(matches!(&w[1], Warning::NothingObserved { .. }), "{w:?}");
    let report = fitted.report_json();
    let texts = report["warnings"].as_array().unwrap();
    assert!(texts[0]
        .as_str()
        .unwrap()
        .contains("add `observe y` to use it"));
    assert!(fitted.summary().contains("observes nothing"));
}

#[test]
fn a_model_that_uses_its_data_has_no_binding_warning() {
    let fitted = Model::from_source("m.occam", OBSERVED, &y())
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    assert!(
        fitted
            .outcome()
            .warnings
            .iter()
            .all(|w| matches!(w, Warning::Run(_))),
        "{:?}",
        fitted.outcome().warnings
    );
}

const GMM: &str = "plate K = 2\nplates N, D from data x\nmu[K, D] ~ Gaussian(0, 1e-2)\ngamma[K, D] ~ Gamma(1e-3, 1e-3)\npi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\nx[N, D] ~ Gaussian(mu[z], gamma[z])\n";

/// An R export's row names (the `rownames` column of every file in R's datasets, `""` from
/// `write.csv`) read as a data dimension: the fit runs, and says which column looks like an index.
#[test]
fn an_index_like_first_column_is_a_warning_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.occam");
    std::fs::write(&model, GMM).unwrap();
    let index_warning = |csv: &str| {
        std::fs::write(dir.path().join("x.csv"), csv).unwrap();
        let fitted = Model::from_file(&model, &DataSet::new())
            .unwrap()
            .fit(&Settings::default())
            .unwrap();
        fitted
            .outcome()
            .warnings
            .iter()
            .find(|w| matches!(w, Warning::IndexColumn { .. }))
            .map(|w| w.to_string())
    };
    let rows: String = (1..=6)
        .map(|r| format!("{r},{}.5,{}\n", r % 3, 10 - r))
        .collect();
    let named = index_warning(&format!("rownames,eruptions,waiting\n{rows}")).expect("rownames");
    assert!(
        named.contains("x.csv (`rownames`, 1 to 6) looks like a row index")
            && named.contains("one of its 3 columns"),
        "{named}"
    );
    let unnamed = index_warning(&format!("\"\",eruptions,waiting\n{rows}")).expect("unnamed");
    assert!(unnamed.contains("(unnamed, 1 to 6)"), "{unnamed}");
    // A column holding exactly 0..N−1 under an ordinary name is an index too.
    let zero: String = (0..6)
        .map(|r| format!("{r},{}.5,{}\n", r % 3, 10 - r))
        .collect();
    let counted = index_warning(&format!("t,a,b\n{zero}")).expect("0..N-1");
    assert!(counted.contains("(`t`, 0 to 5)"), "{counted}");
    // A `data` covariate holding 0..N−1 is a regressor (examples/bayespy/regression's x), not an
    // index: no warning for it.
    let mut d = DataSet::new();
    let x: Vec<f64> = (0..10).flat_map(|r| [r as f64, 1.0]).collect();
    d.insert_array("X", 10, 2, x, Some(vec!["x".into(), "bias".into()]))
        .unwrap();
    d.insert_array(
        "y",
        10,
        1,
        (0..10).map(|r| 2.0 * r as f64 + 1.0).collect(),
        None,
    )
    .unwrap();
    let regression = Model::from_source(
        "r.occam",
        "plates N, C from data X\ndata X[N] over C\nB ~ MvGaussian(0, 1e-3 * identity) over C\ntau ~ Gamma(1, 1)\ny[N] ~ Gaussian(dot(X, B), tau)\nobserve y\n",
        &d,
    )
    .unwrap()
    .fit(&Settings::default())
    .unwrap();
    assert!(
        !regression
            .outcome()
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::IndexColumn { .. })),
        "{:?}",
        regression.outcome().warnings
    );
    // Measurements in the first column: no warning.
    let data: String = (1..=6)
        .map(|r| format!("{}.25,{}.5,{}\n", r * r, r % 3, 10 - r))
        .collect();
    assert_eq!(index_warning(&format!("a,b,c\n{data}")), None);
}

/// Data that are all missing fit (the posterior is the prior's), with a warning that nothing of
/// them is observed.
#[test]
fn all_missing_data_is_a_warning() {
    let mut d = DataSet::new();
    d.insert_array("y", 3, 1, vec![f64::NAN; 3], None).unwrap();
    let fitted = Model::from_source("m.occam", OBSERVED, &d)
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    let w: Vec<String> = fitted
        .outcome()
        .warnings
        .iter()
        .filter(|w| matches!(w, Warning::AllMissing { .. }))
        .map(|w| w.to_string())
        .collect();
    assert_eq!(w.len(), 1, "{:?}", fitted.outcome().warnings);
    assert!(
        w[0].contains("every one of the 3 values of `y`") && w[0].contains("inform nothing"),
        "{}",
        w[0]
    );
}
