//! `occam graph MODEL --out FILE.svg|.dot`: the Bayesian network as VIBES draws it — plates as
//! boxes, observed nodes shaded, deterministic nodes dashed, Categorical index edges dashed. The
//! SVG comes from a small layered layout written here (no graphviz needed); `.dot` is DOT text.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use occam_lang::ir::{ExprOp, Node, PlateSource};
use occam_lang::Model;

use crate::check::q_block_text;
use crate::data::DataSet;
use crate::error::{Error, Result};
use crate::model::{self, Loaded};
use crate::report::svg::escape;

/// Outline of the members of a joint q-block.
const Q_BLOCK_COLOUR: &str = "#1f5fbf";

/// The joint q-block variable `v` is a member of (its index), if any.
fn q_block_of(m: &Model, v: usize) -> Option<usize> {
    m.q_blocks.iter().position(|b| b.members.contains(&v))
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

/// A node of the drawing: centre and half-sizes (an ellipse, or a box for data inputs).
#[derive(Clone, Copy, Debug)]
struct Shape {
    x: f64,
    y: f64,
    rx: f64,
    ry: f64,
    boxed: bool,
}

impl Shape {
    /// Whether segment a–b comes within `margin` of the shape.
    fn hit(&self, a: (f64, f64), b: (f64, f64), margin: f64) -> bool {
        let (rx, ry) = (self.rx + margin, self.ry + margin);
        if self.boxed {
            segment_hits_box(a, b, (self.x - rx, self.y - ry, self.x + rx, self.y + ry))
        } else {
            // In coordinates where the ellipse is the unit circle: distance from the segment.
            let p = ((a.0 - self.x) / rx, (a.1 - self.y) / ry);
            let q = ((b.0 - self.x) / rx, (b.1 - self.y) / ry);
            let d = (q.0 - p.0, q.1 - p.1);
            let l2 = d.0 * d.0 + d.1 * d.1;
            let t = if l2 > 0.0 {
                (-(p.0 * d.0 + p.1 * d.1) / l2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (cx, cy) = (p.0 + t * d.0, p.1 + t * d.1);
            cx * cx + cy * cy < 1.0
        }
    }

    /// The point where a line from the centre in direction (ux, uy) leaves the shape.
    fn boundary(&self, ux: f64, uy: f64) -> (f64, f64) {
        let t = if self.boxed {
            let tx = if ux.abs() > 1e-12 {
                self.rx / ux.abs()
            } else {
                f64::MAX
            };
            let ty = if uy.abs() > 1e-12 {
                self.ry / uy.abs()
            } else {
                f64::MAX
            };
            tx.min(ty)
        } else {
            1.0 / ((ux / self.rx).powi(2) + (uy / self.ry).powi(2)).sqrt()
        };
        (self.x + ux * t, self.y + uy * t)
    }

    fn bbox(&self) -> (f64, f64, f64, f64) {
        (
            self.x - self.rx,
            self.y - self.ry,
            self.x + self.rx,
            self.y + self.ry,
        )
    }
}

/// Whether segment a–b meets the box (x0, y0, x1, y1) (Liang–Barsky clipping).
fn segment_hits_box(a: (f64, f64), b: (f64, f64), r: (f64, f64, f64, f64)) -> bool {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - r.0),
        (dx, r.2 - a.0),
        (-dy, a.1 - r.1),
        (dy, r.3 - a.1),
    ] {
        if p.abs() < 1e-12 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

fn boxes_meet(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// One box of a plate (a plate whose members cannot sit side by side gets one box per run).
#[derive(Clone, Debug)]
struct PlateBox {
    plate: usize,
    rect: (f64, f64, f64, f64),
    /// Label anchor (right or left aligned).
    label: (f64, f64, bool),
}

/// An edge of the drawing as a polyline between the two centres.
#[derive(Clone, Debug)]
struct Route {
    from: usize,
    to: usize,
    index: bool,
    points: Vec<(f64, f64)>,
}

/// The whole drawing.
#[derive(Debug)]
struct Layout {
    nodes: Vec<Shape>,
    plates: Vec<PlateBox>,
    edges: Vec<Route>,
}

/// Approximate text width in Helvetica (a little generous so text never overflows).
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

const SIDE_PAD: f64 = 12.0;
const SIDE_STEP: f64 = 10.0;
const BOTTOM_PAD: f64 = 28.0;
const BOTTOM_STEP: f64 = 18.0;
const EDGE_MARGIN: f64 = 5.0;

/// Node sizes: each ellipse holds its name and its distribution.
fn shapes(m: &Model) -> Vec<Shape> {
    (0..m.variables.len())
        .map(|v| {
            let w = text_width(&m.variables[v].name, 14.0).max(text_width(&label(m, v), 10.0));
            let boxed = matches!(m.variables[v].node, Node::Data);
            let rx = if boxed {
                (w / 2.0 + 10.0).max(28.0)
            } else {
                ((w / 2.0 + 8.0) / 0.84).max(30.0)
            };
            Shape {
                x: 0.0,
                y: 0.0,
                rx,
                ry: 26.0,
                boxed,
            }
        })
        .collect()
}

/// Places the nodes: rows by topological depth, columns by plate set (each set of plates a
/// column group, the groups in `order`); returns the shapes and the runs of each plate (ranges of
/// consecutive groups holding it).
fn place(
    m: &Model,
    groups: &[(Vec<usize>, Vec<usize>)],
    order: &[usize],
    layer: &[usize],
    base: &[Shape],
) -> Vec<Shape> {
    let nplates = m.plates.len() as f64;
    let sw = base.iter().map(|s| 2.0 * s.rx).fold(60.0, f64::max) + 40.0;
    let gap = 2.0 * (SIDE_PAD + SIDE_STEP * nplates) + 16.0;
    let dy =
        2.0 * 26.0 + BOTTOM_PAD + BOTTOM_STEP * nplates + SIDE_PAD + SIDE_STEP * nplates + 36.0;
    let layers = layer.iter().copied().max().map_or(0, |l| l + 1);
    let mut out = base.to_vec();
    let mut x = 0.0;
    for &g in order {
        let members = &groups[g].1;
        let per_layer = |l: usize| -> Vec<usize> {
            members.iter().copied().filter(|&v| layer[v] == l).collect()
        };
        let slots = (0..layers)
            .map(|l| per_layer(l).len())
            .max()
            .unwrap_or(1)
            .max(1);
        for l in 0..layers {
            let row = per_layer(l);
            let offset = (slots - row.len()) as f64 / 2.0;
            for (i, &v) in row.iter().enumerate() {
                out[v].x = x + (offset + i as f64 + 0.5) * sw;
                out[v].y = l as f64 * dy;
            }
        }
        x += slots as f64 * sw + gap;
    }
    out
}

/// Runs of consecutive groups (in drawing order) holding each plate: (plate, groups).
fn runs(
    m: &Model,
    groups: &[(Vec<usize>, Vec<usize>)],
    order: &[usize],
) -> Vec<(usize, Vec<usize>)> {
    let mut out = Vec::new();
    for p in 0..m.plates.len() {
        let mut cur: Vec<usize> = Vec::new();
        for &g in order {
            if groups[g].0.contains(&p) {
                cur.push(g);
            } else if !cur.is_empty() {
                out.push((p, std::mem::take(&mut cur)));
            }
        }
        if !cur.is_empty() {
            out.push((p, cur));
        }
    }
    out
}

/// Straight edges that pass through a node other than their ends.
fn straight_hits(nodes: &[Shape], edges: &[(usize, usize, bool)]) -> usize {
    edges
        .iter()
        .filter(|&&(p, c, _)| {
            (0..nodes.len()).any(|o| {
                o != p
                    && o != c
                    && nodes[o].hit(
                        (nodes[p].x, nodes[p].y),
                        (nodes[c].x, nodes[c].y),
                        EDGE_MARGIN,
                    )
            })
        })
        .count()
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn go(cur: &mut Vec<usize>, used: &mut [bool], out: &mut Vec<Vec<usize>>) {
        if cur.len() == used.len() {
            out.push(cur.clone());
            return;
        }
        for i in 0..used.len() {
            if !used[i] {
                used[i] = true;
                cur.push(i);
                go(cur, used, out);
                cur.pop();
                used[i] = false;
            }
        }
    }
    let mut out = Vec::new();
    go(&mut Vec::new(), &mut vec![false; n], &mut out);
    out
}

/// Lays the network out: nodes in rows by topological depth and in column groups by plate set,
/// the groups ordered so that every plate's groups are adjacent where possible (then each plate
/// is one box, and crossed plates are overlapping boxes); a plate box holds exactly its members.
/// Edges that would pass through a node are bent round it through the gaps between columns.
fn layout(m: &Model, plate_labels: &[String]) -> Layout {
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
    let mut by_set: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for (v, var) in m.variables.iter().enumerate() {
        let mut key = var.plates.clone();
        key.sort_unstable();
        key.dedup();
        by_set.entry(key).or_default().push(v);
    }
    let groups: Vec<(Vec<usize>, Vec<usize>)> = by_set.into_iter().collect();
    let es = edges(m);
    let base = shapes(m);
    // Choose the column order: fewest split plates, then fewest edges through nodes, then
    // shortest edges.
    let candidates = if groups.len() <= 7 {
        permutations(groups.len())
    } else {
        vec![(0..groups.len()).collect()]
    };
    let mut best: Option<((usize, usize, f64), Vec<usize>)> = None;
    for order in candidates {
        let split = runs(m, &groups, &order).len();
        let nodes = place(m, &groups, &order, &layer, &base);
        let hits = straight_hits(&nodes, &es);
        let length: f64 = es
            .iter()
            .map(|&(p, c, _)| (nodes[p].x - nodes[c].x).abs())
            .sum();
        let score = (split, hits, length);
        let better = match &best {
            None => true,
            Some((b, _)) => {
                (score.0, score.1) < (b.0, b.1)
                    || ((score.0, score.1) == (b.0, b.1) && score.2 < b.2 - 1e-9)
            }
        };
        if better {
            best = Some((score, order));
        }
    }
    let order = best.map(|b| b.1).unwrap_or_default();
    let nodes = place(m, &groups, &order, &layer, &base);

    // Plate boxes: the bounding box of the members of each run, padded more for boxes that hold
    // other boxes so nested boxes never share an edge.
    let rs = runs(m, &groups, &order);
    let members: Vec<Vec<usize>> = rs
        .iter()
        .map(|(_, gs)| gs.iter().flat_map(|&g| groups[g].1.clone()).collect())
        .collect();
    let inside = |a: usize, b: usize| -> bool {
        // Box a is drawn inside box b.
        a != b
            && members[a].iter().all(|v| members[b].contains(v))
            && (members[a].len() < members[b].len() || rs[a].0 > rs[b].0)
    };
    let mut depth = vec![0usize; rs.len()];
    for _ in 0..rs.len() {
        for b in 0..rs.len() {
            for a in 0..rs.len() {
                if inside(a, b) {
                    depth[b] = depth[b].max(depth[a] + 1);
                }
            }
        }
    }
    let mut plates: Vec<PlateBox> = rs
        .iter()
        .enumerate()
        .map(|(i, (p, _))| {
            let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
            for &v in &members[i] {
                let b = nodes[v].bbox();
                x0 = x0.min(b.0);
                y0 = y0.min(b.1);
                x1 = x1.max(b.2);
                y1 = y1.max(b.3);
            }
            // A small per-plate offset keeps crossed boxes from sharing an edge.
            let side = SIDE_PAD + SIDE_STEP * depth[i] as f64 + 3.0 * (p % 3) as f64;
            let bottom = BOTTOM_PAD + BOTTOM_STEP * depth[i] as f64 + 3.0 * (p % 3) as f64;
            PlateBox {
                plate: *p,
                rect: (x0 - side, y0 - side, x1 + side, y1 + bottom),
                label: (0.0, 0.0, true),
            }
        })
        .collect();

    // Edges: straight when clear, otherwise the shortest detour through a vertical channel
    // between columns.
    let dy = {
        let ys: Vec<f64> = nodes.iter().map(|s| s.y).collect();
        let mut d = f64::MAX;
        for a in &ys {
            for b in &ys {
                if b > a {
                    d = d.min(b - a);
                }
            }
        }
        if d == f64::MAX {
            100.0
        } else {
            d
        }
    };
    let mut xs: Vec<f64> = nodes.iter().map(|s| s.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() < 1.0);
    let mut channels: Vec<f64> = xs.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
    if let (Some(&lo), Some(&hi)) = (xs.first(), xs.last()) {
        let reach = nodes.iter().map(|s| s.rx).fold(0.0, f64::max) + 30.0;
        let outer = plates
            .iter()
            .map(|b| (lo - b.rect.0).max(b.rect.2 - hi))
            .fold(reach, f64::max)
            + 14.0;
        channels.push(lo - outer);
        channels.push(hi + outer);
    }
    let clear = |pts: &[(f64, f64)], p: usize, c: usize| -> bool {
        pts.windows(2)
            .all(|w| (0..n).all(|o| o == p || o == c || !nodes[o].hit(w[0], w[1], EDGE_MARGIN)))
    };
    let length = |pts: &[(f64, f64)]| -> f64 {
        pts.windows(2)
            .map(|w| ((w[1].0 - w[0].0).powi(2) + (w[1].1 - w[0].1).powi(2)).sqrt())
            .sum()
    };
    let routes: Vec<Route> = es
        .iter()
        .map(|&(p, c, index)| {
            let (a, b) = ((nodes[p].x, nodes[p].y), (nodes[c].x, nodes[c].y));
            let mut options: Vec<Vec<(f64, f64)>> = vec![vec![a, b]];
            for &cx in &channels {
                let (ya, yb) = (a.1 + dy / 2.0, b.1 - dy / 2.0);
                if yb - ya > 1.0 {
                    options.push(vec![a, (cx, ya), (cx, yb), b]);
                } else {
                    options.push(vec![a, (cx, (a.1 + b.1) / 2.0), b]);
                }
            }
            let points = options
                .iter()
                .filter(|o| clear(o, p, c))
                .min_by(|x, y| length(x).total_cmp(&length(y)))
                .cloned()
                .unwrap_or_else(|| vec![a, b]);
            Route {
                from: p,
                to: c,
                index,
                points,
            }
        })
        .collect();

    // Plate labels: in a corner of the box, away from nodes, edges and other boxes.
    let rects: Vec<(f64, f64, f64, f64)> = plates.iter().map(|b| b.rect).collect();
    for (i, b) in plates.iter_mut().enumerate() {
        let w = text_width(&plate_labels[b.plate], 12.0) * 0.95;
        let (x0, y0, x1, y1) = b.rect;
        let corners = [
            (x1 - 6.0, y1 - 6.0, true),
            (x0 + 6.0, y1 - 6.0, false),
            (x1 - 6.0, y0 + 16.0, true),
            (x0 + 6.0, y0 + 16.0, false),
        ];
        let conflicts = |&(lx, ly, right): &(f64, f64, bool)| -> usize {
            let bx = if right {
                (lx - w, ly - 12.0, lx, ly + 2.0)
            } else {
                (lx, ly - 12.0, lx + w, ly + 2.0)
            };
            let mut k = nodes.iter().filter(|s| boxes_meet(s.bbox(), bx)).count();
            k += routes
                .iter()
                .filter(|r| {
                    r.points
                        .windows(2)
                        .any(|s| segment_hits_box(s[0], s[1], bx))
                })
                .count();
            k += rects
                .iter()
                .enumerate()
                .filter(|&(j, r)| {
                    j != i
                        && boxes_meet(*r, bx)
                        && !(r.0 <= bx.0
                            && r.1 <= bx.1
                            && r.2 >= bx.2
                            && r.3 >= bx.3
                            && r.0 <= x0
                            && r.1 <= y0
                            && r.2 >= x1
                            && r.3 >= y1)
                })
                .count();
            k
        };
        let mut pick = corners[0];
        let mut least = usize::MAX;
        for c in &corners {
            let k = conflicts(c);
            if k < least {
                least = k;
                pick = *c;
            }
        }
        b.label = pick;
    }
    Layout {
        nodes,
        plates,
        edges: routes,
    }
}

fn style_of(var: &occam_lang::ir::Variable) -> (&'static str, &'static str) {
    match (&var.node, var.observed) {
        (Node::Deterministic { .. }, _) => ("white", " stroke-dasharray=\"4,3\""),
        (Node::Data, _) | (_, true) => ("#c8c8c8", ""),
        _ => ("white", ""),
    }
}

/// SVG of the network (see [`layout`]). Layout facts are kept in `data-` attributes (node
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

/// `N = 500`, or just `N` when the size would come from data that is not attached.
pub fn plate_labels(loaded: &Loaded) -> Vec<String> {
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
pub fn load_for_drawing(path: &Path, given: &DataSet) -> Result<Loaded> {
    match model::load(path, given) {
        Ok(l) => Ok(l),
        Err(Error::Model(_)) => {
            crate::sample::load_without_data(path, given, &BTreeMap::new(), Some(1))
        }
        Err(e) => Err(e),
    }
}
