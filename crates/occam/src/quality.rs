//! What a reported bound is: the ELBO of q itself (`exact`: every term its expectation, in
//! closed form or by quadrature to < 1e-9), a lower bound on it (`lower bound`: some node's term is
//! a local bound, e.g. Jaakkola–Jordan's `sigmoid_jj`), or an estimate (`approximate`). Per node
//! and in total ([`occam_core::dist::BoundQuality`]); a comparison ranks models only when their
//! bounds are of one kind, unless asked to (`mixed_bounds`): a lower bound's model loses by its
//! bound's looseness (0.9 nats on the 30-point logistic test), not by the evidence.

use crate::error::{Error, Result};
use crate::fitted::Fitted;
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

/// Refuses to rank fits whose bounds are of different kinds unless `mixed` (the caller's
/// `--mixed-bounds`): the error names each model's kind and the variables that make it so.
pub fn check_kinds(fitted: &[&Fitted], mixed: bool) -> Result<()> {
    let kinds: Vec<BoundQuality> = fitted.iter().map(|f| f.outcome().bound_quality).collect();
    if mixed || kinds.windows(2).all(|w| w[0] == w[1]) {
        return Ok(());
    }
    let lines: Vec<String> = fitted
        .iter()
        .zip(&kinds)
        .map(|(f, k)| {
            let why = match k {
                BoundQuality::Exact => String::new(),
                _ => format!(" ({})", culprits(f.loaded(), f.compiled(), *k).join(", ")),
            };
            format!("  {}: {k}{why}", f.loaded().file_name)
        })
        .collect();
    Err(Error::Usage(format!(
        "the models' bounds are of different kinds, so their differences mix evidence with the \
         looseness of a bound:\n{}\nwrite the models with one kind (e.g. `sigmoid` for \
         `sigmoid_jj`: docs/guide/12-beyond-conjugate.md) or pass --mixed-bounds to rank them \
         anyway",
        lines.join("\n")
    )))
}
