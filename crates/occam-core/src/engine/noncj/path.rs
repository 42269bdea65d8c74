//! The states a checked step tries (module `noncj`): points on the path from the old q to the
//! step's target, and the point mass at the old mean from which the fallback step is taken.

use super::super::*;
use crate::dist::OutOfDomain;

/// Whether the node's q is an (untruncated) Gaussian whose φ and u are laid out per element as
/// φ = [Λm, −½Λ], u = [m, Λ⁻¹ + mmᵀ] (d + d² numbers): the families whose step follows the
/// mean–precision path and may fall back to the step from the point mass.
pub(super) fn gaussian(node: &Node, q: &NodeState) -> Option<usize> {
    let MomentKind::Gaussian { d } = node.kind else {
        return None;
    };
    let family = matches!(
        node.dist(),
        Some(Dist::Gaussian(_) | Dist::MvGaussian(_) | Dist::GaussianArd(_))
    );
    let per_element = node.len == d + d * d && q.phi.len() == node.n * node.len;
    (family && per_element && q.u.len() == q.phi.len()).then_some(d)
}

/// Whether element e of the node has a q of its own (latent and taking part in the bound).
fn latent(node: &Node, e: usize) -> bool {
    !node.is_observed(e) && node.participates(e)
}

/// `old` with every latent element's u replaced by that of the point mass at its mean,
/// [m, mmᵀ]: the moments from which the children's messages give the Newton step on the mean with
/// the Hessian at the mean (module docs of `noncj`). Only messages are read from it.
pub(super) fn point_mass(node: &Node, old: &NodeState, d: usize) -> NodeState {
    let mut q = old.clone();
    let len = node.len;
    for e in (0..node.n).filter(|&e| latent(node, e)) {
        let u = &mut q.u[e * len..(e + 1) * len];
        let (m, mm) = u.split_at_mut(d);
        for (c, col) in mm.chunks_exact_mut(d).enumerate() {
            for (r, x) in col.iter_mut().enumerate() {
                *x = m[r] * m[c];
            }
        }
    }
    q
}

/// The state at step length ρ from `old` towards `full`, with its moments; `None` where a
/// family's moments refuse it. A Gaussian q (`d` given) moves along the mean–precision path,
/// m(ρ) = m₀ + ρ(m* − m₀), Λ(ρ) = Λ₀ + ρ(Λ* − Λ₀); any other q along the straight line in φ.
pub(super) fn along(
    node: &Node,
    old: &NodeState,
    full: &NodeState,
    rho: f64,
    d: Option<usize>,
) -> Option<NodeState> {
    let mut q = old.clone();
    match d {
        Some(d) => {
            let len = node.len;
            for e in (0..node.n).filter(|&e| latent(node, e)) {
                let r = e * len..(e + 1) * len;
                let (p0, p1) = (&old.phi[r.clone()], &full.phi[r.clone()]);
                let (m0, m1) = (&old.u[r.start..r.start + d], &full.u[r.start..r.start + d]);
                let phi = &mut q.phi[r];
                let (h, prec) = phi.split_at_mut(d);
                for ((x, a), b) in prec.iter_mut().zip(&p0[d..]).zip(&p1[d..]) {
                    *x = a + rho * (b - a);
                }
                // h = Λ(ρ) m(ρ), with Λ(ρ) = −2 φ₂(ρ) (column-major, symmetric).
                for (row, hr) in h.iter_mut().enumerate() {
                    *hr = (0..d)
                        .map(|c| -2.0 * prec[c * d + row] * (m0[c] + rho * (m1[c] - m0[c])))
                        .sum();
                }
            }
        }
        None => {
            for (p, (a, b)) in q.phi.iter_mut().zip(old.phi.iter().zip(&full.phi)) {
                *p = a + rho * (b - a);
            }
        }
    }
    let dist = node.dist().expect("stochastic").clone();
    dist.visit(Moments { node, q: &mut q }).ok()?;
    Some(q)
}

/// u and A of every latent element from its φ; observed elements keep theirs.
struct Moments<'a> {
    node: &'a Node,
    q: &'a mut NodeState,
}

impl DistVisitor for Moments<'_> {
    type Output = Result<(), OutOfDomain>;
    fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
        let (c, len) = (self.node, self.node.len);
        for e in (0..c.n).filter(|&e| latent(c, e)) {
            let r = e * len..(e + 1) * len;
            self.q.a[e] = d.moments(&self.q.phi[r.clone()], &mut self.q.u[r])?;
        }
        Ok(())
    }
}
