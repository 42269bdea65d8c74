//! Functions of the engine's table end to end, from model text: `scale(x, c)` (an elementwise
//! function declared only in `occam-core/src/factor/scale.rs`) against closed forms.

use occam::{DataSet, Model, Settings};

/// Deterministic, irregular values (no RNG needed for a closed-form check).
fn values(n: usize, phase: f64) -> Vec<f64> {
    (0..n)
        .map(|i| (1.7 * i as f64 + phase).sin() * 1.5 + 0.2)
        .collect()
}

fn bound(text: &str, data: &DataSet) -> f64 {
    let fitted = Model::from_source("m.occam", text, data)
        .unwrap_or_else(|e| panic!("{e}"))
        .fit(&Settings::default())
        .unwrap_or_else(|e| panic!("{e}"));
    fitted.bound()
}

#[test]
fn scaling_a_vector_by_data_gives_the_exact_evidence() {
    // y_nq = c_nq x_nq + e, x_nq ~ N(0, 1), e ~ N(0, 1/2): y_nq ~ N(0, c² + 1/2) independently.
    // q(x_n) over Q is the exact posterior (the likelihood is diagonal), so the bound at
    // convergence is the log evidence itself.
    let (n, q) = (12, 3);
    let c = values(n * q, 0.3);
    let y = values(n * q, 2.1);
    let mut data = DataSet::new();
    data.insert_array("c", n, q, c.clone(), None).unwrap();
    data.insert_array("y", n, q, y.clone(), None).unwrap();
    let text = "plates N, Q from data c\ndata c[N] over Q\nx[N] over Q ~ GaussianARD(0, 1)\n\
                y[N] over Q ~ GaussianARD(mean = scale(x, c), precision = 2)\nobserve y\n";
    let exact: f64 = c
        .iter()
        .zip(&y)
        .map(|(c, y)| {
            let v = c * c + 0.5;
            -0.5 * (2.0 * std::f64::consts::PI * v).ln() - y * y / (2.0 * v)
        })
        .sum();
    let got = bound(text, &data);
    assert!(
        (got - exact).abs() < 1e-9 * exact.abs(),
        "bound {got}, log evidence {exact}"
    );
}

#[test]
fn scaling_a_scalar_by_data_is_the_product_with_it() {
    // For scalars scale(a, c) and a * c are one model: the same bound to rounding.
    let n = 25;
    let mut data = DataSet::new();
    data.insert_array("c", n, 1, values(n, 0.7), None).unwrap();
    data.insert_array("y", n, 1, values(n, 4.0), None).unwrap();
    let model = |mean: &str| {
        format!(
            "plate N from data c\ndata c[N]\na ~ Gaussian(0, 1)\ntau ~ Gamma(1, 1)\n\
             y[N] ~ Gaussian(mean = {mean}, precision = tau)\nobserve y\n"
        )
    };
    let scaled = bound(&model("scale(a, c)"), &data);
    let product = bound(&model("a * c"), &data);
    assert!(
        (scaled - product).abs() < 1e-10 * product.abs(),
        "scale {scaled}, product {product}"
    );
    // And by a constant: scale(a, 2) is 2 * a.
    let by_two = bound(&model("scale(a, 2)"), &data);
    let twice = bound(&model("2 * a"), &data);
    assert!(
        (by_two - twice).abs() < 1e-10 * twice.abs(),
        "{by_two} {twice}"
    );
    assert!((by_two - scaled).abs() > 1e-3, "the data must matter");
}
