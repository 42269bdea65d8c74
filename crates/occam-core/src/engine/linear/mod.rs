//! The linear-Gaussian kernel: a scalar Gaussian y whose mean is a dot product F = aᵀb of two
//! Gaussian q-vectors in crossed plates — y[D, N] ~ N(w_dᵀ x_n, τ⁻¹) (PCA, factor analysis in scalar
//! form), y[N] ~ N(x_nᵀ B, τ⁻¹) with observed x_n (regression) — evaluated as matrix products.
//!
//! The generic path forms, for every element of y, F's moments ⟨F⟩ = ⟨a⟩ᵀ⟨b⟩, ⟨F²⟩ = tr(⟨aaᵀ⟩⟨bbᵀ⟩)
//! and its message to each parent [τ y ⟨b⟩, −½ τ ⟨bbᵀ⟩] (Winn (2.21), (2.49)), each O(q²). By
//! multilinearity every quantity VMP reads is a sum over elements, i.e. a matrix product. Put y's
//! elements on a grid: rows i are the elements of the parent through which the precision τ factorises
//! (τ_e = τ_i), columns j the other parent's; Y (rows × cols) the data with 0 where missing, M the
//! mask. Then, with Ā, A₂ the stacked first and second moments of the row parent and B̄, B₂ of the
//! column parent (read in place from the nodes' moment arrays):
//!
//! * message to row i: [τ_i (Y B̄)_i, −½ τ_i (M B₂)_i] (M B₂ = 1 Σ_j B₂_j without missing entries);
//! * message to column j: [((τ∘Y)ᵀ Ā)_j, −½ ((τ∘M)ᵀ A₂)_j];
//! * message to τ and y's bound term from the per-row sums Σ_j m y², Σ_j m, Ā_iᵀ (Y B̄)_i and
//!   tr(A₂_i (M B₂)_i): −½ Σ (y² − 2 y ⟨F⟩ + ⟨F²⟩) and Σ [τ y⟨F⟩ − ½ τ y² − ½ τ ⟨F²⟩ + ½(⟨ln τ⟩ − ln 2π)].
//!
//! No per-element second moment of F is formed (F's moments are not maintained; `Vmp::moments` of F
//! is empty). When the row parent is a constant (observed covariates X: B · X[N], or B[D] · X[N]
//! for several outputs), only Σ_i m_ij x_i x_iᵀ and Σ_i m_ij y_ij x_i per column j (and per
//! precision element, when τ varies over a few groups of rows) are needed: they are summed once, on
//! first use, and the constant never stores its outer products (`points`).
//!
//! Without missing entries, a latent factor whose only child is F, whose prior is one constant and
//! whose elements all see the same τ (PCA's X) has one covariance for all its elements; it is then
//! stored as means plus that covariance (`shared`, O(n·q) memory, one q × q factorisation per
//! update), and A₂ products become Mᵀ diag(w) M + (Σ w) Σ. Files: `side` (reading a factor, dense or
//! shared, and the messages), `grid` (Y V and Yᵀ A in fixed blocks of columns on both cores),
//! `data` (the sums of the data), `shared`, `offsets`, `matvec`.
//!
//! y's mean may also be F plus scalar terms read per row or per column (BPCA's mean μ_d): the
//! kernel then runs on the data less the terms' means (`offsets`).
//!
//! The same structure serves `W @ x` with a multivariate Gaussian child y_n ~ N(W x_n, Λ⁻¹) (factor
//! analysis with a Wishart noise precision; module `matvec`): its sums are Yᵀ X̄ and Σ ⟨x xᵀ⟩,
//! and y's mean may be W x_n + μ with one offset vector μ for every n.
//!
//! The element-by-element path stays the reference: `Graph::compile_generic` builds the same model
//! without this kernel, and the tests below compare every node's φ, moments and bound term.

use super::*;
use crate::dist::Dist;
use crate::linalg::trace_of_product;
use crate::special::LN_2PI;
pub(super) use block::{LinearKernel, SharedCovariance};
use data::Data;
use std::sync::OnceLock;

mod block;
mod data;
mod grid;
mod grid_message;
mod matvec;
mod offsets;
pub(super) mod shared;
mod side;

pub(super) use offsets::Effective;

use side::{Message, Side};

/// Precision elements above which constant rows keep their outer products (per-element sums would
/// not be smaller than the data).
const MAX_POINT_GROUPS: usize = 8;

/// A dot product F feeding the mean of a scalar Gaussian y, in crossed plates (see the module doc).
#[derive(Debug)]
pub(crate) struct Linear {
    pub(super) y: usize,
    pub(super) f: usize,
    /// y's mean when it is a sum of F and offsets (`offsets`); `None`: F itself.
    pub(super) sum: Option<usize>,
    offsets: Vec<offsets::Offset>,
    q: usize,
    /// F's slot whose parent indexes the rows (τ factorises through it); the other slot's, columns.
    pub(super) row_slot: usize,
    rows: usize,
    cols: usize,
    /// Precision element of each row (empty: a constant precision).
    tau_of_row: Vec<u32>,
    /// The rows are a constant node's values (see the module doc).
    pub(super) points: bool,
    /// For `points`: the precision element of each unit (k, j) = (precision group of the rows,
    /// column), at k · cols + j.
    unit_tau: Vec<u32>,
    data: OnceLock<Data>,
    /// y's own bound term Σ f(y) over its data, summed at compilation (y keeps no per-element
    /// moments or f(y): its moments are formed on request, `Vmp::moments`).
    pub(super) own: f64,
    /// `W @ x` with a multivariate Gaussian child (module `matvec`) instead of a dot product: the
    /// grid fields above are then unused (rows = D, cols = N, row slot W).
    matvec: Option<matvec::MatVecForm>,
}

/// Products with the column parent's moments (valid until it or an offset changes): Y B̄ (rows ×
/// q, Ỹ B̄ with offsets), M B₂ (rows × q², or q² when nothing is missing) and, with offsets read per
/// row, M B̄ (rows × q, or q).
#[derive(Debug)]
pub(super) struct ColumnProducts {
    yc: Vec<f64>,
    mc2: Vec<f64>,
    mb: Vec<f64>,
}

/// Per-unit sums (a unit is a row, or a (precision group, column) pair for `points`): ⟨F⟩-weighted data
/// Σ m y ⟨F⟩, Σ m ⟨F²⟩, Σ m y², Σ m, and the unit's precision element.
type Unit = ([f64; 4], usize);

/// Element of parent slot `s` of F read by y's element e (0 for a constant parent or one without
/// plates).
fn at(f: &Node, s: usize, e: usize) -> usize {
    f.parents[s].at(e)
}

/// The linear structure of deterministic node `f`, if it has one (see the module doc).
pub(super) fn detect(nodes: &[Node], f: usize) -> Option<Linear> {
    if let Some(l) = matvec::detect(nodes, f) {
        return Some(l);
    }
    let fnode = &nodes[f];
    let Body::Deterministic(Factor::Dot(dot)) = &fnode.body else {
        return None;
    };
    let [(m, Role::Slot(fslot))] = fnode.children[..] else {
        return None;
    };
    // y's mean: F itself, or a sum of F and offsets (module `offsets`).
    let (y, sum) = match &nodes[m].body {
        Body::Deterministic(Factor::Sum(s)) if s.d == 1 => {
            let [(y, Role::Slot(0))] = nodes[m].children[..] else {
                return None;
            };
            let sn = &nodes[m];
            if sn.n != fnode.n || sn.configs != 1 || !sn.parents[fslot].rule.is_identity(sn.n) {
                return None;
            }
            (y, Some(m))
        }
        _ if fslot == 0 => (m, None),
        _ => return None,
    };
    let yn = &nodes[y];
    let gaussian = matches!(yn.body, Body::Stochastic(Dist::Gaussian(_)));
    // Every element of y is data or a missing leaf entry (integrated out).
    if !gaussian
        || yn.configs != 1
        || yn.map
        || !yn.children.is_empty()
        || yn.observed.is_none()
        || yn.n != fnode.n
    {
        return None;
    }
    let mean = &yn.parents[0];
    if !matches!(mean.source, Source::Node(p) if p == sum.unwrap_or(f))
        || !mean.rule.is_identity(yn.n)
    {
        return None;
    }
    let side = |s: usize| match fnode.parents[s].source {
        Source::Const(_) => (None, 1),
        Source::Node(p) => (Some(p), nodes[p].n),
    };
    let (sides, sizes) = ([side(0).0, side(1).0], [side(0).1, side(1).1]);
    if (sides[0].is_some() && sides[0] == sides[1]) || sizes[0] * sizes[1] != yn.n {
        return None;
    }
    // Crossed: every (a, b) pair is read by exactly one element of y (the cell rule a·|b| + b is
    // injective; its n elements then fill the |a|·|b| = n cells).
    let cells = fnode.parents[0]
        .rule
        .combine(sizes[1], &fnode.parents[1].rule);
    let crossed = match cells {
        Some(cells) => yn.n <= 1 || cells.injective(),
        None => {
            let mut seen = vec![false; yn.n];
            (0..yn.n).all(|e| {
                let cell = at(fnode, 0, e) * sizes[1] + at(fnode, 1, e);
                !std::mem::replace(&mut seen[cell], true)
            })
        }
    };
    if !crossed {
        return None;
    }
    let prec = &yn.parents[1];
    let tau_n = match prec.source {
        Source::Const(_) => 1,
        Source::Node(p) => nodes[p].n,
    };
    // The precision element of each row of slot s, if τ factorises through that parent.
    let through = |s: usize| -> Option<Vec<u32>> {
        if prec.rule.is_broadcast() {
            return Some(Vec::new());
        }
        prec.rule
            .function_of(&fnode.parents[s].rule, sizes[s], yn.n)
    };
    let constant = |s: usize| sides[s].is_some_and(|p| matches!(nodes[p].body, Body::Constant));
    // Constant rows: units (precision group k of the rows, column j) with τ through the rows in a
    // few groups, or (0, j) with τ through the columns; their sums must not outgrow the data.
    let points = |s: usize| -> Option<Vec<u32>> {
        let cols = sizes[1 - s];
        let units = if let Some(of) = through(s).filter(|_| tau_n <= MAX_POINT_GROUPS) {
            let kn = if of.is_empty() { 1 } else { tau_n };
            (0..kn * cols)
                .map(|u| (u / cols) as u32)
                .collect::<Vec<u32>>()
        } else {
            let of = through(1 - s)?;
            (0..cols).map(|j| of.get(j).copied().unwrap_or(0)).collect()
        };
        (constant(s) && units.len() * dot.d <= yn.n).then_some(units)
    };
    let mut choice = None;
    // Offsets change the data the sums are made of: they keep the grid.
    for s in (0..2).filter(|_| sum.is_none()) {
        if let Some(units) = points(s) {
            let rows_tau = through(s).unwrap_or_default();
            choice = Some((s, rows_tau, true, units));
            break;
        }
    }
    if choice.is_none() {
        choice = (0..2).find_map(|s| through(s).map(|of| (s, of, false, Vec::new())));
    }
    let (row_slot, tau_of_row, points, unit_tau) = choice?;
    let offsets = match sum {
        Some(s) => offsets::detect(nodes, fnode, &nodes[s], fslot, row_slot, sizes, prec)?,
        None => Vec::new(),
    };
    Some(Linear {
        y,
        f,
        sum,
        offsets,
        q: dot.d,
        row_slot,
        rows: sizes[row_slot],
        cols: sizes[1 - row_slot],
        tau_of_row,
        points,
        unit_tau,
        data: OnceLock::new(),
        own: 0.0,
        matvec: None,
    })
}

impl Linear {
    /// Whether F's cached products read the offsets' moments: the grid's are made of the data less
    /// the offsets; the matrix–vector form's (YX, S, Σ m x̄) are not (module `matvec`).
    pub(super) fn products_read_offsets(&self) -> bool {
        self.matvec.is_none()
    }

    fn len(&self) -> usize {
        self.q + self.q * self.q
    }

    /// Moments of F's parent in slot `s` (all its elements, as stored).
    fn side<'a>(&self, nodes: &'a [Node], s: usize) -> Side<'a> {
        match &nodes[self.f].parents[s].source {
            Source::Const(m) => Side::Dense(m),
            Source::Node(p) => shared::side(&nodes[*p], self.q),
        }
    }

    /// Whether every row reads the same precision element.
    fn uniform_tau(&self) -> bool {
        self.tau_of_row.iter().all(|&k| k == self.tau_of_row[0])
    }

    fn tau_index(&self, row: usize) -> usize {
        self.tau_of_row.get(row).map_or(0, |&k| k as usize)
    }

    /// ⟨τ⟩ and ⟨ln τ⟩ of precision element k.
    fn tau(&self, nodes: &[Node], k: usize) -> (f64, f64) {
        match &nodes[self.y].parents[1].source {
            Source::Const(m) => (m[0], m[1]),
            Source::Node(p) => (nodes[*p].q.u[2 * k], nodes[*p].q.u[2 * k + 1]),
        }
    }

    /// Whether every entry of y is data (no mask).
    pub(super) fn complete(&self, nodes: &[Node]) -> bool {
        nodes[self.y].observed.is_all()
    }

    fn data(&self, nodes: &[Node]) -> &Data {
        self.data.get_or_init(|| {
            if self.points {
                self.point_sums(nodes)
            } else {
                self.grid(nodes)
            }
        })
    }

    /// The data grid Y (see `Data::Grid`): the grid's own copy, or y's data laid out as the grid.
    fn ym<'a>(&'a self, nodes: &'a [Node]) -> &'a [f64] {
        let Data::Grid { ym, .. } = self.data(nodes) else {
            unreachable!("the grid of a grid structure")
        };
        ym.as_deref().unwrap_or(&nodes[self.y].data)
    }

    /// Y B̄ and M B₂ from the column parent's moments, cached under F until the column parent changes.
    fn column_products(&self, nodes: &[Node], cache: &Cache) -> Arc<ColumnProducts> {
        let Data::Grid { mask, .. } = self.data(nodes) else {
            unreachable!("column products are for grids")
        };
        let ym = self.ym(nodes);
        cached(
            cache,
            self.f,
            |e| &mut e.linear,
            || {
                let (q, l) = (self.q, self.len());
                let cu = self.side(nodes, 1 - self.row_slot);
                let (means, view) = cu.means(q);
                let eff = self.effective(nodes, cache);
                let ym = eff.as_ref().map_or(ym, |e| &e.ym[..]);
                let yc = grid::times(ym, self.cols, means, view);
                let mc2 = match mask {
                    Some(m) => grid::times(m, self.cols, &cu.dense(q), (q, q * q, l)),
                    None => cu.gram(q),
                };
                let mb = match mask {
                    _ if !self.row_offsets() => Vec::new(),
                    Some(m) => grid::times(m, self.cols, means, view),
                    None => {
                        let mut s = vec![0.0; q];
                        (0..self.cols).for_each(|j| kernels::add_into(&mut s, cu.mean(q, j)));
                        s
                    }
                };
                Arc::new(ColumnProducts { yc, mc2, mb })
            },
        )
    }

    /// The per-unit sums that τ's message and y's bound term are made of.
    fn units(&self, nodes: &[Node], cache: &Cache) -> Vec<Unit> {
        let (q, l) = (self.q, self.len());
        match self.data(nodes) {
            Data::Points {
                xy,
                gram,
                y2,
                count,
            } => {
                let b = self.side(nodes, 1 - self.row_slot).dense(q);
                (0..self.unit_tau.len())
                    .map(|u| {
                        let bj = &b[(u % self.cols) * l..(u % self.cols + 1) * l];
                        let syf = dot(&bj[..q], &xy[u * q..(u + 1) * q]);
                        let sf2 = trace_of_product(&gram[u * q * q..(u + 1) * q * q], &bj[q..], q);
                        ([syf, sf2, y2[u], count[u]], self.unit_tau[u] as usize)
                    })
                    .collect()
            }
            Data::Grid {
                mask, y2, count, ..
            } => {
                let cp = self.column_products(nodes, cache);
                let eff = self.effective(nodes, cache);
                let y2 = eff.as_ref().map_or(&y2[..], |e| &e.y2[..]);
                let a = self.side(nodes, self.row_slot);
                let qq = q * q;
                let unit = |i: usize| {
                    let syf = dot(a.mean(q, i), &cp.yc[i * q..(i + 1) * q]);
                    let mc2 = if mask.is_some() {
                        &cp.mc2[i * qq..(i + 1) * qq]
                    } else {
                        &cp.mc2[..]
                    };
                    let sf2 = a.trace_with(q, i, mc2);
                    ([syf, sf2, y2[i], count[i]], self.tau_index(i))
                };
                if kernels::sequential(self.rows * (q + qq)) {
                    (0..self.rows).map(unit).collect()
                } else {
                    (0..self.rows).into_par_iter().map(unit).collect()
                }
            }
        }
    }

    /// Adds the messages through F to its parent in slot `slot` into `out` (that parent's elements).
    pub(super) fn message(&self, nodes: &[Node], cache: &Cache, slot: usize, out: &mut [f64]) {
        if let Some(mv) = &self.matvec {
            return mv.message(self, nodes, cache, slot, out);
        }
        let (q, l) = (self.q, self.len());
        let qq = q * q;
        let Data::Points { xy, gram, .. } = self.data(nodes) else {
            if !self.add_grid_message(nodes, cache, slot, out) {
                self.grid_message(nodes, cache, slot).add_to(q, out);
            }
            return;
        };
        // Only the columns are random.
        if slot == self.row_slot {
            return;
        }
        for (u, &k) in self.unit_tau.iter().enumerate() {
            let t = self.tau(nodes, k as usize).0;
            let o = &mut out[(u % self.cols) * l..(u % self.cols + 1) * l];
            for a in 0..q {
                o[a] += t * xy[u * q + a];
            }
            for ab in 0..qq {
                o[q + ab] += -0.5 * t * gram[u * qq + ab];
            }
        }
    }

    /// Adds y's message to its precision τ (one row of two per τ element) into `out` — Winn (2.22)
    /// summed over the elements.
    pub(super) fn tau_message(&self, nodes: &[Node], cache: &Cache, out: &mut [f64]) {
        if let Some(mv) = &self.matvec {
            return mv.precision_message(self, nodes, cache, out);
        }
        for ([syf, sf2, y2, count], k) in self.units(nodes, cache) {
            out[2 * k] += -0.5 * (y2 - 2.0 * syf + sf2);
            out[2 * k + 1] += 0.5 * count;
        }
    }

    /// y's bound term without its own part: Σ over data of ⟨ln N(y | F, τ⁻¹)⟩.
    pub(super) fn bound(&self, nodes: &[Node], cache: &Cache) -> f64 {
        if let Some(mv) = &self.matvec {
            return mv.bound(self, nodes, cache);
        }
        self.units(nodes, cache)
            .into_iter()
            .map(|([syf, sf2, y2, count], k)| {
                let (t, lt) = self.tau(nodes, k);
                t * syf - 0.5 * t * (y2 + sf2) + 0.5 * count * (lt - LN_2PI)
            })
            .sum()
    }

    /// F's moments per element (⟨F⟩, ⟨F²⟩), for ancestral sampling and inspection.
    pub(super) fn f_moments(&self, nodes: &[Node]) -> Vec<f64> {
        if let Some(mv) = &self.matvec {
            return mv.f_moments(self, nodes);
        }
        let (f, q) = (&nodes[self.f], self.q);
        let element = |s: usize, i: usize, buf: &mut Vec<f64>| match &f.parents[s].source {
            Source::Node(p) if nodes[*p].q.u.is_empty() => {
                buf.clear();
                let x = &nodes[*p].data[i * q..(i + 1) * q];
                buf.extend_from_slice(x);
                buf.extend((0..q * q).map(|ab| x[ab / q] * x[ab % q]));
            }
            _ => self.side(nodes, s).element(q, i, buf),
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut u = vec![0.0; 2 * f.n];
        for e in 0..f.n {
            element(0, at(f, 0, e), &mut a);
            element(1, at(f, 1, e), &mut b);
            u[2 * e] = dot(&a[..q], &b[..q]);
            u[2 * e + 1] = trace_of_product(&a[q..], &b[q..], q);
        }
        u
    }
}

#[cfg(test)]
pub(super) mod tests;
