//! The SVG drawing of the network.

use std::fmt::Write;

use occam_lang::ir::Node;
use occam_lang::Model;

use super::layout::{layout, text_width, PlateBox};
use super::{label, q_block_of, Q_BLOCK_COLOUR};
use crate::svg::escape;

fn style_of(var: &occam_lang::ir::Variable) -> (&'static str, &'static str) {
    match (&var.node, var.observed) {
        (Node::Deterministic { .. }, _) => ("white", " stroke-dasharray=\"4,3\""),
        (Node::Data, _) | (_, true) => ("#c8c8c8", ""),
        _ => ("white", ""),
    }
}

/// SVG of the network (see `layout`). Layout facts are kept in `data-` attributes (node
/// centres and sizes, plate membership, edge routes) so the drawing can be checked.
pub fn svg(m: &Model, plate_labels: &[String]) -> String {
    let lay = layout(m, plate_labels);
    let es = &lay.edges;
    // Extent of everything drawn.
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let mut grow = |b: (f64, f64, f64, f64)| {
        x0 = x0.min(b.0);
        y0 = y0.min(b.1);
        x1 = x1.max(b.2);
        y1 = y1.max(b.3);
    };
    for s in &lay.nodes {
        grow(s.bbox());
    }
    for b in &lay.plates {
        grow(b.rect);
    }
    for r in es {
        for &(x, y) in &r.points {
            grow((x, y, x, y));
        }
    }
    if x0 == f64::MAX {
        (x0, y0, x1, y1) = (0.0, 0.0, 100.0, 60.0);
    }
    // Legend entries that apply to this network.
    let mut legend: Vec<(&str, &str)> = Vec::new();
    if es.iter().any(|r| !r.index) {
        legend.push(("edge", "depends on"));
    }
    if es.iter().any(|r| r.index) {
        legend.push(("index", "mixture index: selects the component"));
    }
    if m.variables
        .iter()
        .any(|v| v.observed && !matches!(v.node, Node::Data))
    {
        legend.push(("observed", "observed"));
    }
    if m.variables
        .iter()
        .any(|v| matches!(v.node, Node::Deterministic { .. }))
    {
        legend.push(("det", "deterministic"));
    }
    if m.variables.iter().any(|v| matches!(v.node, Node::Data)) {
        legend.push(("data", "data input"));
    }
    if !m.plates.is_empty() {
        legend.push(("plate", "plate: repeated over its index"));
    }
    if !m.q_blocks.is_empty() {
        legend.push(("qblock", "in a joint q-block (q joint)"));
    }
    let legend_w = legend
        .iter()
        .map(|(_, t)| text_width(t, 11.0) + 56.0)
        .fold(0.0, f64::max);
    let (left, top) = (x0 - 20.0, y0 - 20.0);
    let legend_top = y1 + 24.0;
    let width = (x1 + 20.0 - left).max(legend_w + 20.0).max(200.0).ceil();
    let height = (legend_top + legend.len() as f64 * 20.0 + 12.0 - top).ceil();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"{left:.1} {top:.1} {width} {height}\" font-family=\"Helvetica, Arial, sans-serif\">"
    );
    s.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#333\"/></marker></defs>\n");
    let _ = writeln!(
        s,
        "<rect x=\"{left:.1}\" y=\"{top:.1}\" width=\"{width}\" height=\"{height}\" fill=\"white\"/>"
    );
    // Plates: outer boxes first.
    let mut boxes: Vec<&PlateBox> = lay.plates.iter().collect();
    boxes.sort_by(|a, b| {
        let area = |r: (f64, f64, f64, f64)| (r.2 - r.0) * (r.3 - r.1);
        area(b.rect).total_cmp(&area(a.rect))
    });
    for b in boxes {
        let (bx0, by0, bx1, by1) = b.rect;
        let _ = writeln!(
            s,
            "<rect class=\"plate\" data-plate=\"{}\" x=\"{bx0:.1}\" y=\"{by0:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"8\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\"/>",
            escape(&m.plates[b.plate].name),
            bx1 - bx0,
            by1 - by0
        );
        let (lx, ly, right) = b.label;
        let _ = writeln!(
            s,
            "<text x=\"{lx:.1}\" y=\"{ly:.1}\" font-size=\"12\" text-anchor=\"{}\" fill=\"#333\">{}</text>",
            if right { "end" } else { "start" },
            escape(&plate_labels[b.plate])
        );
    }
    for r in es {
        let pts = &r.points;
        let (a, b) = (lay.nodes[r.from], lay.nodes[r.to]);
        let unit = |p: (f64, f64), q: (f64, f64)| {
            let (dx, dy) = (q.0 - p.0, q.1 - p.1);
            let l = (dx * dx + dy * dy).sqrt().max(1e-9);
            (dx / l, dy / l)
        };
        let k = pts.len();
        let u0 = unit(pts[0], pts[1]);
        let u1 = unit(pts[k - 2], pts[k - 1]);
        let mut drawn = pts.clone();
        drawn[0] = a.boundary(u0.0, u0.1);
        drawn[k - 1] = b.boundary(-u1.0, -u1.1);
        let fmt = |v: &[(f64, f64)]| {
            v.iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(
            s,
            "<polyline class=\"edge\" data-from=\"{}\" data-to=\"{}\" data-route=\"{}\" points=\"{}\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.4\"{} marker-end=\"url(#arrow)\"/>",
            escape(&m.variables[r.from].name),
            escape(&m.variables[r.to].name),
            fmt(pts),
            fmt(&drawn),
            if r.index { " stroke-dasharray=\"5,3\"" } else { "" }
        );
    }
    for (v, var) in m.variables.iter().enumerate() {
        let sh = lay.nodes[v];
        let (x, y) = (sh.x, sh.y);
        let (fill, dash) = style_of(var);
        let block = q_block_of(m, v);
        let (stroke, stroke_width) = match block {
            Some(_) => (Q_BLOCK_COLOUR, 2.5),
            None => ("#222", 1.5),
        };
        let plates: Vec<&str> = var
            .plates
            .iter()
            .map(|&p| m.plates[p].name.as_str())
            .collect();
        let _ = writeln!(
            s,
            "<g class=\"node\" data-var=\"{}\" data-plates=\"{}\" data-cx=\"{x:.1}\" data-cy=\"{y:.1}\" data-rx=\"{:.1}\" data-ry=\"{:.1}\" data-shape=\"{}\"{}>",
            escape(&var.name),
            escape(&plates.join(",")),
            sh.rx,
            sh.ry,
            if sh.boxed { "box" } else { "ellipse" },
            block.map_or(String::new(), |b| format!(" data-qblock=\"{b}\""))
        );
        if sh.boxed {
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\" stroke=\"#222\" stroke-width=\"1.5\"/>",
                x - sh.rx,
                y - sh.ry,
                2.0 * sh.rx,
                2.0 * sh.ry
            );
        } else {
            let _ = writeln!(
                s,
                "<ellipse cx=\"{x:.1}\" cy=\"{y:.1}\" rx=\"{:.1}\" ry=\"{:.1}\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{stroke_width}\"{dash}/>",
                sh.rx, sh.ry
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"14\" text-anchor=\"middle\">{}</text>",
            y - 1.0,
            escape(&var.name)
        );
        let _ = writeln!(
            s,
            "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
            y + 13.0,
            escape(&label(m, v))
        );
        s.push_str("</g>\n");
    }
    // Legend.
    let lx = left + 14.0;
    let _ = writeln!(s, "<g class=\"legend\" font-size=\"11\" fill=\"#333\">");
    for (i, (kind, text)) in legend.iter().enumerate() {
        let y = legend_top + i as f64 * 20.0 + 10.0;
        match *kind {
            "edge" | "index" => {
                let _ = writeln!(
                    s,
                    "<line x1=\"{lx:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#333\" stroke-width=\"1.4\"{} marker-end=\"url(#arrow)\"/>",
                    lx + 36.0,
                    if *kind == "index" { " stroke-dasharray=\"5,3\"" } else { "" }
                );
            }
            "observed" | "det" => {
                let _ = writeln!(
                    s,
                    "<ellipse cx=\"{:.1}\" cy=\"{y:.1}\" rx=\"16\" ry=\"7\" fill=\"{}\" stroke=\"#222\" stroke-width=\"1.2\"{}/>",
                    lx + 18.0,
                    if *kind == "observed" { "#c8c8c8" } else { "white" },
                    if *kind == "det" { " stroke-dasharray=\"4,3\"" } else { "" }
                );
            }
            "qblock" => {
                let _ = writeln!(
                    s,
                    "<ellipse cx=\"{:.1}\" cy=\"{y:.1}\" rx=\"16\" ry=\"7\" fill=\"white\" stroke=\"{Q_BLOCK_COLOUR}\" stroke-width=\"2.5\"/>",
                    lx + 18.0,
                );
            }
            "data" => {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"32\" height=\"14\" fill=\"#c8c8c8\" stroke=\"#222\" stroke-width=\"1.2\"/>",
                    lx + 2.0,
                    y - 7.0
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"32\" height=\"14\" rx=\"4\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\"/>",
                    lx + 2.0,
                    y - 7.0
                );
            }
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            lx + 46.0,
            y + 4.0,
            escape(text)
        );
    }
    s.push_str("</g>\n</svg>\n");
    s
}
