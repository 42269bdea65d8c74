//! A Gamma's shape as a random variable (Winn Example 2.1) and the Student-t scale mixture with
//! an unknown ν, written as users write them, against quadrature of the exact posterior:
//! - one latent shape (`x ~ Gamma(a, 1.5)`): q(a) is then the exact posterior, so its mean and
//!   ⟨ln a⟩ and the reported sd (and its family, `ShapeGamma`) equal a 1-D quadrature to 1e-6
//!   and the bound equals ln p(D);
//! - shape and rate both latent: the bound never decreases and stays below ln p(D) by 2-D
//!   quadrature;
//! - `lam[N] ~ Gamma(nu * 0.5, nu * 0.5)`, `y[N] ~ Gaussian(0, lam)`: λ integrates out to a
//!   Student-t, so ln p(D) is a 1-D quadrature over ν; the bound never decreases and stays below.
//!
//! The reference quadratures are independent of the engine's (`dist/shape_quad.rs`, Gauss–Legendre
//! on ln a with an adaptive bracket): composite Gauss–Legendre on a linear grid in a or ν.

use occam::{DataSet, Fitted, Model, Settings};
use occam_core::quad::GaussLegendre;
use occam_core::special::ln_gamma;
use rand::{Rng as _, SeedableRng};

fn settings() -> Settings {
    Settings {
        tol: 0.0,
        max_iter: 200,
        ..Settings::default()
    }
}

/// Gamma(shape, rate) draws, seeded (Marsaglia–Tsang through rand_distr).
fn gamma_draws(n: usize, shape: f64, rate: f64, seed: u64) -> Vec<f64> {
    let mut rng = occam_core::Rng::seed_from_u64(seed);
    let g = rand_distr::Gamma::new(shape, 1.0 / rate).unwrap();
    (0..n).map(|_| rng.sample(g)).collect()
}

fn ln_gamma_pdf(x: f64, a: f64, b: f64) -> f64 {
    a * b.ln() - ln_gamma(a) + (a - 1.0) * x.ln() - b * x
}

fn fit(src: &str, name: &str, y: &[f64]) -> Fitted {
    let mut d = DataSet::new();
    d.insert_array(name, y.len(), 1, y.to_vec(), None).unwrap();
    Model::from_source("shape", src, &d)
        .unwrap()
        .fit(&settings())
        .unwrap()
}

fn assert_monotone(fit: &Fitted) {
    let t = &fit.outcome().bound_trace;
    assert!(!t.is_empty());
    for w in t.windows(2) {
        assert!(
            w[1] >= w[0] - 1e-12 * w[0].abs(),
            "bound fell: {} → {}",
            w[0],
            w[1]
        );
    }
}

/// ln ∫ exp(f) over [lo, hi] by composite 20-point Gauss–Legendre (`panels` panels), with f's
/// maximum on the nodes factored out; also the means of x, ln x and x² under exp(f).
fn log_integral(lo: f64, hi: f64, panels: usize, f: impl Fn(f64) -> f64) -> (f64, Vec<f64>) {
    let rule = GaussLegendre::new(20);
    let mut pts = Vec::new();
    let h = (hi - lo) / panels as f64;
    for p in 0..panels {
        let (c, half) = (lo + (p as f64 + 0.5) * h, 0.5 * h);
        for (x, w) in rule.nodes.iter().zip(&rule.weights) {
            pts.push((c + half * x, w * half));
        }
    }
    let vals: Vec<f64> = pts.iter().map(|&(x, _)| f(x)).collect();
    let m = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut z, mut m1, mut ml, mut m2) = (0.0, 0.0, 0.0, 0.0);
    for (&(x, w), v) in pts.iter().zip(&vals) {
        let e = w * (v - m).exp();
        z += e;
        m1 += e * x;
        ml += e * x.ln();
        m2 += e * x * x;
    }
    (m + z.ln(), vec![m1 / z, ml / z, m2 / z])
}

#[test]
fn one_latent_shape_has_the_exact_posterior_moments_and_evidence() {
    let x = gamma_draws(20, 3.0, 1.5, 41);
    let src = "plate N = 20\na ~ Gamma(2, 1)\nx[N] ~ Gamma(a, 1.5)\nobserve x\n";
    let f = fit(src, "x", &x);
    assert_monotone(&f);
    let post = f.posterior("a").unwrap();
    let mean = post.param("mean").unwrap().values[0];
    let mean_log = post.param("mean_log").unwrap().values[0];
    // p(a | x) ∝ Gamma(a; 2, 1) Π Gamma(x_i; a, 1.5), on a ∈ (0, 30].
    let joint = |a: f64| {
        ln_gamma_pdf(a, 2.0, 1.0) + x.iter().map(|&xi| ln_gamma_pdf(xi, a, 1.5)).sum::<f64>()
    };
    let (log_z, m) = log_integral(1e-12, 30.0, 400, joint);
    eprintln!(
        "exact: ln p(D) {log_z:.9}, ⟨a⟩ {:.9}, ⟨ln a⟩ {:.9}; VMP: bound {:.9}, ⟨a⟩ {mean:.9}, ⟨ln a⟩ {mean_log:.9}",
        m[0],
        m[1],
        f.bound()
    );
    assert!((mean - m[0]).abs() < 1e-6, "⟨a⟩ {mean} vs {}", m[0]);
    assert!(
        (mean_log - m[1]).abs() < 1e-6,
        "⟨ln a⟩ {mean_log} vs {}",
        m[1]
    );
    assert!(
        (f.bound() - log_z).abs() < 1e-6,
        "bound {} vs ln p(D) {log_z}",
        f.bound()
    );
    // The summary: q's family is named (not the Gamma written), and its sd is the exact one.
    assert_eq!(post.distribution, "Gamma");
    assert_eq!(post.q_family.as_deref(), Some("ShapeGamma"));
    let sd = post.param("sd").unwrap().values[0];
    let exact_sd = (m[2] - m[0] * m[0]).sqrt();
    eprintln!("sd(a): VMP {sd:.9}, exact {exact_sd:.9}");
    assert!(
        (sd - exact_sd).abs() < 1e-6 * exact_sd,
        "sd {sd} vs {exact_sd}"
    );
}

#[test]
fn shape_and_rate_latent_bound_rises_and_stays_below_the_evidence() {
    let x = gamma_draws(6, 2.0, 1.0, 42);
    let src = "plate N = 6\na ~ Gamma(2, 1)\nb ~ Gamma(1, 1)\nx[N] ~ Gamma(a, b)\nobserve x\n";
    let f = fit(src, "x", &x);
    assert_monotone(&f);
    // ln p(D) = ln ∫∫ p(a) p(b) Π p(x_i | a, b) da db: b in closed form given a would be
    // conjugate, but both are integrated numerically here, on (0, 30] × (0, 30].
    let (sx, slx) = (x.iter().sum::<f64>(), x.iter().map(|v| v.ln()).sum::<f64>());
    let n = x.len() as f64;
    let inner = |a: f64| {
        log_integral(1e-12, 30.0, 200, |b| {
            ln_gamma_pdf(a, 2.0, 1.0) + ln_gamma_pdf(b, 1.0, 1.0) + n * a * b.ln() - n * ln_gamma(a)
                + (a - 1.0) * slx
                - b * sx
        })
        .0
    };
    let (log_z, _) = log_integral(1e-12, 30.0, 200, inner);
    eprintln!("exact ln p(D) {log_z:.6}, bound {:.6}", f.bound());
    assert!(f.bound() < log_z, "bound {} ≥ ln p(D) {log_z}", f.bound());
    // Mean field loses the a–b correlation, but not much on 6 points.
    assert!(
        f.bound() > log_z - 1.0,
        "bound {} far below {log_z}",
        f.bound()
    );
}

#[test]
fn student_t_with_unknown_dof_bound_rises_and_stays_below_the_evidence() {
    // y = t_4 draws (unit scale): normal / sqrt(gamma(2, 2)).
    let mut rng = occam_core::Rng::seed_from_u64(43);
    let lam = gamma_draws(12, 2.0, 2.0, 44);
    let y: Vec<f64> = lam
        .iter()
        .map(|l| {
            let (u, v): (f64, f64) = (rng.random(), rng.random());
            (-2.0 * (1.0 - u).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos() / l.sqrt()
        })
        .collect();
    let src = "plate N = 12\nnu ~ Gamma(2, 0.2)\nlam[N] ~ Gamma(nu * 0.5, nu * 0.5)\n\
               y[N] ~ Gaussian(0, lam)\nobserve y\n";
    let f = fit(src, "y", &y);
    assert_monotone(&f);
    // ∫ N(y | 0, 1/λ) Gamma(λ | ν/2, ν/2) dλ = t_ν(y): ln p(D) = ln ∫ p(ν) Π t_ν(y_i) dν.
    let ln_t = |y: f64, nu: f64| {
        ln_gamma(0.5 * (nu + 1.0))
            - ln_gamma(0.5 * nu)
            - 0.5 * (nu * std::f64::consts::PI).ln()
            - 0.5 * (nu + 1.0) * (1.0 + y * y / nu).ln()
    };
    let (log_z, m) = log_integral(1e-9, 300.0, 600, |nu| {
        ln_gamma_pdf(nu, 2.0, 0.2) + y.iter().map(|&yi| ln_t(yi, nu)).sum::<f64>()
    });
    let nu_mean = f.posterior("nu").unwrap().param("mean").unwrap().values[0];
    eprintln!(
        "exact ln p(D) {log_z:.6}, E[ν | D] {:.4}; bound {:.6}, ⟨ν⟩ {nu_mean:.4}",
        m[0],
        f.bound()
    );
    assert!(f.bound() < log_z, "bound {} ≥ ln p(D) {log_z}", f.bound());
    assert!(
        f.bound() > log_z - 2.0,
        "bound {} far below {log_z}",
        f.bound()
    );
}

#[test]
fn a_shape_variable_used_as_a_value_is_a_located_error() {
    let d = DataSet::new();
    let src = "plate N = 3\na ~ Gamma(2, 1)\nx[N] ~ Gamma(a, 1)\ny[N] ~ Gaussian(0, a)\n";
    let e = lowering_error(src);
    assert!(e.contains("is a Gamma's shape") && e.contains("4:"), "{e}");
    let src = "plate N = 3\na ~ Gamma(2, 1)\nx[N] ~ Gamma(a * 0.5, 1)\ny[N] ~ Gamma(a, 1)\n";
    let e = lowering_error(src);
    assert!(e.contains("times 0.5") && e.contains("4:"), "{e}");
    let src = "plate N = 3\nm ~ Gaussian(0, 1)\nx[N] ~ Gamma(m, 1)\n";
    assert!(Model::from_source("shape", src, &d).is_err());
}

/// The error of fitting `src` with no data (the lowering's checks run at the fit).
fn lowering_error(src: &str) -> String {
    let d = DataSet::new();
    match Model::from_source("shape", src, &d).and_then(|m| m.fit(&settings())) {
        Ok(_) => panic!("accepted:\n{src}"),
        Err(e) => e.to_string(),
    }
}
