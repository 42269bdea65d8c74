//! Lowering of the joint q-blocks: `q joint(a, b, c)` to [`Graph::joint_q`], with the observed
//! evidence the resolver found (variables that read two or more members) as members too: the
//! engine then puts their factors inside the block's junction tree.

use occam_core::prelude::*;
use occam_lang::diag::Code;

use super::Lowering;
use crate::error::Result;

impl Lowering<'_> {
    /// Declares every q-block of the model (after all variables are lowered).
    pub(super) fn q_blocks(&mut self) -> Result<()> {
        for b in &self.model.q_blocks {
            let ids: Vec<NodeId> = b
                .members
                .iter()
                .chain(&b.evidence)
                .map(|&v| self.nodes[v].expect("variables are lowered first"))
                .collect();
            self.g.joint_q(&ids).map_err(|e| {
                self.src.error(
                    Code::Misuse,
                    b.span,
                    format!("q-block: {e}"),
                    "rejected by the engine",
                    None,
                )
            })?;
        }
        Ok(())
    }
}
