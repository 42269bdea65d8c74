//! The collapsed log joint of a recognised model, evaluated directly in the unconstrained
//! coordinates η of module `unconstrained` (identity for means, ln for Gamma values, logit for
//! a Beta, the additive log-ratio for a Dirichlet), split into its prior part and its likelihood
//! so that annealed importance sampling can temper one of them:
//!
//!   F_β(η) = [ln p(θ(η)) + ln |∂θ/∂η|] + β ln p(D | θ(η)),
//!
//! the mixture index summed out row by row (so F_1 is Laplace's objective, and ∫ exp F_β dη is
//! Z_β with Z_0 = 1 and Z_1 = p(D)). Every term is written in η, never through θ: ln τ = η,
//! ln p = −softplus(−η), ln p_j = η_j − ln(1 + Σ_l e^{η_l}). A draw from a vague prior
//! (Gamma(0.001, 0.001): half its mass lies below the smallest positive double) is thus a finite
//! point with a finite density, where θ itself would underflow to 0 and its density to −∞.
//!
//! Applies to the models [`super::ais_run::check`] accepts: a Gaussian's mean a Gaussian (or
//! Normal–Gamma) parameter, its precision a Gamma; Bernoulli probabilities Beta, Poisson rates
//! Gamma, categorical probabilities and mixture weights Dirichlet.

use std::f64::consts::PI;

use occam_core::special::ln_gamma;

use super::density::log_sum_exp;
use super::flat::{Flat, Lik, Prior, Slot};
use super::unconstrained::{to_eta_gradient, to_theta};

/// ln(1 + e^x), stable.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// The start of each parameter's coordinates in η, and η's length.
pub(crate) fn offsets(flat: &Flat) -> (Vec<usize>, usize) {
    let mut at = 0;
    let offs = (0..flat.params.len())
        .map(|i| {
            let o = at;
            at += flat.elements(i) * flat.params[i].free();
            o
        })
        .collect();
    (offs, at)
}

/// ln p_j of a Dirichlet element over `width` categories from its W − 1 coordinates.
fn ln_simplex(eta: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.extend_from_slice(eta);
    out.push(0.0);
    let l = log_sum_exp(out);
    out.iter_mut().for_each(|v| *v -= l);
}

/// The model's layout, precomputed for repeated evaluation.
pub(crate) struct Collapsed<'a> {
    flat: &'a Flat,
    offs: Vec<usize>,
    /// Coordinates.
    pub dim: usize,
}

/// ln p(D | θ(η)) and ∂/∂η of it.
struct LikParts {
    value: f64,
    grad: Vec<f64>,
}

impl<'a> Collapsed<'a> {
    /// The layout of `flat`.
    pub fn new(flat: &'a Flat) -> Collapsed<'a> {
        let (offs, dim) = offsets(flat);
        Collapsed { flat, offs, dim }
    }

    /// The recognised model.
    pub fn flat(&self) -> &'a Flat {
        self.flat
    }

    /// The coordinate of element `e` of parameter `p` (its first, for a Dirichlet).
    pub fn coord(&self, p: usize, e: usize) -> usize {
        self.offs[p] + e * self.flat.params[p].free()
    }

    /// The prior part ln p(θ(η)) + ln |∂θ/∂η|, adding its gradient to `grad` when given.
    pub fn log_prior(&self, eta: &[f64], mut grad: Option<&mut [f64]>) -> f64 {
        let flat = self.flat;
        let mut s = 0.0;
        let mut lp = Vec::new();
        for (i, p) in flat.params.iter().enumerate() {
            for e in 0..flat.elements(i) {
                let j = self.coord(i, e);
                let v = eta[j];
                match p.prior {
                    Prior::Gaussian { mean, precision } => {
                        s += 0.5 * (precision / (2.0 * PI)).ln()
                            - 0.5 * precision * (v - mean) * (v - mean);
                        if let Some(g) = grad.as_deref_mut() {
                            g[j] += -precision * (v - mean);
                        }
                    }
                    Prior::NormalGamma { mean, kappa, tau } => {
                        // ln N(v; m, κτ) with ln τ = η_τ.
                        let jt = self.coord(tau, e);
                        let t = eta[jt].exp();
                        let r2 = (v - mean) * (v - mean);
                        s += 0.5 * ((kappa / (2.0 * PI)).ln() + eta[jt]) - 0.5 * kappa * t * r2;
                        if let Some(g) = grad.as_deref_mut() {
                            g[j] += -kappa * t * (v - mean);
                            g[jt] += 0.5 - 0.5 * kappa * t * r2;
                        }
                    }
                    Prior::Gamma { shape, rate } => {
                        // Gamma(e^η; a, b) e^η.
                        s += shape * rate.ln() - ln_gamma(shape) + shape * v - rate * v.exp();
                        if let Some(g) = grad.as_deref_mut() {
                            g[j] += shape - rate * v.exp();
                        }
                    }
                    Prior::Beta { a, b } => {
                        // Beta(p; a, b) p (1 − p), p = σ(η).
                        let (ln_p, ln_q) = (-softplus(-v), -softplus(v));
                        s += ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * ln_p + b * ln_q;
                        if let Some(g) = grad.as_deref_mut() {
                            let pr = ln_p.exp();
                            g[j] += a * (1.0 - pr) - b * pr;
                        }
                    }
                    Prior::Dirichlet { alpha, width } => {
                        // Dir(p; α) Π_j p_j.
                        ln_simplex(&eta[j..j + width - 1], &mut lp);
                        s += ln_gamma(width as f64 * alpha) - width as f64 * ln_gamma(alpha)
                            + alpha * lp.iter().sum::<f64>();
                        if let Some(g) = grad.as_deref_mut() {
                            for l in 0..width - 1 {
                                g[j + l] += alpha * (1.0 - width as f64 * lp[l].exp());
                            }
                        }
                    }
                }
            }
        }
        s
    }

    /// ln p(D | θ(η)), the mixture index summed out; its gradient when `grad`.
    fn log_lik_parts(&self, eta: &[f64], grad: bool) -> LikParts {
        let flat = self.flat;
        if flat.chain.is_some() {
            return self.chain_parts(eta, grad);
        }
        let k = flat.k;
        let mut lw = Vec::new();
        match flat.weights {
            Some(w) => ln_simplex(&eta[self.offs[w]..self.offs[w] + k - 1], &mut lw),
            None => lw.push(0.0),
        }
        let mut g = if grad {
            vec![0.0; self.dim]
        } else {
            Vec::new()
        };
        let mut per = vec![0.0; k];
        let mut total = 0.0;
        let mut lp = Vec::new();
        for i in 0..flat.n {
            for (c, s) in per.iter_mut().enumerate() {
                *s = lw[c] + self.row(eta, i, c, None, 0.0, &mut lp);
            }
            let row_total = log_sum_exp(&per);
            total += row_total;
            if !grad {
                continue;
            }
            for (c, pc) in per.iter().enumerate() {
                let r = (pc - row_total).exp();
                if r == 0.0 || !r.is_finite() {
                    continue;
                }
                self.row(eta, i, c, Some(&mut g), r, &mut lp);
            }
            if let Some(w) = flat.weights {
                // Σ_c r_ic ∂ ln w_c/∂η_l = r_il − w_l.
                let o = self.offs[w];
                for l in 0..k - 1 {
                    g[o + l] += (per[l] - row_total).exp() - lw[l].exp();
                }
            }
        }
        LikParts {
            value: total,
            grad: g,
        }
    }

    /// ln p(row i | component c, θ(η)); adds `r` × its gradient to `g` when given.
    fn row(
        &self,
        eta: &[f64],
        i: usize,
        c: usize,
        mut g: Option<&mut Vec<f64>>,
        r: f64,
        lp: &mut Vec<f64>,
    ) -> f64 {
        let flat = self.flat;
        let mut s = 0.0;
        // (value, coordinate) of a slot: the element's coordinate, or none for a constant.
        let at = |slot: Slot, d: usize| match slot {
            Slot::Const(x) => (x, None),
            Slot::Param(p) => {
                let j = self.coord(p, flat.params[p].element(c, d));
                (eta[j], Some(j))
            }
        };
        for o in &flat.obs {
            for d in 0..o.cols {
                let idx = i * o.cols + d;
                if !o.present[idx] {
                    continue;
                }
                let x = o.values[idx];
                match o.lik {
                    Lik::Gaussian { mean, precision } => {
                        let (m, jm) = at(mean, d);
                        // A constant precision is the value; a parameter's coordinate is ln τ.
                        let (lt, jt) = match precision {
                            Slot::Const(t) => (t.ln(), None),
                            Slot::Param(_) => at(precision, d),
                        };
                        let t = lt.exp();
                        let r2 = (x - m) * (x - m);
                        s += 0.5 * (lt - (2.0 * PI).ln()) - 0.5 * t * r2;
                        if let Some(g) = g.as_deref_mut() {
                            if let Some(j) = jm {
                                g[j] += r * t * (x - m);
                            }
                            if let Some(j) = jt {
                                g[j] += r * (0.5 - 0.5 * t * r2);
                            }
                        }
                    }
                    Lik::Bernoulli(slot) => {
                        let (v, j) = at(slot, d);
                        let (lp1, lp0) = match j {
                            Some(_) => (-softplus(-v), -softplus(v)),
                            None => (v.ln(), (-v).ln_1p()),
                        };
                        s += if x == 1.0 { lp1 } else { lp0 };
                        if let (Some(g), Some(j)) = (g.as_deref_mut(), j) {
                            let p = lp1.exp();
                            g[j] += r * if x == 1.0 { 1.0 - p } else { -p };
                        }
                    }
                    Lik::Poisson(slot) => {
                        let (v, j) = at(slot, d);
                        let ln_r = if j.is_some() { v } else { v.ln() };
                        s += x * ln_r - ln_r.exp() - ln_gamma(x + 1.0);
                        if let (Some(g), Some(j)) = (g.as_deref_mut(), j) {
                            g[j] += r * (x - ln_r.exp());
                        }
                    }
                    Lik::Categorical(Slot::Param(p)) => {
                        let width = flat.params[p].width();
                        let j = self.coord(p, flat.params[p].element(c, d));
                        ln_simplex(&eta[j..j + width - 1], lp);
                        let xi = x as usize;
                        s += lp[xi];
                        if let Some(g) = g.as_deref_mut() {
                            for l in 0..width - 1 {
                                let delta = if l == xi { 1.0 } else { 0.0 };
                                g[j + l] += r * (delta - lp[l].exp());
                            }
                        }
                    }
                    Lik::Categorical(Slot::Const(_)) => s += f64::NAN,
                }
            }
        }
        s
    }

    /// [`Self::log_lik_parts`] of a hidden Markov chain (module `hmm`), through θ(η): its
    /// states are summed out by the forward algorithm, its gradient by forward–backward.
    fn chain_parts(&self, eta: &[f64], grad: bool) -> LikParts {
        let (theta, _) = to_theta(self.flat, eta);
        if !grad {
            return LikParts {
                value: super::hmm::log_lik(self.flat, &theta),
                grad: Vec::new(),
            };
        }
        let mut g: Vec<Vec<f64>> = theta.iter().map(|v| vec![0.0; v.len()]).collect();
        let value = super::hmm::d_log_lik(self.flat, &theta, &mut g);
        let mut out = vec![0.0; self.dim];
        to_eta_gradient(self.flat, &theta, &g, &mut out, false);
        LikParts { value, grad: out }
    }

    /// ln p(D | θ(η)).
    pub fn log_lik(&self, eta: &[f64]) -> f64 {
        self.log_lik_parts(eta, false).value
    }

    /// F_β(η) and its gradient (written into `grad`), and ln p(D | θ(η)).
    pub fn tempered(&self, eta: &[f64], beta: f64, grad: &mut [f64]) -> (f64, f64) {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let lik = self.log_lik_parts(eta, true);
        let prior = self.log_prior(eta, Some(grad));
        for (g, l) in grad.iter_mut().zip(&lik.grad) {
            *g += beta * l;
        }
        (prior + beta * lik.value, lik.value)
    }
}
