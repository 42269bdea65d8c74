//! The evidence estimators on one-layer conjugate models: `exact` against closed forms written
//! here another way (the chain rule ln p(D) = Σ_i ln p(x_i | x_<i), each factor the posterior
//! predictive), to 1e-10; `vb` equal to it where q is exact and below it where it is not
//! (Normal–Gamma: mean-field q); `is` and `ais` within 3 standard errors; methods that do not apply say
//! why; the estimates do not depend on the thread count.

use occam::evidence::{estimate, Evidence, Kind, Method, Options};
use occam::{DataSet, Model, Settings};

use super::bound_oracle::ln_gamma;

const LN_2PI: f64 = 1.837_877_066_409_345_5;

pub(super) fn fit(text: &str, data: &[(&str, usize, Vec<f64>)]) -> occam::Fitted {
    let mut d = DataSet::new();
    for (name, cols, v) in data {
        d.insert_array(name, v.len() / cols, *cols, v.clone(), None)
            .unwrap();
    }
    let settings = Settings {
        tol: 1e-12,
        max_iter: 5000,
        restarts: 3,
        ..Settings::default()
    };
    Model::from_source("m.occam", text, &d)
        .unwrap()
        .fit(&settings)
        .unwrap()
}

pub(super) fn value(f: &occam::Fitted, m: Method, opts: &Options) -> occam::evidence::Estimate {
    match estimate(f, m, opts) {
        Evidence::Estimate(e) => e,
        Evidence::NotApplicable { reason, .. } => panic!("{} not applicable: {reason}", m.name()),
    }
}

/// Method `m` with `opts` on 1 and 2 threads, asserted to give the same bits (estimate, standard
/// error, effective sample size); the one-thread estimate.
pub(super) fn same_bits_on_one_and_two_threads(
    f: &occam::Fitted,
    m: Method,
    opts: &Options,
) -> occam::evidence::Estimate {
    let run =
        |threads: usize| occam_core::threads::on_threads(threads, || value(f, m, opts)).unwrap();
    let (a, b) = (run(1), run(2));
    assert_eq!(a.log_evidence.to_bits(), b.log_evidence.to_bits());
    assert_eq!(a.se.map(f64::to_bits), b.se.map(f64::to_bits));
    assert_eq!(a.ess.map(f64::to_bits), b.ess.map(f64::to_bits));
    a
}

/// ln of Student-t density with `nu` degrees of freedom, location `m`, scale² `s2`.
fn ln_student(x: f64, nu: f64, m: f64, s2: f64) -> f64 {
    ln_gamma((nu + 1.0) / 2.0)
        - ln_gamma(nu / 2.0)
        - 0.5 * (nu * std::f64::consts::PI * s2).ln()
        - (nu + 1.0) / 2.0 * (1.0 + (x - m) * (x - m) / (nu * s2)).ln()
}

/// Checks exact (1e-10 against `truth`), vb (equal when `q_exact`, else below) and is (3 se).
fn check(text: &str, data: Vec<f64>, truth: f64, q_exact: bool) {
    let f = fit(text, &[("x", 1, data)]);
    let opts = Options::default();
    let exact = value(&f, Method::Exact, &opts);
    assert_eq!(exact.kind, Kind::Exact);
    assert!(
        (exact.log_evidence - truth).abs() < 1e-10,
        "exact {} vs closed form {truth}",
        exact.log_evidence
    );
    // Cheeseman–Stutz without a mixture index is the exact evidence.
    let cs = value(&f, Method::Cs, &opts).log_evidence;
    assert!((cs - truth).abs() < 1e-10, "cs {cs} vs closed form {truth}");
    let vb = value(&f, Method::Vb, &opts).log_evidence;
    if q_exact {
        assert!((vb - truth).abs() < 1e-8, "vb {vb} vs exact {truth}");
    } else {
        assert!(vb < truth - 1e-6, "vb {vb} not below exact {truth}");
    }
    let is = value(&f, Method::Is, &opts);
    let se = is.se.unwrap();
    assert!(se > 0.0 && se < 0.05, "se {se}");
    assert!(
        (is.log_evidence - truth).abs() < 3.0 * se,
        "is {} ± {se} vs exact {truth}",
        is.log_evidence
    );
    let ais = value(&f, Method::Ais, &opts);
    let se = ais.se.unwrap();
    assert!(
        se > 0.0 && se < 0.05 && !ais.unreliable,
        "ais se {se}: {}",
        ais.note
    );
    assert!(
        (ais.log_evidence - truth).abs() < 3.0 * se,
        "ais {} ± {se} vs exact {truth}",
        ais.log_evidence
    );
}

#[test]
fn beta_bernoulli() {
    let x = vec![1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0];
    let (mut a, mut b, mut truth) = (2.0f64, 3.0f64, 0.0);
    for &v in &x {
        let pr = if v == 1.0 { a / (a + b) } else { b / (a + b) };
        truth += pr.ln();
        if v == 1.0 {
            a += 1.0
        } else {
            b += 1.0
        }
    }
    let text = "plate N from data x\np ~ Beta(2, 3)\nx[N] ~ Bernoulli(p)\n";
    check(text, x, truth, true);
}

#[test]
fn gamma_poisson() {
    let x = vec![3.0, 0.0, 5.0, 2.0, 2.0, 7.0, 1.0, 4.0];
    // Predictive: negative binomial with r = a, success odds b / (b + 1).
    let (mut a, mut b, mut truth) = (2.5f64, 0.5f64, 0.0);
    for &v in &x {
        truth += ln_gamma(a + v) - ln_gamma(a) - ln_gamma(v + 1.0) + a * (b / (b + 1.0)).ln()
            - v * (b + 1.0).ln();
        a += v;
        b += 1.0;
    }
    let text = "plate N from data x\nr ~ Gamma(2.5, 0.5)\nx[N] ~ Poisson(r)\n";
    check(text, x, truth, true);
}

#[test]
fn normal_gamma() {
    let x = vec![1.3, 0.2, 2.1, 1.7, -0.4, 0.9];
    // Predictive: Student-t with 2a dof, location m, scale² b (κ + 1) / (a κ).
    let (mut m, mut k, mut a, mut b, mut truth) = (0.5, 0.25, 2.0, 1.5, 0.0);
    for &v in &x {
        truth += ln_student(v, 2.0 * a, m, b * (k + 1.0) / (a * k));
        b += k * (v - m) * (v - m) / (2.0 * (k + 1.0));
        m = (k * m + v) / (k + 1.0);
        k += 1.0;
        a += 0.5;
    }
    let text = "plate N from data x\ntau ~ Gamma(2, 1.5)\nmu ~ Gaussian(0.5, 0.25 * tau)\n\
                x[N] ~ Gaussian(mu, tau)\n";
    check(text, x, truth, false);
}

#[test]
fn gaussian_known_precision() {
    let x = vec![1.3, 0.2, 2.1, 1.7, -0.4];
    let (tau, mut m, mut p, mut truth) = (2.0f64, -1.0f64, 0.5f64, 0.0);
    for &v in &x {
        let var = 1.0 / p + 1.0 / tau;
        truth += -0.5 * (LN_2PI + var.ln()) - 0.5 * (v - m) * (v - m) / var;
        m = (p * m + tau * v) / (p + tau);
        p += tau;
    }
    let text = "plate N from data x\nmu ~ Gaussian(-1, 0.5)\nx[N] ~ Gaussian(mu, 2)\n";
    check(text, x, truth, true);
}

#[test]
fn dirichlet_categorical() {
    let x = vec![0.0, 2.0, 2.0, 1.0, 2.0, 0.0, 2.0];
    let mut c = [0.7; 3];
    let mut truth = 0.0;
    for &v in &x {
        truth += (c[v as usize] / c.iter().sum::<f64>()).ln();
        c[v as usize] += 1.0;
    }
    let text =
        "plate C = 3\nplate N from data x\np ~ Dirichlet(0.7) over C\nx[N] ~ Categorical(p)\n";
    check(text, x, truth, true);
}

#[test]
fn methods_that_do_not_apply_say_why() {
    let opts = Options::default();
    // Independent priors on mean and precision: no closed form, but IS and BIC still apply.
    let f = fit(
        "plate N from data x\nmu ~ Gaussian(0, 1)\ntau ~ Gamma(1, 1)\nx[N] ~ Gaussian(mu, tau)\n",
        &[("x", 1, vec![0.3, 1.2, -0.5])],
    );
    match estimate(&f, Method::Exact, &opts) {
        Evidence::NotApplicable { reason, .. } => {
            assert!(reason.contains("independent priors"), "{reason}")
        }
        e => panic!("{e:?}"),
    }
    assert!(matches!(
        estimate(&f, Method::Is, &opts),
        Evidence::Estimate(_)
    ));
    assert!(matches!(
        estimate(&f, Method::VbSym, &opts),
        Evidence::NotApplicable { .. }
    ));
    // A regression through a deterministic product is not a recognised model.
    let f = fit(
        "plate N from data x\ndata u[N]\nw ~ Gaussian(0, 1)\nx[N] ~ Gaussian(w * u, 1)\n",
        &[
            ("x", 1, vec![0.3, 1.2, -0.5]),
            ("u", 1, vec![1.0, 2.0, 3.0]),
        ],
    );
    for m in [Method::Exact, Method::Bic, Method::Is] {
        match estimate(&f, m, &opts) {
            Evidence::NotApplicable { reason, .. } => {
                assert!(reason.starts_with("not a recognised model"), "{reason}")
            }
            e => panic!("{e:?}"),
        }
    }
    assert!(matches!(
        estimate(&f, Method::Vb, &opts),
        Evidence::Estimate(_)
    ));
}

#[test]
fn importance_sampling_does_not_depend_on_the_thread_count() {
    let f = fit(
        "plate N from data x\ntau ~ Gamma(2, 1.5)\nmu ~ Gaussian(0.5, 0.25 * tau)\n\
         x[N] ~ Gaussian(mu, tau)\n",
        &[("x", 1, vec![1.3, 0.2, 2.1])],
    );
    let opts = Options {
        samples: 3000,
        seed: 7,
        ..Options::default()
    };
    let run = |threads: usize| {
        occam_core::threads::on_threads(threads, || value(&f, Method::Is, &opts)).unwrap()
    };
    let (a, b) = (run(1), run(3));
    assert_eq!(a.log_evidence.to_bits(), b.log_evidence.to_bits());
    assert_eq!(a.se, b.se);
    let other = value(&f, Method::Is, &Options { seed: 8, ..opts });
    assert_ne!(a.log_evidence, other.log_evidence, "the seed is used");
}
