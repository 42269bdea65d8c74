//! A gated block's x cut into rows of the data plate, for a sharded fit that starts where a
//! single-process one does (`shard/state.rs`, [`Vmp::rows_state`]).
//!
//! The index s keeps per-row arrays (ℓ, r, ln Σ_k exp ℓ_nk) and is cut like any local node. x
//! keeps u = [m_nk (N·K·q), Σ_k (K·q²)], A = [ln |Σ_k|] (K) and the responsibility-weighted sums
//! in φ (module docs of `gated_linear`): a shard of rows `from..to` takes those rows of the means,
//! the covariances and log-determinants whole (they do not depend on n: Σ_k = (I + ⟨τ⟩⟨W_kᵀW_k⟩)⁻¹,
//! Winn (3.20)), and the sums over its own rows, which add up over the shards to the
//! single-process sums (up to the order of the additions).

use super::kernels;
use super::*;
use crate::engine::qblock::Block;

impl Vmp {
    /// Rows `from..to` (of `rows`) of node i's state if it is a gated block's x, as a shard of
    /// those rows keeps it (module docs); `None` for any other node. `Err` with why when x has
    /// no state yet (before the block's start).
    pub(in crate::engine) fn gated_rows_state(
        &self,
        i: usize,
        from: usize,
        to: usize,
    ) -> Option<Result<NodeState, &'static str>> {
        let Some(Block::Gated(b)) = self.block_of(i) else {
            return None;
        };
        let l = &b.layout;
        if l.x != i {
            return None;
        }
        let (n, k, q, d) = (l.n, l.k, l.q, l.d);
        let x = &self.nodes[l.x].q;
        let r = &self.nodes[l.s].q.u;
        if x.u.len() != n * k * q + k * q * q || x.a.len() != k || r.len() != n * k {
            return Some(Err(
                "the gated block has no state yet (take it right after a start)",
            ));
        }
        if from > to || to > n {
            return Some(Err("rows outside the data plate"));
        }
        let means = &x.u[from * k * q..to * k * q];
        let mut u = Vec::with_capacity(means.len() + k * q * q);
        u.extend_from_slice(means);
        u.extend_from_slice(&x.u[n * k * q..]);
        let shard = Layout {
            n: to - from,
            ..l.clone()
        };
        let mut phi = Vec::new();
        kernels::sums(
            &shard,
            &self.nodes[l.y].data[from * d..to * d],
            means,
            &r[from * k..to * k],
            &mut phi,
        );
        Some(Ok(NodeState {
            phi,
            u,
            a: x.a.clone(),
        }))
    }

    /// Whether `state` fits node i as a gated block's x keeps it on this replica (module docs);
    /// `None` for any other node.
    pub(in crate::engine) fn gated_state_fits(&self, i: usize, state: &NodeState) -> Option<bool> {
        let Some(Block::Gated(b)) = self.block_of(i) else {
            return None;
        };
        let l = &b.layout;
        (l.x == i).then(|| {
            state.u.len() == l.n * l.k * l.q + l.k * l.q * l.q
                && state.a.len() == l.k
                && state.phi.len() == l.sums_len()
        })
    }
}
