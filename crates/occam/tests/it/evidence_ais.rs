//! Annealed importance sampling beyond the conjugate cases of `evidence.rs` and
//! `evidence_mixtures.rs`: a Gaussian with independent (semi-conjugate) priors on its mean and
//! precision, where no closed form exists, against 1-D quadrature over the precision of the
//! closed form given it; a semi-conjugate two-component mixture against the same quadrature
//! summed over every assignment; and the estimate's independence of the thread count.

use occam::evidence::{estimate, Evidence, Method, Options};

use super::bound_oracle::{ln_gamma, log_sum_exp};
use super::evidence::{fit, value};

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// ln p(x | τ) with the mean integrated out under N(m0, 1/p0): the known-precision closed form.
fn ln_given_tau(x: &[f64], m0: f64, p0: f64, tau: f64) -> f64 {
    let n = x.len() as f64;
    let (s1, s2) = (x.iter().sum::<f64>(), x.iter().map(|v| v * v).sum::<f64>());
    let pn = p0 + n * tau;
    let mn = (p0 * m0 + tau * s1) / pn;
    0.5 * (p0 / pn).ln() + 0.5 * n * tau.ln()
        - 0.5 * n * LN_2PI
        - 0.5 * (tau * s2 + p0 * m0 * m0 - pn * mn * mn)
}

/// ln ∫ Gamma(τ; a, b) p(x | τ) dτ by the trapezoid rule in u = ln τ on [−20, 12] (200,001
/// points; the integrand is smooth and negligible at both ends).
fn ln_evidence_quadrature(x: &[f64], m0: f64, p0: f64, a: f64, b: f64) -> f64 {
    ln_evidence_trapezoid(x, m0, p0, a, b, (-20.0, 12.0, 200_000))
}

/// ln ∫ Gamma(τ; a, b) p(x | τ) dτ (the mean integrated out under N(m0, 1/p0)) by the trapezoid
/// rule in u = ln τ on `[lo, hi]` with `m` steps; 0 for no rows.
pub(super) fn ln_evidence_trapezoid(
    x: &[f64],
    m0: f64,
    p0: f64,
    a: f64,
    b: f64,
    (lo, hi, m): (f64, f64, usize),
) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let h = (hi - lo) / m as f64;
    let terms: Vec<f64> = (0..=m)
        .map(|j| {
            let u = lo + h * j as f64;
            let tau = u.exp();
            let ln_prior = a * b.ln() - ln_gamma(a) + (a - 1.0) * u - b * tau;
            let w = if j == 0 || j == m { 0.5 * h } else { h };
            ln_prior + ln_given_tau(x, m0, p0, tau) + u + w.ln()
        })
        .collect();
    log_sum_exp(&terms)
}

fn ais_estimate(f: &occam::Fitted, opts: &Options) -> occam::evidence::Estimate {
    let e = value(f, Method::Ais, opts);
    assert!(e.se.unwrap() > 0.0, "{}", e.note);
    eprintln!("ais {} ± {}: {}", e.log_evidence, e.se.unwrap(), e.note);
    e
}

#[test]
fn semi_conjugate_gaussian_against_quadrature() {
    let x = vec![1.3, 0.2, 2.1, 0.9, 1.7, -0.4, 1.1];
    let f = fit(
        "plate N from data x\nmu ~ Gaussian(0, 0.04)\ntau ~ Gamma(2, 2)\nx[N] ~ Gaussian(mu, tau)\n",
        &[("x", 1, x.clone())],
    );
    // No closed form: exact refuses, ais applies.
    assert!(matches!(
        estimate(&f, Method::Exact, &Options::default()),
        Evidence::NotApplicable { .. }
    ));
    let truth = ln_evidence_quadrature(&x, 0.0, 0.04, 2.0, 2.0);
    eprintln!("quadrature {truth}");
    let e = ais_estimate(&f, &Options::default());
    let se = e.se.unwrap();
    assert!(se < 0.05 && !e.unreliable, "se {se}: {}", e.note);
    assert!(
        (e.log_evidence - truth).abs() < 3.0 * se,
        "ais {} ± {se} vs quadrature {truth}",
        e.log_evidence
    );
    // Below the evidence: the VB bound of the mean-field q.
    assert!(value(&f, Method::Vb, &Options::default()).log_evidence < truth);
}

#[test]
fn semi_conjugate_mixture_against_enumeration_and_quadrature() {
    // K = 2 components with independent Gaussian means and Gamma precisions, weights
    // Dirichlet(1): p(D) = Σ_z DirMult(z) Π_k ∫∫ p(mean) p(precision) Π_{i: z_i = k} N(x_i).
    let x = vec![-2.1, -1.8, -2.4, 1.9, 2.2];
    let text = "plate K = 2\nplate N from data x\npi ~ Dirichlet(1) over K\n\
                mu[K] ~ Gaussian(0, 0.1)\ntau[K] ~ Gamma(3, 1)\nz[N] ~ Categorical(pi)\n\
                x[N] ~ Gaussian(mu[z], tau[z])\n";
    let f = fit(text, &[("x", 1, x.clone())]);
    let n = x.len();
    let mut terms = Vec::new();
    for code in 0..1usize << n {
        let z: Vec<usize> = (0..n).map(|i| code >> i & 1).collect();
        let c1 = z.iter().sum::<usize>() as f64;
        let c0 = n as f64 - c1;
        // Dirichlet(1, 1)-multinomial probability of the sequence.
        let mut s =
            ln_gamma(2.0) - ln_gamma(2.0 + n as f64) + ln_gamma(1.0 + c0) + ln_gamma(1.0 + c1);
        for k in 0..2 {
            let xs: Vec<f64> = (0..n).filter(|&i| z[i] == k).map(|i| x[i]).collect();
            s += ln_evidence_quadrature(&xs, 0.0, 0.1, 3.0, 1.0);
        }
        terms.push(s);
    }
    let truth = log_sum_exp(&terms);
    eprintln!("enumeration × quadrature {truth}");
    let e = ais_estimate(&f, &Options::default());
    let se = e.se.unwrap();
    assert!(se < 0.05 && !e.unreliable, "se {se}: {}", e.note);
    assert!(
        (e.log_evidence - truth).abs() < 3.0 * se,
        "ais {} ± {se} vs enumeration × quadrature {truth}",
        e.log_evidence
    );
}

#[test]
fn ais_does_not_depend_on_the_thread_count() {
    let f = fit(
        "plate K = 2\nplate N from data x\npi ~ Dirichlet(1) over K\nmu[K] ~ Gaussian(0, 0.1)\n\
         z[N] ~ Categorical(pi)\nx[N] ~ Gaussian(mu[z], 1)\n",
        &[("x", 1, vec![-2.0, -1.5, 2.2, 1.8, 0.1])],
    );
    let opts = Options {
        temperatures: 50,
        chains: 16,
        seed: 3,
        ..Options::default()
    };
    let run = |threads: usize| {
        occam_core::threads::on_threads(threads, || value(&f, Method::Ais, &opts)).unwrap()
    };
    let (a, b) = (run(1), run(3));
    assert_eq!(a.log_evidence.to_bits(), b.log_evidence.to_bits());
    assert_eq!(a.se.map(f64::to_bits), b.se.map(f64::to_bits));
    let other = value(&f, Method::Ais, &Options { seed: 4, ..opts });
    assert_ne!(a.log_evidence, other.log_evidence, "the seed is used");
}

#[test]
fn ais_that_misses_the_posterior_says_so() {
    // Three separated clusters under a sparse Dirichlet(0.001) weight prior (as the VIBES
    // tutorial's): chains from the prior rarely open a second component. An estimate that is
    // not flagged must agree with importance sampling from q (reliable here: ESS ≥ 100); one that
    // does not agree must be flagged UNRELIABLE, never silently low.
    let x: Vec<f64> = (0..24)
        .map(|i| (i % 3) as f64 * 6.0 - 6.0 + 0.05 * (i as f64 - 12.0))
        .collect();
    let text = "plate K = 3\nplate N from data x\npi ~ Dirichlet(0.001) over K\n\
                mu[K] ~ Gaussian(0, 0.01)\ntau[K] ~ Gamma(1, 0.5)\nz[N] ~ Categorical(pi)\n\
                x[N] ~ Gaussian(mu[z], tau[z])\n";
    let f = fit(text, &[("x", 1, x)]);
    let opts = Options {
        temperatures: 200,
        ..Options::default()
    };
    let is = value(&f, Method::Is, &opts);
    assert!(!is.unreliable, "{}", is.note);
    let ais = value(&f, Method::Ais, &opts);
    eprintln!(
        "is {} ± {:?}; ais {} ± {:?}: {}",
        is.log_evidence, is.se, ais.log_evidence, ais.se, ais.note
    );
    let noise = 3.0 * is.se.unwrap().hypot(ais.se.unwrap());
    assert!(
        ais.unreliable || (ais.log_evidence - is.log_evidence).abs() < noise,
        "ais {} vs is {}, not flagged: {}",
        ais.log_evidence,
        is.log_evidence,
        ais.note
    );
}
