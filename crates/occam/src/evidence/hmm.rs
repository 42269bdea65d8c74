//! Hidden Markov chains among the recognised models: `z[S] over T ~ MarkovChain(initial = p0,
//! transition = A)` with observations `x[S, T]` that read the state's parameters (`mu[z]`), each
//! parameter from a constant-hyperparameter prior (module `flat`). The rows of the recognised
//! model are the sequences S, its columns the steps T, its components the K states; `p0` and the
//! rows of `A` are Dirichlet parameters.
//!
//! ln p(D | θ) sums the state paths out by the forward algorithm (Rabiner 1989, eqs. 19–21), each
//! step rescaled to sum to 1 so that ln p(D | θ) = Σ_t ln c_t (eqs. 91–93). Its gradient in θ is
//! Fisher's identity, the expected complete-data score under p(z | D, θ): from the
//! forward–backward marginals γ_t(k) (eq. 27) and ξ_t(j, k) (eq. 37),
//!
//!   ∂/∂p0_k = Σ_s γ_1(k) / p0_k,  ∂/∂A_jk = Σ_s Σ_t ξ_t(j, k) / A_jk,
//!   ∂/∂θ_k = Σ_s Σ_t γ_t(k) ∂ ln f(x_t | θ_k)/∂θ_k,
//!
//! each θ entry taken as a free coordinate (module `unconstrained` maps it to η).

use occam_lang::ir::{ExprOp, Model, Node};

use super::density::{ln_f, Theta};
use super::flat::{Flat, Obs, Param, Prior};
use super::unconstrained::d_ln_f;
use super::NotApplicable;

/// The chain of a recognised model: which parameters are its initial and transition
/// probabilities, and its length.
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    /// The initial probabilities (a Dirichlet over the states, index into `Flat::params`).
    pub initial: usize,
    /// The transition rows (a Dirichlet over the states per state, index into `Flat::params`).
    pub transition: usize,
    /// Steps per sequence.
    pub steps: usize,
}

/// The variable a chain's slot `slot` reads whole: `initial = p0`, `transition = A`.
fn read(m: &Model, v: usize, slot: &str) -> Result<usize, NotApplicable> {
    let var = &m.variables[v];
    let Node::Stochastic { args, .. } = &var.node else {
        return Err(NotApplicable::variable(&var.name, "is not random"));
    };
    match args.iter().find(|a| a.slot == slot).map(|a| &a.value.op) {
        Some(ExprOp::Var(r)) if r.index.iter().all(|i| i.by.is_none()) => Ok(r.var),
        _ => Err(NotApplicable::part(
            &var.name,
            format!("its {slot} is not one variable"),
        )),
    }
}

/// A `MarkovChain` variable `v` over sequences `rows`: (initial variable, transition variable,
/// state plate, time plate), or why it is not a chain the estimators take.
pub(crate) fn recognise(
    m: &Model,
    v: usize,
    rows: usize,
) -> Result<(usize, usize, usize, usize), NotApplicable> {
    let var = &m.variables[v];
    let Node::Stochastic { args, .. } = &var.node else {
        return Err(NotApplicable::variable(&var.name, "is not random"));
    };
    if args.iter().any(|a| a.slot == "lengths") {
        return Err(NotApplicable::variable(
            &var.name,
            "has sequence lengths (only chains of one length are taken)",
        ));
    }
    let (&[s, time], &[k]) = (var.plates.as_slice(), var.event_plates.as_slice()) else {
        return Err(NotApplicable::variable(
            &var.name,
            "is not one chain per row of the observations (`z[S] over T`)",
        ));
    };
    if s != rows {
        return Err(NotApplicable::variable(
            &var.name,
            "does not run over the observations' rows",
        ));
    }
    Ok((read(m, v, "initial")?, read(m, v, "transition")?, k, time))
}

impl Chain {
    /// The chain of variables `initial` and `transition` over `k` states and `steps` steps, once
    /// the parameters and observations are recognised; why not otherwise.
    pub fn new(
        params: &[Param],
        obs: &[Obs],
        initial: usize,
        transition: usize,
        k: usize,
        steps: usize,
    ) -> Result<Chain, NotApplicable> {
        if steps == 0 {
            return Err(NotApplicable::Model("the chain has no steps"));
        }
        let find = |v: usize| params.iter().position(|q| q.var == v);
        let (Some(p0), Some(a)) = (find(initial), find(transition)) else {
            return Err(NotApplicable::Model(
                "the chain's probabilities are not parameters",
            ));
        };
        let dir = |p: &Param| matches!(p.prior, Prior::Dirichlet { width, .. } if width == k);
        if !dir(&params[p0]) || params[p0].by_k || params[p0].cols != 1 {
            return Err(NotApplicable::part(
                &params[p0].name,
                "the initial probabilities are not one Dirichlet over the states",
            ));
        }
        if !dir(&params[a]) || !params[a].by_k || params[a].cols != 1 {
            return Err(NotApplicable::part(
                &params[a].name,
                "the transitions are not one Dirichlet over the states per state",
            ));
        }
        if let Some(p) = params.iter().find(|p| p.cols != 1) {
            return Err(NotApplicable::variable(
                &p.name,
                "varies along a plate other than the states (a chain's emissions do not)",
            ));
        }
        if let Some(o) = obs.iter().find(|o| o.cols != steps) {
            return Err(NotApplicable::variable(
                &o.name,
                "is not laid out as the chain's [sequences, steps]",
            ));
        }
        Ok(Chain {
            initial: p0,
            transition: a,
            steps,
        })
    }
}

/// ln f(x_{s,t} | state k, θ) of every present value at step t of sequence s, into `e` (T × K).
fn emissions(flat: &Flat, theta: &Theta, s: usize, t_len: usize, e: &mut [f64]) {
    e.iter_mut().for_each(|v| *v = 0.0);
    for o in &flat.obs {
        for t in 0..t_len {
            let at = s * o.cols + t;
            if !o.present[at] {
                continue;
            }
            for k in 0..flat.k {
                e[t * flat.k + k] += ln_f(flat, theta, &o.lik, o.values[at], k, t);
            }
        }
    }
}

/// One sequence's scaled forward pass: α̂_t (T × K, each row summing to 1), the emission
/// likelihoods rescaled by their step's largest (b_t(k) = e^{ln f − m_t}), and ln p(x_s | θ);
/// −∞ when a step's rescaled sum vanishes.
struct Forward {
    alpha: Vec<f64>,
    b: Vec<f64>,
    /// Σ_j α̂_{t−1}(j) A_jk b_t(k) summed over k: the scale of step t (p0 ∘ b_1 at t = 1).
    scale: Vec<f64>,
    log_lik: f64,
}

fn forward(flat: &Flat, theta: &Theta, chain: &Chain, e: &[f64]) -> Forward {
    let (k, t_len) = (flat.k, chain.steps);
    let mut f = Forward {
        alpha: vec![0.0; t_len * k],
        b: vec![0.0; t_len * k],
        scale: vec![0.0; t_len],
        log_lik: 0.0,
    };
    let (p0, a) = (&theta[chain.initial], &theta[chain.transition]);
    let pass = forward_scaled(e, 1.0, p0, a, k, &mut f.alpha, &mut f.b, &mut f.scale);
    f.log_lik = pass.unwrap_or_else(|at| at);
    f
}

/// The scaled forward pass of one sequence (Rabiner 1989, eqs. 91–92) with its emissions raised
/// to the inverse temperature `beta`: β = 1 is the evidence's forward algorithm, β < 1 the
/// tempered likelihood Π_t f(x_t | θ_{z_t})^β that annealed importance sampling draws paths
/// under (module `ais_chain`). `e` holds the steps' ln f in every state (T × K), `p0` and `a`
/// the initial and transition probabilities. Writes α̂_t (each row summing to 1) into `alpha`,
/// b_t(k) = e^{β ln f_t(k) − m_t} into `b` (m_t the step's largest β ln f) and each step's
/// scale c_t = Σ_k Σ_j α̂_{t−1}(j) A_jk b_t(k) (p0 ∘ b_1 at t = 1) into `scale`.
///
/// Returns Σ_t (ln c_t + m_t) — ln p(x_s | θ) at β = 1 — once every step is filtered; where a
/// step cannot be, `Err` with the value ln p(x_s | θ) takes there: m_t itself when it is not
/// finite (NaN stays NaN), −∞ when the step's rescaled sum vanishes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn forward_scaled(
    e: &[f64],
    beta: f64,
    p0: &[f64],
    a: &[f64],
    k: usize,
    alpha: &mut [f64],
    b: &mut [f64],
    scale: &mut [f64],
) -> Result<f64, f64> {
    let t_len = e.len() / k;
    let mut log_lik = 0.0;
    for t in 0..t_len {
        let row = &e[t * k..(t + 1) * k];
        let m = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(beta * v));
        if !m.is_finite() {
            return Err(if m.is_nan() { f64::NAN } else { m });
        }
        for j in 0..k {
            b[t * k + j] = (beta * row[j] - m).exp();
        }
        let mut sum = 0.0;
        for j in 0..k {
            let prior = if t == 0 {
                p0[j]
            } else {
                (0..k).map(|i| alpha[(t - 1) * k + i] * a[i * k + j]).sum()
            };
            let v = prior * b[t * k + j];
            alpha[t * k + j] = v;
            sum += v;
        }
        if !(sum > 0.0 && sum.is_finite()) {
            return Err(f64::NEG_INFINITY);
        }
        alpha[t * k..(t + 1) * k].iter_mut().for_each(|v| *v /= sum);
        scale[t] = sum;
        log_lik += sum.ln() + m;
    }
    Ok(log_lik)
}

/// ln p(D | θ): each sequence's states summed out by the forward algorithm.
pub(crate) fn log_lik(flat: &Flat, theta: &Theta) -> f64 {
    let chain = flat.chain.as_ref().expect("a chain model");
    let mut e = vec![0.0; chain.steps * flat.k];
    (0..flat.n)
        .map(|s| {
            emissions(flat, theta, s, chain.steps, &mut e);
            forward(flat, theta, chain, &e).log_lik
        })
        .sum()
}

/// The expected statistics of the states under p(z | D, θ) (module doc), summed over the
/// sequences, and ln p(D | θ).
pub(crate) struct Expected {
    /// Σ_s γ_1(k).
    pub initial: Vec<f64>,
    /// Σ_s Σ_t ξ_t(j, k), K × K.
    pub transitions: Vec<f64>,
    /// γ_t(k) per sequence and step, S × T × K.
    pub gamma: Vec<f64>,
    /// ln p(D | θ).
    pub log_lik: f64,
}

/// The forward–backward marginals at θ (Rabiner eqs. 24–25 and 37, in their scaled forms).
pub(crate) fn expected(flat: &Flat, theta: &Theta) -> Expected {
    let chain = flat.chain.as_ref().expect("a chain model");
    let (k, t_len) = (flat.k, chain.steps);
    let a = &theta[chain.transition];
    let mut out = Expected {
        initial: vec![0.0; k],
        transitions: vec![0.0; k * k],
        gamma: vec![0.0; flat.n * t_len * k],
        log_lik: 0.0,
    };
    let mut e = vec![0.0; t_len * k];
    let mut beta = vec![0.0; t_len * k];
    for s in 0..flat.n {
        emissions(flat, theta, s, t_len, &mut e);
        let f = forward(flat, theta, chain, &e);
        out.log_lik += f.log_lik;
        if !f.log_lik.is_finite() {
            continue;
        }
        // β̂_T = 1; β̂_t(j) = Σ_k A_jk b_{t+1}(k) β̂_{t+1}(k) / scale_{t+1}.
        beta[(t_len - 1) * k..].iter_mut().for_each(|v| *v = 1.0);
        for t in (0..t_len - 1).rev() {
            for j in 0..k {
                beta[t * k + j] = (0..k)
                    .map(|l| a[j * k + l] * f.b[(t + 1) * k + l] * beta[(t + 1) * k + l])
                    .sum::<f64>()
                    / f.scale[t + 1];
            }
        }
        let g = &mut out.gamma[s * t_len * k..(s + 1) * t_len * k];
        for t in 0..t_len {
            for j in 0..k {
                g[t * k + j] = f.alpha[t * k + j] * beta[t * k + j];
            }
        }
        for (i, gj) in out.initial.iter_mut().zip(&g[..k]) {
            *i += gj;
        }
        // ξ_t(j, l) = α̂_{t−1}(j) A_jl b_t(l) β̂_t(l) / scale_t.
        for t in 1..t_len {
            for j in 0..k {
                let aj = f.alpha[(t - 1) * k + j] / f.scale[t];
                for l in 0..k {
                    out.transitions[j * k + l] +=
                        aj * a[j * k + l] * f.b[t * k + l] * beta[t * k + l];
                }
            }
        }
    }
    out
}

/// Adds ∂ ln p(D | θ)/∂θ (module doc) to `g`; returns ln p(D | θ).
pub(crate) fn d_log_lik(flat: &Flat, theta: &Theta, g: &mut Theta) -> f64 {
    let chain = flat.chain.as_ref().expect("a chain model");
    let (k, t_len) = (flat.k, chain.steps);
    let x = expected(flat, theta);
    if !x.log_lik.is_finite() {
        return x.log_lik;
    }
    for j in 0..k {
        g[chain.initial][j] += x.initial[j] / theta[chain.initial][j];
    }
    for (jl, &c) in x.transitions.iter().enumerate() {
        g[chain.transition][jl] += c / theta[chain.transition][jl];
    }
    for s in 0..flat.n {
        for o in &flat.obs {
            for t in 0..t_len {
                let at = s * o.cols + t;
                if !o.present[at] {
                    continue;
                }
                for c in 0..k {
                    let r = x.gamma[(s * t_len + t) * k + c];
                    if r > 0.0 {
                        d_ln_f(flat, theta, &o.lik, o.values[at], c, t, r, g);
                    }
                }
            }
        }
    }
    x.log_lik
}

pub(crate) use super::hmm_exact::exact;

/// Steps per row: a chain's length, 1 for rows of independent values.
pub(crate) fn steps(flat: &Flat) -> usize {
    flat.chain.as_ref().map_or(1, |c| c.steps)
}

impl Flat {
    /// Whether the posterior is symmetric under relabelling K > 1 components: a mixture's, or a
    /// chain's states (which permutes the initial probabilities and the transition matrix's
    /// rows and columns too).
    pub fn has_states(&self) -> bool {
        (self.weights.is_some() || self.chain.is_some()) && self.k > 1
    }
}
