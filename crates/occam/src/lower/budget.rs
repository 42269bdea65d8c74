//! The state-size limits, checked before anything is allocated: a variable's own state
//! ([`MAX_MODEL_VALUES`], the engine's per-node limit) and the whole model's.

use occam_core::graph::MAX_MODEL_VALUES;
use occam_lang::diag::Code;

use super::Lowering;
use crate::error::{Error, Result};

impl Lowering<'_> {
    /// The whole model's state within [`MAX_MODEL_VALUES`], checked before compiling allocates
    /// it; the error is placed at the variable owning the largest node.
    pub(super) fn check_budget(&self) -> Result<()> {
        let (total, largest) = self.g.state_values();
        if total.is_some_and(|t| t <= MAX_MODEL_VALUES) {
            return Ok(());
        }
        let total = total.map_or("more than 2^64".to_string(), |t| t.to_string());
        let Some(node) = largest else {
            return Err(Error::Usage(format!(
                "the model's nodes hold {total} values, more than the limit of {MAX_MODEL_VALUES}"
            )));
        };
        let name = self.g.node_name(node).to_string();
        let v = self.owner.get(&name).copied().unwrap_or(0);
        let var = &self.model.variables[v];
        Err(self.src.error(
            Code::PlateSize,
            var.span,
            format!(
                "the model's variables hold {total} state values, more than the limit of \
                 {MAX_MODEL_VALUES} (8 GiB); the largest is `{}` with {} elements",
                var.name,
                self.g.elements(node)
            ),
            "too large",
            Some("smaller plates, or fewer variables over the largest plates".to_string()),
        ))
    }

    /// Variable `v`'s own state (2 × elements × `len` + elements) within [`MAX_MODEL_VALUES`],
    /// checked before anything of it is allocated.
    pub(super) fn check_variable_size(&self, v: usize, len: usize) -> Result<()> {
        let var = self.var(v);
        let values = var
            .plates
            .iter()
            .try_fold(1usize, |n, &p| n.checked_mul(self.plate_size(p)))
            .and_then(|n| n.checked_mul(len)?.checked_mul(2)?.checked_add(n));
        if values.is_some_and(|x| x <= MAX_MODEL_VALUES) {
            return Ok(());
        }
        let per_node = var
            .plates
            .iter()
            .try_fold(1usize, |n, &p| n.checked_mul(self.plate_size(p)))
            .and_then(|n| n.checked_mul(len));
        let node_limit = per_node.is_none_or(|x| x > occam_core::graph::MAX_NODE_VALUES);
        let over: Vec<String> = var
            .plates
            .iter()
            .map(|&p| {
                format!(
                    "{} = {}",
                    self.model.plates[p].name, self.model.plates[p].size
                )
            })
            .collect();
        let over = if over.is_empty() {
            String::new()
        } else {
            format!(" over plates {}", over.join(", "))
        };
        if node_limit {
            // The engine's own per-node limit, in its words.
            return Err(self.src.error(
                Code::PlateSize,
                var.span,
                format!(
                    "`{}`:{over} hold more than the limit of {} values in one node",
                    var.name,
                    occam_core::graph::MAX_NODE_VALUES
                ),
                "too large",
                None,
            ));
        }
        Err(self.src.error(
            Code::PlateSize,
            var.span,
            format!(
                "`{}`{over} alone holds {} state values ({len} per element), more than the \
                 limit of {MAX_MODEL_VALUES} (8 GiB)",
                var.name,
                values.map_or("more than 2^64".to_string(), |x| x.to_string())
            ),
            "too large",
            Some("smaller plates (an event plate of D columns costs D² per element for a Wishart or MvGaussian)".to_string()),
        ))
    }
}
