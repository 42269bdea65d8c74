//! The predictive density of a fitted Gaussian mixture for a new row integrates to one
//! (composite Simpson quadrature over a grid that covers the data and tails), in 1-D (scalar
//! Gaussian components with Gamma precisions) and 2-D (MvGaussian components with Wishart
//! precisions). The density is the average over seeded draws of the parameters from q of
//! Σ_k [z = k] N(x | μ_k, Λ_k⁻¹) with z drawn from ⟨π⟩: the weights of the mixture are the
//! posterior-mean weights ⟨π_k⟩, which sum to 1; the mean-field exp⟨ln π_k⟩ would sum to less
//! (here by more than 10⁻³) and fail the test.

use std::collections::BTreeMap;

use occam::predict::PredictOptions;
use occam::{DataSet, Model, Settings};

/// Composite Simpson weights on `n` (odd) points with spacing h.
fn simpson(n: usize, h: f64) -> Vec<f64> {
    assert!(n % 2 == 1);
    (0..n)
        .map(|i| {
            let w = if i == 0 || i == n - 1 {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * h / 3.0
        })
        .collect()
}

/// Deterministic pseudo-data: a Weyl sequence through the inverse of a logistic.
fn noise(i: usize) -> f64 {
    let u = ((i as f64 + 0.5) * 0.618_033_988_749_895).fract();
    0.55 * (u / (1.0 - u)).ln()
}

#[test]
fn one_dimensional_mixture_density_integrates_to_one() {
    let src =
        "plate K = 3\nplates N from data y\npi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\n\
        mu[K] ~ Gaussian(mean = 0, precision = 1e-2)\ntau[K] ~ Gamma(shape = 1, rate = 1)\n\
        y[N] ~ Gaussian(mean = mu[z], precision = tau[z])\n";
    let centres = [-4.0, 0.5, 3.0];
    let ys: Vec<f64> = (0..60).map(|i| centres[i % 3] + noise(i)).collect();
    let mut d = DataSet::new();
    d.insert_array("y", ys.len(), 1, ys, None).unwrap();
    let fit = Model::from_source("gmm1.occam", src, &d)
        .unwrap()
        .fit(&Settings {
            prune: false,
            ..Settings::default()
        })
        .unwrap();
    let before = fit.saved().to_json();
    let (lo, hi, n) = (-25.0, 25.0, 20_001);
    let h = (hi - lo) / (n - 1) as f64;
    let grid: Vec<f64> = (0..n).map(|i| lo + i as f64 * h).collect();
    let opts = PredictOptions {
        draws: 200,
        seed: 5,
        ..PredictOptions::default()
    };
    let sizes = BTreeMap::from([("N".to_string(), 1)]);
    let p = fit
        .predictive_density(&DataSet::new(), &sizes, "y", &grid, &opts)
        .unwrap();
    let w = simpson(n, h);
    let integral: f64 = p.iter().zip(&w).map(|(p, w)| p * w).sum();
    println!("1-D predictive density: integral = {integral:.15}");
    assert!((integral - 1.0).abs() < 1e-10, "{integral}");
    // Its mean is the predictive mean Σ_k ⟨π_k⟩⟨μ_k⟩ up to the Monte Carlo error of 200 draws.
    let mean: f64 = p
        .iter()
        .zip(&w)
        .zip(&grid)
        .map(|((p, w), x)| p * w * x)
        .sum();
    let pred = fit.predict(&DataSet::new(), &sizes, &opts).unwrap();
    assert!(
        (mean - pred[0].mean[0]).abs() < 0.3,
        "{mean} {}",
        pred[0].mean[0]
    );
    assert!(fit.saved().to_json() == before, "the fitted q changed");
}

#[test]
fn two_dimensional_mixture_density_integrates_to_one() {
    let src =
        "plate K = 2\nplates N, D from data y\npi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\n\
        mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-2)\n\
        Lambda[K] over D ~ Wishart(dof = 3, rate = identity * 1)\n\
        y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])\n";
    let centres = [[-2.0, 1.0], [2.0, -1.0]];
    let ys: Vec<f64> = (0..40)
        .flat_map(|i| {
            let c = centres[i % 2];
            [c[0] + noise(2 * i), c[1] + 0.5 * noise(2 * i + 1)]
        })
        .collect();
    let mut d = DataSet::new();
    d.insert_array("y", 40, 2, ys, None).unwrap();
    let fit = Model::from_source("gmm2.occam", src, &d)
        .unwrap()
        .fit(&Settings {
            prune: false,
            ..Settings::default()
        })
        .unwrap();
    let (lo, hi, n) = (-12.0, 12.0, 401);
    let h = (hi - lo) / (n - 1) as f64;
    let axis: Vec<f64> = (0..n).map(|i| lo + i as f64 * h).collect();
    let grid: Vec<f64> = axis
        .iter()
        .flat_map(|&a| axis.iter().flat_map(move |&b| [a, b]))
        .collect();
    let opts = PredictOptions {
        draws: 50,
        seed: 9,
        ..PredictOptions::default()
    };
    let sizes = BTreeMap::from([("N".to_string(), 1)]);
    let p = fit
        .predictive_density(&DataSet::new(), &sizes, "y", &grid, &opts)
        .unwrap();
    let w = simpson(n, h);
    let mut integral = 0.0;
    for i in 0..n {
        for j in 0..n {
            integral += w[i] * w[j] * p[i * n + j];
        }
    }
    println!("2-D predictive density: integral = {integral:.15}");
    assert!((integral - 1.0).abs() < 1e-10, "{integral}");
}
