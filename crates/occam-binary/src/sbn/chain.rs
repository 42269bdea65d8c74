//! Markov-chain q for layered SBNs (Frey, Lawrence & Bishop 1998; Lawrence §2.4.3, App. B).
//!
//! The hidden units of each layer (in index order) form a chain:
//! Q(s_1) = Bern(μ_{1,1}) (the chain starts from the bias state s_0 = 1, A_0 = (0, 1)ᵀ (2.40)),
//! Q(s_t | s_{t−1}) = Bern(μ_{t,s_{t−1}}) (2.38)–(2.39); layers are independent, so for a layered
//! net ⟨s_i z_i⟩ = ⟨s_i⟩⟨z_i⟩. Marginals p_t = μ_{t,1}p_{t−1} + μ_{t,0}(1−p_{t−1}) (2.42)–(2.43).
//! Saul's bound holds for any q (Jensen), with ⟨e^{a z_i}⟩ computed by a forward pass of 2×2
//! transfer matrices along the parent layer's chain (2.46)–(2.49). Entropy (2.50).
//! Gradients wrt the logits φ (μ = σ(φ)) and ξ are by forward/backward products (App. B), and
//! the bound is maximised by L-BFGS from the mean-field solution (Lawrence: "always initialise
//! from the mean-field solution"), so it never ends below the mean-field bound.

use super::error::{Result, SbnError};
use super::math::clamp_mu;
use super::mf::{self, MfOptions};
use super::model::{Evidence, Sbn};
use super::optim::{self, LbfgsOptions};
use occam_core::special::{binary_entropy, log_add_exp, logit, sigmoid};

/// Chain structure of a layered network under given evidence.
#[derive(Debug, Clone)]
pub struct ChainLayout {
    /// Hidden units of each chain, in order.
    pub chains: Vec<Vec<usize>>,
    /// (chain, position) of each hidden unit.
    pub pos: Vec<Option<(usize, usize)>>,
    /// The chain holding the hidden parents of each unit (None if no hidden parents).
    pub parent_chain: Vec<Option<usize>>,
}

impl ChainLayout {
    /// Builds the layout; errors if some edge does not join consecutive layers.
    pub fn new(sbn: &Sbn, ev: &Evidence) -> Result<Self> {
        ev.check(sbn)?;
        let n = sbn.n_units();
        let mut depth = vec![0usize; n];
        for &i in sbn.order() {
            for e in sbn.parent_edges(i) {
                depth[i] = depth[i].max(depth[sbn.edge_parent(e)] + 1);
            }
        }
        for e in 0..sbn.n_edges() {
            let (p, c) = (sbn.edge_parent(e), sbn.edge_child(e));
            if depth[c] != depth[p] + 1 {
                return Err(SbnError::NotApplicable {
                    method: "Markov-chain q".into(),
                    why: format!(
                        "edge {p}→{c} skips a layer (depths {} and {})",
                        depth[p], depth[c]
                    ),
                });
            }
        }
        let nd = depth.iter().copied().max().unwrap_or(0) + 1;
        let mut chains = vec![Vec::new(); nd];
        let mut pos = vec![None; n];
        for (i, &d) in depth.iter().enumerate() {
            if ev.get(i).is_none() {
                pos[i] = Some((d, chains[d].len()));
                chains[d].push(i);
            }
        }
        let parent_chain = (0..n)
            .map(|i| {
                sbn.parent_edges(i)
                    .find(|&e| ev.get(sbn.edge_parent(e)).is_none())
                    .map(|e| depth[sbn.edge_parent(e)])
            })
            .collect();
        Ok(ChainLayout {
            chains,
            pos,
            parent_chain,
        })
    }
}

/// Variational parameters: per hidden unit (μ_{t,0}, μ_{t,1}) as logits, and ξ per unit.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainParams {
    /// Logit of μ_{t,0} per unit (unused for chain heads and observed units).
    pub phi0: Vec<f64>,
    /// Logit of μ_{t,1} per unit.
    pub phi1: Vec<f64>,
    /// ξ per unit.
    pub xi: Vec<f64>,
}

/// Forward/backward pass of ⟨Π_t e^{x_t s_t}⟩ along one chain. Returns F and fills
/// dF/dμ_{t,0}, dF/dμ_{t,1} and dF/dx_t (x_t = a·w_t).
fn chain_expect(
    mu0: &[f64],
    mu1: &[f64],
    x: &[f64],
    d0: &mut [f64],
    d1: &mut [f64],
    dx: &mut [f64],
) -> f64 {
    let t_len = x.len();
    // α_t(s) includes g_t(s) = e^{x_t s}
    let mut al = vec![[0.0f64; 2]; t_len + 1];
    al[0] = [0.0, 1.0];
    for t in 0..t_len {
        let g1 = x[t].exp();
        let (a0, a1) = (al[t][0], al[t][1]);
        al[t + 1][1] = g1 * (mu1[t] * a1 + mu0[t] * a0);
        al[t + 1][0] = (1.0 - mu1[t]) * a1 + (1.0 - mu0[t]) * a0;
    }
    let f = al[t_len][0] + al[t_len][1];
    let mut be = [1.0f64, 1.0];
    for t in (0..t_len).rev() {
        let g1 = x[t].exp();
        let (a0, a1) = (al[t][0], al[t][1]);
        // F = Σ_{s'} α_{t}(s') Σ_s Q(s|s') g(s) β(s)
        d1[t] += a1 * (g1 * be[1] - be[0]);
        d0[t] += a0 * (g1 * be[1] - be[0]);
        dx[t] += al[t + 1][1] * be[1];
        let nb1 = mu1[t] * g1 * be[1] + (1.0 - mu1[t]) * be[0];
        let nb0 = mu0[t] * g1 * be[1] + (1.0 - mu0[t]) * be[0];
        be = [nb0, nb1];
    }
    f
}

/// The chain bound and its gradient wrt (φ0, φ1, ξ) (per-unit vectors).
pub fn bound_grad(
    sbn: &Sbn,
    ev: &Evidence,
    lay: &ChainLayout,
    p: &ChainParams,
    grad: Option<&mut ChainParams>,
) -> f64 {
    let n = sbn.n_units();
    let w = sbn.weights();
    // means
    let mut mu0 = vec![0.0; n];
    let mut mu1 = vec![0.0; n];
    let mut pm = vec![0.0; n];
    for i in 0..n {
        match ev.get(i) {
            Some(v) => pm[i] = f64::from(u8::from(v)),
            None => {
                mu0[i] = clamp_mu(sigmoid(p.phi0[i]));
                mu1[i] = clamp_mu(sigmoid(p.phi1[i]));
            }
        }
    }
    for ch in &lay.chains {
        let mut prev = 1.0;
        for (t, &u) in ch.iter().enumerate() {
            if t == 0 {
                mu0[u] = mu1[u]; // head: s_0 = 1, μ_{1,0} unused
            }
            pm[u] = mu1[u] * prev + mu0[u] * (1.0 - prev);
            prev = pm[u];
        }
    }
    let mut adj_p = vec![0.0; n];
    let mut adj_mu0 = vec![0.0; n];
    let mut adj_mu1 = vec![0.0; n];
    let mut adj_xi = vec![0.0; n];
    let mut total = 0.0;
    for i in 0..n {
        let xi = p.xi[i];
        let z = sbn.field(i, &pm);
        // ln E^a for a = −ξ and a = 1−ξ: constant part from bias and observed parents
        let mut lc = [0.0f64; 2];
        let mut dlc = [0.0f64; 2]; // d ln E^a / d a
        let aa = [-xi, 1.0 - xi];
        for k in 0..2 {
            lc[k] = aa[k] * sbn.bias()[i];
            dlc[k] = sbn.bias()[i];
        }
        for e in sbn.parent_edges(i) {
            let j = sbn.edge_parent(e);
            if let Some(v) = ev.get(j) {
                let x = f64::from(u8::from(v));
                for k in 0..2 {
                    lc[k] += aa[k] * w[e] * x;
                    dlc[k] += w[e] * x;
                }
            }
        }
        let mut chain_grads: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        if let Some(c) = lay.parent_chain[i] {
            let ch = &lay.chains[c];
            let mut wt = vec![0.0; ch.len()];
            for e in sbn.parent_edges(i) {
                if let Some((cc, t)) = lay.pos[sbn.edge_parent(e)] {
                    if cc == c {
                        wt[t] = w[e];
                    }
                }
            }
            let m0: Vec<f64> = ch.iter().map(|&u| mu0[u]).collect();
            let m1: Vec<f64> = ch.iter().map(|&u| mu1[u]).collect();
            for k in 0..2 {
                let x: Vec<f64> = wt.iter().map(|v| aa[k] * v).collect();
                let (mut d0, mut d1, mut dx) = (
                    vec![0.0; ch.len()],
                    vec![0.0; ch.len()],
                    vec![0.0; ch.len()],
                );
                let f = chain_expect(&m0, &m1, &x, &mut d0, &mut d1, &mut dx);
                lc[k] += f.ln();
                dlc[k] += dx.iter().zip(&wt).map(|(d, v)| d * v).sum::<f64>() / f;
                chain_grads.push((
                    d0.iter().map(|v| v / f).collect(),
                    d1.iter().map(|v| v / f).collect(),
                ));
            }
        }
        let lse = log_add_exp(lc[0], lc[1]);
        total += (pm[i] - xi) * z - lse;
        let r = [sigmoid(lc[0] - lc[1]), sigmoid(lc[1] - lc[0])];
        // ∂/∂ξ: −z − Σ_k r_k dlnE^k/da · (da/dξ = −1)
        adj_xi[i] += -z + r[0] * dlc[0] + r[1] * dlc[1];
        if ev.get(i).is_none() {
            adj_p[i] += z;
        }
        for e in sbn.parent_edges(i) {
            let j = sbn.edge_parent(e);
            if ev.get(j).is_none() {
                adj_p[j] += (pm[i] - xi) * w[e];
            }
        }
        if let Some(c) = lay.parent_chain[i] {
            for (k, (g0, g1)) in chain_grads.iter().enumerate() {
                for (t, &u) in lay.chains[c].iter().enumerate() {
                    adj_mu0[u] -= r[k] * g0[t];
                    adj_mu1[u] -= r[k] * g1[t];
                }
            }
        }
    }
    // entropy (2.50) and back-propagation of the marginal recursion
    for ch in &lay.chains {
        let mut prevs = Vec::with_capacity(ch.len());
        let mut prev = 1.0;
        for &u in ch {
            prevs.push(prev);
            total += prev * binary_entropy(mu1[u]) + (1.0 - prev) * binary_entropy(mu0[u]);
            prev = pm[u];
        }
        for t in (0..ch.len()).rev() {
            let u = ch[t];
            let pv = prevs[t];
            let ap = adj_p[u];
            adj_mu1[u] += ap * pv + pv * (1.0 / mu1[u] - 1.0).ln();
            adj_mu0[u] += ap * (1.0 - pv) + (1.0 - pv) * (1.0 / mu0[u] - 1.0).ln();
            if t > 0 {
                adj_p[ch[t - 1]] +=
                    ap * (mu1[u] - mu0[u]) + binary_entropy(mu1[u]) - binary_entropy(mu0[u]);
            }
        }
        if let Some(&h) = ch.first() {
            // head: μ_{1,0} ≡ μ_{1,1}
            adj_mu1[h] += adj_mu0[h];
            adj_mu0[h] = 0.0;
        }
    }
    if let Some(g) = grad {
        for i in 0..n {
            g.xi[i] = adj_xi[i];
            if ev.get(i).is_none() {
                g.phi0[i] = adj_mu0[i] * mu0[i] * (1.0 - mu0[i]);
                g.phi1[i] = adj_mu1[i] * mu1[i] * (1.0 - mu1[i]);
            } else {
                g.phi0[i] = 0.0;
                g.phi1[i] = 0.0;
            }
        }
    }
    total
}

/// Options of the chain fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainOptions {
    /// Mean-field fit used as the starting point.
    pub mf: MfOptions,
    /// L-BFGS options.
    pub lbfgs: LbfgsOptions,
}

impl Default for ChainOptions {
    fn default() -> Self {
        ChainOptions {
            mf: MfOptions::default(),
            lbfgs: LbfgsOptions {
                max_iter: 500,
                ..LbfgsOptions::default()
            },
        }
    }
}

/// A fitted chain q.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainFit {
    /// Parameters.
    pub params: ChainParams,
    /// Lower bound on ln P(v).
    pub bound: f64,
    /// Mean-field bound it started from.
    pub mf_bound: f64,
    /// L-BFGS iterations.
    pub iterations: usize,
    /// Converged flag.
    pub converged: bool,
}

/// Parameters equal to a mean-field state (φ_{t,0} = φ_{t,1} = logit μ_t): the chain bound then
/// equals the mean-field bound.
pub fn from_mf(st: &mf::MfState) -> ChainParams {
    let phi: Vec<f64> = st.mu.iter().map(|&m| logit(clamp_mu(m))).collect();
    ChainParams {
        phi0: phi.clone(),
        phi1: phi,
        xi: st.xi.clone(),
    }
}

/// Fits the chain q by L-BFGS from the mean-field solution.
pub fn fit(sbn: &Sbn, ev: &Evidence, o: &ChainOptions) -> Result<ChainFit> {
    let lay = ChainLayout::new(sbn, ev)?;
    let mf_fit = mf::fit(sbn, ev, &o.mf)?;
    let p0 = from_mf(&mf_fit.state);
    let n = sbn.n_units();
    let pack = |p: &ChainParams| -> Vec<f64> {
        p.phi0.iter().chain(&p.phi1).chain(&p.xi).copied().collect()
    };
    let unpack = |v: &[f64]| ChainParams {
        phi0: v[..n].to_vec(),
        phi1: v[n..2 * n].to_vec(),
        xi: v[2 * n..].to_vec(),
    };
    let mut g = p0.clone();
    let r = optim::maximise(
        |v, gv| {
            let p = unpack(v);
            let f = bound_grad(sbn, ev, &lay, &p, Some(&mut g));
            gv.copy_from_slice(&pack(&g));
            f
        },
        &pack(&p0),
        &o.lbfgs,
    );
    Ok(ChainFit {
        params: unpack(&r.x),
        bound: r.f,
        mf_bound: mf_fit.bound,
        iterations: r.iterations,
        converged: r.converged,
    })
}
