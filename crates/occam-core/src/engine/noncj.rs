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
//! descendants through deterministic nodes), and if they fell halves the step,
//! φ = φ_old + ρ(φ* − φ_old), ρ = 1/2, 1/4, … (at most [`HALVINGS`] times); if none raises them
//! the old q is kept. The bound therefore never decreases, whatever the messages.
//!
//! Every other part of the block is the factorised node's: its bound term, its messages to its
//! parents and its start.

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

impl NonConjugate {
    pub(super) fn new(nodes: &[Node], node: usize) -> Self {
        NonConjugate {
            node: [node],
            watched: watched(nodes, node),
        }
    }

    /// The terms of the bound that read the node's moments.
    fn local_bound(&self, vmp: &Vmp) -> f64 {
        self.watched
            .iter()
            .map(|&m| match vmp.block_of(m) {
                Some(b) => b.bound(vmp, &vmp.cache, m, false),
                None => 0.0,
            })
            .sum()
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
        vmp.update_factorised(i)
            .inspect_err(|_| self.put(vmp, i, old.clone()))?;
        // Round-off of the terms' sums may move them by a few ulps (see `Vmp::bound_roundoff`).
        let slack = 64.0 * f64::EPSILON * before.abs();
        let accept = |now: f64| now >= before - slack || !before.is_finite() && now.is_finite();
        if accept(self.local_bound(vmp)) || vmp.nodes[i].map {
            return Ok(());
        }
        let full = vmp.nodes[i].q.phi.clone();
        let dist = vmp.nodes[i].dist().expect("stochastic").clone();
        let mut rho = 1.0;
        for _ in 0..HALVINGS {
            rho *= 0.5;
            let mut q = old.clone();
            for (p, (a, b)) in q.phi.iter_mut().zip(old.phi.iter().zip(&full)) {
                *p = a + rho * (b - a);
            }
            if dist
                .visit(Moments {
                    node: &vmp.nodes[i],
                    q: &mut q,
                })
                .is_err()
            {
                continue;
            }
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

/// u and A of every latent element from its φ (the interpolated step); observed elements keep
/// theirs.
struct Moments<'a> {
    node: &'a Node,
    q: &'a mut NodeState,
}

impl DistVisitor for Moments<'_> {
    type Output = Result<(), OutOfDomain>;
    fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
        let (c, len) = (self.node, self.node.len);
        for e in (0..c.n).filter(|&e| !c.is_observed(e) && c.participates(e)) {
            let r = e * len..(e + 1) * len;
            self.q.a[e] = d.moments(&self.q.phi[r.clone()], &mut self.q.u[r])?;
        }
        Ok(())
    }
}

use crate::dist::OutOfDomain;
