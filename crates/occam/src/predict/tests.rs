//! Predictive moments against closed forms, and the draws' moments against the computed ones.

use std::collections::BTreeMap;

use super::*;
use crate::{DataSet, Model, Settings};

const REGRESSION: &str = "plates N, C from data X\ndata X[N] over C\n\
    w over C ~ MvGaussian(mean = 0, precision = identity * 2)\n\
    y[N] ~ Gaussian(mean = dot(X[N], w), precision = 4)\nobserve y\n";

const XS: [[f64; 2]; 6] = [
    [1.0, 0.5],
    [1.0, -1.0],
    [1.0, 2.0],
    [1.0, 0.0],
    [1.0, 1.5],
    [1.0, -0.3],
];
const YS: [f64; 6] = [1.2, -0.7, 2.9, 0.4, 2.1, 0.1];

fn regression(y: &[f64]) -> crate::Fitted {
    let mut d = DataSet::new();
    d.insert_array("X", 6, 2, XS.concat(), None).unwrap();
    d.insert_array("y", 6, 1, y.to_vec(), None).unwrap();
    Model::from_source("reg.occam", REGRESSION, &d)
        .unwrap()
        .fit(&Settings::default())
        .unwrap()
}

/// Bayesian linear regression with known noise precision β = 4 and prior precision α = 2: the
/// posterior is N(μ, Σ), Σ = (αI + β XᵀX)⁻¹, μ = β Σ Xᵀy (Bishop (3.53)–(3.54)), and the
/// predictive at x is N(xᵀμ, 1/β + xᵀΣx) (Bishop (3.58)–(3.59)); with q over w exact, Occam's
/// predictive must equal it.
fn closed_form(x: &[f64; 2], ys: &[f64]) -> (f64, f64) {
    let (alpha, beta) = (2.0, 4.0);
    let mut a = [[alpha, 0.0], [0.0, alpha]];
    let mut b = [0.0; 2];
    for (r, &y) in XS.iter().zip(ys) {
        if y.is_nan() {
            continue;
        }
        for i in 0..2 {
            b[i] += beta * r[i] * y;
            for j in 0..2 {
                a[i][j] += beta * r[i] * r[j];
            }
        }
    }
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    let s = [
        [a[1][1] / det, -a[0][1] / det],
        [-a[1][0] / det, a[0][0] / det],
    ];
    let mu = [
        s[0][0] * b[0] + s[0][1] * b[1],
        s[1][0] * b[0] + s[1][1] * b[1],
    ];
    let mean = x[0] * mu[0] + x[1] * mu[1];
    let quad = (0..2)
        .map(|i| (0..2).map(|j| x[i] * s[i][j] * x[j]).sum::<f64>())
        .sum::<f64>();
    (mean, 1.0 / beta + quad)
}

#[test]
fn linear_regression_predictive_is_the_closed_form() {
    let fit = regression(&YS);
    let before = fit.posteriors();
    let new_x = [[1.0, 3.0], [1.0, -2.0], [0.0, 1.0]];
    let mut new = DataSet::new();
    new.insert_array("X", 3, 2, new_x.concat(), None).unwrap();
    let opts = PredictOptions {
        draws: 40_000,
        seed: 7,
        ..Default::default()
    };
    let p = fit.predict(&new, &BTreeMap::new(), &opts).unwrap();
    assert_eq!(p.len(), 1);
    let y = &p[0];
    assert_eq!(
        (y.name.as_str(), y.rows, y.cols, y.exact),
        ("y", 3, 1, true)
    );
    for (r, x) in new_x.iter().enumerate() {
        let (m, v) = closed_form(x, &YS);
        assert!(
            (y.mean[r] - m).abs() < 1e-10 * (1.0 + m.abs()),
            "{} {m}",
            y.mean[r]
        );
        assert!((y.sd[r] * y.sd[r] - v).abs() < 1e-10 * v, "{} {v}", y.sd[r]);
        // The draws' moments agree with the computed ones within 5 standard errors.
        let d: Vec<f64> = (0..opts.draws).map(|k| y.samples[k * 3 + r]).collect();
        let n = d.len() as f64;
        let dm = d.iter().sum::<f64>() / n;
        let dv = d.iter().map(|z| (z - dm).powi(2)).sum::<f64>() / (n - 1.0);
        assert!((dm - m).abs() < 5.0 * (v / n).sqrt(), "{dm} {m}");
        assert!((dv - v).abs() < 5.0 * v * (2.0 / n).sqrt(), "{dv} {v}");
        // Gaussian quantiles: the median at the mean, the 97.5% one 1.96 sd above.
        let sd = v.sqrt();
        assert!((y.quantiles[1].1[r] - m).abs() < 0.03 * sd);
        assert!((y.quantiles[2].1[r] - (m + 1.959964 * sd)).abs() < 0.05 * sd);
    }
    // Held-out data never change the fitted q.
    assert_eq!(fit.posteriors(), before);
    // Same seed, same draws.
    let again = fit.predict(&new, &BTreeMap::new(), &opts).unwrap();
    assert_eq!(again[0].samples, y.samples);
}

#[test]
fn missing_entries_get_their_predictive() {
    let mut ys = YS;
    ys[2] = f64::NAN;
    let fit = regression(&ys);
    let p = fit.predict_missing(&PredictOptions::default()).unwrap();
    assert_eq!(p.len(), 1);
    let (m, v) = closed_form(&XS[2], &ys);
    assert!((p[0].mean[2] - m).abs() < 1e-10 * (1.0 + m.abs()));
    assert!((p[0].sd[2].powi(2) - v).abs() < 1e-10 * v);
    assert!(p[0].missing.as_ref().unwrap()[2]);
    // Observed entries keep their datum with sd 0.
    assert_eq!((p[0].mean[0], p[0].sd[0]), (YS[0], 0.0));
}

/// Known mean, unknown precision: q(τ) = Gamma(a, b) is the exact posterior, and the predictive
/// is a Student-t with 2a degrees of freedom, location 1 and scale² b/a: mean 1, variance
/// b / (a − 1).
#[test]
fn gamma_precision_gives_the_student_t() {
    let src = "plates N from data x\ntau ~ Gamma(shape = 2, rate = 1)\n\
        x[N] ~ Gaussian(mean = 1, precision = tau)\nobserve x\n";
    let xs = [0.2, 1.9, 1.1, 0.4, 2.5];
    let mut d = DataSet::new();
    d.insert_array("x", 5, 1, xs.to_vec(), None).unwrap();
    let fit = Model::from_source("t.occam", src, &d)
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    let a = 2.0 + 2.5;
    let b = 1.0 + xs.iter().map(|x| (x - 1.0) * (x - 1.0)).sum::<f64>() / 2.0;
    let opts = PredictOptions {
        draws: 100_000,
        seed: 3,
        quantiles: vec![0.1, 0.9],
        ..Default::default()
    };
    let sizes = BTreeMap::from([("N".to_string(), 2)]);
    let p = fit.predict(&DataSet::new(), &sizes, &opts).unwrap();
    let y = &p[0];
    assert_eq!(y.rows, 2);
    assert!((y.mean[0] - 1.0).abs() < 1e-12);
    assert!((y.sd[0].powi(2) - b / (a - 1.0)).abs() < 1e-10);
    // The t quantiles: 1 ± t_{0.9, 9} √(b/a), t_{0.9, 9} = 1.383029 (tables).
    let half = 1.383029 * (b / a).sqrt();
    assert!(
        (y.quantiles[1].1[0] - (1.0 + half)).abs() < 0.02,
        "{}",
        y.quantiles[1].1[0]
    );
    assert!((y.quantiles[0].1[0] - (1.0 - half)).abs() < 0.02);
}

/// A mixture's predictive for a new row is the mixture of its components weighted by ⟨π⟩:
/// mean Σ_k ⟨π_k⟩⟨μ_k⟩; the draws are bimodal, not one Gaussian.
#[test]
fn mixture_predictive_is_the_mixture() {
    let src =
        "plate K = 2\nplates N from data y\npi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\n\
        mu[K] ~ Gaussian(mean = 0, precision = 1e-2)\ntau[K] ~ Gamma(shape = 1, rate = 1)\n\
        y[N] ~ Gaussian(mean = mu[z], precision = tau[z])\nobserve y\n";
    let ys: Vec<f64> = (0..40)
        .map(|i| if i % 4 == 0 { 5.0 } else { -5.0 } + 0.3 * ((i * 7 % 11) as f64 / 11.0 - 0.5))
        .collect();
    let mut d = DataSet::new();
    d.insert_array("y", 40, 1, ys, None).unwrap();
    let fit = Model::from_source("m.occam", src, &d)
        .unwrap()
        .fit(&Settings {
            prune: false,
            ..Settings::default()
        })
        .unwrap();
    let pi = fit
        .posterior("pi")
        .unwrap()
        .param("mean")
        .unwrap()
        .values
        .clone();
    let mu = fit
        .posterior("mu")
        .unwrap()
        .param("mean")
        .unwrap()
        .values
        .clone();
    let opts = PredictOptions {
        draws: 20_000,
        ..Default::default()
    };
    let sizes = BTreeMap::from([("N".to_string(), 1)]);
    let p = fit.predict(&DataSet::new(), &sizes, &opts).unwrap();
    let y = &p[0];
    // p(z* = k) = ⟨π_k⟩ (not q's exp⟨ln π_k⟩): the draws' mean is Σ_k ⟨π_k⟩⟨μ_k⟩.
    let m = pi[0] * mu[0] + pi[1] * mu[1];
    assert!(!y.exact);
    assert!(
        (y.mean[0] - m).abs() < 5.0 * y.sd[0] / (opts.draws as f64).sqrt(),
        "{} {m}",
        y.mean[0]
    );
    // Bimodal: almost no draw between the components, a quarter near 5.
    let near = |c: f64| y.samples.iter().filter(|x| (*x - c).abs() < 1.5).count() as f64;
    assert!((near(5.0) / opts.draws as f64 - 0.25).abs() < 0.03);
    assert!(near(0.0) / (opts.draws as f64) < 0.01);
}
