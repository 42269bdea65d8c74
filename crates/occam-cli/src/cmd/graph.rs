//! `occam graph MODEL --out FILE.svg|.dot`: the Bayesian network as VIBES draws it — plates as
//! boxes, observed nodes shaded, deterministic nodes dashed, Categorical index edges dashed. The
//! SVG comes from a small layered layout written here (no graphviz needed); `.dot` is DOT text.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;
use occam_lang::ir::{ExprOp, Node, PlateSource};
use occam_lang::Model;

use super::{model_path, DataArgs};
use crate::atomic;
use crate::data::DataSet;
use crate::error::{CliError, Result};
use crate::model::{self, Loaded};
use crate::report::svg::escape;

/// Arguments of `occam graph`.
#[derive(Args, Debug)]
pub struct GraphArgs {
    /// The model file (.occam).
    pub model: PathBuf,
    /// Output file: `.svg` or `.dot`.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
}

/// An edge of the drawing: parent, child, whether the parent is a Categorical index.
fn edges(m: &Model) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    for v in 0..m.variables.len() {
        let mut index_vars = Vec::new();
        let mut visit = |e: &occam_lang::ir::Expr| {
            let mut stack = vec![e];
            while let Some(x) = stack.pop() {
                match &x.op {
                    ExprOp::Var(r) => index_vars
                        .extend(r.index.iter().filter_map(|i| i.by.as_ref().map(|c| c.var))),
                    ExprOp::Sum(xs) | ExprOp::Product(xs) | ExprOp::Concat(xs) => stack.extend(xs),
                    ExprOp::Dot(a, b)
                    | ExprOp::MatVec {
                        matrix: a,
                        vector: b,
                    } => {
                        stack.push(a);
                        stack.push(b);
                    }
                    ExprOp::Const(_) => {}
                }
            }
        };
        match &m.variables[v].node {
            Node::Stochastic { args, .. } => args.iter().for_each(|a| visit(&a.value)),
            Node::Deterministic { expr } => visit(expr),
            Node::Data => {}
        }
        for p in m.parents(v) {
            out.push((p, v, index_vars.contains(&p)));
        }
    }
    out
}

fn label(m: &Model, v: usize) -> String {
    match &m.variables[v].node {
        Node::Stochastic { distribution, .. } => distribution.clone(),
        Node::Deterministic { .. } => "deterministic".into(),
        Node::Data => "data".into(),
    }
}

/// DOT text of the network; plates as clusters (one per combination of plates).
pub fn dot(m: &Model, plate_labels: &[String]) -> String {
    let mut s = String::from("digraph model {\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n");
    let mut groups: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for (v, var) in m.variables.iter().enumerate() {
        groups.entry(var.plates.clone()).or_default().push(v);
    }
    for (i, (plates, vars)) in groups.iter().enumerate() {
        let indent = if plates.is_empty() { "  " } else { "    " };
        if !plates.is_empty() {
            let names: Vec<String> = plates.iter().map(|&p| plate_labels[p].clone()).collect();
            let _ = writeln!(
                s,
                "  subgraph cluster_{i} {{\n    label=\"{}\";\n    style=rounded;",
                names.join(", ")
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
    s.push_str("}\n");
    s
}

/// SVG of the network by a layered layout: a node's layer is one below its deepest parent;
/// within a layer nodes are grouped by their plates; each plate is a box around its nodes.
pub fn svg(m: &Model, plate_labels: &[String]) -> String {
    let n = m.variables.len();
    let mut layer = vec![0usize; n];
    for &v in &m.topological_order {
        layer[v] = m
            .parents(v)
            .iter()
            .map(|&p| layer[p] + 1)
            .max()
            .unwrap_or(0);
    }
    let layers = layer.iter().copied().max().map_or(0, |l| l + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for v in 0..n {
        rows[layer[v]].push(v);
    }
    for r in &mut rows {
        r.sort_by_key(|&v| (m.variables[v].plates.clone(), v));
    }
    let (dx, dy, r) = (150.0, 120.0, 26.0);
    let widest = rows.iter().map(Vec::len).max().unwrap_or(1) as f64;
    let width = (widest * dx + 120.0).max(320.0);
    let mut pos = vec![(0.0, 0.0); n];
    for (l, row) in rows.iter().enumerate() {
        let offset = (width - row.len() as f64 * dx) / 2.0 + dx / 2.0;
        for (i, &v) in row.iter().enumerate() {
            pos[v] = (offset + i as f64 * dx, 80.0 + l as f64 * dy);
        }
    }
    let height = 80.0 + layers as f64 * dy + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"Helvetica, Arial, sans-serif\">"
    );
    s.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#333\"/></marker></defs>\n");
    s.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    // Plates: boxes around their members, larger plates drawn first with more padding.
    let mut plates: Vec<(usize, f64, f64, f64, f64)> = Vec::new();
    for p in 0..m.plates.len() {
        let members: Vec<usize> = (0..n)
            .filter(|&v| m.variables[v].plates.contains(&p))
            .collect();
        if members.is_empty() {
            continue;
        }
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for &v in &members {
            x0 = x0.min(pos[v].0);
            x1 = x1.max(pos[v].0);
            y0 = y0.min(pos[v].1);
            y1 = y1.max(pos[v].1);
        }
        plates.push((p, x0, y0, x1, y1));
    }
    plates.sort_by(|a, b| ((b.3 - b.1) * (b.4 - b.2)).total_cmp(&((a.3 - a.1) * (a.4 - a.2))));
    for (i, &(p, x0, y0, x1, y1)) in plates.iter().enumerate() {
        let pad = r + 12.0 + 8.0 * (plates.len() - i) as f64;
        let (bx, by, bw, bh) = (
            x0 - pad,
            y0 - pad,
            x1 - x0 + 2.0 * pad,
            y1 - y0 + 2.0 * pad + 14.0,
        );
        let _ = writeln!(
            s,
            "<rect x=\"{bx}\" y=\"{by}\" width=\"{bw}\" height=\"{bh}\" rx=\"8\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\"/>"
        );
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\" fill=\"#333\">{}</text>",
            bx + bw - 6.0,
            by + bh - 6.0,
            escape(&plate_labels[p])
        );
    }
    for (p, c, index) in edges(m) {
        let (x0, y0) = pos[p];
        let (x1, y1) = pos[c];
        let (ddx, ddy) = (x1 - x0, y1 - y0);
        let len = (ddx * ddx + ddy * ddy).sqrt().max(1e-9);
        let (ux, uy) = (ddx / len, ddy / len);
        let _ = writeln!(
            s,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\" stroke-width=\"1.4\"{} marker-end=\"url(#arrow)\"/>",
            x0 + ux * r,
            y0 + uy * r,
            x1 - ux * r,
            y1 - uy * r,
            if index { " stroke-dasharray=\"5,3\"" } else { "" }
        );
    }
    for (v, var) in m.variables.iter().enumerate() {
        let (x, y) = pos[v];
        let (fill, dash) = match (&var.node, var.observed) {
            (Node::Deterministic { .. }, _) => ("white", " stroke-dasharray=\"4,3\""),
            (Node::Data, _) | (_, true) => ("#c8c8c8", ""),
            _ => ("white", ""),
        };
        if matches!(var.node, Node::Data) {
            let _ = writeln!(
                s,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#222\" stroke-width=\"1.5\"/>",
                x - r,
                y - r,
                2.0 * r,
                2.0 * r
            );
        } else {
            let _ = writeln!(
                s,
                "<circle cx=\"{x}\" cy=\"{y}\" r=\"{r}\" fill=\"{fill}\" stroke=\"#222\" stroke-width=\"1.5\"{dash}/>"
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{x}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\">{}</text>",
            y + 5.0,
            escape(&var.name)
        );
        let _ = writeln!(
            s,
            "<text x=\"{x}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
            y + r + 12.0,
            escape(&label(m, v))
        );
    }
    s.push_str("</svg>\n");
    s
}

/// `N = 500`, or just `N` when the size would come from data that is not attached.
fn plate_labels(loaded: &Loaded) -> Vec<String> {
    loaded
        .model
        .plates
        .iter()
        .map(|p| match &p.source {
            PlateSource::Data { data, .. } if !loaded.data.tables.contains_key(data) => {
                p.name.clone()
            }
            _ => format!("{} = {}", p.name, p.size),
        })
        .collect()
}

/// Loads a model for drawing: with its data if present, otherwise with data plates of size 1.
fn load(a: &GraphArgs) -> Result<Loaded> {
    let given = DataSet::from_args(&a.data.data)?;
    match model::load(&a.model, &given) {
        Ok(l) => Ok(l),
        Err(CliError::Model(_)) => {
            super::sample::load_without_data(&a.model, &given, &BTreeMap::new(), Some(1))
        }
        Err(e) => Err(e),
    }
}

/// Runs `occam graph`.
pub fn run(a: &GraphArgs) -> Result<()> {
    model_path(&a.model)?;
    let ext = a
        .out
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext != "svg" && ext != "dot" {
        return Err(CliError::Usage(format!(
            "--out {}: the output must end in .svg or .dot",
            a.out.display()
        )));
    }
    let loaded = load(a)?;
    let labels = plate_labels(&loaded);
    let text = if ext == "dot" {
        dot(&loaded.model, &labels)
    } else {
        svg(&loaded.model, &labels)
    };
    atomic::write(&a.out, text.as_bytes())?;
    eprintln!("wrote {}", a.out.display());
    Ok(())
}
