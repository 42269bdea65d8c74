//! Densities of a recognised model at a parameter value θ: ln p(θ) under the priors and
//! ln p(D | θ) with the mixture index (or a chain's states, module `hmm`) summed out, for importance sampling and BIC.

use std::f64::consts::PI;

use occam_core::special::ln_gamma;

use super::flat::{Flat, Lik, Prior, Slot};

/// A parameter value: per parameter, its elements (each `width` values) in a row.
pub(crate) type Theta = Vec<Vec<f64>>;

/// ln N(x; m, 1/t).
pub(crate) fn ln_normal(x: f64, m: f64, t: f64) -> f64 {
    0.5 * (t / (2.0 * PI)).ln() - 0.5 * t * (x - m) * (x - m)
}

/// ln Gamma(x; a, b) (shape, rate).
pub(crate) fn ln_gamma_pdf(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return f64::NEG_INFINITY;
    }
    a * b.ln() - ln_gamma(a) + (a - 1.0) * x.ln() - b * x
}

/// ln Dir(p; alpha) over p's entries (a Beta when there are two).
pub(crate) fn ln_dirichlet(p: &[f64], alpha: &[f64]) -> f64 {
    let a0: f64 = alpha.iter().sum();
    let mut s = ln_gamma(a0);
    for (x, a) in p.iter().zip(alpha) {
        if *x <= 0.0 {
            return f64::NEG_INFINITY;
        }
        s += (a - 1.0) * x.ln() - ln_gamma(*a);
    }
    s
}

/// ln p(θ) under the priors.
pub(crate) fn log_prior(flat: &Flat, theta: &Theta) -> f64 {
    let mut s = 0.0;
    for (i, p) in flat.params.iter().enumerate() {
        let w = p.width();
        for (e, x) in theta[i].chunks(w).enumerate() {
            s += match p.prior {
                Prior::Gaussian { mean, precision } => ln_normal(x[0], mean, precision),
                Prior::NormalGamma { mean, kappa, tau } => {
                    ln_normal(x[0], mean, kappa * theta[tau][e])
                }
                Prior::Gamma { shape, rate } => ln_gamma_pdf(x[0], shape, rate),
                Prior::Beta { a, b } => ln_dirichlet(&[x[0], 1.0 - x[0]], &[a, b]),
                Prior::Dirichlet { alpha, width } => ln_dirichlet(x, &vec![alpha; width]),
            };
        }
    }
    s
}

fn value(flat: &Flat, theta: &Theta, s: Slot, k: usize, d: usize) -> f64 {
    match s {
        Slot::Const(c) => c,
        Slot::Param(p) => theta[p][flat.params[p].element(k, d) * flat.params[p].width()],
    }
}

/// ln f(x | θ) of one value of an observation in component `k`, column `d`.
pub(crate) fn ln_f(flat: &Flat, theta: &Theta, lik: &Lik, x: f64, k: usize, d: usize) -> f64 {
    match *lik {
        Lik::Gaussian { mean, precision } => ln_normal(
            x,
            value(flat, theta, mean, k, d),
            value(flat, theta, precision, k, d),
        ),
        Lik::Bernoulli(p) => {
            let p = value(flat, theta, p, k, d);
            if x == 1.0 {
                p.ln()
            } else {
                (1.0 - p).ln()
            }
        }
        Lik::Poisson(r) => {
            let r = value(flat, theta, r, k, d);
            x * r.ln() - r - ln_gamma(x + 1.0)
        }
        Lik::Categorical(Slot::Param(p)) => {
            let q = &flat.params[p];
            let at = q.element(k, d) * q.width();
            theta[p][at + x as usize].ln()
        }
        Lik::Categorical(Slot::Const(_)) => f64::NAN,
    }
}

/// ln p(D | θ), the mixture index summed out row by row: Σ_i ln Σ_k w_k Π f(x_i | θ_k), each
/// factor as [`row_in_component`] gives it, from the per-component constants of [`Prepared`]
/// (the same operations in the same order, so the same bits, with the logarithms of θ taken
/// once per component instead of once per row).
pub(crate) fn log_lik(flat: &Flat, theta: &Theta) -> f64 {
    if flat.chain.is_some() {
        return super::hmm::log_lik(flat, theta);
    }
    let ln_w: Vec<f64> = match flat.weights {
        Some(w) => theta[w].iter().map(|p| p.ln()).collect(),
        None => vec![0.0],
    };
    let prep = Prepared::new(flat, theta);
    let mut total = 0.0;
    let mut per = vec![0.0; flat.k];
    for i in 0..flat.n {
        for (k, slot) in per.iter_mut().enumerate() {
            *slot = ln_w[k] + prep.row_in_component(flat, i, k);
        }
        total += log_sum_exp(&per);
    }
    total
}

/// ln f(x | θ) of one observation's value in one component and column, with what does not
/// depend on x evaluated once: each arm computes [`ln_f`]'s expression with the same operations
/// in the same order.
#[derive(Clone, Copy, Debug)]
enum Term {
    /// ln N(x; m, 1/t) = c − (h (x − m)) (x − m), c = ½ ln(t / 2π), h = ½ t.
    Gaussian { c: f64, h: f64, m: f64 },
    /// ln p and ln(1 − p).
    Bernoulli { ln_p: f64, ln_q: f64 },
    /// x ln r − r − ln Γ(x + 1).
    Poisson { ln_r: f64, r: f64 },
    /// The offset of the element's probabilities in [`Prepared::ln_probs`].
    Categorical(usize),
    /// A categorical observation with constant probabilities (not recognised: NaN, as `ln_f`).
    Nan,
}

/// The [`Term`] of every (observation, component, column) at one θ.
struct Prepared {
    /// Per observation, its terms component-major (`k * cols + d`).
    terms: Vec<Vec<Term>>,
    /// ln of the categorical probabilities the terms point into.
    ln_probs: Vec<f64>,
}

impl Prepared {
    /// The terms at θ.
    fn new(flat: &Flat, theta: &Theta) -> Prepared {
        let mut ln_probs = Vec::new();
        let terms = flat
            .obs
            .iter()
            .map(|o| {
                let mut row = Vec::with_capacity(flat.k * o.cols);
                for k in 0..flat.k {
                    for d in 0..o.cols {
                        row.push(match o.lik {
                            Lik::Gaussian { mean, precision } => {
                                let t = value(flat, theta, precision, k, d);
                                Term::Gaussian {
                                    c: 0.5 * (t / (2.0 * PI)).ln(),
                                    h: 0.5 * t,
                                    m: value(flat, theta, mean, k, d),
                                }
                            }
                            Lik::Bernoulli(p) => {
                                let p = value(flat, theta, p, k, d);
                                Term::Bernoulli {
                                    ln_p: p.ln(),
                                    ln_q: (1.0 - p).ln(),
                                }
                            }
                            Lik::Poisson(r) => {
                                let r = value(flat, theta, r, k, d);
                                Term::Poisson { ln_r: r.ln(), r }
                            }
                            Lik::Categorical(Slot::Param(p)) => {
                                let q = &flat.params[p];
                                let at = q.element(k, d) * q.width();
                                let off = ln_probs.len();
                                ln_probs
                                    .extend(theta[p][at..at + q.width()].iter().map(|v| v.ln()));
                                Term::Categorical(off)
                            }
                            Lik::Categorical(Slot::Const(_)) => Term::Nan,
                        });
                    }
                }
                row
            })
            .collect();
        Prepared { terms, ln_probs }
    }

    /// [`row_in_component`] from the prepared terms.
    fn row_in_component(&self, flat: &Flat, i: usize, k: usize) -> f64 {
        let mut s = 0.0;
        for (o, terms) in flat.obs.iter().zip(&self.terms) {
            let terms = &terms[k * o.cols..(k + 1) * o.cols];
            for (d, term) in terms.iter().enumerate() {
                let at = i * o.cols + d;
                if o.present[at] {
                    let x = o.values[at];
                    s += match *term {
                        Term::Gaussian { c, h, m } => c - h * (x - m) * (x - m),
                        Term::Bernoulli { ln_p, ln_q } => {
                            if x == 1.0 {
                                ln_p
                            } else {
                                ln_q
                            }
                        }
                        Term::Poisson { ln_r, r } => x * ln_r - r - ln_gamma(x + 1.0),
                        Term::Categorical(off) => self.ln_probs[off + x as usize],
                        Term::Nan => f64::NAN,
                    };
                }
            }
        }
        s
    }
}

/// ln p(row i | component k, θ): every present value of the row.
pub(crate) fn row_in_component(flat: &Flat, theta: &Theta, i: usize, k: usize) -> f64 {
    let mut s = 0.0;
    for o in &flat.obs {
        for d in 0..o.cols {
            let at = i * o.cols + d;
            if o.present[at] {
                s += ln_f(flat, theta, &o.lik, o.values[at], k, d);
            }
        }
    }
    s
}

/// ln Σ exp(x): the core's ([`occam_core::special::log_sum_exp`]).
pub(crate) use occam_core::special::log_sum_exp;
