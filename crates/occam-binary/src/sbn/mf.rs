//! Mean-field theory for SBNs with Saul's ξ bound (Saul, Jaakkola & Jordan 1996; Lawrence §2.4.1).
//!
//! q(h) = Π_i μ_i^{h_i}(1−μ_i)^{1−h_i} (Lawrence (2.10)); visible μ are clamped to the data.
//! ⟨ln(1+e^{z_i})⟩ ≤ ξ_i⟨z_i⟩ + ln(A_i + B_i) (Lawrence (2.12), (A.2)) with
//! A_i = ⟨e^{−ξ_i z_i}⟩ = e^{−ξ_i b_i} Π_j (1−μ_j+μ_j e^{−ξ_i w_ij}) and
//! B_i = ⟨e^{(1−ξ_i) z_i}⟩ = e^{(1−ξ_i) b_i} Π_j (1−μ_j+μ_j e^{(1−ξ_i) w_ij}) (A.5)–(A.7).
//! Bound (2.13)–(2.15): L = Σ_i [μ_i⟨z_i⟩ − ξ_i⟨z_i⟩ − ln(A_i+B_i)] + Σ_{i∈H} H(μ_i).
//! A and B are kept in log form.

use super::error::Result;
use super::math::clamp_mu;
use super::model::{Evidence, Sbn};
use occam_core::special::{binary_entropy, log_add_exp, logit, sigmoid};
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
    (mu[i] - xi) * z - log_add_exp(la, lb)
}

/// The mean-field lower bound (2.13)–(2.15) at (μ, ξ).
pub fn bound(sbn: &Sbn, ev: &Evidence, st: &MfState) -> f64 {
    let mut l = 0.0;
    for i in 0..sbn.n_units() {
        l += unit_term(sbn, i, &st.mu, st.xi[i]);
    }
    for &h in ev.hidden() {
        l += binary_entropy(st.mu[h]);
    }
    l
}

/// Minimises the convex f(ξ) = ξ⟨z_i⟩ + ln(A_i(ξ)+B_i(ξ)) (Lawrence §2.4.2: "not possible to
/// determine a fixed point equation"; a 1-D minimisation per node) from the default start 0.5.
pub fn optimise_xi(sbn: &Sbn, i: usize, mu: &[f64]) -> f64 {
    optimise_xi_from(sbn, i, mu, 0.5)
}

/// f'(ξ) and f''(ξ) of the per-unit ξ objective.
fn xi_derivs(sbn: &Sbn, i: usize, mu: &[f64], z: f64, xi: f64) -> (f64, f64) {
    let w = sbn.weights();
    let b = sbn.bias()[i];
    // ln A, ln B and their first and second derivatives in ξ
    let (mut la, mut lb) = (-xi * b, (1.0 - xi) * b);
    let (mut da, mut db) = (-b, -b);
    let (mut d2a, mut d2b) = (0.0, 0.0);
    for e in sbn.parent_edges(i) {
        let m = mu[sbn.edge_parent(e)];
        let ea = m * (-xi * w[e]).exp();
        let eb = m * ((1.0 - xi) * w[e]).exp();
        let fa = 1.0 - m + ea;
        let fb = 1.0 - m + eb;
        la += fa.ln();
        lb += fb.ln();
        let ra = ea / fa;
        let rb = eb / fb;
        da -= w[e] * ra;
        db -= w[e] * rb;
        d2a += w[e] * w[e] * ra * (1.0 - ra);
        d2b += w[e] * w[e] * rb * (1.0 - rb);
    }
    let pa = sigmoid(la - lb);
    let pb = 1.0 - pa;
    // d/dξ ln(A+B) = pa·da + pb·db; second derivative = Σ p(d² + d'²) − (Σ p d')²
    let g = pa * da + pb * db;
    let h = pa * (d2a + da * da) + pb * (d2b + db * db) - g * g;
    (z + g, h.max(0.0))
}

/// Safeguarded Newton minimisation of the convex per-unit ξ objective from `x0`.
pub fn optimise_xi_from(sbn: &Sbn, i: usize, mu: &[f64], x0: f64) -> f64 {
    let z = sbn.field(i, mu);
    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut x = if x0.is_finite() { x0 } else { 0.5 };
    for _ in 0..100 {
        let (d1, d2) = xi_derivs(sbn, i, mu, z, x);
        if d1.abs() < 1e-13 {
            break;
        }
        if d1 > 0.0 {
            hi = hi.min(x);
        } else {
            lo = lo.max(x);
        }
        let mut nx = if d2 > 1e-300 {
            x - d1 / d2
        } else {
            x - d1.signum() * 2.0
        };
        if nx - x > 2.0 {
            nx = x + 2.0;
        } else if x - nx > 2.0 {
            nx = x - 2.0;
        }
        if nx <= lo || nx >= hi {
            nx = if lo.is_finite() && hi.is_finite() {
                0.5 * (lo + hi)
            } else {
                nx.clamp(lo.max(x - 2.0), hi.min(x + 2.0))
            };
        }
        if (nx - x).abs() < 1e-14 || (hi - lo) < 1e-13 {
            x = nx;
            break;
        }
        x = nx;
        if x.abs() > 60.0 {
            break; // z (nearly) constant: f is flat, any ξ is optimal
        }
    }
    x
}

/// Per-child cache for the μ_k update: w_ck, μ_c − ξ_c, ln A_c and ln B_c without the factor of
/// unit k, and e^{−ξ_c w_ck}, e^{(1−ξ_c) w_ck}.
struct ChildTerm {
    w: f64,
    dm: f64,
    la: f64,
    lb: f64,
    ea: f64,
    eb: f64,
}

fn child_terms(sbn: &Sbn, k: usize, mu: &[f64], xi: &[f64]) -> Vec<ChildTerm> {
    let w = sbn.weights();
    let mk = mu[k];
    sbn.child_edges(k)
        .iter()
        .map(|&e| {
            let c = sbn.edge_child(e);
            let (la, lb) = log_ab(sbn, c, mu, xi[c]);
            let ea = (-xi[c] * w[e]).exp();
            let eb = ((1.0 - xi[c]) * w[e]).exp();
            ChildTerm {
                w: w[e],
                dm: mu[c] - xi[c],
                la: la - (1.0 - mk + mk * ea).ln(),
                lb: lb - (1.0 - mk + mk * eb).ln(),
                ea,
                eb,
            }
        })
        .collect()
}

/// The part of the bound that depends on μ_k, plus `extra·μ_k`:
/// ℓ_k(μ) = μ z̄_k + Σ_{c∈ch(k)} [w_ck μ (μ_c − ξ_c) − ln(A_c+B_c)] + H(μ) + extra·μ.
fn local_objective(zk: f64, ch: &[ChildTerm], m: f64, extra: f64) -> f64 {
    let mut l = m * zk + binary_entropy(m) + extra * m;
    for t in ch {
        l += t.w * m * t.dm
            - log_add_exp(
                t.la + (1.0 - m + m * t.ea).ln(),
                t.lb + (1.0 - m + m * t.eb).ln(),
            );
    }
    l
}

fn field_cached(zk: f64, ch: &[ChildTerm], mk: f64) -> f64 {
    let mut f = zk;
    for t in ch {
        let fa = 1.0 - mk + mk * t.ea;
        let fb = 1.0 - mk + mk * t.eb;
        let pa = sigmoid(t.la + fa.ln() - t.lb - fb.ln());
        let kck = -(pa * (t.ea - 1.0) / fa + (1.0 - pa) * (t.eb - 1.0) / fb);
        f += t.w * t.dm + kck;
    }
    f
}

/// Mean-field field of hidden unit k (the argument of σ in the μ update), Lawrence (2.16)–(2.18)
/// with the App. A term φ_k written out (Saul et al. 1996; the printed (A.3)–(A.4) is garbled, see
/// docs/seed-corrections.md):
/// E′_k = z̄_k + Σ_{c∈ch(k)} [w_ck(μ_c − ξ_c) + K_ck],
/// K_ck = −∂ ln(A_c+B_c)/∂μ_k.
pub fn field_mf(sbn: &Sbn, k: usize, mu: &[f64], xi: &[f64]) -> f64 {
    field_cached(sbn.field(k, mu), &child_terms(sbn, k, mu, xi), mu[k])
}

/// One safeguarded update of hidden μ_k: the fixed point μ ← σ(E′_k + extra), accepted only if
/// the local objective does not fall; otherwise halved back towards the old value (the fixed
/// point lies on the ascent side, so a short enough step always improves). Returns the gain.
pub fn update_mu(sbn: &Sbn, k: usize, mu: &mut [f64], xi: &[f64], extra: f64) -> f64 {
    let old = mu[k];
    let zk = sbn.field(k, mu);
    let ch = child_terms(sbn, k, mu, xi);
    let target = clamp_mu(sigmoid(field_cached(zk, &ch, old) + extra));
    let l0 = local_objective(zk, &ch, old, extra);
    let mut cand = target;
    for _ in 0..40 {
        let l1 = local_objective(zk, &ch, cand, extra);
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
            st.xi[i] = optimise_xi_from(sbn, i, &st.mu, st.xi[i]);
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
        st.xi[i] = optimise_xi_from(sbn, i, &st.mu, st.xi[i]);
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

/// Gradient of the bound wrt [weights..., biases...] at fixed (μ, ξ) (Lawrence §2.4.1 names it;
/// derived here from (2.13)–(2.15)):
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
