//! The first- and third-order bounds evaluated at (ξ, μ), and their optimisation (L-BFGS over ξ,
//! fixed-point sweeps over μ), started from Saul's mean field.

use crate::sbn::error::{Result, SbnError};
use crate::sbn::mf::{self, MfFit};
use crate::sbn::model::{Evidence, Sbn};
use crate::sbn::optim::{self, LbfgsOptions};
use occam_core::special::{binary_entropy_pm, sigmoid, softplus};

use super::{
    backprop, build_terms, first_moment, moments, MomentEngine, PmParams, TermAdjoint, Terms,
    XiParams,
};

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
    v += m.iter().map(|&x| binary_entropy_pm(x)).sum::<f64>();
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
        + m.iter().map(|&x| binary_entropy_pm(x)).sum::<f64>();
    let (corr, lambda0, g2, g3) = if k2 > 1e-300 {
        let l0 = k3 / (3.0 * k2);
        let u = l0 + (0.5 * k2).ln();
        let sg = sigmoid(u);
        (softplus(u), l0, sg * (1.0 - l0) / k2, sg / (3.0 * k2))
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
/// (Saul's bound is Leisink & Kappen (41) plus a free additive offset in ξ^p per unit: the literal
/// (41) is far looser; see docs/seed-corrections.md).
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

/// Third-order bound maximised over ξ at fixed m (Leisink & Kappen §5.2, Table 1's third order
/// with full ξ: μ from the mean-field solution, all ξ re-optimised), starting from `xi0`.
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
