//! A node's update: the block holding its q updates (Winn (2.19) for a factorised node, the
//! structured update (5.20) for a joint block); see [`super::qblock`].

use super::*;

impl Vmp {
    /// Updates one node's q — Winn (2.19), or the joint update of the block it belongs to.
    pub fn update(&mut self, node: NodeId) -> Result<(), RunError> {
        let i = self.id(node);
        let Some(b) = self.block_of[i] else {
            return Err(self.not_stochastic(i));
        };
        // Blocks are shared (`Arc`), so the block is read while the model is updated.
        let blocks = self.blocks.clone();
        blocks[b as usize].update(self, i)?;
        self.forget_gated_dense(i);
        Ok(())
    }

    /// Node i has no q to update.
    pub(super) fn not_stochastic(&self, i: usize) -> RunError {
        RunError::Schedule(format!(
            "`{}` is not stochastic and has no q to update",
            self.nodes[i].name
        ))
    }
}
