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

    /// The kind of the bound: the worst kind among the nodes' terms.
    pub fn bound_quality(&self) -> BoundQuality {
        BoundQuality::total(self.node_qualities())
    }
}
