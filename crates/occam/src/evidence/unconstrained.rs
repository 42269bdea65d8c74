//! A recognised model's log joint density in an unconstrained parameterisation, with its
//! analytic gradient: the objective of Laplace's approximation (module `laplace`).
//!
//! Coordinates η, one block per parameter element:
//! - a Gaussian (or Normal–Gamma) mean: η = x;
//! - a Gamma value: η = ln x, Jacobian ln |dx/dη| = η;
//! - a Beta probability: η = logit p, Jacobian ln p + ln(1 − p);
//! - a Dirichlet over W categories: the additive log-ratio η_j = ln(p_j / p_W), j < W, whose
//!   inverse is p = softmax(η, 0) with Jacobian Σ_{j ≤ W} ln p_j (the density of the first W − 1
//!   entries; the last is 1 minus their sum).
//!
//! F(η) = ln p(D | θ(η)) + ln p(θ(η)) + ln |∂θ/∂η|, the mixture index summed out row by row
//! (module `density`); ∫ exp F(η) dη = p(D). The gradient is exact: per row, each component's
//! derivative weighted by its responsibility r_ik = w_k p(x_i | θ_k) / Σ_j w_j p(x_i | θ_j).

use super::density::{log_lik, log_prior, log_sum_exp, row_in_component, Theta};
use super::flat::{Flat, Lik, Prior, Slot};

/// ln p (entries of the simplex) from the additive log-ratio coordinates `eta` (W − 1 of them).
fn ln_softmax(eta: &[f64]) -> Vec<f64> {
    let mut z: Vec<f64> = eta.to_vec();
    z.push(0.0);
    let l = log_sum_exp(&z);
    z.iter().map(|v| v - l).collect()
}

/// θ(η) and ln |∂θ/∂η|.
pub(crate) fn to_theta(flat: &Flat, eta: &[f64]) -> (Theta, f64) {
    let mut at = 0;
    let mut ln_j = 0.0;
    let theta = flat
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut v = Vec::with_capacity(flat.elements(i) * p.width());
            for _ in 0..flat.elements(i) {
                match p.prior {
                    Prior::Gaussian { .. } | Prior::NormalGamma { .. } => v.push(eta[at]),
                    Prior::Gamma { .. } => {
                        ln_j += eta[at];
                        v.push(eta[at].exp());
                    }
                    Prior::Beta { .. } => {
                        let l = ln_softmax(&[eta[at]]);
                        ln_j += l[0] + l[1];
                        v.push(l[0].exp());
                    }
                    Prior::Dirichlet { width, .. } => {
                        let l = ln_softmax(&eta[at..at + width - 1]);
                        ln_j += l.iter().sum::<f64>();
                        v.extend(l.iter().map(|x| x.exp()));
                    }
                }
                at += p.free();
            }
            v
        })
        .collect();
    (theta, ln_j)
}

/// η(θ): the inverse of [`to_theta`].
pub(crate) fn to_eta(flat: &Flat, theta: &Theta) -> Vec<f64> {
    let mut eta = Vec::with_capacity(flat.dimension());
    for (i, p) in flat.params.iter().enumerate() {
        let w = p.width();
        for x in theta[i].chunks(w) {
            match p.prior {
                Prior::Gaussian { .. } | Prior::NormalGamma { .. } => eta.push(x[0]),
                Prior::Gamma { .. } => eta.push(x[0].ln()),
                Prior::Beta { .. } => eta.push(x[0].ln() - (1.0 - x[0]).ln()),
                Prior::Dirichlet { width, .. } => {
                    let last = x[width - 1].ln();
                    eta.extend(x[..width - 1].iter().map(|v| v.ln() - last));
                }
            }
        }
    }
    eta
}

/// The value a slot reads in component `k`, column `d`, and where it sits in θ.
fn slot(flat: &Flat, theta: &Theta, s: Slot, k: usize, d: usize) -> (f64, Option<(usize, usize)>) {
    match s {
        Slot::Const(c) => (c, None),
        Slot::Param(p) => {
            let at = flat.params[p].element(k, d) * flat.params[p].width();
            (theta[p][at], Some((p, at)))
        }
    }
}

/// Adds `scale` × ∂ ln f(x | θ)/∂θ of one value (component `k`, column `d`) to `g`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn d_ln_f(
    flat: &Flat,
    theta: &Theta,
    lik: &Lik,
    x: f64,
    k: usize,
    d: usize,
    scale: f64,
    g: &mut Theta,
) {
    let mut add = |at: Option<(usize, usize)>, v: f64| {
        if let Some((p, e)) = at {
            g[p][e] += scale * v;
        }
    };
    match *lik {
        Lik::Gaussian { mean, precision } => {
            let (m, am) = slot(flat, theta, mean, k, d);
            let (t, at) = slot(flat, theta, precision, k, d);
            // ln N(x; m, 1/t) = ½ ln t − ½ ln 2π − ½ t (x − m)².
            add(am, t * (x - m));
            add(at, 0.5 / t - 0.5 * (x - m) * (x - m));
        }
        Lik::Bernoulli(s) => {
            let (p, ap) = slot(flat, theta, s, k, d);
            add(ap, if x == 1.0 { 1.0 / p } else { -1.0 / (1.0 - p) });
        }
        Lik::Poisson(s) => {
            let (r, ar) = slot(flat, theta, s, k, d);
            add(ar, x / r - 1.0);
        }
        Lik::Categorical(Slot::Param(p)) => {
            let at = flat.params[p].element(k, d) * flat.params[p].width() + x as usize;
            add(Some((p, at)), 1.0 / theta[p][at]);
        }
        Lik::Categorical(Slot::Const(_)) => {}
    }
}

/// ∂[ln p(D | θ) + ln p(θ)]/∂θ, every value of θ treated as a free coordinate.
fn d_log_joint(flat: &Flat, theta: &Theta) -> Theta {
    let mut g: Theta = theta.iter().map(|v| vec![0.0; v.len()]).collect();
    // ln p(θ).
    for (i, p) in flat.params.iter().enumerate() {
        let w = p.width();
        for e in 0..flat.elements(i) {
            let x = &theta[i][e * w..(e + 1) * w];
            match p.prior {
                Prior::Gaussian { mean, precision } => g[i][e] += -precision * (x[0] - mean),
                Prior::NormalGamma { mean, kappa, tau } => {
                    // ln N(x; m, κτ): ∂x = −κτ(x − m), ∂τ = 1/(2τ) − κ(x − m)²/2.
                    let t = theta[tau][e];
                    g[i][e] += -kappa * t * (x[0] - mean);
                    g[tau][e] += 0.5 / t - 0.5 * kappa * (x[0] - mean) * (x[0] - mean);
                }
                Prior::Gamma { shape, rate } => g[i][e] += (shape - 1.0) / x[0] - rate,
                Prior::Beta { a, b } => g[i][e] += (a - 1.0) / x[0] - (b - 1.0) / (1.0 - x[0]),
                Prior::Dirichlet { alpha, .. } => {
                    for (j, v) in x.iter().enumerate() {
                        g[i][e * w + j] += (alpha - 1.0) / v;
                    }
                }
            }
        }
    }
    if flat.chain.is_some() {
        super::hmm::d_log_lik(flat, theta, &mut g);
        return g;
    }
    // ln p(D | θ): responsibilities r_ik weigh each component's derivative.
    let ln_w: Vec<f64> = match flat.weights {
        Some(w) => theta[w].iter().map(|p| p.ln()).collect(),
        None => vec![0.0],
    };
    let mut per = vec![0.0; flat.k];
    for i in 0..flat.n {
        for (k, s) in per.iter_mut().enumerate() {
            *s = ln_w[k] + row_in_component(flat, theta, i, k);
        }
        let l = log_sum_exp(&per);
        for k in 0..flat.k {
            let r = (per[k] - l).exp();
            if r == 0.0 {
                continue;
            }
            if let Some(w) = flat.weights {
                g[w][k] += r / theta[w][k];
            }
            for o in &flat.obs {
                for d in 0..o.cols {
                    let at = i * o.cols + d;
                    if o.present[at] {
                        d_ln_f(flat, theta, &o.lik, o.values[at], k, d, r, &mut g);
                    }
                }
            }
        }
    }
    g
}

/// F(η) (module doc); writes ∇F into `grad` when given.
pub(crate) fn log_joint(flat: &Flat, eta: &[f64], grad: Option<&mut [f64]>) -> f64 {
    let (theta, ln_j) = to_theta(flat, eta);
    let f = log_lik(flat, &theta) + log_prior(flat, &theta) + ln_j;
    let Some(grad) = grad else {
        return f;
    };
    let g = d_log_joint(flat, &theta);
    to_eta_gradient(flat, &theta, &g, grad, true);
    f
}

/// ∂/∂η of a function whose ∂/∂θ (every θ entry free) is `g`, into `grad`; with `jacobian`,
/// plus ∂ ln |∂θ/∂η|/∂η.
pub(crate) fn to_eta_gradient(
    flat: &Flat,
    theta: &Theta,
    g: &Theta,
    grad: &mut [f64],
    jacobian: bool,
) {
    let jac = if jacobian { 1.0 } else { 0.0 };
    let mut at = 0;
    for (i, p) in flat.params.iter().enumerate() {
        let w = p.width();
        for e in 0..flat.elements(i) {
            let x = &theta[i][e * w..(e + 1) * w];
            let gx = &g[i][e * w..(e + 1) * w];
            match p.prior {
                Prior::Gaussian { .. } | Prior::NormalGamma { .. } => grad[at] = gx[0],
                // x = e^η: dx/dη = x; the Jacobian η adds 1.
                Prior::Gamma { .. } => grad[at] = gx[0] * x[0] + jac,
                // p = σ(η): dp/dη = p(1 − p); ln p + ln(1 − p) adds 1 − 2p.
                Prior::Beta { .. } => {
                    grad[at] = gx[0] * x[0] * (1.0 - x[0]) + jac * (1.0 - 2.0 * x[0])
                }
                // p = softmax(η, 0): ∂p_j/∂η_l = p_j(δ_jl − p_l); Σ_j ln p_j adds 1 − W p_l.
                Prior::Dirichlet { width, .. } => {
                    let mean: f64 = gx.iter().zip(x).map(|(g, p)| g * p).sum();
                    for l in 0..width - 1 {
                        grad[at + l] = x[l] * (gx[l] - mean) + jac * (1.0 - width as f64 * x[l]);
                    }
                }
            }
            at += p.free();
        }
    }
}
