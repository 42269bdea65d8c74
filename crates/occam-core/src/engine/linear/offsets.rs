//! Offsets: y's mean is F + Σ_k t_k, a dot product plus scalar Gaussian terms (or constants) each
//! read per row or per column of the grid — BPCA's mean, y_nd ~ N(w_dᵀ x_n + μ_d, τ⁻¹).
//!
//! The terms are independent of F and of each other under q, so with T = Σ_k t_k and the data
//! less the offsets' means, ỹ = y − ⟨T⟩ (0 where missing),
//! ⟨(y − F − T)²⟩ = ỹ² − 2 ỹ ⟨F⟩ + ⟨F²⟩ + Σ_k Var(t_k):
//! the kernel runs on the grid Ỹ instead of Y, with Σ_j m (ỹ² + Σ_k Var t_k) in place of Σ_j m y²
//! (the sum's message to F is [τ(y − ⟨T⟩), −½τ], Winn (2.47) through the sum factor). Ỹ is formed
//! once per change of a term (one pass over the grid) and cached under the sum node.
//!
//! The message to term t_k at element g is the sum over the data that read g of
//! [τ (y − ⟨F⟩ − ⟨T⟩ + ⟨t_k⟩), −½ τ]. With Σ_j m_ij ⟨F_ij⟩ = ⟨a_i⟩ · (M B̄)_i for a term read per
//! row i, and Σ_i τ_i m_ij ⟨F_ij⟩ = ⟨b_j⟩ · (Mᵀ(τ∘Ā))_j for one read per column j, it is a few
//! products of the grid with vectors (without missing entries, M B̄ = 1 Σ_j ⟨b_j⟩ᵀ).

use super::*;
use crate::engine::pool::Pool;

/// A term of y's mean besides F (see the module doc).
#[derive(Debug)]
pub(super) struct Offset {
    /// The sum's slot that holds the term.
    pub(super) slot: usize,
    /// Read per row of the grid (else per column).
    by_rows: bool,
    /// The term's element read by each row (`by_rows`) or column.
    of: Vec<u32>,
}

/// The data less the offsets' means (see the module doc): Ỹ (rows × cols, 0 where missing), and
/// per row Σ_j m (ỹ² + Σ_k Var t_k) and Σ_j ỹ.
#[derive(Debug)]
pub(in crate::engine) struct Effective {
    pub(super) ym: Vec<f64>,
    pub(super) y2: Vec<f64>,
    rowsum: Vec<f64>,
}

impl Effective {
    /// Gives the arrays back to `pool` (the cached entry is dropped).
    pub(in crate::engine) fn recycle(self, pool: &Pool) {
        for v in [self.ym, self.y2, self.rowsum] {
            pool.keep(v);
        }
    }
}

/// The offsets of sum node `s` (every slot but F's `fslot`), if each is a scalar Gaussian or
/// constant read per row or per column and independent of F's factors and of the precision.
pub(super) fn detect(
    nodes: &[Node],
    fnode: &Node,
    s: &Node,
    fslot: usize,
    row_slot: usize,
    sizes: [usize; 2],
    tau: &Edge,
) -> Option<Vec<Offset>> {
    let mut taken: Vec<usize> = fnode
        .parents
        .iter()
        .chain([tau])
        .filter_map(|e| match e.source {
            Source::Node(p) => Some(p),
            Source::Const(_) => None,
        })
        .collect();
    let mut out = Vec::new();
    for (slot, edge) in s.parents.iter().enumerate() {
        if slot == fslot {
            continue;
        }
        if let Source::Node(p) = edge.source {
            let node = &nodes[p];
            let scalar = node.kind == (MomentKind::Gaussian { d: 1 })
                && matches!(node.body, Body::Stochastic(_) | Body::Constant);
            if !scalar || taken.contains(&p) {
                return None;
            }
            taken.push(p);
        }
        // The term's element as a function of the row (or column) index, if it is one.
        let along = |side: usize| -> Option<Vec<u32>> {
            edge.rule
                .function_of(&fnode.parents[side].rule, sizes[side], s.n)
        };
        let (by_rows, of) = match along(row_slot) {
            Some(of) => (true, of),
            None => (false, along(1 - row_slot)?),
        };
        out.push(Offset { slot, by_rows, of });
    }
    Some(out)
}

impl Linear {
    /// ⟨t⟩ and Var(t) of term `o` at element g.
    fn term(&self, nodes: &[Node], o: &Offset, g: usize) -> (f64, f64) {
        let s = self.sum.expect("offsets belong to a sum");
        let u = match &nodes[s].parents[o.slot].source {
            Source::Const(m) => &m[..2],
            Source::Node(p) => &nodes[*p].q.u[2 * g..2 * g + 2],
        };
        (u[0], u[1] - u[0] * u[0])
    }

    /// Σ_k ⟨t_k⟩ and Σ_k Var(t_k) of the terms read per row (per row) and per column (per column)
    /// (arrays from `pool`).
    fn offset_moments(&self, nodes: &[Node], pool: &Pool) -> [Vec<f64>; 4] {
        let (mut rt, mut rv) = (pool.zeroed(self.rows), pool.zeroed(self.rows));
        let (mut ct, mut cv) = (pool.zeroed(self.cols), pool.zeroed(self.cols));
        for o in &self.offsets {
            let (t, v) = if o.by_rows {
                (&mut rt, &mut rv)
            } else {
                (&mut ct, &mut cv)
            };
            for (r, &g) in o.of.iter().enumerate() {
                let (m, var) = self.term(nodes, o, g as usize);
                t[r] += m;
                v[r] += var;
            }
        }
        [rt, rv, ct, cv]
    }

    /// Ỹ and its row sums (see the module doc), cached under the sum node until a term changes;
    /// `None` without offsets.
    pub(super) fn effective(&self, nodes: &[Node], cache: &Cache) -> Option<Arc<Effective>> {
        let s = self.sum.filter(|_| !self.offsets.is_empty())?;
        Some(cached(
            cache,
            s,
            |e| &mut e.offsets,
            || {
                let Data::Grid { mask, .. } = self.data(nodes) else {
                    unreachable!("offsets are on grids")
                };
                let ym = self.ym(nodes);
                let pool = &cache.pool;
                let moments = self.offset_moments(nodes, pool);
                let [rt, rv, ct, cv] = &moments;
                let cols = self.cols;
                let mut out = pool.zeroed(ym.len());
                let row = |(i, o): (usize, &mut [f64])| {
                    let (mut s2, mut s1) = (0.0, 0.0);
                    for j in 0..cols {
                        let cell = i * cols + j;
                        if mask.as_ref().is_some_and(|m| m[cell] == 0.0) {
                            continue;
                        }
                        let v = ym[cell] - rt[i] - ct[j];
                        o[j] = v;
                        s1 += v;
                        s2 += v * v + rv[i] + cv[j];
                    }
                    (s2, s1)
                };
                let rows = ym.len() / cols;
                let (mut y2, mut rowsum) = (pool.zeroed(rows), pool.zeroed(rows));
                if kernels::sequential(out.len()) {
                    // Each row's sums straight into place (no array of pairs).
                    for ((r, y2), rowsum) in out
                        .chunks_mut(cols)
                        .enumerate()
                        .zip(&mut y2)
                        .zip(&mut rowsum)
                    {
                        (*y2, *rowsum) = row(r);
                    }
                } else {
                    let sums: Vec<(f64, f64)> =
                        out.par_chunks_mut(cols).enumerate().map(row).collect();
                    for ((s, y2), rowsum) in sums.into_iter().zip(&mut y2).zip(&mut rowsum) {
                        (*y2, *rowsum) = s;
                    }
                }
                for v in moments {
                    pool.keep(v);
                }
                Arc::new(Effective {
                    ym: out,
                    y2,
                    rowsum,
                })
            },
        ))
    }

    /// Whether some term is read per row (the column products then also hold M B̄).
    pub(super) fn row_offsets(&self) -> bool {
        self.offsets.iter().any(|o| o.by_rows)
    }

    /// Adds the message to the term in the sum's slot `slot` into `out` (its elements, rows of 2)
    /// — see the module doc.
    pub(in crate::engine) fn offset_message(
        &self,
        nodes: &[Node],
        cache: &Cache,
        slot: usize,
        out: &mut [f64],
    ) {
        if let Some(mv) = &self.matvec {
            return mv.offset_message(self, nodes, cache, out);
        }
        let o = self
            .offsets
            .iter()
            .find(|o| o.slot == slot)
            .expect("a term of the sum");
        let q = self.q;
        let Data::Grid { mask, count, .. } = self.data(nodes) else {
            unreachable!("offsets are on grids")
        };
        let eff = self.effective(nodes, cache).expect("offsets");
        let a = self.side(nodes, self.row_slot);
        // Work arrays from the cache's pool (given back below).
        let pool = &cache.pool;
        let mut t = pool.zeroed(self.rows);
        t.iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = self.tau(nodes, self.tau_index(i)).0);
        if o.by_rows {
            let cp = self.column_products(nodes, cache);
            for (i, &g) in o.of.iter().enumerate() {
                let mb = if mask.is_some() {
                    &cp.mb[i * q..(i + 1) * q]
                } else {
                    &cp.mb[..]
                };
                let (tg, g) = (self.term(nodes, o, g as usize).0, g as usize);
                let f = dot(a.mean(q, i), mb);
                out[2 * g] += t[i] * (eff.rowsum[i] - f + tg * count[i]);
                out[2 * g + 1] += -0.5 * t[i] * count[i];
            }
            pool.keep(t);
            return;
        }
        let b = self.side(nodes, 1 - self.row_slot);
        let mut ta = pool.zeroed(self.rows * q);
        for (i, (ti, row)) in t.iter().zip(ta.chunks_exact_mut(q)).enumerate() {
            row.iter_mut()
                .zip(a.mean(q, i))
                .for_each(|(o, v)| *o = ti * v);
        }
        let mut yt = pool.zeroed(self.cols);
        grid::transpose_times_into(&eff.ym, self.cols, &t, 1, &mut yt);
        // Column j's Σ_i m_ij τ_i and Σ_i m_ij τ_i ā_i: without a mask the same for every column
        // (one sum each, read for every column).
        let (mt, mta, per_column) = match mask {
            Some(m) => (
                grid::transpose_times(m, self.cols, &t, 1),
                grid::transpose_times(m, self.cols, &ta, q),
                true,
            ),
            None => {
                let mut s = pool.zeroed(q);
                ta.chunks_exact(q)
                    .for_each(|r| kernels::add_into(&mut s, r));
                let mut total = pool.zeroed(1);
                total[0] = t.iter().sum();
                (total, s, false)
            }
        };
        for (j, &g) in o.of.iter().enumerate() {
            let (tg, g) = (self.term(nodes, o, g as usize).0, g as usize);
            let c = if per_column { j } else { 0 };
            let f = dot(b.mean(q, j), &mta[c * q..(c + 1) * q]);
            out[2 * g] += yt[j] - f + tg * mt[c];
            out[2 * g + 1] += -0.5 * mt[c];
        }
        for v in [t, ta, yt, mt, mta] {
            pool.keep(v);
        }
    }
}
