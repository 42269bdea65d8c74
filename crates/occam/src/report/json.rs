//! The posterior of every variable as JSON: distribution, plates, posterior parameters (derived
//! from the natural parameters of q) and moments, per plate element.

use occam_core::prelude::*;
use occam_core::spec::Param;
use occam_lang::ir::Node;
use serde_json::{json, Map, Value};

use crate::driver::Outcome;
use crate::lower::Compiled;
use crate::model::Loaded;

/// How a variable takes part in the model.
pub fn role(loaded: &Loaded, v: usize, c: &Compiled) -> &'static str {
    let var = &loaded.model.variables[v];
    match var.node {
        Node::Data => "data",
        Node::Deterministic { .. } => "deterministic",
        Node::Stochastic { .. } => {
            let t = loaded.data.tables.get(&var.name);
            match (var.observed && c.vmp.is_observed(c.var_nodes[v]), t) {
                (true, Some(t)) if t.has_missing() => "partly observed",
                (true, _) => "observed",
                _ if var.map => "map",
                _ => "latent",
            }
        }
    }
}

/// The distribution name as written in the model.
pub fn distribution(loaded: &Loaded, v: usize) -> String {
    match &loaded.model.variables[v].node {
        Node::Stochastic { distribution, .. } => distribution.clone(),
        Node::Deterministic { .. } => "deterministic".into(),
        Node::Data => "data".into(),
    }
}

/// Which elements of variable `v` have no posterior: missing (masked) entries of an observed
/// node without children are integrated out exactly, so their moments and parameters mean
/// nothing. `None` when every element has a posterior.
pub fn integrated_out(loaded: &Loaded, v: usize, c: &Compiled) -> Option<Vec<bool>> {
    let var = &loaded.model.variables[v];
    if !matches!(var.node, Node::Stochastic { .. }) || !var.observed {
        return None;
    }
    let node = c.var_nodes[v];
    if !c.vmp.is_observed(node) {
        return None;
    }
    let t = loaded.data.tables.get(&var.name)?;
    if !t.has_missing() {
        return None;
    }
    let has_children =
        (0..loaded.model.variables.len()).any(|w| w != v && loaded.model.parents(w).contains(&v));
    if has_children {
        return None;
    }
    let n = c.vmp.elements(node);
    if n == 0 || t.present.len() % n != 0 {
        return None;
    }
    let vlen = t.present.len() / n;
    Some(
        t.present
            .chunks(vlen)
            .map(|ch| !ch.iter().all(|&p| p))
            .collect(),
    )
}

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

fn param_json(p: Param) -> Value {
    match p {
        Param::Scalar(x) => json!(x),
        Param::Vector(v) => json!(v),
        Param::Matrix(m) => json!(m),
    }
}

/// Posterior parameters of a node, each a list over plate elements: summaries of the moments
/// (by moment kind), then, for a latent stochastic node, the family's usual parameters from its
/// natural parameters (declared in the family's file: `usual_params`).
pub fn parameters(c: &Compiled, node: NodeId, latent: bool) -> Map<String, Value> {
    let vmp = &c.vmp;
    let kind = vmp.kind(node);
    let n = vmp.elements(node);
    let len = kind.len();
    let u = vmp.moments(node);
    let phi = vmp.natural(node);
    let mut out = Map::new();
    let per = |f: &dyn Fn(&[f64]) -> Value| -> Value {
        Value::Array((0..n).map(|e| f(&u[e * len..(e + 1) * len])).collect())
    };
    match kind {
        MomentKind::Gaussian { d: 1 } => {
            out.insert("mean".into(), per(&|u| json!(u[0])));
            out.insert(
                "variance".into(),
                per(&|u| json!((u[1] - u[0] * u[0]).max(0.0))),
            );
        }
        MomentKind::Gaussian { d } => {
            out.insert("mean".into(), per(&|u| json!(u[..d].to_vec())));
            out.insert(
                "covariance".into(),
                per(&|u| {
                    let m: Vec<Vec<f64>> = (0..d)
                        .map(|i| (0..d).map(|j| u[d + i * d + j] - u[i] * u[j]).collect())
                        .collect();
                    json!(m)
                }),
            );
        }
        MomentKind::Gamma => {
            out.insert("mean".into(), per(&|u| json!(u[0])));
            out.insert("mean_log".into(), per(&|u| json!(u[1])));
        }
        MomentKind::Wishart { d } => {
            out.insert(
                "mean".into(),
                per(&|u| {
                    json!((0..d)
                        .map(|i| u[i * d..(i + 1) * d].to_vec())
                        .collect::<Vec<_>>())
                }),
            );
        }
        MomentKind::Dirichlet { .. } => {
            if let Some(m) = vmp.mean(node) {
                let k = len;
                out.insert(
                    "mean".into(),
                    Value::Array(m.chunks(k).map(|c| json!(c)).collect()),
                );
            }
        }
        MomentKind::Categorical { .. } => {
            out.insert("probabilities".into(), per(&|u| json!(u)));
        }
        MomentKind::Scalar => {
            out.insert("mean".into(), per(&|u| json!(u[0])));
        }
    }
    if let (true, Some(dist)) = (latent, vmp.distribution(node)) {
        let mut lists: Vec<(&str, Vec<Value>)> = dist
            .spec()
            .params
            .iter()
            .map(|&p| (p, Vec::new()))
            .collect();
        for e in 0..n {
            for (name, p) in dist.usual_params(&phi[e * len..(e + 1) * len]) {
                if let Some((_, list)) = lists.iter_mut().find(|(n, _)| *n == name) {
                    list.push(param_json(p));
                }
            }
        }
        for (name, list) in lists {
            out.insert(name.into(), Value::Array(list));
        }
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
        "ard": crate::latent::ard::ard(loaded, c),
    });
    if !loaded.model.q_blocks.is_empty() {
        out["q_blocks"] = q_blocks(loaded, c);
    }
    // Only for fits with rotations (other reports are unchanged).
    if let Some(r) = &o.rotated {
        out["rotations"] = json!(r);
    }
    // Per-step chain reports, only for models with chains (other reports are unchanged).
    let chains = crate::report::chains::chains(loaded, c);
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
