//! The fit's word on a gated q-block (`q joint(s, x)`) that ended with components out of use
//! ([`Warning::GatedCollapsed`]).

use occam_lang::ir::QKind;

use crate::lower::Compiled;
use crate::model::Loaded;
use crate::warning::Warning;

/// A warning for every gated q-block whose index has fewer components in use (expected count
/// ≥ 1, as the summary's "components in use") than it has components.
pub(super) fn collapsed(loaded: &Loaded, c: &Compiled) -> Vec<Warning> {
    let in_use = c.vmp.components_in_use();
    let model = &loaded.model;
    model
        .q_blocks
        .iter()
        .filter(|b| b.kind == QKind::Gated)
        .flat_map(|b| b.members.iter())
        .filter_map(|&v| {
            let node = *c.var_nodes.get(v)?;
            let &(_, used, total) = in_use.iter().find(|(n, _, _)| *n == node)?;
            (used < total).then(|| Warning::GatedCollapsed {
                index: model.variables[v].name.clone(),
                in_use: used,
                total,
            })
        })
        .collect()
}
