//! The posterior of every variable as JSON: distribution, plates, posterior parameters (derived
//! from the natural parameters of q) and moments, per plate element.

use occam_core::prelude::*;
use serde_json::{json, Map, Value};

use occam::lower::Compiled;
use occam::model::Loaded;
use occam::posterior::{self, distribution, integrated_out, role};
use occam::Outcome;

/// Replaces the entries of every per-element list whose element is integrated out by `null`.
fn blank(values: &mut Map<String, Value>, gone: &[bool]) {
    for list in values.values_mut() {
        if let Value::Array(items) = list {
            if items.len() == gone.len() {
                for (item, &g) in items.iter_mut().zip(gone) {
                    if g {
                        *item = Value::Null;
                    }
                }
            }
        }
    }
}

/// One element's value of a posterior column as JSON: a number, a list or a list of rows, by
/// the column's per-element dimensions.
fn item_json(item: &[usize], values: &[f64]) -> Value {
    match item {
        [] => json!(values[0]),
        [_] => json!(values),
        [_, cols, ..] => json!(values.chunks((*cols).max(1)).collect::<Vec<_>>()),
    }
}

/// Posterior parameters of a node, each a list over plate elements: the facade's one summary
/// table ([`occam::posterior::columns`]: summaries of the moments by moment kind, then, for a
/// latent stochastic node, the family's usual parameters from its natural parameters).
pub fn parameters(c: &Compiled, node: NodeId, latent: bool) -> Map<String, Value> {
    let n = c.vmp.elements(node);
    let mut out = Map::new();
    for col in posterior::columns(c, node, latent) {
        let per = col.item.iter().product::<usize>();
        let list = if per == 0 {
            vec![item_json(&col.item, &[]); n]
        } else {
            col.values
                .chunks(per)
                .map(|v| item_json(&col.item, v))
                .collect()
        };
        out.insert(col.name, Value::Array(list));
    }
    out
}

/// The posterior of variable `v`: distribution, role, plates, parameters and moments.
pub fn variable(loaded: &Loaded, c: &Compiled, v: usize) -> Value {
    let var = &loaded.model.variables[v];
    let node = c.var_nodes[v];
    let r = role(loaded, v, c);
    let latent = matches!(r, "latent" | "partly observed");
    let kind = c.vmp.kind(node);
    let len = kind.len();
    let u = c.vmp.moments(node);
    let gone = integrated_out(loaded, v, c);
    let mut params = parameters(c, node, latent);
    let mut moments: Vec<Value> = u.chunks(len).map(|c| json!(c)).collect();
    if let Some(g) = &gone {
        blank(&mut params, g);
        for (m, &x) in moments.iter_mut().zip(g) {
            if x {
                *m = Value::Null;
            }
        }
    }
    let plates: Vec<Value> = var
        .plates
        .iter()
        .map(|&p| json!({"name": loaded.model.plates[p].name, "size": loaded.model.plates[p].size}))
        .collect();
    let event = var.event_plates.first().map(
        |&p| json!({"name": loaded.model.plates[p].name, "size": loaded.model.plates[p].size}),
    );
    json!({
        "distribution": distribution(loaded, v),
        "role": r,
        "map": var.map,
        "plates": plates,
        "event": event,
        "moment_kind": kind.to_string(),
        "parameters": params,
        "moments": moments,
    })
}

/// The posterior of every variable.
pub fn variables(loaded: &Loaded, c: &Compiled) -> Map<String, Value> {
    let mut vars = Map::new();
    for (v, var) in loaded.model.variables.iter().enumerate() {
        vars.insert(var.name.clone(), variable(loaded, c, v));
    }
    vars
}

/// The whole fit report.
pub fn report(loaded: &Loaded, c: &Compiled, o: &Outcome) -> Value {
    let mut node_bounds = Map::new();
    for (n, b) in &o.node_bounds {
        node_bounds.insert(n.clone(), json!(b));
    }
    let mut out = json!({
        "model": loaded.file_name,
        "bound": o.bound,
        "iterations": o.iterations,
        "converged": o.converged,
        "stop": o.stop,
        "bound_trace": o.bound_trace,
        "prune_start": o.prune_start,
        "seed": o.seed,
        "restart_bounds": o.restart_bounds,
        "best_restart": o.best_restart,
        "warnings": o.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "node_bounds": node_bounds,
        "variables": variables(loaded, c),
        "ard": occam::latent::ard::ard(loaded, c),
    });
    if !loaded.model.q_blocks.is_empty() {
        out["q_blocks"] = q_blocks(loaded, c);
    }
    // Only for fits with rotations (other reports are unchanged).
    if let Some(r) = &o.rotated {
        out["rotations"] = json!(r);
    }
    // Per-step chain reports, only for models with chains (other reports are unchanged).
    let chains = occam::chains::chains(loaded, c);
    if !chains.is_empty() {
        let map: Map<String, Value> = chains
            .iter()
            .map(|ch| (ch.variable.clone(), ch.to_json()))
            .collect();
        out["chains"] = Value::Object(map);
    }
    out
}

/// The joint q-blocks: members, the evidence inside each block, and each member's family marginals
/// q(indices = k, member = j) per element (configurations × K, the first index slowest).
fn q_blocks(loaded: &Loaded, c: &Compiled) -> Value {
    let m = &loaded.model;
    let name = |v: &usize| m.variables[*v].name.clone();
    let blocks: Vec<Value> = m
        .q_blocks
        .iter()
        .map(|b| {
            let mut fams = Map::new();
            for &v in &b.members {
                let node = c.var_nodes[v];
                let n = c.vmp.elements(node).max(1);
                if let Some(f) = c.vmp.family_marginals(node) {
                    let per = f.len() / n;
                    fams.insert(name(&v), json!(f.chunks(per.max(1)).collect::<Vec<_>>()));
                }
            }
            json!({
                "members": b.members.iter().map(name).collect::<Vec<_>>(),
                "evidence": b.evidence.iter().map(name).collect::<Vec<_>>(),
                "family_marginals": fams,
            })
        })
        .collect();
    Value::Array(blocks)
}
