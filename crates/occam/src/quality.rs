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

/// What Böhning's bound costs the posterior sds of the Gaussians in its logits (measured on
/// 30 points, 3 classes: `occam_core::dist::BOHNING_SDS`).
pub use occam_core::dist::BOHNING_SDS;

/// The model variables whose posterior sds a local bound understates: each latent variable
/// whose value reaches the logits of a softmax Categorical fitted by Böhning's bound
/// (`softmax_bohning`, or `softmax` with K > 3), with that Categorical's place ("variable `c`
/// at m.occam:5:1"); empty when no term is Böhning's. Reports add [`BOHNING_SDS`].
pub fn understated_sds(loaded: &Loaded, c: &Compiled) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let names = c.vmp.names();
    for (v, var) in loaded.model.variables.iter().enumerate() {
        if var.observed {
            continue;
        }
        let Some(child) = c.vmp.sds_understated_by(c.var_nodes[v]) else {
            continue;
        };
        let text = match c.owner.get(names[child.index()]) {
            Some(&o) => format!(
                "variable `{}` at {}",
                loaded.model.variables[o].name,
                loaded.location(o)
            ),
            None => format!("node `{}`", names[child.index()]),
        };
        out.push((v, text));
    }
    out
}

/// [`understated_sds`] by variable name, each with its whole reason ("variable `c` at
/// m.occam:5:1: " + [`BOHNING_SDS`]): what the JSON report's `sds_understated` and Python's
/// `Result.sds_understated` hold.
pub fn understated_sds_named(loaded: &Loaded, c: &Compiled) -> Vec<(String, String)> {
    understated_sds(loaded, c)
        .into_iter()
        .map(|(v, by)| {
            (
                loaded.model.variables[v].name.clone(),
                format!("{by}: {BOHNING_SDS}"),
            )
        })
        .collect()
}

/// One line for reports: "posterior sds understated: `w`, `b` (Böhning's bound in the logits of
/// variable `c` at m.occam:5:1): …" ([`understated_sds`], [`BOHNING_SDS`]); `None` when no
/// variable's are.
pub fn understated_sds_line(loaded: &Loaded, c: &Compiled) -> Option<String> {
    let found = understated_sds(loaded, c);
    if found.is_empty() {
        return None;
    }
    let vars: Vec<String> = found
        .iter()
        .map(|(v, _)| format!("`{}`", loaded.model.variables[*v].name))
        .collect();
    let mut by: Vec<&str> = Vec::new();
    for (_, t) in &found {
        if !by.contains(&t.as_str()) {
            by.push(t);
        }
    }
    Some(format!(
        "posterior sds understated: {} (Böhning's bound in the logits of {}): {BOHNING_SDS}; \
         see docs/guide/12-beyond-conjugate.md",
        vars.join(", "),
        by.join(", ")
    ))
}
