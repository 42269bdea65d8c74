//! Non-conjugate VMP with a checked step (Knowles & Minka 2011, "Non-conjugate variational
//! message passing for multinomial and binary regression"): the block of a stochastic node that
//! reaches, through deterministic nodes only, a child whose family is non-conjugate
//! ([`crate::dist::ExpFamily::non_conjugate`]: the quadrature logit families, the log-link
//! Poisson).
//!
//! Such a child's message is the gradient of its bound term at the current moments of the node,
//! not a constant of them (Knowles & Minka eq. (6)). The node's ordinary update, Winn (2.19),
//! φ* = ⟨φ_prior⟩ + Σ messages, is then a natural-gradient step of length one on the bound:
//! for an exponential-family q, ∂L/∂u = ⟨φ_prior⟩ + Σ m − φ, and ∂L/∂φ = F(φ)·∂L/∂u with the
//! Fisher matrix F = ∂u/∂φ, so φ* − φ = F⁻¹∂L/∂φ is an ascent direction, but the full step may
//! overshoot (the bound is not quadratic in u). The update here takes the step, evaluates the
//! terms of the bound that read the node's moments (its own and those of its stochastic
//! descendants through deterministic nodes), and if they fell tries ρ = 1/2, 1/4, … of it (at
//! most [`HALVINGS`] times) along a path from the old q; if none raises them the old q is kept.
//! The bound therefore never decreases, whatever the messages.
//!
//! **The path for a Gaussian q.** With q = N(m, Λ⁻¹) the target is Λ* = −2·(the messages' and
//! prior's ⟨wwᵀ⟩ part) and m* = m + Λ*⁻¹∇_m L (∇_m L = φ*₁ + 2φ*₂m = Λ*(m* − m)): a Newton step on
//! the mean whose Hessian is the expected Hessian of the log joint (Bonnet's and Price's
//! theorems, Opper & Archambeau 2009, eqs. (9)–(10)), and the fixed-point step for the precision.
//! The step is shortened along m(ρ) = m + ρ(m* − m), Λ(ρ) = Λ + ρ(Λ* − Λ): an ascent direction at
//! ρ = 0, since dL/dρ = ∇_m Lᵀ Λ*⁻¹ ∇_m L + ½ tr(Σ(Λ* − Λ)Σ(Λ* − Λ)) ≥ 0 with Σ = Λ⁻¹ (using
//! ∂L/∂Σ = ½(Λ − Λ*)), and every Λ(ρ) is positive definite. The straight line in φ = [Λm, −½Λ]
//! is not used for a Gaussian: its mean is the precision-weighted average of the two ends', so
//! from a tight q (a large Λ) it hardly moves the mean until ρ ≈ 1 — a Poisson regression started
//! from a broad prior climbed ~1 nat a sweep for 70 sweeps. Any other family's q moves along the
//! straight line in φ.
//!
//! **The step from the point mass.** From a broad q the target itself may not be representable:
//! under `Poisson(exp(x·w))` the child's ⟨e^η⟩ = e^{x·m + xᵀΣx/2} spans hundreds of orders of
//! magnitude over the rows when Σ = 100 I, and Λ* = Λ₀ + Σ_n ⟨e^{η_n}⟩ x_n x_nᵀ is then not
//! positive definite in floating point. The step is then taken from the point mass at the old
//! mean, u = [m, mmᵀ] (messages read at zero variance): Λ* is the Hessian of the negative log
//! joint at m, m* the Newton step from m — the Laplace step — and the result is checked against
//! the old q's bound and shortened along the path from the old q as above. If that target is not
//! representable either, the update fails with the numerical error of the first step.
//!
//! Every other part of the block is the factorised node's: its bound term, its messages to its
//! parents and its start.

mod path;

use super::factorised::{factorised_bound, factorised_send};
use super::*;

/// Step halvings tried before the old q is kept (ρ down to 2⁻²⁰).
const HALVINGS: usize = 20;

/// A factorised node updated by a checked natural-gradient step (module docs).
#[derive(Clone, Debug)]
pub(crate) struct NonConjugate {
    node: [usize; 1],
    /// The node and its stochastic descendants through deterministic nodes: the nodes whose
    /// bound terms read the node's moments.
    watched: Vec<usize>,
}

/// Whether stochastic node i needs the checked step: a descendant through deterministic nodes
/// only, read in a parent slot, has a non-conjugate family.
pub(super) fn needs_checked_step(nodes: &[Node], i: usize) -> bool {
    watched(nodes, i)
        .iter()
        .skip(1)
        .any(|&c| nodes[c].dist().is_some_and(|d| d.non_conjugate()))
}

/// Node i and its stochastic descendants through deterministic nodes, in discovery order.
fn watched(nodes: &[Node], i: usize) -> Vec<usize> {
    let mut out = vec![i];
    let mut stack = vec![i];
    let mut seen = vec![false; nodes.len()];
    seen[i] = true;
    while let Some(j) = stack.pop() {
        for &(c, _) in &nodes[j].children {
            if std::mem::replace(&mut seen[c], true) {
                continue;
            }
            match nodes[c].body {
                Body::Deterministic(_) => stack.push(c),
                _ => out.push(c),
            }
        }
    }
    out
}

/// The bound terms of the `watched` members (those a checked step's candidate moves), each by its
/// block: the criterion a checked step compares before and after (here and in `softmax_joint`).
pub(super) fn watched_bound(vmp: &Vmp, watched: &[usize]) -> f64 {
    watched
        .iter()
        .map(|&m| match vmp.block_of(m) {
            Some(b) => b.bound(vmp, &vmp.cache, m, false),
            None => 0.0,
        })
        .sum()
}

impl NonConjugate {
    pub(super) fn new(nodes: &[Node], node: usize) -> Self {
        NonConjugate {
            node: [node],
            watched: watched(nodes, node),
        }
    }

    /// The terms of the bound that read the node's moments.
    fn local_bound(&self, vmp: &Vmp) -> f64 {
        watched_bound(vmp, &self.watched)
    }
}

impl QBlock for NonConjugate {
    fn members(&self) -> &[usize] {
        &self.node
    }

    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError> {
        let i = member;
        vmp.nodes[i].keep_natural();
        let old = vmp.nodes[i].q.clone();
        let before = self.local_bound(vmp);
        let gaussian = path::gaussian(&vmp.nodes[i], &old);
        if let Err(err) = vmp.update_factorised(i) {
            // The target is not representable: the step from the point mass (module docs).
            let Some(d) = gaussian else {
                self.put(vmp, i, old);
                return Err(err);
            };
            self.put(vmp, i, path::point_mass(&vmp.nodes[i], &old, d));
            if vmp.update_factorised(i).is_err() {
                self.put(vmp, i, old);
                return Err(err);
            }
        }
        // Round-off of the terms' sums may move them by a few ulps (see `Vmp::bound_roundoff`).
        let slack = 64.0 * f64::EPSILON * before.abs();
        let accept = |now: f64| now >= before - slack || !before.is_finite() && now.is_finite();
        if accept(self.local_bound(vmp)) || vmp.nodes[i].map {
            return Ok(());
        }
        let full = vmp.nodes[i].q.clone();
        let mut rho = 1.0;
        for _ in 0..HALVINGS {
            rho *= 0.5;
            let Some(q) = path::along(&vmp.nodes[i], &old, &full, rho, gaussian) else {
                continue;
            };
            self.put(vmp, i, q);
            if accept(self.local_bound(vmp)) {
                return Ok(());
            }
        }
        self.put(vmp, i, old);
        Ok(())
    }

    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        factorised_bound(vmp, cache, member, sizes)
    }

    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        factorised_send(vmp, member, role, out)
    }
}

impl NonConjugate {
    /// Installs `q` as node i's state, dropping what read the old one.
    fn put(&self, vmp: &mut Vmp, i: usize, q: NodeState) {
        let n = &mut vmp.nodes[i];
        n.q = q;
        n.lazy = Default::default();
        vmp.changed(i);
        vmp.refresh_dependents(i);
    }
}
