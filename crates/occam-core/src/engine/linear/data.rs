//! What the data contribute to a linear-Gaussian structure, summed once (see the parent module):
//! the grid of data and mask, or, for constant rows, per-unit sums of x xᵀ and y x.

use super::*;

/// What the data contribute, summed once.
#[derive(Debug)]
pub(super) enum Data {
    /// Y (rows × cols, 0 where missing; `None`: y's own data, complete and laid out as the grid,
    /// see `Linear::ym`), M (`None`: nothing missing), Σ_j m y² and Σ_j m per row.
    Grid {
        ym: Option<Vec<f64>>,
        mask: Option<Vec<f64>>,
        y2: Vec<f64>,
        count: Vec<f64>,
    },
    /// Per unit (k, j) (see `Linear::unit_tau`): Σ m y x (q), Σ m x xᵀ (q²), Σ m y², Σ m.
    Points {
        xy: Vec<f64>,
        gram: Vec<f64>,
        y2: Vec<f64>,
        count: Vec<f64>,
    },
}

impl Linear {
    pub(super) fn grid(&self, nodes: &[Node]) -> Data {
        let (y, f) = (&nodes[self.y], &nodes[self.f]);
        let (r, c) = (self.row_slot, 1 - self.row_slot);
        let (mut y2, mut count) = (vec![0.0; self.rows], vec![0.0; self.rows]);
        // Complete data whose element e is cell e (row i = e / cols, as y[D, N] with rows W[D]) are
        // the grid already: no copy.
        let in_place = y.observed.is_all()
            && f.parents[r]
                .rule
                .combine(self.cols, &f.parents[c].rule)
                .is_some_and(|cells| cells.is_identity(y.n));
        if in_place {
            let rows = y
                .data
                .par_chunks(self.cols)
                .map(|row| (row.iter().map(|v| v * v).sum::<f64>(), row.len() as f64));
            (y2, count) = rows.unzip();
            return Data::Grid {
                ym: None,
                mask: None,
                y2,
                count,
            };
        }
        let mut ym = vec![0.0; self.rows * self.cols];
        // The mask only when an entry is missing (complete data: no second grid).
        let mut mask = (!y.observed.is_all()).then(|| vec![0.0; self.rows * self.cols]);
        for e in (0..y.n).filter(|&e| y.is_observed(e)) {
            let i = at(f, r, e);
            let cell = i * self.cols + at(f, c, e);
            ym[cell] = y.data[e];
            if let Some(m) = mask.as_mut() {
                m[cell] = 1.0;
            }
            y2[i] += y.data[e] * y.data[e];
            count[i] += 1.0;
        }
        Data::Grid {
            ym: Some(ym),
            mask,
            y2,
            count,
        }
    }

    pub(super) fn point_sums(&self, nodes: &[Node]) -> Data {
        let (f, q, cols) = (&nodes[self.f], self.q, self.cols);
        let Source::Node(p) = f.parents[self.row_slot].source else {
            unreachable!("points rows are a constant node")
        };
        let x = &nodes[p].data;
        let Data::Grid {
            ym,
            mask,
            y2: _,
            count: _,
        } = self.grid(nodes)
        else {
            unreachable!("grid() gives a grid")
        };
        let ym = ym.as_deref().unwrap_or(&nodes[self.y].data);
        let units = self.unit_tau.len();
        let by_group = units > cols;
        let (mut xy, mut gram) = (vec![0.0; units * q], vec![0.0; units * q * q]);
        let (mut y2, mut count) = (vec![0.0; units], vec![0.0; units]);
        for u in 0..units {
            let (k, j) = (u / cols, u % cols);
            // Weight of row i in unit u: observed in column j and (by group) in precision group k.
            let w = |i: usize| {
                let seen = mask.as_ref().map_or(1.0, |m| m[i * cols + j]);
                if by_group && self.tau_index(i) != k {
                    0.0
                } else {
                    seen
                }
            };
            let partials: Vec<[Vec<f64>; 4]> =
                kernels::map_chunks(self.rows.div_ceil(kernels::CHUNK), |ch| {
                    let (lo, hi) = (
                        ch * kernels::CHUNK,
                        ((ch + 1) * kernels::CHUNK).min(self.rows),
                    );
                    let mut wb = vec![0.0; (hi - lo) * q];
                    let (mut sxy, mut sy2, mut sn) = (vec![0.0; q], 0.0, 0.0);
                    for i in lo..hi {
                        let (wi, xi) = (w(i), &x[i * q..(i + 1) * q]);
                        if wi == 0.0 {
                            continue;
                        }
                        let yi = ym[i * cols + j];
                        wb[(i - lo) * q..(i - lo + 1) * q].copy_from_slice(xi);
                        sxy.iter_mut().zip(xi).for_each(|(s, v)| *s += yi * v);
                        sy2 += yi * yi;
                        sn += 1.0;
                    }
                    let mut g = vec![0.0; q * q];
                    kernels::weighted_sums_block(&wb, q, &x[lo * q..hi * q], q, &mut g);
                    [sxy, g, vec![sy2], vec![sn]]
                });
            for [sxy, g, sy2, sn] in partials {
                kernels::add_into(&mut xy[u * q..(u + 1) * q], &sxy);
                kernels::add_into(&mut gram[u * q * q..(u + 1) * q * q], &g);
                y2[u] += sy2[0];
                count[u] += sn[0];
            }
        }
        Data::Points {
            xy,
            gram,
            y2,
            count,
        }
    }
}
