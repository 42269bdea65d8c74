//! The messages through F to a parent on a data grid (Winn (2.47–2.49) summed over F's elements):
//! as a `Message`, or added straight into the parent's array where the grid allows (no mask).

use super::*;

impl Linear {
    /// The message through F to its parent in slot `slot` on a grid — Winn (2.47–2.49) summed over
    /// F's elements: [τ y ⟨b⟩, −½ τ ⟨b bᵀ⟩] for each element that reads the parent.
    pub(super) fn grid_message(&self, nodes: &[Node], cache: &Cache, slot: usize) -> Message {
        if let Some(mv) = &self.matvec {
            assert_eq!(slot, 1, "only x takes messages in this form");
            return mv.message_to_x(self, nodes);
        }
        let (q, l) = (self.q, self.len());
        let qq = q * q;
        let Data::Grid { mask, .. } = self.data(nodes) else {
            unreachable!("grid messages are for grids")
        };
        let ym = self.ym(nodes);
        if slot == self.row_slot {
            let cp = self.column_products(nodes, cache);
            let t = |i: usize| self.tau(nodes, self.tau_index(i)).0;
            let first = (0..self.rows)
                .flat_map(|i| cp.yc[i * q..(i + 1) * q].iter().map(move |v| t(i) * v))
                .collect();
            if mask.is_none() && self.uniform_tau() {
                let t0 = t(0);
                let second = cp.mc2.iter().map(|v| -0.5 * t0 * v).collect();
                return Message {
                    first,
                    second,
                    shared: true,
                };
            }
            let second = (0..self.rows)
                .flat_map(|i| {
                    let mc2 = if mask.is_some() {
                        &cp.mc2[i * qq..(i + 1) * qq]
                    } else {
                        &cp.mc2[..]
                    };
                    mc2.iter().map(move |v| -0.5 * t(i) * v)
                })
                .collect();
            return Message {
                first,
                second,
                shared: false,
            };
        }
        // (τ∘Y)ᵀ Ā = Yᵀ (τ∘Ā): the precisions scale the factor's rows, not the grid.
        let a = self.side(nodes, self.row_slot);
        let t: Vec<f64> = (0..self.rows)
            .map(|i| self.tau(nodes, self.tau_index(i)).0)
            .collect();
        let mut am = Vec::with_capacity(self.rows * q);
        for (i, ti) in t.iter().enumerate() {
            am.extend(a.mean(q, i).iter().map(|v| ti * v));
        }
        let eff = self.effective(nodes, cache);
        let ym = eff.as_ref().map_or(ym, |e| &e.ym[..]);
        let first = grid::transpose_times(ym, self.cols, &am, q);
        let (second, shared) = match mask {
            Some(m) => {
                let dense = a.dense(q);
                let mut a2 = Vec::with_capacity(self.rows * qq);
                for (i, ti) in t.iter().enumerate() {
                    a2.extend(dense[i * l + q..(i + 1) * l].iter().map(|v| ti * v));
                }
                (grid::transpose_times(m, self.cols, &a2, qq), false)
            }
            None => (a.weighted_second(q, &t), true),
        };
        Message {
            first,
            second: second.into_iter().map(|v| -0.5 * v).collect(),
            shared,
        }
    }

    /// [`Linear::grid_message`] added straight into `out` where the grid has no mask and (for the
    /// row parent) one precision: the same products added to the same entries, without the
    /// message's arrays (work arrays from the cache's pool). `false`: another case, nothing added.
    pub(super) fn add_grid_message(
        &self,
        nodes: &[Node],
        cache: &Cache,
        slot: usize,
        out: &mut [f64],
    ) -> bool {
        let Data::Grid { mask: None, .. } = self.data(nodes) else {
            return false;
        };
        let (q, l) = (self.q, self.len());
        let t = |i: usize| self.tau(nodes, self.tau_index(i)).0;
        if slot == self.row_slot {
            if !self.uniform_tau() {
                return false;
            }
            let cp = self.column_products(nodes, cache);
            let t0 = t(0);
            let add = |(i, o): (usize, &mut [f64])| {
                let ti = t(i);
                o[..q]
                    .iter_mut()
                    .zip(&cp.yc[i * q..(i + 1) * q])
                    .for_each(|(o, v)| *o += ti * v);
                o[q..]
                    .iter_mut()
                    .zip(&cp.mc2)
                    .for_each(|(o, v)| *o += -0.5 * t0 * v);
            };
            if kernels::sequential(out.len()) {
                out.chunks_mut(l).enumerate().for_each(add);
            } else {
                out.par_chunks_mut(l).enumerate().for_each(add);
            }
            return true;
        }
        // (τ∘Y)ᵀ Ā = Yᵀ (τ∘Ā): the precisions scale the factor's rows, not the grid.
        let a = self.side(nodes, self.row_slot);
        let pool = &cache.pool;
        let mut tau = pool.zeroed(self.rows);
        tau.iter_mut().enumerate().for_each(|(i, v)| *v = t(i));
        let mut am = pool.zeroed(self.rows * q);
        for (i, (ti, row)) in tau.iter().zip(am.chunks_exact_mut(q)).enumerate() {
            row.iter_mut()
                .zip(a.mean(q, i))
                .for_each(|(o, v)| *o = ti * v);
        }
        let eff = self.effective(nodes, cache);
        let ym = eff.as_ref().map_or(self.ym(nodes), |e| &e.ym[..]);
        let mut first = pool.zeroed(self.cols * q);
        grid::transpose_times_into(ym, self.cols, &am, q, &mut first);
        let second = a.weighted_second(q, &tau);
        let add = |(j, o): (usize, &mut [f64])| {
            kernels::add_into(&mut o[..q], &first[j * q..(j + 1) * q]);
            o[q..]
                .iter_mut()
                .zip(&second)
                .for_each(|(o, v)| *o += -0.5 * v);
        };
        if kernels::sequential(out.len()) {
            out.chunks_mut(l).enumerate().for_each(add);
        } else {
            out.par_chunks_mut(l).enumerate().for_each(add);
        }
        for v in [tau, am, first, second] {
            pool.keep(v);
        }
        true
    }
}
