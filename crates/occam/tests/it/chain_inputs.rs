//! A Gaussian Markov chain with observed inputs written in the model language,
//! `x over T ~ GaussianMarkovChain(..., control = B, inputs = u)` (x_t = A x_{t−1} + B u_t +
//! noise): the same bound as the model built through the Rust API
//! ([`Graph::gaussian_markov_chain_with_inputs`]), and located errors for malformed inputs.

use occam::{DataSet, Model, Settings};
use occam_core::prelude::*;
use occam_report::ModelReport;

const STEPS: usize = 6;
const A: [f64; 4] = [0.9, -0.3, 0.3, 0.9];
const B: [f64; 4] = [1.0, -0.5, 0.3, 0.8];

/// Inputs (steps × 2) and observations (steps × 2), fixed numbers.
fn series() -> (Vec<f64>, Vec<f64>) {
    let u: Vec<f64> = (0..STEPS * 2)
        .map(|i| ((i * 7 % 11) as f64 - 5.0) / 4.0)
        .collect();
    let y: Vec<f64> = (0..STEPS * 2)
        .map(|i| ((i * 5 % 13) as f64 - 6.0) / 3.0)
        .collect();
    (u, y)
}

fn data(known_b: bool) -> DataSet {
    let (u, y) = series();
    let mut d = DataSet::new();
    d.insert_array("y", STEPS, 2, y, None).unwrap();
    d.insert_array("u", STEPS, 2, u, None).unwrap();
    d.insert_array("A", 2, 2, A.to_vec(), None).unwrap();
    if known_b {
        d.insert_array("B", 2, 2, B.to_vec(), None).unwrap();
    }
    d
}

fn text(known_b: bool) -> String {
    format!(
        "plate D = 2\nplate P = 2\nplate T from data y\ndata A[D] over D\ndata u[T] over P\n{}\
         x over T ~ GaussianMarkovChain(mean0 = 0, precision0 = identity * 2, dynamics = A, \
         noise = 4, control = B, inputs = u)\ny[T] over D ~ MvGaussian(mean = x, precision = \
         identity * 3)\n",
        if known_b {
            "data B[D] over P\n"
        } else {
            "B[D] over P ~ MvGaussian(mean = 0, precision = identity * 1)\n"
        }
    )
}

/// The same model through the Rust API, fitted with the same iterations.
fn api_bound(known_b: bool, iters: usize) -> f64 {
    let (u, y) = series();
    let cv = |v: Vec<f64>| ParentSpec::Const(v);
    let mut g = Graph::new();
    let rows = g.plate("D", 2);
    let t = g.plate("T", STEPS);
    let b = if known_b {
        cv(B.to_vec())
    } else {
        let bn = g
            .add(
                "B",
                MvGaussian { d: 2 },
                &[rows],
                [cv(vec![0.0; 2]), cv(vec![1.0, 0.0, 0.0, 1.0])],
            )
            .unwrap();
        ParentSpec::Stacked(bn, rows)
    };
    let chain = GaussianMarkovChain {
        d: 2,
        time: t,
        lengths: None,
    };
    let parents = [
        cv(vec![0.0; 2]),
        cv(vec![2.0, 0.0, 0.0, 2.0]),
        cv(A.to_vec()),
        cv(vec![4.0; 2]),
        b,
    ];
    let x = g
        .gaussian_markov_chain_with_inputs("x", chain, &[], 2, &u, parents)
        .unwrap();
    let yn = g
        .add(
            "y",
            MvGaussian { d: 2 },
            &[t],
            [ParentSpec::Node(x), cv(vec![3.0, 0.0, 0.0, 3.0])],
        )
        .unwrap();
    g.observe(yn, &y).unwrap();
    let mut vmp = g.compile().unwrap();
    vmp.run(&RunOptions {
        max_iter: iters,
        tol: 0.0,
        ..Default::default()
    })
    .unwrap()
    .bound
}

fn text_bound(known_b: bool, iters: usize) -> f64 {
    let settings = Settings {
        max_iter: iters,
        tol: 0.0,
        ..Settings::default()
    };
    Model::from_source("m.occam", &text(known_b), &data(known_b))
        .and_then(|m| m.fit(&settings))
        .unwrap_or_else(|e| panic!("{}", e.render_plain()))
        .bound()
}

#[test]
fn text_model_with_inputs_has_the_rust_api_bound() {
    for (known_b, iters) in [(true, 3), (false, 25)] {
        let (t, a) = (text_bound(known_b, iters), api_bound(known_b, iters));
        assert!(
            (t - a).abs() <= 1e-10 * a.abs().max(1.0),
            "B known {known_b}: text {t} vs Rust API {a}"
        );
    }
    // `check` lists the control slot with the chain's other slots.
    let report = Model::from_source("m.occam", &text(false), &data(false))
        .and_then(|m| m.check())
        .unwrap_or_else(|e| panic!("{}", e.render_plain()));
    assert!(
        report.contains("x.control ← B: Gaussian (2-vector) × 2"),
        "{report}"
    );
    // The inputs matter: without them the bound differs.
    let plain = "plate D = 2\nplate T from data y\ndata A[D] over D\n\
                 x over T ~ GaussianMarkovChain(mean0 = 0, precision0 = identity * 2, \
                 dynamics = A, noise = 4)\ny[T] over D ~ MvGaussian(mean = x, precision = \
                 identity * 3)\n";
    let (_, y) = series();
    let mut d = DataSet::new();
    d.insert_array("y", STEPS, 2, y, None).unwrap();
    d.insert_array("A", 2, 2, A.to_vec(), None).unwrap();
    let without = Model::from_source("m.occam", plain, &d)
        .and_then(|m| m.fit(&Settings::default()))
        .unwrap_or_else(|e| panic!("{}", e.render_plain()))
        .bound();
    assert!((without - text_bound(true, 3)).abs() > 1e-3);
}

#[test]
fn malformed_inputs_are_located_errors() {
    let head = "plate D = 2\nplate P = 2\nplate T from data y\ndata A[D] over D\n\
                data u[T] over P\nB[D] over P ~ MvGaussian(mean = 0, precision = identity * 1)\n";
    let chain = |extra: &str| {
        format!(
            "{head}x over T ~ GaussianMarkovChain(0, identity * 2, A, 4{extra})\n\
             y[T] over D ~ MvGaussian(mean = x, precision = identity * 3)\n"
        )
    };
    let cases: Vec<(String, &str, &str)> = vec![
        (
            chain(", inputs = u"),
            "m.occam:7:",
            "`inputs` of GaussianMarkovChain `x` need a `control` matrix",
        ),
        (
            chain(", control = B"),
            "m.occam:7:",
            "`control` of GaussianMarkovChain `x` needs its `inputs`",
        ),
        (
            chain(", control = 1, inputs = u"),
            "m.occam:7:",
            "control of GaussianMarkovChain `x` needs one row per state",
        ),
        (
            chain(", control = A, inputs = u"),
            "m.occam:7:",
            "inputs `u` of GaussianMarkovChain `x` must be over the chain's plates [T] and the \
             control's input plate D",
        ),
        (
            chain(", control = B, inputs = A"),
            "m.occam:7:77",
            "`A` is in plate D (size 2), which `x` is not in",
        ),
        (
            format!(
                "{head}v[T] over P ~ MvGaussian(mean = 0, precision = identity * 1)\n\
                 x over T ~ GaussianMarkovChain(0, identity * 2, A, 4, control = B, inputs = v)\n\
                 y[T] over D ~ MvGaussian(mean = x, precision = identity * 3)\n"
            ),
            "m.occam:8:",
            "inputs of GaussianMarkovChain `x` must be observed data: `v` is not",
        ),
        (
            "plate K = 2\nplate P = 2\nplate T from data y\ndata u[T] over P\n\
             A[K] ~ Dirichlet(1) over K\nz over T ~ MarkovChain(1, A, control = A, inputs = u)\n\
             y[T] ~ Gaussian(0, 1)\n"
                .to_string(),
            "m.occam:6:",
            "MarkovChain `z` takes no control inputs",
        ),
    ];
    for (text, place, what) in &cases {
        let e = match Model::from_source("m.occam", text, &data(true))
            .and_then(|m| m.fit(&Settings::default()))
        {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e.render_plain(),
        };
        assert!(e.contains(place) && e.contains(what), "{text}\n→ {e}");
    }
}

/// A missing input cell names the cell in the data (the data input's own check).
#[test]
fn missing_inputs_are_located_errors() {
    let (mut u, y) = series();
    u[3] = f64::NAN;
    let mut d = DataSet::new();
    d.insert_array("y", STEPS, 2, y, None).unwrap();
    d.insert_array("u", STEPS, 2, u, None).unwrap();
    d.insert_array("A", 2, 2, A.to_vec(), None).unwrap();
    let e = match Model::from_source("m.occam", &text(false), &d)
        .and_then(|m| m.fit(&Settings::default()))
    {
        Ok(_) => panic!("accepted missing inputs"),
        Err(e) => e.render_plain(),
    };
    assert!(
        e.contains("<array u>:2:2") && e.contains("data input `u` cannot have missing values"),
        "{e}"
    );
}
