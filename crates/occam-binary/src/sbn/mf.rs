//! Mean-field theory for SBNs with Saul's ξ bound (Saul, Jaakkola & Jordan 1996; Lawrence §2.2).
//!
//! q(h) = Π_i μ_i^{h_i}(1−μ_i)^{1−h_i} (Lawrence (2.10)); visible μ are clamped to the data.
//! ⟨ln(1+e^{z_i})⟩ ≤ ξ_i⟨z_i⟩ + ln(A_i + B_i) (Lawrence (2.12), (A.2)) with
//! A_i = ⟨e^{−ξ_i z_i}⟩ = e^{−ξ_i b_i} Π_j (1−μ_j+μ_j e^{−ξ_i w_ij}) and
//! B_i = ⟨e^{(1−ξ_i) z_i}⟩ = e^{(1−ξ_i) b_i} Π_j (1−μ_j+μ_j e^{(1−ξ_i) w_ij}) (A.5)–(A.7).
//! Bound (2.13)–(2.15): L = Σ_i [μ_i⟨z_i⟩ − ξ_i⟨z_i⟩ − ln(A_i+B_i)] + Σ_{i∈H} H(μ_i).
//! A and B are kept in log form.

use super::error::Result;
use super::math::{clamp_mu, entropy01, logaddexp, logit, sigmoid};
use super::model::{Evidence, Sbn};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Saul ξ-bound state for one factorised q: means of all units and one ξ per unit.
#[derive(Debug, Clone, PartialEq)]
pub struct MfState {
    /// μ_i = q(x_i = 1); observed units hold their value.
    pub mu: Vec<f64>,
    /// ξ_i of Saul's bound, one per unit.
    pub xi: Vec<f64>,
}

/// How the hidden means start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MfInit {
    /// μ = 0.5 everywhere.
    Half,
    /// μ ~ U(0,1) from the seed (Lawrence §2.5).
    Uniform(u64),
}

/// Options of the mean-field fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MfOptions {
    /// Initial hidden means.
    pub init: MfInit,
    /// Maximum number of (ξ, μ) sweeps.
    pub max_sweeps: usize,
    /// Stop when a sweep raises the bound by less than this.
    pub tol: f64,
}

impl Default for MfOptions {
    fn default() -> Self {
        MfOptions {
            init: MfInit::Half,
            max_sweeps: 500,
            tol: 1e-10,
        }
    }
}

/// A fitted mean-field approximation.
#[derive(Debug, Clone, PartialEq)]
pub struct MfFit {
    /// Variational parameters at the end.
    pub state: MfState,
    /// The lower bound on ln P(v).
    pub bound: f64,
    /// Bound after each sweep (non-decreasing).
    pub trace: Vec<f64>,
    /// True if the tolerance was reached.
    pub converged: bool,
}

/// ln A_i and ln B_i of Saul's bound, Lawrence (A.5)–(A.7).
#[inline]
pub fn log_ab(sbn: &Sbn, i: usize, mu: &[f64], xi: f64) -> (f64, f64) {
    let b = sbn.bias()[i];
    let w = sbn.weights();
    let mut la = -xi * b;
    let mut lb = (1.0 - xi) * b;
    for e in sbn.parent_edges(i) {
        let m = mu[sbn.edge_parent(e)];
        la += (1.0 - m + m * (-xi * w[e]).exp()).ln();
        lb += (1.0 - m + m * ((1.0 - xi) * w[e]).exp()).ln();
    }
    (la, lb)
}

/// Per-unit term μ_i⟨z_i⟩ − ξ_i⟨z_i⟩ − ln(A_i+B_i) of (2.13).
#[inline]
pub fn unit_term(sbn: &Sbn, i: usize, mu: &[f64], xi: f64) -> f64 {
    let z = sbn.field(i, mu);
    let (la, lb) = log_ab(sbn, i, mu, xi);
    (mu[i] - xi) * z - logaddexp(la, lb)
}

/// The mean-field lower bound (2.13)–(2.15) at (μ, ξ).
pub fn bound(sbn: &Sbn, ev: &Evidence, st: &MfState) -> f64 {
    let mut l = 0.0;
    for i in 0..sbn.n_units() {
        l += unit_term(sbn, i, &st.mu, st.xi[i]);
    }
    for &h in ev.hidden() {
        l += entropy01(st.mu[h]);
    }
    l
}

/// Minimises the convex f(ξ) = ξ⟨z_i⟩ + ln(A_i(ξ)+B_i(ξ)) by bisection on f' (Lawrence §2.2:
/// "there is no fixed point"; a 1-D minimisation per node). Returns the minimiser.
pub fn optimise_xi(sbn: &Sbn, i: usize, mu: &[f64]) -> f64 {
    let w = sbn.weights();
    let b = sbn.bias()[i];
    let z = sbn.field(i, mu);
    let deriv = |xi: f64| -> f64 {
        // d ln A/dξ and d ln B/dξ
        let (mut la, mut lb, mut da, mut db) = (-xi * b, (1.0 - xi) * b, -b, b);
        for e in sbn.parent_edges(i) {
            let m = mu[sbn.edge_parent(e)];
            let ea = (-xi * w[e]).exp();
            let eb = ((1.0 - xi) * w[e]).exp();
            let fa = 1.0 - m + m * ea;
            let fb = 1.0 - m + m * eb;
            la += fa.ln();
            lb += fb.ln();
            da += -w[e] * m * ea / fa;
            db += w[e] * m * eb / fb;
        }
        // d/dξ ln(A+B) = (A·dlnA/dξ + B·dlnB/dξ)/(A+B), with dlnB/dξ = −(db)
        let pa = sigmoid(la - lb);
        z + pa * da - (1.0 - pa) * db
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    let mut k = 0;
    while deriv(lo) > 0.0 && k < 40 {
        hi = lo;
        lo -= 1.0;
        k += 1;
    }
    k = 0;
    while deriv(hi) < 0.0 && k < 40 {
        lo = hi;
        hi += 1.0;
        k += 1;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if deriv(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo < 1e-12 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The part of the bound that depends on μ_k, plus `extra·μ_k`:
/// ℓ_k(μ) = μ z̄_k + Σ_{c∈ch(k)} [w_ck μ (μ_c − ξ_c) − ln(A_c+B_c)] + H(μ) + extra·μ.
fn local_objective(sbn: &Sbn, k: usize, mu: &mut [f64], xi: &[f64], m: f64, extra: f64) -> f64 {
    let old = mu[k];
    mu[k] = m;
    let mut l = m * sbn.field(k, mu) + entropy01(m) + extra * m;
    let w = sbn.weights();
    for &e in sbn.child_edges(k) {
        let c = sbn.edge_child(e);
        let (la, lb) = log_ab(sbn, c, mu, xi[c]);
        l += w[e] * m * (mu[c] - xi[c]) - logaddexp(la, lb);
    }
    mu[k] = old;
    l
}

/// Mean-field field of hidden unit k (the argument of σ in the μ update), Lawrence (2.16)–(2.18)
/// in the explicit form of the digest §2.2:
/// E′_k = z̄_k + Σ_{c∈ch(k)} [w_ck(μ_c − ξ_c) + K_ck],
/// K_ck = −∂ ln(A_c+B_c)/∂μ_k.
pub fn field_mf(sbn: &Sbn, k: usize, mu: &[f64], xi: &[f64]) -> f64 {
    let w = sbn.weights();
    let mut f = sbn.field(k, mu);
    let mk = mu[k];
    for &e in sbn.child_edges(k) {
        let c = sbn.edge_child(e);
        let (la, lb) = log_ab(sbn, c, mu, xi[c]);
        let ea = (-xi[c] * w[e]).exp();
        let eb = ((1.0 - xi[c]) * w[e]).exp();
        let pa = sigmoid(la - lb);
        let kck = -(pa * (ea - 1.0) / (1.0 - mk + mk * ea) + (1.0 - pa) * (eb - 1.0) / (1.0 - mk + mk * eb));
        f += w[e] * (mu[c] - xi[c]) + kck;
    }
    f
}

/// One safeguarded update of hidden μ_k: the fixed point μ ← σ(E′_k + extra), accepted only if
/// the local objective does not fall; otherwise halved back towards the old value (the fixed
/// point lies on the ascent side, so a short enough step always improves). Returns the gain.
pub fn update_mu(sbn: &Sbn, k: usize, mu: &mut [f64], xi: &[f64], extra: f64) -> f64 {
    let old = mu[k];
    let target = clamp_mu(sigmoid(field_mf(sbn, k, mu, xi) + extra));
    let l0 = local_objective(sbn, k, mu, xi, old, extra);
    let mut cand = target;
    for _ in 0..40 {
        let l1 = local_objective(sbn, k, mu, xi, cand, extra);
        if l1 >= l0 {
            mu[k] = cand;
            return l1 - l0;
        }
        cand = 0.5 * (cand + old);
    }
    0.0
}

/// Initial state: clamped visible means, hidden by `init`, ξ = 0.5.
pub fn init_state(sbn: &Sbn, ev: &Evidence, init: MfInit) -> MfState {
    let n = sbn.n_units();
    let mut mu = vec![0.5; n];
    let mut rng = match init {
        MfInit::Uniform(s) => Some(Xoshiro256PlusPlus::seed_from_u64(s)),
        MfInit::Half => None,
    };
    for (i, m) in mu.iter_mut().enumerate() {
        match ev.get(i) {
            Some(v) => *m = if v { 1.0 } else { 0.0 },
            None => {
                if let Some(r) = rng.as_mut() {
                    *m = clamp_mu(r.random::<f64>());
                }
            }
        }
    }
    MfState {
        mu,
        xi: vec![0.5; n],
    }
}

/// Runs (ξ for all units, then a μ sweep) until the bound stalls. Monotone by construction.
pub fn fit_from(sbn: &Sbn, ev: &Evidence, mut st: MfState, opts: &MfOptions) -> Result<MfFit> {
    ev.check(sbn)?;
    let n = sbn.n_units();
    let mut trace = Vec::new();
    let mut prev = f64::NEG_INFINITY;
    let mut converged = false;
    for _ in 0..opts.max_sweeps.max(1) {
        for i in 0..n {
            st.xi[i] = optimise_xi(sbn, i, &st.mu);
        }
        for &k in ev.hidden() {
            update_mu(sbn, k, &mut st.mu, &st.xi, 0.0);
        }
        let l = bound(sbn, ev, &st);
        trace.push(l);
        if l - prev < opts.tol {
            converged = true;
            break;
        }
        prev = l;
    }
    // final ξ at the last μ (can only raise the bound)
    for i in 0..n {
        st.xi[i] = optimise_xi(sbn, i, &st.mu);
    }
    let b = bound(sbn, ev, &st);
    trace.push(b);
    Ok(MfFit {
        state: st,
        bound: b,
        trace,
        converged,
    })
}

/// Fits mean field from `opts.init`.
pub fn fit(sbn: &Sbn, ev: &Evidence, opts: &MfOptions) -> Result<MfFit> {
    ev.check(sbn)?;
    let st = init_state(sbn, ev, opts.init);
    fit_from(sbn, ev, st, opts)
}

/// Gradient of the bound wrt [weights..., biases...] at fixed (μ, ξ) (digest §2.2, learning):
/// ∂L/∂w_ij = μ_iμ_j − ξ_iμ_j − (∂A_i/∂w_ij + ∂B_i/∂w_ij)/(A_i+B_i), ∂L/∂b_i = μ_i − B_i/(A_i+B_i).
/// Adds `scale` × gradient into `g`.
pub fn grad_params(sbn: &Sbn, st: &MfState, scale: f64, g: &mut [f64]) {
    let ne = sbn.n_edges();
    let w = sbn.weights();
    for i in 0..sbn.n_units() {
        let xi = st.xi[i];
        let (la, lb) = log_ab(sbn, i, &st.mu, xi);
        let pa = sigmoid(la - lb);
        let mi = st.mu[i];
        g[ne + i] += scale * (mi - (1.0 - pa));
        for e in sbn.parent_edges(i) {
            let mj = st.mu[sbn.edge_parent(e)];
            let ea = (-xi * w[e]).exp();
            let eb = ((1.0 - xi) * w[e]).exp();
            let da = -xi * mj * ea / (1.0 - mj + mj * ea);
            let db = (1.0 - xi) * mj * eb / (1.0 - mj + mj * eb);
            g[e] += scale * (mi * mj - xi * mj - (pa * da + (1.0 - pa) * db));
        }
    }
}

/// Logit of the hidden means (used to seed other methods).
pub fn logits(mu: &[f64]) -> Vec<f64> {
    mu.iter().map(|&m| logit(clamp_mu(m))).collect()
}
