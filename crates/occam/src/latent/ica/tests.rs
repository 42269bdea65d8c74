//! Checks of the hand-derived updates: each leaves the bound stationary in its own parameters
//! (a maximiser, by central differences), and the bound never decreases.

use super::*;
use crate::latent::synth;

fn fitted(sweeps: usize) -> (Ica, Matrix) {
    let toy = synth::ica_toy(60, 2, 3, 1e-2, 3);
    let mut m = Ica::initialise(&toy.t, 3, 2, Priors::default(), 1).unwrap();
    let trace = m.run(&toy.t, sweeps, 0.0).unwrap();
    assert!(
        trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()),
        "{trace:?}"
    );
    (m, toy.t)
}

fn assert_maximum(what: &str, m: &Ica, t: &Matrix, h: f64, poke: &dyn Fn(&mut Ica, f64)) {
    crate::latent::stationary::assert_maximum(what, m, &|m: &Ica| m.bound(t), h, 1e-4, poke);
}

#[test]
fn each_update_maximises_the_bound_in_its_factor() {
    let (mut m, t) = fitted(6);
    m.update_x(&t).unwrap();
    assert_maximum("m_n", &m, &t, 1e-5, &|m, h| m.x[5 * 3 + 1] += h);
    assert_maximum("Σ_n", &m, &t, 1e-7, &|m, h| m.x_cov[5 * 9 + 4] += h);
    m.update_z();
    assert_maximum("ρ", &m, &t, 1e-5, &|m, h| {
        m.rho[(7 * 3 + 2) * 2] += h;
        m.rho[(7 * 3 + 2) * 2 + 1] -= h;
    });
    m.update_sources_prior();
    assert_maximum("g rate", &m, &t, 1e-5, &|m, h| m.g_rate[3] *= 1.0 + h);
    assert_maximum("g shape", &m, &t, 1e-5, &|m, h| m.g_shape[3] *= 1.0 + h);
    assert_maximum("π", &m, &t, 1e-4, &|m, h| m.pi_u[1] += h);
    m.update_mu(&t);
    assert_maximum("μ", &m, &t, 1e-5, &|m, h| m.mu[2] += h);
    assert_maximum("Σ_μ", &m, &t, 1e-9, &|m, h| m.mu_var += h);
    m.update_w(&t).unwrap();
    assert_maximum("W", &m, &t, 1e-5, &|m, h| m.w[4] += h);
    assert_maximum("Σ_w", &m, &t, 1e-8, &|m, h| m.w_cov[4] += h);
    m.update_alpha();
    assert_maximum("α rate", &m, &t, 1e-5, &|m, h| m.alpha_rate[1] *= 1.0 + h);
    m.update_beta(&t);
    assert_maximum("β rate", &m, &t, 1e-6, &|m, h| m.beta_rate *= 1.0 + h);
    assert_maximum("β shape", &m, &t, 1e-6, &|m, h| m.beta_shape *= 1.0 + h);
}

#[test]
fn bad_input_is_an_error() {
    let toy = synth::ica_toy(10, 2, 3, 1e-2, 3);
    assert!(Ica::initialise(&toy.t, 4, 2, Priors::default(), 0).is_err());
    assert!(Ica::initialise(&toy.t, 2, 0, Priors::default(), 0).is_err());
    let mut bad = toy.t.clone();
    bad.values[4] = f64::NAN;
    let e = Ica::initialise(&bad, 2, 2, Priors::default(), 0).unwrap_err();
    assert!(e.to_string().contains("row 2, column 2"), "{e}");
    let mut m = Ica::initialise(&toy.t, 2, 2, Priors::default(), 0).unwrap();
    let other = synth::ica_toy(12, 2, 3, 1e-2, 3);
    assert!(m.run(&other.t, 2, 0.0).is_err());
}
