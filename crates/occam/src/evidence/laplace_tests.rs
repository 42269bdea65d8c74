//! The unconstrained log joint's analytic gradient against central differences of the log joint
//! itself, on models that use every prior and observation family of module `flat` (Gaussian,
//! Normal–Gamma, Gamma, Beta, Dirichlet; Gaussian, Bernoulli, Poisson, Categorical), with and
//! without a mixture index; and the round trip θ → η → θ.

use super::density::Theta;
use super::flat::{recognise, Flat};
use super::unconstrained::{log_joint, to_eta, to_theta};
use crate::{DataSet, Model};

fn flat(text: &str, data: &[(&str, usize, Vec<f64>)]) -> Flat {
    let mut d = DataSet::new();
    for (name, cols, v) in data {
        d.insert_array(name, v.len() / cols, *cols, v.clone(), None)
            .unwrap();
    }
    let m = Model::from_source("m.occam", text, &d).unwrap();
    recognise(m.loaded()).unwrap()
}

/// Max relative difference between the analytic gradient and central differences at `eta`.
fn gradient_error(f: &Flat, eta: &[f64]) -> f64 {
    let mut g = vec![0.0; eta.len()];
    log_joint(f, eta, Some(&mut g));
    let mut worst = 0.0f64;
    for j in 0..eta.len() {
        let h = 1e-5 * (1.0 + eta[j].abs());
        let (mut p, mut m) = (eta.to_vec(), eta.to_vec());
        p[j] += h;
        m[j] -= h;
        let fd = (log_joint(f, &p, None) - log_joint(f, &m, None)) / (2.0 * h);
        worst = worst.max((fd - g[j]).abs() / (1.0 + g[j].abs()));
    }
    worst
}

/// Deterministic, irregular coordinates (no symmetric point where errors could cancel).
fn point(d: usize) -> Vec<f64> {
    (0..d)
        .map(|i| 0.3 * ((i as f64 * 1.7).sin()) + 0.1 * i as f64 - 0.2)
        .collect()
}

#[test]
fn the_gradient_matches_finite_differences() {
    let mixture = flat(
        "plate K = 3\nplate N from data x\npi ~ Dirichlet(1.5) over K\n\
         tau[K] ~ Gamma(2, 1)\nmu[K] ~ Gaussian(0, 0.5 * tau)\np[K] ~ Beta(2, 3)\n\
         r[K] ~ Gamma(1.5, 0.5)\nz[N] ~ Categorical(pi)\nx[N] ~ Gaussian(mu[z], tau[z])\n\
         y[N] ~ Bernoulli(p[z])\nc[N] ~ Poisson(r[z])\n",
        &[
            ("x", 1, vec![0.3, -1.2, 2.5, 0.9, 1.1, -0.4]),
            ("y", 1, vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
            ("c", 1, vec![3.0, 0.0, 5.0, 2.0, 1.0, 4.0]),
        ],
    );
    assert_eq!(mixture.dimension(), 2 + 4 * 3);
    let err = gradient_error(&mixture, &point(mixture.dimension()));
    assert!(err < 1e-7, "mixture gradient error {err}");
    let one_layer = flat(
        "plate C = 4\nplate N from data x\nq ~ Dirichlet(0.7) over C\nm ~ Gaussian(1, 0.3)\n\
         t ~ Gamma(3, 2)\nx[N] ~ Gaussian(m, t)\nk[N] ~ Categorical(q)\n",
        &[
            ("x", 1, vec![0.3, -1.2, 2.5, 0.9, 1.1]),
            ("k", 1, vec![0.0, 3.0, 3.0, 1.0, 2.0]),
        ],
    );
    let err = gradient_error(&one_layer, &point(one_layer.dimension()));
    assert!(err < 1e-7, "one-layer gradient error {err}");
}

#[test]
fn coordinates_round_trip() {
    let f = flat(
        "plate K = 3\nplate N from data x\npi ~ Dirichlet(1) over K\np[K] ~ Beta(1, 1)\n\
         z[N] ~ Categorical(pi)\nx[N] ~ Bernoulli(p[z])\n",
        &[("x", 1, vec![1.0, 0.0, 1.0])],
    );
    let theta: Theta = vec![vec![0.2, 0.5, 0.3], vec![0.1, 0.6, 0.95]];
    let (back, _) = to_theta(&f, &to_eta(&f, &theta));
    for (a, b) in theta.iter().flatten().zip(back.iter().flatten()) {
        assert!((a - b).abs() < 1e-14, "{a} vs {b}");
    }
}

#[test]
fn a_saddle_is_reported_as_not_positive_definite() {
    // Two clusters, started with both components on top of each other: the gradient keeps the
    // two equal, so the optimiser ends on the symmetric critical point between the clusters,
    // a saddle (splitting the components raises the density).
    let f = flat(
        "plate K = 2\nplate N from data x\npi ~ Dirichlet(1) over K\n\
         mu[K] ~ Gaussian(0, 0.04)\nz[N] ~ Categorical(pi)\nx[N] ~ Gaussian(mu[z], 1)\n",
        &[("x", 1, vec![-5.1, -4.8, -5.3, 4.9, 5.2, 5.0])],
    );
    let theta: Theta = vec![vec![0.5, 0.5], vec![0.1, 0.1]];
    let l = super::laplace::laplace(&f, &theta).unwrap();
    assert!(!l.positive_definite, "{l:?}");
    // Started apart, the same model reaches a maximum.
    let theta: Theta = vec![vec![0.5, 0.5], vec![-3.0, 3.0]];
    let l = super::laplace::laplace(&f, &theta).unwrap();
    assert!(l.positive_definite, "{l:?}");
}
