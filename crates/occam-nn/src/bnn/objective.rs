//! The variational lower bound 𝓛 for a Bayesian MLP with q(w, α, β) = q_w(w) Π_j q(α_j) q(β), q_w a
//! mixture of M diagonal Gaussians (M = 1: one diagonal Gaussian), and its gradient in the Gaussian
//! parameters.
//!
//! ```text
//! 𝓛 = −⟨β⟩ Σ_m Q_m ⟨E_D⟩_m + (N/2)(⟨ln β⟩ − ln 2π) + ⟨ln p(β)⟩ + H(q_β)
//!   + Σ_k [½⟨ln α_k⟩ − ½ ln 2π − ½⟨α_k⟩ Σ_m Q_m (w̄²_mk + s_mk)] + Σ_j [⟨ln p(α_j)⟩ + H(q(α_j))]
//!   + Σ_m Q_m H(q_m) + 𝓘
//! ```
//!
//! (committee paper (28)/(29) and thesis (5.32)–(5.34) with the likelihood term −⟨β⟩⟨E_D⟩: the
//! printed (30)/(5.33) halve E_D twice; ⟨wᵀw⟩ = tr Σ + w̄ᵀw̄, the printed (B.5) has a stray ½).
//!
//! ⟨E_D⟩_m = ½ Σ_n [(⟨f_n⟩ − t_n)² + Var f_n] (C.22)/(B.6), with, for a diagonal component,
//! ⟨f⟩ = Σ_h v̄_h ⟨g_h⟩ + v̄_0 (C.32)/(B.16) and
//! Var f = Σ_h [v̄_h² (⟨g_h²⟩ − ⟨g_h⟩²) + σ²_{v_h} ⟨g_h²⟩] + σ²_{v_0} (C.33)/(B.17), the output bias
//! adding its own mean and variance.

use super::entropy::{entropy_bound, EntropyTerms, Layout};
use super::moments::{unit_moments, G2Form, UnitMoments};
use super::network::Architecture;
use super::prior::{Gamma, Prior};
use occam_core::special::LN_2PI;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Var g = ⟨g²⟩ − ⟨g⟩², floored at 0. Only the c = 1.24 approximation of ⟨g²⟩ can fall below ⟨g⟩²
/// (by up to ~0.005, where the approximation undershoots g²); multiplied by a large v̄_h² that makes
/// Var f and even ⟨E_D⟩ negative, and an optimiser finds and exploits it (seen on sunspots: ⟨E_D⟩ < 0
/// after 500 iterations). The floor removes the exploit; with the exact form it never binds.
fn excess(u: UnitMoments) -> f64 {
    (u.g2 - u.g1 * u.g1).max(0.0)
}

/// A data set bound to a network: inputs row-major N × I, targets N.
#[derive(Clone, Copy, Debug)]
pub struct Problem<'a> {
    /// The network shape.
    pub arch: Architecture,
    /// Inputs.
    pub x: &'a [f64],
    /// Targets.
    pub t: &'a [f64],
    /// How ⟨g²⟩ is computed.
    pub form: G2Form,
}

/// The hyper-posteriors q(α_j) and q(β).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hyper {
    /// q(α_j), one per prior hyper-parameter.
    pub alpha: Vec<Gamma>,
    /// q(β).
    pub beta: Gamma,
}

/// The bound's terms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundTerms {
    /// ⟨ln p(D | w, β)⟩.
    pub likelihood: f64,
    /// ⟨ln p(w | α)⟩ + Σ_j [⟨ln p(α_j)⟩ + H(q(α_j))].
    pub prior: f64,
    /// ⟨ln p(β)⟩ + H(q(β)).
    pub noise_prior: f64,
    /// Σ_m Q_m H(q_m).
    pub component_entropy: f64,
    /// The mutual-information bound 𝓘 (0 for M = 1).
    pub mutual_information: f64,
    /// The sum: the lower bound on ln p(D).
    pub total: f64,
}

/// Per-point moments of the output under one component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OutputMoments {
    /// ⟨f⟩.
    pub mean: f64,
    /// ⟨f²⟩ − ⟨f⟩².
    pub var: f64,
}

impl Problem<'_> {
    /// Number of data points.
    pub fn n(&self) -> usize {
        self.t.len()
    }

    fn row(&self, n: usize) -> &[f64] {
        &self.x[n * self.arch.inputs..(n + 1) * self.arch.inputs]
    }

    /// ⟨E_D⟩ under component `m` of θ; adds `scale · ∂⟨E_D⟩/∂θ` into `grad` when given.
    pub fn expected_error(
        &self,
        theta: &[f64],
        lay: Layout,
        m: usize,
        grad: Option<(&mut [f64], f64)>,
    ) -> f64 {
        let block = lay.mean(m)..lay.mean(m) + 2 * lay.k;
        self.expected_error_block(theta, lay, m, grad.map(|(g, c)| (&mut g[block], c)))
    }

    /// [`Problem::expected_error`] with the gradient written into component `m`'s own block
    /// (w̄_m then ln s_m, 2K entries), so that components can be evaluated on separate threads.
    fn expected_error_block(
        &self,
        theta: &[f64],
        lay: Layout,
        m: usize,
        mut grad: Option<(&mut [f64], f64)>,
    ) -> f64 {
        let a = self.arch;
        let (i_n, h_n, fan) = (a.inputs, a.hidden, a.fan_in());
        let wm = &theta[lay.mean(m)..lay.mean(m) + lay.k];
        let s: Vec<f64> = theta[lay.log_var(m)..lay.log_var(m) + lay.k]
            .iter()
            .map(|v| v.exp())
            .collect();
        let mut um = vec![UnitMoments::default(); h_n];
        let mut e = 0.0;
        for n in 0..self.n() {
            let x = self.row(n);
            let (mut f, mut var) = (wm[a.v(h_n)], s[a.v(h_n)]);
            for (h, u) in um.iter_mut().enumerate() {
                let b = a.u(h, 0);
                let mut mu = wm[b + i_n];
                let mut sig = s[b + i_n];
                for i in 0..i_n {
                    mu += wm[b + i] * x[i];
                    sig += s[b + i] * x[i] * x[i];
                }
                *u = unit_moments(mu, sig, self.form);
                let (v, sv) = (wm[a.v(h)], s[a.v(h)]);
                f += v * u.g1;
                var += v * v * excess(*u) + sv * u.g2;
            }
            let r = f - self.t[n];
            e += 0.5 * (r * r + var);
            if let Some((gr, c)) = grad.as_mut() {
                let c = *c;
                let (om, ol) = (0, lay.k);
                gr[om + a.v(h_n)] += c * r;
                gr[ol + a.v(h_n)] += c * 0.5 * s[a.v(h_n)];
                for (h, u) in um.iter().enumerate() {
                    let (v, sv) = (wm[a.v(h)], s[a.v(h)]);
                    let on = if excess(*u) > 0.0 { 1.0 } else { 0.0 };
                    gr[om + a.v(h)] += c * (r * u.g1 + v * excess(*u));
                    gr[ol + a.v(h)] += c * 0.5 * u.g2 * sv;
                    let d1 = v * (r - on * v * u.g1);
                    let d2 = 0.5 * (on * v * v + sv);
                    let dmu = c * (d1 * u.g1_mu + d2 * u.g2_mu);
                    let dsig = c * (d1 * u.g1_var + d2 * u.g2_var);
                    let b = a.u(h, 0);
                    for i in 0..fan {
                        let xi = if i < i_n { x[i] } else { 1.0 };
                        gr[om + b + i] += dmu * xi;
                        gr[ol + b + i] += dsig * xi * xi * s[b + i];
                    }
                }
            }
        }
        e
    }

    /// ⟨f(x)⟩ and Var f(x) under component `m`, for each row of `x`.
    pub fn output_moments(
        &self,
        theta: &[f64],
        lay: Layout,
        m: usize,
        x: &[f64],
    ) -> Vec<OutputMoments> {
        let a = self.arch;
        let wm = &theta[lay.mean(m)..lay.mean(m) + lay.k];
        let s: Vec<f64> = theta[lay.log_var(m)..lay.log_var(m) + lay.k]
            .iter()
            .map(|v| v.exp())
            .collect();
        x.chunks_exact(a.inputs)
            .map(|row| {
                let (mut f, mut var) = (wm[a.v(a.hidden)], s[a.v(a.hidden)]);
                for h in 0..a.hidden {
                    let b = a.u(h, 0);
                    let mu = a.preactivation(wm, h, row);
                    let sig = s[b + a.inputs]
                        + (0..a.inputs)
                            .map(|i| s[b + i] * row[i] * row[i])
                            .sum::<f64>();
                    let u = unit_moments(mu, sig, self.form);
                    let (v, sv) = (wm[a.v(h)], s[a.v(h)]);
                    f += v * u.g1;
                    var += v * v * excess(u) + sv * u.g2;
                }
                OutputMoments { mean: f, var }
            })
            .collect()
    }
}

/// Σ_m Q_m ⟨w_k²⟩_m = Σ_m Q_m (w̄²_mk + s_mk) for every weight k.
pub fn weight_second_moments(theta: &[f64], lay: Layout, q: &[f64]) -> Vec<f64> {
    let mut w2 = vec![0.0; lay.k];
    for (m, qm) in q.iter().enumerate() {
        for (i, w) in w2.iter_mut().enumerate() {
            let mu = theta[lay.mean(m) + i];
            *w += qm * (mu * mu + theta[lay.log_var(m) + i].exp());
        }
    }
    w2
}

/// The part of 𝓛 that depends on θ, for fixed ⟨α_k⟩ (per weight) and ⟨β⟩; adds ∂/∂θ into `grad`.
/// Returns (value, Σ_m Q_m ⟨E_D⟩_m, entropy terms).
pub fn weight_objective(
    p: &Problem<'_>,
    theta: &[f64],
    lay: Layout,
    q: &[f64],
    prec: &[f64],
    beta: f64,
    mut grad: Option<&mut [f64]>,
) -> (f64, f64, EntropyTerms) {
    // The components' ⟨E_D⟩ (the bulk of the cost) run in parallel, each writing its gradient into
    // its own block; they are summed in component order, so the result has the same bits on any
    // number of threads.
    let per: Vec<f64> = match grad.as_deref_mut() {
        Some(g) => g[..2 * lay.k * lay.m]
            .par_chunks_mut(2 * lay.k)
            .zip(q.par_iter())
            .enumerate()
            .map(|(m, (gm, &qm))| p.expected_error_block(theta, lay, m, Some((gm, -beta * qm))))
            .collect(),
        None => (0..lay.m)
            .into_par_iter()
            .map(|m| p.expected_error_block(theta, lay, m, None))
            .collect(),
    };
    let mut ed = 0.0;
    for (e, &qm) in per.iter().zip(q) {
        ed += qm * e;
    }
    let mut pr = 0.0;
    for (m, &qm) in q.iter().enumerate() {
        for (i, &a) in prec.iter().enumerate() {
            let mu = theta[lay.mean(m) + i];
            let s = theta[lay.log_var(m) + i].exp();
            pr -= 0.5 * qm * a * (mu * mu + s);
            if let Some(g) = grad.as_deref_mut() {
                g[lay.mean(m) + i] -= qm * a * mu;
                g[lay.log_var(m) + i] -= 0.5 * qm * a * s;
            }
        }
    }
    let ent = entropy_bound(theta, lay, q, grad);
    (-beta * ed + pr + ent.total(), ed, ent)
}

/// The full bound with its breakdown.
pub fn bound(
    p: &Problem<'_>,
    theta: &[f64],
    lay: Layout,
    q: &[f64],
    prior: &Prior,
    hyper: &Hyper,
    noise_prior: &Gamma,
) -> BoundTerms {
    let ed: f64 = q
        .iter()
        .enumerate()
        .map(|(m, qm)| qm * p.expected_error(theta, lay, m, None))
        .sum();
    let n = p.n() as f64;
    let likelihood = -hyper.beta.mean() * ed + 0.5 * n * (hyper.beta.mean_ln() - LN_2PI);
    let w2 = weight_second_moments(theta, lay, q);
    let prior_t = prior.bound_terms(&hyper.alpha, &w2);
    let noise = noise_prior.expected_ln_pdf(&hyper.beta) + hyper.beta.entropy();
    let ent = entropy_bound(theta, lay, q, None);
    BoundTerms {
        likelihood,
        prior: prior_t,
        noise_prior: noise,
        component_entropy: ent.components,
        mutual_information: ent.mutual_information,
        total: likelihood + prior_t + noise + ent.total(),
    }
}

/// The closed-form hyper-parameter updates: every q(α_j) in turn, then q(β) =
/// gam(a_β + N/2, b_β + Σ_m Q_m ⟨E_D⟩_m) (committee paper (33)–(38) and thesis (5.35)–(5.47) with the
/// sums over components weighted by Q_m and without the printed extra ½ on ⟨E_D⟩ in (5.38)).
pub fn update_hyper(
    p: &Problem<'_>,
    theta: &[f64],
    lay: Layout,
    q: &[f64],
    prior: &Prior,
    hyper: &mut Hyper,
    noise_prior: &Gamma,
) {
    let w2 = weight_second_moments(theta, lay, q);
    prior.update(&mut hyper.alpha, &w2);
    let ed: f64 = q
        .iter()
        .enumerate()
        .map(|(m, qm)| qm * p.expected_error(theta, lay, m, None))
        .sum();
    hyper.beta = Gamma {
        a: noise_prior.a + 0.5 * p.n() as f64,
        b: noise_prior.b + ed,
    };
}

#[cfg(test)]
mod tests;
