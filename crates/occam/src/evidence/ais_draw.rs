//! The conjugate draws of the Gibbs transitions of annealed importance sampling (module `ais`,
//! and the prior draws of module `ais_hmc`): Gamma, Beta and Dirichlet draws kept as
//! logarithms (a Gamma(a < 1) draw as ln G(a + 1) + ln U / a, exact where G itself would
//! underflow), Gaussian draws given a precision, and categorical draws from log-probabilities.

use rand::rngs::StdRng;
use rand::Rng;
use rand_distr::{Distribution, Gamma, Normal};

use super::density::log_sum_exp;
use super::flat::Prior;

/// ln of a Gamma(shape, rate) draw, exact for shapes far below 1.
pub(crate) fn ln_gamma_draw(shape: f64, rate: f64, rng: &mut StdRng) -> f64 {
    let g = |a: f64, rng: &mut StdRng| {
        Gamma::new(a, 1.0)
            .map(|d| d.sample(rng))
            .unwrap_or(f64::NAN)
            .ln()
    };
    let ln_g = if shape >= 1.0 {
        g(shape, rng)
    } else {
        let u: f64 = rng.random::<f64>();
        g(shape + 1.0, rng) + (1.0 - u).ln() / shape
    };
    ln_g - rate.ln()
}

/// ln of the probabilities of a Dirichlet(alpha) draw.
pub(crate) fn ln_dirichlet_draw(alpha: &[f64], rng: &mut StdRng, out: &mut Vec<f64>) {
    let g: Vec<f64> = alpha.iter().map(|&a| ln_gamma_draw(a, 1.0, rng)).collect();
    let total = log_sum_exp(&g);
    out.extend(g.iter().map(|x| x - total));
}

/// A draw of one element of a parameter (its value, or the logarithms that module `ais` keeps
/// of a positive one) from the conjugate distribution given by its prior `prior` updated by the
/// statistics `a` (module `ais`, `Chain::sample_theta`);
/// `ln_tau` is the logarithm of the element's Normal–Gamma precision, if any.
pub(crate) fn draw(prior: &Prior, a: &[f64], ln_tau: f64, rng: &mut StdRng, out: &mut Vec<f64>) {
    let normal = |m0: f64, p0: f64, rng: &mut StdRng| {
        let p = p0 + a[0];
        let m = (p0 * m0 + a[1]) / p;
        Normal::new(m, p.recip().sqrt())
            .map(|d| d.sample(rng))
            .unwrap_or(f64::NAN)
    };
    match *prior {
        Prior::Gaussian { mean, precision } => out.push(normal(mean, precision, rng)),
        Prior::NormalGamma { mean, kappa, .. } => {
            // A precision below the smallest positive double is clamped there for this draw only.
            let tau = ln_tau.exp().max(f64::MIN_POSITIVE);
            out.push(normal(mean, kappa * tau, rng))
        }
        Prior::Gamma { shape, rate } => out.push(ln_gamma_draw(shape + a[0], rate + a[1], rng)),
        Prior::Beta { a: pa, b: pb } => {
            let mut two = Vec::with_capacity(2);
            ln_dirichlet_draw(&[pa + a[0], pb + a[1]], rng, &mut two);
            out.push(two[0]);
        }
        Prior::Dirichlet { alpha, width } => {
            let al: Vec<f64> = a[..width].iter().map(|c| alpha + c).collect();
            ln_dirichlet_draw(&al, rng, out);
        }
    }
}

/// ln of 1 − e^l for l ≤ 0 (accurate near both ends).
pub(crate) fn ln_one_minus_exp(l: f64) -> f64 {
    if l > -std::f64::consts::LN_2 {
        (-l.exp_m1()).ln()
    } else {
        (-l.exp()).ln_1p()
    }
}

/// A draw from the categorical distribution with log-probabilities `logit` (up to a constant).
pub(crate) fn categorical(logit: &[f64], rng: &mut impl Rng) -> usize {
    let m = logit.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = logit.iter().map(|l| (l - m).exp()).sum();
    let mut u = rng.random::<f64>() * total;
    for (c, l) in logit.iter().enumerate() {
        u -= (l - m).exp();
        if u <= 0.0 {
            return c;
        }
    }
    logit.len() - 1
}
