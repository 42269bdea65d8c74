//! Data binding: a data name the model does not know is an error naming the nearest names; data
//! the model ignores, or a model that observes nothing, is a visible warning.

use occam::{DataSet, Model, Settings, Warning};

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
