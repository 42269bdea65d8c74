//! Cross-validation (`cv`) against closed forms: leave-one-out (as many folds as rows, so the
//! split does not matter) on models whose q is the exact posterior, where each held-out row's
//! predictive is known — Gaussian for a Gaussian mean of known precision, (a + s)/(a + b + n)
//! for Beta–Bernoulli. The tolerance is four Monte Carlo standard errors of the total, computed
//! from the closed-form variance of p(x_i | θ) under q. The score does not depend on the thread
//! count, and the seed is used.

use occam::evidence::{Kind, Method, Options};
use occam::Settings;

use super::evidence::{fit, value};

const LN_2PI: f64 = 1.837_877_066_409_345_5;
const DRAWS: usize = 20_000;

fn ln_normal(x: f64, m: f64, v: f64) -> f64 {
    -0.5 * (LN_2PI + v.ln()) - 0.5 * (x - m) * (x - m) / v
}

fn loo_opts(n: usize) -> Options {
    Options {
        folds: n,
        samples: DRAWS,
        seed: 3,
        refit: Some(Settings {
            tol: 1e-12,
            max_iter: 5000,
            ..Settings::default()
        }),
        ..Options::default()
    }
}

#[test]
fn leave_one_out_matches_the_gaussian_predictive() {
    let x = [1.3, 0.2, 2.1, 1.7, -0.4, 0.9, 3.0];
    let (m0, p0, tau) = (-1.0, 0.5, 2.0);
    let n = x.len();
    let total: f64 = x.iter().sum();
    let (mut truth, mut mc_var) = (0.0, 0.0);
    for &xi in &x {
        let p = p0 + (n - 1) as f64 * tau;
        let m = (p0 * m0 + tau * (total - xi)) / p;
        let (v, s2) = (1.0 / p, 1.0 / tau);
        truth += ln_normal(xi, m, v + s2);
        // E_q f² = N(x; m, v + s²/2) / (2 √π s): the relative variance of the Monte Carlo mean.
        let ef2 =
            ln_normal(xi, m, v + s2 / 2.0).exp() / (2.0 * std::f64::consts::PI.sqrt() * s2.sqrt());
        let ef = ln_normal(xi, m, v + s2).exp();
        mc_var += (ef2 / (ef * ef) - 1.0) / DRAWS as f64;
    }
    let f = fit(
        "plate N from data x\nmu ~ Gaussian(-1, 0.5)\nx[N] ~ Gaussian(mu, 2)\n",
        &[("x", 1, x.to_vec())],
    );
    let cv = value(&f, Method::Cv, &loo_opts(n));
    assert_eq!(cv.kind, Kind::HeldOut);
    let tol = 4.0 * mc_var.sqrt();
    eprintln!(
        "Gaussian LOO: cv {} ± {:?}, closed form {truth}, tolerance {tol}",
        cv.log_evidence, cv.se
    );
    assert!(
        (cv.log_evidence - truth).abs() < tol,
        "cv {} vs {truth} (tol {tol})",
        cv.log_evidence
    );
    // The rows' standard error is the spread of the per-row terms, positive and finite.
    assert!(cv.se.unwrap() > 0.0 && cv.se.unwrap().is_finite());
}

#[test]
fn leave_one_out_matches_the_beta_bernoulli_predictive() {
    let x = [1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0];
    let (a, b) = (2.0, 3.0);
    let n = x.len();
    let s: f64 = x.iter().sum();
    let (mut truth, mut mc_var) = (0.0, 0.0);
    for &xi in &x {
        let (al, be) = (a + s - xi, b + (n as f64 - s) - (1.0 - xi));
        let mean = al / (al + be);
        let var = al * be / ((al + be) * (al + be) * (al + be + 1.0));
        let e = if xi == 1.0 { mean } else { 1.0 - mean };
        truth += e.ln();
        mc_var += var / (e * e) / DRAWS as f64;
    }
    let f = fit(
        "plate N from data x\np ~ Beta(2, 3)\nx[N] ~ Bernoulli(p)\n",
        &[("x", 1, x.to_vec())],
    );
    let cv = value(&f, Method::Cv, &loo_opts(n));
    let tol = 4.0 * mc_var.sqrt();
    eprintln!(
        "Beta–Bernoulli LOO: cv {}, closed form {truth}, tolerance {tol}",
        cv.log_evidence
    );
    assert!(
        (cv.log_evidence - truth).abs() < tol,
        "cv {} vs {truth} (tol {tol})",
        cv.log_evidence
    );
}

#[test]
fn cross_validation_does_not_depend_on_the_thread_count() {
    let f = fit(
        "plate K = 2\nplate N from data x\npi ~ Dirichlet(1) over K\n\
         mu[K] ~ Gaussian(0, 0.04)\nz[N] ~ Categorical(pi)\nx[N] ~ Gaussian(mu[z], 1)\n",
        &[("x", 1, vec![-5.1, -4.8, -5.3, 4.9, 5.2, 5.0, -4.4, 5.6])],
    );
    let opts = Options {
        folds: 4,
        samples: 2000,
        seed: 11,
        ..Options::default()
    };
    let run = |threads: usize, o: &Options| {
        occam_core::threads::on_threads(threads, || value(&f, Method::Cv, o)).unwrap()
    };
    let (a, b) = (run(1, &opts), run(3, &opts));
    assert_eq!(a.log_evidence.to_bits(), b.log_evidence.to_bits());
    assert_eq!(a.se, b.se);
    let other = run(
        2,
        &Options {
            seed: 12,
            ..opts.clone()
        },
    );
    assert_ne!(a.log_evidence, other.log_evidence, "the seed is used");
    // Too many folds for the rows: not applicable, with the reason.
    let many = occam::evidence::estimate(&f, Method::Cv, &Options { folds: 9, ..opts });
    match many {
        occam::evidence::Evidence::NotApplicable { reason, .. } => {
            assert!(reason.contains("9 folds of 8 rows"), "{reason}")
        }
        e => panic!("{e:?}"),
    }
}
