//! Lowering of the joint q-blocks: `q joint(a, b, c)` to [`Graph::joint_q`], with the observed
//! evidence the resolver found (variables that read two or more members) as members too: the
//! engine then puts their factors inside the block's junction tree. A gated block
//! (`q joint(s, x)` over a mixture index and the vectors it gates, [`QKind::Gated`]) goes to
//! [`Graph::gated_q`], whose layout errors are placed at the statement.

use occam_core::prelude::*;
use occam_lang::diag::Code;
use occam_lang::ir::QKind;

use super::Lowering;
use crate::error::Result;

/// What a gated block's layout must be (`Graph::gated_q`), in the language's words.
const GATED_LAYOUT: &str = "`q joint(s, x)` needs `m[N, K, D] = dot(W, x) + mu` and \
     `t[N, D] ~ Gaussian(m[N, s], tau)` observed, with x, the dot, the sum and s read by \
     nothing else (examples/mbpca/mbpca.occam)";

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
            let built = match b.kind {
                QKind::Joint => self.g.joint_q(&ids),
                QKind::Gated => self.g.gated_q(ids[0], ids[1]),
            };
            built.map_err(|e| {
                self.src.error(
                    Code::Misuse,
                    b.span,
                    format!("q-block: {e}"),
                    "rejected by the engine",
                    (b.kind == QKind::Gated).then(|| GATED_LAYOUT.to_string()),
                )
            })?;
        }
        Ok(())
    }
}
