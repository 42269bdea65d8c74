//! Compiling the lowered graph, with a build error mapped back to the variable that owns the
//! node it names.

use std::collections::HashMap;

use occam_core::prelude::*;
use occam_lang::ir::Model;

use super::{build_error, Lowered, SourceRef};
use crate::error::{Error, Result};

/// A compiled model with its node map.
pub struct Compiled {
    /// The engine.
    pub vmp: Vmp,
    /// Core node of each IR variable.
    pub var_nodes: Vec<NodeId>,
    /// IR variable owning each core node, by node name.
    pub owner: HashMap<String, usize>,
    /// Whether component pruning can apply.
    pub has_mixture: bool,
}

/// Compiles the graph, mapping a build error to the variable that owns the node it names.
pub fn compile(lowered: Lowered, model: &Model, src: SourceRef<'_>) -> Result<Compiled> {
    let Lowered {
        graph,
        var_nodes,
        owner,
        has_mixture,
    } = lowered;
    match graph.compile() {
        Ok(vmp) => Ok(Compiled {
            vmp,
            var_nodes,
            owner,
            has_mixture,
        }),
        Err(e) => {
            let node = match &e {
                BuildError::Conjugacy { node, .. }
                | BuildError::PlateMismatch { node, .. }
                | BuildError::Shape { node, .. }
                | BuildError::Value { node, .. } => Some(node.clone()),
                _ => None,
            };
            match node.and_then(|n| owner.get(&n).copied()) {
                Some(v) => Err(build_error(src, model, v, None, &e)),
                None => Err(Error::Usage(e.to_string())),
            }
        }
    }
}
