//! The drawing's layout as JSON, for pages that draw the network themselves (`occam view`): the
//! same placement and routing as the SVG of [`super::svg`], so both show one picture.

use serde_json::{json, Value};

use occam_lang::ir::Node;
use occam_lang::Model;

use super::layout::layout;
use super::{label, q_block_of};

/// The network as JSON: `nodes` (name, distribution label, role, centre and half-sizes, plates,
/// q-block), `edges` (parent, child, whether an index, route points), `plates` (one box per run,
/// with its label) and `q_blocks` (member names).
pub fn layout_json(m: &Model, plate_labels: &[String]) -> Value {
    let lay = layout(m, plate_labels);
    let nodes: Vec<Value> = lay
        .nodes
        .iter()
        .enumerate()
        .map(|(v, s)| {
            let var = &m.variables[v];
            let kind = match (&var.node, var.observed) {
                (Node::Deterministic { .. }, _) => "deterministic",
                (Node::Data, _) => "data",
                (_, true) => "observed",
                _ => "latent",
            };
            json!({
                "name": var.name,
                "label": label(m, v),
                "kind": kind,
                "x": s.x, "y": s.y, "rx": s.rx, "ry": s.ry, "boxed": s.boxed,
                "plates": var.plates.iter().map(|&p| m.plates[p].name.clone()).collect::<Vec<_>>(),
                "q_block": q_block_of(m, v),
                "line": var.position.line,
            })
        })
        .collect();
    let edges: Vec<Value> = lay
        .edges
        .iter()
        .map(|r| {
            json!({
                "from": m.variables[r.from].name,
                "to": m.variables[r.to].name,
                "index": r.index,
                "points": r.points.iter().map(|&(x, y)| [x, y]).collect::<Vec<_>>(),
            })
        })
        .collect();
    let plates: Vec<Value> = lay
        .plates
        .iter()
        .map(|b| {
            json!({
                "name": m.plates[b.plate].name,
                "label": plate_labels.get(b.plate).cloned().unwrap_or_default(),
                "rect": [b.rect.0, b.rect.1, b.rect.2, b.rect.3],
                "label_at": [b.label.0, b.label.1],
                "label_right": b.label.2,
            })
        })
        .collect();
    let q_blocks: Vec<Value> = m
        .q_blocks
        .iter()
        .map(|b| {
            json!(b
                .members
                .iter()
                .map(|&v| m.variables[v].name.clone())
                .collect::<Vec<_>>())
        })
        .collect();
    json!({"nodes": nodes, "edges": edges, "plates": plates, "q_blocks": q_blocks})
}
