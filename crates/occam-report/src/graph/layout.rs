//! Placement of nodes and plates, and edge routing, for the SVG drawing.

use std::collections::BTreeMap;

use occam_lang::ir::Node;
use occam_lang::Model;

use super::{edges, label};

/// A node of the drawing: centre and half-sizes (an ellipse, or a box for data inputs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) rx: f64,
    pub(super) ry: f64,
    pub(super) boxed: bool,
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
    pub(super) fn boundary(&self, ux: f64, uy: f64) -> (f64, f64) {
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

    pub(super) fn bbox(&self) -> (f64, f64, f64, f64) {
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
pub(super) struct PlateBox {
    pub(super) plate: usize,
    pub(super) rect: (f64, f64, f64, f64),
    /// Label anchor (right or left aligned).
    pub(super) label: (f64, f64, bool),
}

/// An edge of the drawing as a polyline between the two centres.
#[derive(Clone, Debug)]
pub(super) struct Route {
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) index: bool,
    pub(super) points: Vec<(f64, f64)>,
}

/// The whole drawing.
#[derive(Debug)]
pub(super) struct Layout {
    pub(super) nodes: Vec<Shape>,
    pub(super) plates: Vec<PlateBox>,
    pub(super) edges: Vec<Route>,
}

/// Approximate text width in Helvetica (a little generous so text never overflows).
pub(super) fn text_width(s: &str, size: f64) -> f64 {
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
    let mut out = base.to_vec();
    let mut x = 0.0;
    for &g in order {
        // The group's members by layer, in member order (one pass; a filter of the members per
        // layer was quadratic for long chains).
        let mut rows: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &v in &groups[g].1 {
            rows.entry(layer[v]).or_default().push(v);
        }
        let slots = rows.values().map(Vec::len).max().unwrap_or(1).max(1);
        for (&l, row) in &rows {
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
pub(super) fn layout(m: &Model, plate_labels: &[String]) -> Layout {
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
    // (Every permutation costs a placement and an edge-through-node test, edges × nodes: only
    // for small drawings.)
    let candidates = if groups.len() <= 7 && n * es.len().max(1) <= 40_000 {
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
