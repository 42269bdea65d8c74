//! The Leisink–Kappen third-order lower bound on SBN likelihoods (Leisink & Kappen 2000, §4;
//! digest `tighter_bound.md` §3–4), and the first-order ("mean field, full ξ") bound it upgrades.
//!
//! ±1 coding: θ^{ij} = w_ij/4, θ^i = b_i/2 + ¼Σ_j w_ij (digest §4.2); z_p = Σ_j θ^{pj}s_j + θ^p.
//! Local normalisation bound (32)–(38): −ln 2cosh z_p ≥ ξ_p(s) + 1 − e^{ξ_p(s)+z_p} − e^{ξ_p(s)−z_p},
//! ξ_p(s) = Σ_{i∈H∩pa(p)} ξ^{pi}s_i + ξ^p (ξ^{pi} is kept only for hidden parents: the optimal
//! ξ^{pi} is 0 where θ^{pi} = 0, digest §4.1). This gives −Ẽ(s) ≤ −E(s).
//!
//! Third-order bound (20)–(22), (50a) applied to Ẽ with factorised P_μ (m_i = tanh μ_i):
//! ln 𝓛 ≥ ⟨−Ẽ⟩_μ + Σ_i H₂(m_i) + ln(1 + ½ e^{λ⁰} κ₂),   λ⁰ = κ₃/(3κ₂),
//! where κ₂, κ₃ are the 2nd and 3rd central moments of G(s) = −Ẽ(s) − Σ_i μ_i s_i under P_μ
//! (ΔẼ = ⟨G⟩ − G, so ⟨ΔẼ²⟩ = κ₂ and ⟨ΔẼ³⟩ = −κ₃). The first two terms alone are the
//! first-order (mean-field) bound on Ẽ (digest §3.2, derived).
//!
//! G is a sum of "terms": a constant, linear spins, products of two hidden spins and
//! coefficient × e^{b·s}. Its moments are computed here by enumerating the hidden states of
//! P_μ (exact, O(2^H · terms)); `third_poly` computes the same moments in polynomial time from
//! triples of terms (digest §4.1 "implementation trick") and is cross-checked against this.

use super::error::{Result, SbnError};
use super::math::{entropy_pm, log1pexp, sigmoid};
use super::mf::{self, MfFit};
use super::model::{Evidence, Sbn};
use super::optim::{self, LbfgsOptions};

/// ±1-coded parameters of an SBN: θ per edge (CSR order of the model) and θ^i per unit.
#[derive(Debug, Clone, PartialEq)]
pub struct PmParams {
    /// θ^{pj} per edge e.
    pub theta_e: Vec<f64>,
    /// θ^p per unit.
    pub theta_b: Vec<f64>,
}

impl PmParams {
    /// Converts the 0/1-coded model (digest §4.2).
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

fn moments(
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

/// First-order bound ⟨−Ẽ⟩ + ΣH₂(m) and its gradient wrt ξ (and optionally θ).
pub fn first_order(
    sbn: &Sbn,
    ev: &Evidence,
    th: &PmParams,
    xi: &XiParams,
    m: &[f64],
) -> Result<(f64, XiParams, PmParams)> {
    check_shapes(sbn, ev, th, xi, m)?;
    let t = build_terms(sbn, ev, th, xi, None);
    let mut adj = TermAdjoint::zeros(&t);
    let mut v = first_moment(&t, m, Some(&mut adj));
    v += m.iter().map(|&x| entropy_pm(x)).sum::<f64>();
    let (dxi, dth) = backprop(sbn, &t, &adj);
    Ok((v, dxi, dth))
}

/// Checks the lengths of evidence, ±1 parameters, ξ and m against the network.
pub fn check_shapes(
    sbn: &Sbn,
    ev: &Evidence,
    th: &PmParams,
    xi: &XiParams,
    m: &[f64],
) -> Result<()> {
    ev.check(sbn)?;
    let (n, ne, h) = (sbn.n_units(), sbn.n_edges(), ev.hidden().len());
    for (what, got, expected) in [
        ("theta per edge", th.theta_e.len(), ne),
        ("theta per unit", th.theta_b.len(), n),
        ("xi per unit", xi.xi0.len(), n),
        ("xi per edge", xi.xie.len(), ne),
        ("hidden means", m.len(), h),
    ] {
        if got != expected {
            return Err(SbnError::Length {
                what: what.into(),
                expected,
                got,
            });
        }
    }
    Ok(())
}

/// Value and pieces of the third-order bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThirdValue {
    /// The bound.
    pub bound: f64,
    /// The first-order part ⟨−Ẽ⟩ + ΣH₂(m).
    pub first_order: f64,
    /// κ₂ = ⟨ΔẼ²⟩.
    pub kappa2: f64,
    /// κ₃ = −⟨ΔẼ³⟩.
    pub kappa3: f64,
    /// λ⁰ (50a).
    pub lambda0: f64,
}

/// Third-order bound (22) at (m, ξ); with `grad`, also its gradient wrt ξ and θ at fixed m.
pub fn third_order(
    sbn: &Sbn,
    ev: &Evidence,
    th: &PmParams,
    xi: &XiParams,
    m: &[f64],
    engine: MomentEngine,
    grad: bool,
) -> Result<(ThirdValue, Option<(XiParams, PmParams)>)> {
    check_shapes(sbn, ev, th, xi, m)?;
    let mu: Vec<f64> = m.iter().map(|&x| x.atanh()).collect();
    let t = build_terms(sbn, ev, th, xi, Some(&mu));
    let (r1, k2, k3) = moments(&t, m, engine, None)?;
    // ⟨−Ẽ⟩ = R1 + μ·m ; first-order part = ⟨−Ẽ⟩ + ΣH₂(m)
    let fo = r1
        + mu.iter().zip(m).map(|(a, b)| a * b).sum::<f64>()
        + m.iter().map(|&x| entropy_pm(x)).sum::<f64>();
    let (corr, lambda0, g2, g3) = if k2 > 1e-300 {
        let l0 = k3 / (3.0 * k2);
        let u = l0 + (0.5 * k2).ln();
        let sg = sigmoid(u);
        (log1pexp(u), l0, sg * (1.0 - l0) / k2, sg / (3.0 * k2))
    } else {
        (0.0, 0.0, 0.0, 0.0)
    };
    let val = ThirdValue {
        bound: fo + corr,
        first_order: fo,
        kappa2: k2,
        kappa3: k3,
        lambda0,
    };
    if !grad {
        return Ok((val, None));
    }
    let mut adj = TermAdjoint::zeros(&t);
    moments(&t, m, engine, Some((1.0, g2, g3, &mut adj)))?;
    let (dxi, dth) = backprop(sbn, &t, &adj);
    Ok((val, Some((dxi, dth))))
}

/// Converts a Saul mean-field state (0/1 coding) to (m, ξ) of the first-order LK bound with the
/// same value: ξ^{pi} = (1 − 2ξ_p^{Saul}) θ^{pi} for hidden parents, ξ^p at its optimum
/// (digest §4.1: Saul's bound = (41) plus a free offset per unit).
pub fn from_saul(sbn: &Sbn, ev: &Evidence, st: &mf::MfState) -> (Vec<f64>, XiParams) {
    let th = PmParams::from_sbn(sbn);
    let m: Vec<f64> = ev
        .hidden()
        .iter()
        .map(|&u| clamp_m(2.0 * st.mu[u] - 1.0))
        .collect();
    let mut xi = XiParams {
        xi0: vec![0.0; sbn.n_units()],
        xie: vec![0.0; sbn.n_edges()],
    };
    for p in 0..sbn.n_units() {
        let alpha = 1.0 - 2.0 * st.xi[p];
        for e in sbn.parent_edges(p) {
            if ev.get(sbn.edge_parent(e)).is_none() {
                xi.xie[e] = alpha * th.theta_e[e];
            }
        }
    }
    optimal_xi0(sbn, ev, &th, &mut xi, &m);
    (m, xi)
}

/// Sets every ξ^p to its closed-form optimum of the first-order bound given ξ^{pi}:
/// ξ^p = −ln(⟨e^{ξ'·s + z_p}⟩ + ⟨e^{ξ'·s − z_p}⟩) with ξ' the ξ^{pi} part.
pub fn optimal_xi0(sbn: &Sbn, ev: &Evidence, th: &PmParams, xi: &mut XiParams, m: &[f64]) {
    let mut zero = xi.clone();
    zero.xi0.iter_mut().for_each(|v| *v = 0.0);
    let t = build_terms(sbn, ev, th, &zero, None);
    let mut kp = vec![0.0; sbn.n_units()];
    for ti in 0..t.exp_coef.len() {
        let mut prod = 1.0;
        for s in t.exp_start[ti]..t.exp_start[ti + 1] {
            let b = t.exp_b[s];
            prod *= b.cosh() + m[t.exp_k[s]] * b.sinh();
        }
        kp[t.exp_unit[ti]] += -t.exp_coef[ti] * prod;
    }
    for (x, k) in xi.xi0.iter_mut().zip(&kp) {
        *x = -k.ln();
    }
}

/// Keeps ±1 means strictly inside (−1, 1).
#[inline]
pub fn clamp_m(m: f64) -> f64 {
    m.clamp(-1.0 + 2e-12, 1.0 - 2e-12)
}

fn pack(xi: &XiParams, active: &[usize]) -> Vec<f64> {
    let mut v = xi.xi0.clone();
    v.extend(active.iter().map(|&e| xi.xie[e]));
    v
}

fn unpack(v: &[f64], xi: &mut XiParams, active: &[usize]) {
    let n = xi.xi0.len();
    xi.xi0.copy_from_slice(&v[..n]);
    for (k, &e) in active.iter().enumerate() {
        xi.xie[e] = v[n + k];
    }
}

/// Edges whose parent is hidden (the free ξ^{pi}).
pub fn active_edges(sbn: &Sbn, ev: &Evidence) -> Vec<usize> {
    (0..sbn.n_edges())
        .filter(|&e| ev.get(sbn.edge_parent(e)).is_none())
        .collect()
}

/// A fitted first- or third-order state.
#[derive(Debug, Clone, PartialEq)]
pub struct LkFit {
    /// ±1 means of the hidden units (hidden order of the evidence).
    pub m: Vec<f64>,
    /// ξ.
    pub xi: XiParams,
    /// Bound value.
    pub bound: f64,
    /// Iterations.
    pub iterations: usize,
    /// Converged flag.
    pub converged: bool,
}

/// Options of the LK fits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LkOptions {
    /// Outer (ξ, m) rounds of the first-order fit.
    pub rounds: usize,
    /// L-BFGS options for ξ.
    pub lbfgs: LbfgsOptions,
    /// Moment engine of the third-order bound.
    pub engine: MomentEngine,
}

impl Default for LkOptions {
    fn default() -> Self {
        LkOptions {
            rounds: 100,
            lbfgs: LbfgsOptions::default(),
            engine: MomentEngine::Auto,
        }
    }
}

/// Exact coordinate ascent of the first-order bound in each m_k (linear in m_k plus H₂(m_k),
/// so m_k = tanh(∂⟨−Ẽ⟩/∂m_k) is the exact maximiser).
fn m_sweep(t: &Terms, m: &mut [f64]) {
    let h = m.len();
    // per hidden index: list of exp support entries
    for k in 0..h {
        let mut d = t.lin[k];
        for (q, &(a, b, _)) in t.quad.iter().enumerate() {
            if a == k {
                d += t.quad_coef[q] * m[b];
            } else if b == k {
                d += t.quad_coef[q] * m[a];
            }
        }
        for ti in 0..t.exp_coef.len() {
            let r = t.exp_start[ti]..t.exp_start[ti + 1];
            if !t.exp_k[r.clone()].contains(&k) {
                continue;
            }
            let mut prod = t.exp_coef[ti];
            for s in r {
                let b = t.exp_b[s];
                if t.exp_k[s] == k {
                    prod *= b.sinh();
                } else {
                    prod *= b.cosh() + m[t.exp_k[s]] * b.sinh();
                }
            }
            d += prod;
        }
        m[k] = clamp_m(d.tanh());
    }
}

/// First-order LK bound ("mean field, full ξ"), maximised over ξ (L-BFGS) and m (coordinate)
/// from a starting point; never ends below its start.
pub fn fit_first_order(
    sbn: &Sbn,
    ev: &Evidence,
    m0: Vec<f64>,
    xi0: XiParams,
    o: &LkOptions,
) -> Result<LkFit> {
    let th = PmParams::from_sbn(sbn);
    check_shapes(sbn, ev, &th, &xi0, &m0)?;
    let active = active_edges(sbn, ev);
    let mut m = m0;
    let mut xi = xi0;
    let mut prev = first_order(sbn, ev, &th, &xi, &m)?.0;
    let mut it = 0;
    let mut converged = false;
    for _ in 0..o.rounds {
        it += 1;
        let x0 = pack(&xi, &active);
        let mut tmp = xi.clone();
        let r = optim::maximise(
            |v, g| {
                unpack(v, &mut tmp, &active);
                match first_order(sbn, ev, &th, &tmp, &m) {
                    Ok((f, d, _)) => {
                        g.copy_from_slice(&pack(&d, &active));
                        f
                    }
                    Err(_) => f64::NAN,
                }
            },
            &x0,
            &o.lbfgs,
        );
        unpack(&r.x, &mut xi, &active);
        let t = build_terms(sbn, ev, &th, &xi, None);
        m_sweep(&t, &mut m);
        let f = first_order(sbn, ev, &th, &xi, &m)?.0;
        if f - prev < 1e-11 * (1.0 + f.abs()) {
            converged = true;
            prev = f;
            break;
        }
        prev = f;
    }
    Ok(LkFit {
        m,
        xi,
        bound: prev,
        iterations: it,
        converged,
    })
}

/// Third-order bound maximised over ξ at fixed m (digest §6.2 "third-full": μ from the
/// mean-field solution, all ξ re-optimised), starting from `xi0`.
pub fn fit_third_order(
    sbn: &Sbn,
    ev: &Evidence,
    m: &[f64],
    xi0: XiParams,
    o: &LkOptions,
) -> Result<LkFit> {
    let th = PmParams::from_sbn(sbn);
    check_shapes(sbn, ev, &th, &xi0, m)?;
    let active = active_edges(sbn, ev);
    let x0 = pack(&xi0, &active);
    let mut tmp = xi0.clone();
    let mut err = None;
    let r = optim::maximise(
        |v, g| {
            unpack(v, &mut tmp, &active);
            match third_order(sbn, ev, &th, &tmp, m, o.engine, true) {
                Ok((val, Some((d, _)))) => {
                    g.copy_from_slice(&pack(&d, &active));
                    val.bound
                }
                Ok(_) => f64::NAN,
                Err(e) => {
                    err = Some(e);
                    f64::NAN
                }
            }
        },
        &x0,
        &o.lbfgs,
    );
    if let Some(e) = err {
        return Err(e);
    }
    let mut xi = xi0;
    unpack(&r.x, &mut xi, &active);
    Ok(LkFit {
        m: m.to_vec(),
        xi,
        bound: r.f,
        iterations: r.iterations,
        converged: r.converged,
    })
}

/// The chain Saul MF → first-order (full ξ) → third-order (full ξ) for one pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct LkChain {
    /// Saul's mean-field bound.
    pub saul: f64,
    /// First-order LK bound with full ξ.
    pub first: LkFit,
    /// Third-order LK bound with full ξ at the first-order m.
    pub third: LkFit,
}

/// Runs the chain from a fitted Saul mean field.
pub fn chain_from_mf(sbn: &Sbn, ev: &Evidence, mf_fit: &MfFit, o: &LkOptions) -> Result<LkChain> {
    let (m0, xi0) = from_saul(sbn, ev, &mf_fit.state);
    let first = fit_first_order(sbn, ev, m0, xi0, o)?;
    let third = fit_third_order(sbn, ev, &first.m, first.xi.clone(), o)?;
    Ok(LkChain {
        saul: mf_fit.bound,
        first,
        third,
    })
}
