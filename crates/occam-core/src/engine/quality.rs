//! What each node's bound term is — the ELBO's own expectation, a lower bound on it, or an
//! estimate ([`BoundQuality`]) — and the kind of the whole bound (the worst of its terms).

use super::*;
use crate::dist::BoundQuality;

impl Vmp {
    /// The kind of each node's bound term: its family's ([`ExpFamily::bound_quality`]) for a
    /// stochastic node (for an importance-sampled one `Approximate`, or `Exact` when its q was in
    /// closed form, `sampled`); `Exact` for chains (their joint q's expectations are closed form),
    /// deterministic nodes and constants (no term).
    pub fn node_qualities(&self) -> Vec<BoundQuality> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| match (&n.body, self.block_of(i)) {
                // An importance-sampled node's term is an estimate whatever its family, unless
                // every element's q was in closed form (`sampled`).
                (Body::Stochastic(_), Some(qblock::Block::Sampled(s))) => s.quality(self),
                (Body::Stochastic(d), _) => d.bound_quality(),
                _ => BoundQuality::Exact,
            })
            .collect()
    }

    /// The child whose term is Böhning's bound on the softmax (`CategoricalSoftmax`) that
    /// stochastic node `node` reaches through a slot, directly or through deterministic nodes
    /// (the logits `w @ x + b`): such a term's curvature is fixed at ½(I − 11ᵀ/K), above the
    /// softmax's own, so the posterior sds of `node` are understated (as measured in
    /// [`crate::dist::BOHNING_SDS`]). `None` for any other node.
    pub fn sds_understated_by(&self, node: NodeId) -> Option<NodeId> {
        if !matches!(self.nodes[node.0].body, Body::Stochastic(_)) {
            return None;
        }
        let mut stack: Vec<usize> = vec![node.0];
        let mut seen = vec![false; self.nodes.len()];
        while let Some(i) = stack.pop() {
            for &(c, role) in &self.nodes[i].children {
                if seen[c] || !matches!(role, crate::network::Role::Slot(_)) {
                    continue;
                }
                seen[c] = true;
                match &self.nodes[c].body {
                    Body::Stochastic(Dist::CategoricalSoftmax(_)) => return Some(NodeId(c)),
                    Body::Deterministic(_) => stack.push(c),
                    _ => {}
                }
            }
        }
        None
    }

    /// The kind of the bound: the worst kind among the nodes' terms.
    pub fn bound_quality(&self) -> BoundQuality {
        BoundQuality::total(self.node_qualities())
    }
}
