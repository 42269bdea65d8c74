//! What a reported bound is: the ELBO of q itself (`exact`: every term its expectation, in
//! closed form or by quadrature to < 1e-9), a lower bound on it (`lower bound`: some node's term is
//! a local bound, e.g. Jaakkola–Jordan's `sigmoid_jj`), or an estimate (`approximate`). Per node
//! and in total ([`occam_core::dist::BoundQuality`]); a comparison ranks models only when their
//! bounds are of one kind, unless asked to (`mixed_bounds`, [`crate::check_kinds`]): a lower bound's model loses by its
//! bound's looseness (0.9 nats on the 30-point logistic test), not by the evidence.

use crate::lower::Compiled;
use crate::model::Loaded;
pub use occam_core::dist::BoundQuality;

/// Each node's kind and the total (the worst), for an [`crate::Outcome`].
pub(crate) fn qualities(c: &Compiled) -> (BoundQuality, Vec<(String, BoundQuality)>) {
    let kinds = c.vmp.node_qualities();
    let names = c.vmp.names();
    let nodes = names.iter().map(|n| n.to_string()).zip(kinds).collect();
    (c.vmp.bound_quality(), nodes)
}

/// The model variables whose terms make the bound `kind` (each with its place in the model
/// file), e.g. "variable `y` at m.occam:5:1".
pub fn culprits(loaded: &Loaded, c: &Compiled, kind: BoundQuality) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (node, k) in c.vmp.names().iter().zip(c.vmp.node_qualities()) {
        if k != kind {
            continue;
        }
        let text = match c.owner.get(*node) {
            Some(&v) => format!(
                "variable `{}` at {}",
                loaded.model.variables[v].name,
                loaded.location(v)
            ),
            None => format!("node `{node}`"),
        };
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out
}
