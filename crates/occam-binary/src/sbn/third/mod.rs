//! The Leisink–Kappen third-order lower bound on SBN likelihoods (Leisink & Kappen 2000, §3–4),
//! and the first-order ("mean field, full ξ") bound it upgrades.
//!
//! ±1 coding: θ^{ij} = w_ij/4, θ^i = b_i/2 + ¼Σ_j w_ij ([`crate::coding`]);
//! z_p = Σ_j θ^{pj}s_j + θ^p.
//! Local normalisation bound (32)–(38): −ln 2cosh z_p ≥ ξ_p(s) + 1 − e^{ξ_p(s)+z_p} − e^{ξ_p(s)−z_p},
//! ξ_p(s) = Σ_{i∈H∩pa(p)} ξ^{pi}s_i + ξ^p (ξ^{pi} is kept only for hidden parents: the optimal
//! ξ^{pi} is 0 where θ^{pi} = 0, Leisink & Kappen §4.1). This gives −Ẽ(s) ≤ −E(s).
//!
//! Third-order bound (20)–(22), (50a) applied to Ẽ with factorised P_μ (m_i = tanh μ_i):
//! ln 𝓛 ≥ ⟨−Ẽ⟩_μ + Σ_i H₂(m_i) + ln(1 + ½ e^{λ⁰} κ₂),   λ⁰ = κ₃/(3κ₂),
//! where κ₂, κ₃ are the 2nd and 3rd central moments of G(s) = −Ẽ(s) − Σ_i μ_i s_i under P_μ
//! (ΔẼ = ⟨G⟩ − G, so ⟨ΔẼ²⟩ = κ₂ and ⟨ΔẼ³⟩ = −κ₃). The first two terms alone are the
//! first-order (mean-field) bound on Ẽ (derived here: with μ⁰ at (21), log Z_μ = ⟨−Ẽ⟩_μ + Σ H₂).
//!
//! G is a sum of "terms": a constant, linear spins, products of two hidden spins and
//! coefficient × e^{b·s}. Its moments are computed here by enumerating the hidden states of
//! P_μ (exact, O(2^H · terms)); `third_poly` computes the same moments in polynomial time from
//! triples of terms (derived here; see `third_poly`) and is cross-checked against this.
//!
//! This file holds the terms of G and their moments; `fit` evaluates and optimises the first- and
//! third-order bounds over ξ and μ.

mod fit;

pub use fit::*;

use super::error::{Result, SbnError};
use super::model::{Evidence, Sbn};

/// ±1-coded parameters of an SBN: θ per edge (CSR order of the model) and θ^i per unit.
#[derive(Debug, Clone, PartialEq)]
pub struct PmParams {
    /// θ^{pj} per edge e.
    pub theta_e: Vec<f64>,
    /// θ^p per unit.
    pub theta_b: Vec<f64>,
}

impl PmParams {
    /// Converts the 0/1-coded model ([`crate::coding`]).
    pub fn from_sbn(sbn: &Sbn) -> Self {
        let w = sbn.weights();
        let theta_e: Vec<f64> = w.iter().map(|x| 0.25 * x).collect();
        let theta_b = (0..sbn.n_units())
            .map(|i| 0.5 * sbn.bias()[i] + sbn.parent_edges(i).map(|e| 0.25 * w[e]).sum::<f64>())
            .collect();
        PmParams { theta_e, theta_b }
    }
}

/// Variational parameters ξ of (33): ξ^p per unit and ξ^{pi} per edge (used for hidden parents).
#[derive(Debug, Clone, PartialEq)]
pub struct XiParams {
    /// ξ^p.
    pub xi0: Vec<f64>,
    /// ξ^{pi} per edge (ignored when the parent is observed).
    pub xie: Vec<f64>,
}

/// The expansion of G(s) (or of −Ẽ(s)) into terms over the hidden spins.
#[derive(Debug, Clone)]
pub struct Terms {
    /// Hidden unit of each hidden index.
    pub hidden: Vec<usize>,
    /// hidden index of each unit.
    pub hk: Vec<Option<usize>>,
    /// ±1 value of each observed unit (0 for hidden).
    pub sv: Vec<f64>,
    /// Constant term.
    pub c0: f64,
    /// Linear coefficients per hidden index.
    pub lin: Vec<f64>,
    /// Pairwise terms (hidden index a, hidden index b, edge e); coefficient θ_e.
    pub quad: Vec<(usize, usize, usize)>,
    /// Exponential terms: coefficient (≤ 0), owning unit p and sign (+1/−1).
    pub exp_coef: Vec<f64>,
    /// Owning unit of exponential term t.
    pub exp_unit: Vec<usize>,
    /// Sign of exponential term t.
    pub exp_sign: Vec<f64>,
    /// CSR start of the support of each exponential term.
    pub exp_start: Vec<usize>,
    /// Hidden index of each support entry.
    pub exp_k: Vec<usize>,
    /// Edge of each support entry.
    pub exp_e: Vec<usize>,
    /// Exponent coefficient b of each support entry.
    pub exp_b: Vec<f64>,
    /// θ_e of the pairwise terms.
    pub quad_coef: Vec<f64>,
}

/// Adjoints (derivatives of a scalar wrt every term parameter).
#[derive(Debug, Clone)]
pub struct TermAdjoint {
    /// d/d c0.
    pub c0: f64,
    /// d/d lin.
    pub lin: Vec<f64>,
    /// d/d pairwise coefficient.
    pub quad: Vec<f64>,
    /// d/d exponential coefficient.
    pub coef: Vec<f64>,
    /// d/d exponent b per support entry.
    pub b: Vec<f64>,
}

impl TermAdjoint {
    /// Zero adjoint shaped like `t`.
    pub fn zeros(t: &Terms) -> Self {
        TermAdjoint {
            c0: 0.0,
            lin: vec![0.0; t.lin.len()],
            quad: vec![0.0; t.quad.len()],
            coef: vec![0.0; t.exp_coef.len()],
            b: vec![0.0; t.exp_b.len()],
        }
    }
}

/// Builds −Ẽ(s) (34)–(38) minus Σ_k μ_k s_k (pass `mu = None` for −Ẽ alone).
pub fn build_terms(
    sbn: &Sbn,
    ev: &Evidence,
    th: &PmParams,
    xi: &XiParams,
    mu: Option<&[f64]>,
) -> Terms {
    let n = sbn.n_units();
    let hidden = ev.hidden().to_vec();
    let mut hk = vec![None; n];
    for (k, &u) in hidden.iter().enumerate() {
        hk[u] = Some(k);
    }
    let sv: Vec<f64> = (0..n)
        .map(|i| match ev.get(i) {
            Some(true) => 1.0,
            Some(false) => -1.0,
            None => 0.0,
        })
        .collect();
    let mut t = Terms {
        hidden,
        hk,
        sv,
        c0: 0.0,
        lin: vec![0.0; 0],
        quad: Vec::new(),
        exp_coef: Vec::with_capacity(2 * n),
        exp_unit: Vec::with_capacity(2 * n),
        exp_sign: Vec::with_capacity(2 * n),
        exp_start: vec![0],
        exp_k: Vec::new(),
        exp_e: Vec::new(),
        exp_b: Vec::new(),
        quad_coef: Vec::new(),
    };
    t.lin = vec![0.0; t.hidden.len()];
    for p in 0..n {
        // z_p s_p
        match t.hk[p] {
            Some(kp) => t.lin[kp] += th.theta_b[p],
            None => t.c0 += th.theta_b[p] * t.sv[p],
        }
        let mut zc = th.theta_b[p];
        for e in sbn.parent_edges(p) {
            let j = sbn.edge_parent(e);
            let w = th.theta_e[e];
            match (t.hk[p], t.hk[j]) {
                (Some(kp), Some(kj)) => {
                    t.quad.push((kp, kj, e));
                    t.quad_coef.push(w);
                }
                (Some(kp), None) => t.lin[kp] += w * t.sv[j],
                (None, Some(kj)) => t.lin[kj] += w * t.sv[p],
                (None, None) => t.c0 += w * t.sv[p] * t.sv[j],
            }
            match t.hk[j] {
                Some(kj) => t.lin[kj] += xi.xie[e],
                None => zc += w * t.sv[j],
            }
        }
        t.c0 += xi.xi0[p] + 1.0;
        for sign in [1.0, -1.0] {
            t.exp_coef.push(-(xi.xi0[p] + sign * zc).exp());
            t.exp_unit.push(p);
            t.exp_sign.push(sign);
            for e in sbn.parent_edges(p) {
                if let Some(kj) = t.hk[sbn.edge_parent(e)] {
                    t.exp_k.push(kj);
                    t.exp_e.push(e);
                    t.exp_b.push(xi.xie[e] + sign * th.theta_e[e]);
                }
            }
            t.exp_start.push(t.exp_k.len());
        }
    }
    if let Some(mu) = mu {
        for (k, l) in t.lin.iter_mut().enumerate() {
            *l -= mu[k];
        }
    }
    t
}

/// Maps term adjoints back to ξ (dξ⁰, dξ^{pi}) and θ (dθ_e, dθ^p).
pub fn backprop(sbn: &Sbn, t: &Terms, adj: &TermAdjoint) -> (XiParams, PmParams) {
    let n = sbn.n_units();
    let ne = sbn.n_edges();
    let mut dxi = XiParams {
        xi0: vec![0.0; n],
        xie: vec![0.0; ne],
    };
    let mut dth = PmParams {
        theta_e: vec![0.0; ne],
        theta_b: vec![0.0; n],
    };
    for p in 0..n {
        dth.theta_b[p] += match t.hk[p] {
            Some(kp) => adj.lin[kp],
            None => adj.c0 * t.sv[p],
        };
        dxi.xi0[p] += adj.c0;
        for e in sbn.parent_edges(p) {
            let j = sbn.edge_parent(e);
            match (t.hk[p], t.hk[j]) {
                (Some(_), Some(_)) => {}
                (Some(kp), None) => dth.theta_e[e] += adj.lin[kp] * t.sv[j],
                (None, Some(kj)) => dth.theta_e[e] += adj.lin[kj] * t.sv[p],
                (None, None) => dth.theta_e[e] += adj.c0 * t.sv[p] * t.sv[j],
            }
            if let Some(kj) = t.hk[j] {
                dxi.xie[e] += adj.lin[kj];
            }
        }
    }
    for (q, &(_, _, e)) in t.quad.iter().enumerate() {
        dth.theta_e[e] += adj.quad[q];
    }
    for ti in 0..t.exp_coef.len() {
        let p = t.exp_unit[ti];
        let sign = t.exp_sign[ti];
        let dconst = adj.coef[ti] * t.exp_coef[ti]; // d/d(exponent constant)
        dxi.xi0[p] += dconst;
        dth.theta_b[p] += sign * dconst;
        for e in sbn.parent_edges(p) {
            let j = sbn.edge_parent(e);
            if t.hk[j].is_none() {
                dth.theta_e[e] += sign * dconst * t.sv[j];
            }
        }
        for s in t.exp_start[ti]..t.exp_start[ti + 1] {
            let e = t.exp_e[s];
            dxi.xie[e] += adj.b[s];
            dth.theta_e[e] += sign * adj.b[s];
        }
    }
    (dxi, dth)
}

/// Converts a gradient wrt ±1 parameters to one wrt the 0/1 parameters [weights..., biases...]:
/// ∂/∂w_e = ¼∂/∂θ_e + ¼∂/∂θ^{child(e)}, ∂/∂b_i = ½∂/∂θ^i.
pub fn pm_grad_to_01(sbn: &Sbn, d: &PmParams, scale: f64, g: &mut [f64]) {
    let ne = sbn.n_edges();
    for (e, ge) in g[..ne].iter_mut().enumerate() {
        *ge += scale * 0.25 * (d.theta_e[e] + d.theta_b[sbn.edge_child(e)]);
    }
    for i in 0..sbn.n_units() {
        g[ne + i] += scale * 0.5 * d.theta_b[i];
    }
}

/// ⟨T⟩ under the factorised P_μ (means m per hidden index) for the first-order bound, with the
/// adjoint of ⟨T⟩ wrt every term parameter.
pub fn first_moment(t: &Terms, m: &[f64], adj: Option<&mut TermAdjoint>) -> f64 {
    let mut r = t.c0;
    for (k, l) in t.lin.iter().enumerate() {
        r += l * m[k];
    }
    for (q, &(a, b, _)) in t.quad.iter().enumerate() {
        r += t.quad_coef[q] * m[a] * m[b];
    }
    let mut ex = Vec::with_capacity(t.exp_coef.len());
    for ti in 0..t.exp_coef.len() {
        let mut prod = 1.0;
        for s in t.exp_start[ti]..t.exp_start[ti + 1] {
            let b = t.exp_b[s];
            prod *= b.cosh() + m[t.exp_k[s]] * b.sinh();
        }
        ex.push(prod);
        r += t.exp_coef[ti] * prod;
    }
    if let Some(a) = adj {
        a.c0 += 1.0;
        for (k, al) in a.lin.iter_mut().enumerate() {
            *al += m[k];
        }
        for (q, &(x, y, _)) in t.quad.iter().enumerate() {
            a.quad[q] += m[x] * m[y];
        }
        for (ti, &exv) in ex.iter().enumerate() {
            a.coef[ti] += exv;
            for s in t.exp_start[ti]..t.exp_start[ti + 1] {
                let b = t.exp_b[s];
                let mk = m[t.exp_k[s]];
                let f = b.cosh() + mk * b.sinh();
                // product over the other factors; recompute to avoid dividing by a tiny f
                let mut other = 1.0;
                for s2 in t.exp_start[ti]..t.exp_start[ti + 1] {
                    if s2 != s {
                        let b2 = t.exp_b[s2];
                        other *= b2.cosh() + m[t.exp_k[s2]] * b2.sinh();
                    }
                }
                let _ = f;
                a.b[s] += t.exp_coef[ti] * other * (b.sinh() + mk * b.cosh());
            }
        }
    }
    r
}

/// Central moments (R1, κ₂, κ₃) of G under P_μ by enumeration of the hidden states.
/// If `adj_w = Some((a1, a2, a3, adj))`, adds Σ_s ω(s) ∂G(s)/∂(term params) into `adj`, with
/// ω(s) = q(s)[a1 + 2a2(G−R1) + 3a3((G−R1)² − κ₂)], i.e. the chain rule of a1 R1 + a2 κ₂ + a3 κ₃.
/// Each exponential term is tabulated over the 2^{|support|} settings of its own spins, so a
/// state costs one table lookup per term.
pub fn moments_enum(
    t: &Terms,
    m: &[f64],
    adj_w: Option<(f64, f64, f64, &mut TermAdjoint)>,
) -> Result<(f64, f64, f64)> {
    let h = t.hidden.len();
    if h > 24 {
        return Err(SbnError::TooManyHidden { hidden: h, max: 24 });
    }
    let ns = 1usize << h;
    let ne = t.exp_coef.len();
    // tables of coef·e^{b·s} per exponential term, indexed by the bits of its support
    let mut tab_start = Vec::with_capacity(ne + 1);
    let mut tab = Vec::new();
    tab_start.push(0);
    for ti in 0..ne {
        let r = t.exp_start[ti]..t.exp_start[ti + 1];
        let d = r.len();
        for cfg in 0..1usize << d {
            let x: f64 = r
                .clone()
                .enumerate()
                .map(|(j, s)| {
                    if (cfg >> j) & 1 == 1 {
                        t.exp_b[s]
                    } else {
                        -t.exp_b[s]
                    }
                })
                .sum();
            tab.push(t.exp_coef[ti] * x.exp());
        }
        tab_start.push(tab.len());
    }
    let cfg_of = |s: usize, ti: usize| -> usize {
        let mut c = 0;
        for (j, s2) in (t.exp_start[ti]..t.exp_start[ti + 1]).enumerate() {
            c |= ((s >> t.exp_k[s2]) & 1) << j;
        }
        c
    };
    let sp = |s: usize, k: usize| -> f64 {
        if (s >> k) & 1 == 1 {
            1.0
        } else {
            -1.0
        }
    };
    let mut gv = vec![t.c0; ns];
    let mut qv = vec![1.0; ns];
    for s in 0..ns {
        let mut q = 1.0;
        let mut g = 0.0;
        for (k, (&mk, &lk)) in m.iter().zip(&t.lin).enumerate().take(h) {
            let x = sp(s, k);
            q *= 0.5 * (1.0 + mk * x);
            g += lk * x;
        }
        for (q2, &(a, b, _)) in t.quad.iter().enumerate() {
            g += t.quad_coef[q2] * sp(s, a) * sp(s, b);
        }
        for ti in 0..ne {
            g += tab[tab_start[ti] + cfg_of(s, ti)];
        }
        gv[s] += g;
        qv[s] = q;
    }
    let r1: f64 = gv.iter().zip(&qv).map(|(g, q)| g * q).sum();
    let (mut k2, mut k3) = (0.0, 0.0);
    for s in 0..ns {
        let d = gv[s] - r1;
        k2 += qv[s] * d * d;
        k3 += qv[s] * d * d * d;
    }
    if let Some((a1, a2, a3, adj)) = adj_w {
        let mut wtab = vec![0.0; tab.len()];
        for s in 0..ns {
            let d = gv[s] - r1;
            let w = qv[s] * (a1 + 2.0 * a2 * d + 3.0 * a3 * (d * d - k2));
            adj.c0 += w;
            for k in 0..h {
                adj.lin[k] += w * sp(s, k);
            }
            for (q2, &(a, b, _)) in t.quad.iter().enumerate() {
                adj.quad[q2] += w * sp(s, a) * sp(s, b);
            }
            for ti in 0..ne {
                wtab[tab_start[ti] + cfg_of(s, ti)] += w;
            }
        }
        for ti in 0..ne {
            let r = t.exp_start[ti]..t.exp_start[ti + 1];
            for cfg in 0..tab_start[ti + 1] - tab_start[ti] {
                let w = wtab[tab_start[ti] + cfg];
                let v = tab[tab_start[ti] + cfg]; // coef·e^{b·s}
                if t.exp_coef[ti] != 0.0 {
                    adj.coef[ti] += w * v / t.exp_coef[ti];
                }
                for (j, s2) in r.clone().enumerate() {
                    let x = if (cfg >> j) & 1 == 1 { 1.0 } else { -1.0 };
                    adj.b[s2] += w * v * x;
                }
            }
        }
    }
    Ok((r1, k2, k3))
}

/// G(s) for one hidden spin configuration.
#[inline]
pub fn eval_terms(t: &Terms, sp: &[f64]) -> f64 {
    let mut g = t.c0;
    for (k, l) in t.lin.iter().enumerate() {
        g += l * sp[k];
    }
    for (q, &(a, b, _)) in t.quad.iter().enumerate() {
        g += t.quad_coef[q] * sp[a] * sp[b];
    }
    for ti in 0..t.exp_coef.len() {
        let mut x = 0.0;
        for s2 in t.exp_start[ti]..t.exp_start[ti + 1] {
            x += t.exp_b[s2] * sp[t.exp_k[s2]];
        }
        g += t.exp_coef[ti] * x.exp();
    }
    g
}

/// Which engine computes the second and third moments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MomentEngine {
    /// Enumerate the 2^H hidden states of P_μ.
    Enumerate,
    /// Polynomial-time sum over triples of terms (`third_poly`).
    Polynomial,
    /// Enumerate when 2^H is smaller than the triple count, else polynomial.
    Auto,
}

pub(super) fn moments(
    t: &Terms,
    m: &[f64],
    engine: MomentEngine,
    adj_w: Option<(f64, f64, f64, &mut TermAdjoint)>,
) -> Result<(f64, f64, f64)> {
    let use_enum = match engine {
        MomentEngine::Enumerate => true,
        MomentEngine::Polynomial => false,
        MomentEngine::Auto => {
            // enumeration costs ~2^H·T lookups, the triple sum ~T³/6 products of several
            // factors each (with allocation); enumeration wins up to 2^H ≈ 4T².
            let nt = (1 + t.lin.len() + t.quad.len() + t.exp_coef.len()) as f64;
            t.hidden.len() <= 24 && (2f64).powi(t.hidden.len() as i32) <= 4.0 * nt * nt
        }
    };
    if use_enum {
        moments_enum(t, m, adj_w)
    } else {
        Ok(super::third_poly::moments_poly(t, m, adj_w))
    }
}
