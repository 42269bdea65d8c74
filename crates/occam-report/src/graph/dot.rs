//! DOT text of the network.

use std::collections::BTreeMap;
use std::fmt::Write;

use occam_lang::ir::Node;
use occam_lang::Model;

use super::{edges, label, Q_BLOCK_COLOUR};
use crate::check::q_block_text;

/// DOT text of the network; plates as clusters, one per combination of plates (clusters cannot
/// cross, so a node in crossed plates N and D sits in the cluster "N × D").
pub fn dot(m: &Model, plate_labels: &[String]) -> String {
    let mut s = String::from(
        "digraph model {\n\
         // Graphviz clusters cannot overlap, so crossed plates cannot be drawn as crossed boxes:\n\
         // each node sits in the one cluster of its set of plates, labelled e.g. \"N × D\" for a\n\
         // node in both N and D. `occam graph --out FILE.svg` draws crossed plates as overlapping boxes.\n\
         \x20 rankdir=TB;\n  node [fontname=\"Helvetica\"];\n",
    );
    let mut groups: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for (v, var) in m.variables.iter().enumerate() {
        let mut key = var.plates.clone();
        key.sort_unstable();
        groups.entry(key).or_default().push(v);
    }
    for (i, (plates, vars)) in groups.iter().enumerate() {
        let indent = if plates.is_empty() { "  " } else { "    " };
        if !plates.is_empty() {
            let names: Vec<&str> = plates.iter().map(|&p| m.plates[p].name.as_str()).collect();
            let sizes: Vec<&str> = plates
                .iter()
                .filter(|&&p| plate_labels[p] != m.plates[p].name)
                .map(|&p| plate_labels[p].as_str())
                .collect();
            let sizes = if sizes.is_empty() || plates.len() == 1 {
                String::new()
            } else {
                format!(" ({})", sizes.join(", "))
            };
            let _ = writeln!(
                s,
                "  subgraph cluster_{i} {{\n    label=\"{}\";\n    style=rounded;",
                if plates.len() == 1 {
                    plate_labels[plates[0]].clone()
                } else {
                    names.join(" × ") + &sizes
                }
            );
        }
        for &v in vars {
            let var = &m.variables[v];
            let style = match (&var.node, var.observed) {
                (Node::Deterministic { .. }, _) => "shape=ellipse, style=dashed",
                (Node::Data, _) => "shape=box, style=filled, fillcolor=gray80",
                (_, true) => "shape=ellipse, style=filled, fillcolor=gray80",
                _ => "shape=ellipse",
            };
            let _ = writeln!(
                s,
                "{indent}\"{}\" [label=\"{}\\n{}\", {style}];",
                var.name,
                var.name,
                label(m, v)
            );
        }
        if !plates.is_empty() {
            s.push_str("  }\n");
        }
    }
    for (p, c, index) in edges(m) {
        let _ = writeln!(
            s,
            "  \"{}\" -> \"{}\"{};",
            m.variables[p].name,
            m.variables[c].name,
            if index { " [style=dashed]" } else { "" }
        );
    }
    // A joint q-block (`q joint(...)`): its members linked by undirected dotted lines that do not
    // move the layout; they are part of q, not of the model.
    for b in &m.q_blocks {
        let _ = writeln!(s, "  // q {}", q_block_text(m, b));
        for w in b.members.windows(2) {
            let _ = writeln!(
                s,
                "  \"{}\" -> \"{}\" [dir=none, style=dotted, color=\"{Q_BLOCK_COLOUR}\", constraint=false];",
                m.variables[w[0]].name,
                m.variables[w[1]].name,
            );
        }
    }
    s.push_str("}\n");
    s
}
