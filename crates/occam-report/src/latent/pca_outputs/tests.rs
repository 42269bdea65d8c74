//! The outputs of BayesPy's PCA example (`examples/pca_rotation`) fitted with rotations.

use super::*;
use occam::{DataSet, Model, Settings};

const MODEL: &str = include_str!("../../../../../examples/pca_rotation/pca.occam");
const DATA: &str = include_str!("../../../../../examples/pca_rotation/y.csv");

fn fitted() -> occam::Fitted {
    let rows: Vec<Vec<f64>> = DATA
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let mut d = DataSet::new();
    d.insert_array("y", rows.len(), rows[0].len(), rows.concat(), None)
        .unwrap();
    Model::from_source("pca.occam", MODEL, &d)
        .unwrap()
        .fit(&Settings {
            rotate: Some(true),
            ..Settings::default()
        })
        .unwrap()
}

fn csv(files: &[(String, Vec<u8>)], name: &str) -> Vec<Vec<String>> {
    let (_, bytes) = files.iter().find(|(n, _)| n == name).unwrap();
    String::from_utf8(bytes.clone())
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(String::from).collect())
        .collect()
}

#[test]
fn reconstruction_and_projection_of_the_pca_example() {
    let f = fitted();
    let files = files(f.loaded(), f.compiled()).unwrap();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "reconstruction_y.csv",
            "reconstruction_y.svg",
            "projection_X.csv",
            "projection_X.svg"
        ]
    );
    // ⟨y⟩ = ⟨C⟩⟨X⟩ᵀ from the posteriors, element by element; the residual is the noise (std 0.1).
    let c = f
        .posterior("C")
        .unwrap()
        .param("mean")
        .unwrap()
        .values
        .clone();
    let x = f
        .posterior("X")
        .unwrap()
        .param("mean")
        .unwrap()
        .values
        .clone();
    let rec = csv(&files, "reconstruction_y.csv");
    // Arrays without column names get c0, c1, … (a CSV's own header is kept).
    assert_eq!(rec[0][..3], ["c0", "c1", "c2"]);
    assert_eq!((rec.len() - 1, rec[1].len()), (20, 100));
    let data: Vec<Vec<f64>> = DATA
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let mut sq = 0.0;
    for m in 0..20 {
        for n in 0..100 {
            let expect: f64 = (0..10).map(|k| c[m * 10 + k] * x[n * 10 + k]).sum();
            let got: f64 = rec[m + 1][n].parse().unwrap();
            assert!((got - expect).abs() < 1e-12 * (1.0 + expect.abs()));
            sq += (got - data[m][n]).powi(2);
        }
    }
    let rms = (sq / 2000.0).sqrt();
    assert!((0.07..0.105).contains(&rms), "RMS residual {rms}");
    // Two true components: the two leading coordinates carry nearly all the variance.
    let p = projection(f.loaded(), f.compiled(), &products(f.loaded())[0]).unwrap();
    assert_eq!((p.variable.as_str(), p.n, p.q), ("X", 100, 10));
    let total: f64 = p.variance.iter().sum();
    let top2 = p.variance[p.order[0]] + p.variance[p.order[1]];
    assert!(top2 > 0.999 * total, "variance {:?}", p.variance);
    let proj = csv(&files, "projection_X.csv");
    assert_eq!(proj[0][0], format!("X[{}]", p.order[0]));
    assert_eq!(proj.len(), 101);
    let svg = String::from_utf8(files[3].1.clone()).unwrap();
    assert_eq!(svg.matches("<circle").count(), 100);
}

#[test]
fn models_without_a_product_write_nothing() {
    let mut d = DataSet::new();
    d.insert_array("y", 3, 1, vec![1.0, 2.0, 3.0], None)
        .unwrap();
    let f = Model::from_source(
        "plain.occam",
        "plates N from data y\nmu ~ Gaussian(mean = 0, precision = 1e-3)\ny[N] ~ Gaussian(mean = mu, precision = 1)\n",
        &d,
    )
    .unwrap()
    .fit(&Settings::default())
    .unwrap();
    assert!(files(f.loaded(), f.compiled()).unwrap().is_empty());
}
