//! A sampled node's `a` (module docs of `sampled`): where each element's entries sit, the layouts
//! saved before the current one, and the state of rows `from..to` of a local node for a shard
//! that starts where a single-process fit does (`shard/state.rs`, [`Vmp::rows_state`]).
//!
//! Layout for n elements: nine per-element slots (A, then the slots of [`Slot`]), the sampler's
//! key after the first four (at 4n), and last the *base*: the index in the whole data of the
//! node's element 0 (0 for a single-process model; a shard of rows `from..` gets `from` times the
//! elements per row). Each element's draws are keyed by base + e, its global index, so a shard
//! draws for its rows exactly what the single-process fit draws for them.

use super::super::*;
use crate::engine::qblock::Block;

/// Entries per element in a sampled node's `a` (A and the nine slots of [`Slot`]).
pub(super) const LAYOUT: usize = 10;

/// Per-element slots of a sampled node's `a` (module docs of `sampled`).
#[derive(Clone, Copy)]
pub(super) enum Slot {
    /// A of the adopted Gaussian.
    A = 0,
    /// ln Z − φ_c·⟨u⟩.
    Own = 1,
    /// S of the last update (0: q in closed form).
    Samples = 2,
    /// S_eff of the last update.
    SEff = 3,
    /// The plan's refits (−1 before the first update).
    Refits = 5,
    /// Var of the estimate of ⟨x⟩.
    VarX = 6,
    /// Var of the estimate of ⟨x²⟩.
    VarX2 = 7,
    /// φ_c[0] of the last update.
    Phi0 = 8,
    /// φ_c[1] of the last update.
    Phi1 = 9,
    /// The variance of the bound's change that the moments' noise explains (`Vmp::sampling_variance`).
    Shift = 10,
}

/// Every per-element slot, in layout order.
const SLOTS: [Slot; LAYOUT] = [
    Slot::A,
    Slot::Own,
    Slot::Samples,
    Slot::SEff,
    Slot::Refits,
    Slot::VarX,
    Slot::VarX2,
    Slot::Phi0,
    Slot::Phi1,
    Slot::Shift,
];

/// The length of a started sampled node's `a` for n elements (what a saved state must have).
pub(in crate::engine) fn started_len(n: usize) -> usize {
    LAYOUT * n + 2
}

/// Where element e's `slot` sits in the `a` of a node of n elements (the key at 4n, once).
pub(super) fn at(slot: Slot, n: usize, e: usize) -> usize {
    let k = slot as usize;
    if k < 4 {
        k * n + e
    } else {
        (k - 1) * n + 1 + e
    }
}

/// The key's place in `a`.
pub(super) fn key_at(n: usize) -> usize {
    4 * n
}

/// The base's place in `a` (module docs).
pub(super) fn base_at(n: usize) -> usize {
    LAYOUT * n + 1
}

/// The layout saved before the base (10n + 1) and the one before the plans and the moment
/// variances (4n + 1: A, own term, S, S_eff, key).
fn before_base(n: usize) -> usize {
    LAYOUT * n + 1
}

fn before_plans(n: usize) -> usize {
    4 * n + 1
}

/// Whether a saved `a` of `a_len` entries fits a sampled node of `n` elements: the current layout
/// ([`started_len`]) or one saved before it, which [`upgrade_saved_a`] reads.
pub(in crate::engine) fn saved_a_fits(a_len: usize, n: usize) -> bool {
    a_len == started_len(n) || a_len == before_base(n) || a_len == before_plans(n)
}

/// A saved `a` in the current layout. One saved in the 4n + 1 layout gets every element's plan
/// unset (−1: chosen again at its next update, as after a start) and zero moment variances, φ_c
/// and shift (the next update's allowance then counts only that update's noise); either older
/// layout gets base 0 (saved fits are single-process fits).
pub(in crate::engine) fn upgrade_saved_a(mut a: Vec<f64>, n: usize) -> Vec<f64> {
    if a.len() == before_plans(n) {
        a.resize(started_len(n), 0.0);
        for e in 0..n {
            a[at(Slot::Refits, n, e)] = -1.0;
        }
    } else if a.len() == before_base(n) {
        a.push(0.0);
    }
    a
}

/// The base of a node of n elements whose `a` is `a` (0 before its start).
pub(super) fn base(a: &[f64], n: usize) -> u64 {
    if a.len() == started_len(n) {
        a[base_at(n)] as u64
    } else {
        0
    }
}

/// Elements `lo..hi` of a started `a` of n elements, as a node of hi − lo elements keeps them:
/// each slot's entries cut, the key kept, the base moved on by lo.
fn cut(a: &[f64], n: usize, lo: usize, hi: usize) -> Vec<f64> {
    let m = hi - lo;
    let mut out = vec![0.0; started_len(m)];
    for slot in SLOTS {
        for e in lo..hi {
            out[at(slot, m, e - lo)] = a[at(slot, n, e)];
        }
    }
    out[key_at(m)] = a[key_at(n)];
    out[base_at(m)] = a[base_at(n)] + lo as f64;
    out
}

impl Vmp {
    /// Rows `from..to` (of `rows` on the data plate, which is node i's first plate) of node i's
    /// state if it is a started sampled node (module docs); `None` for any other node, or a
    /// sampled node before its start (its state is then per element and cut like any other).
    pub(in crate::engine) fn sampled_rows_state(
        &self,
        i: usize,
        rows: usize,
        from: usize,
        to: usize,
    ) -> Option<Result<NodeState, &'static str>> {
        let Some(Block::Sampled(_)) = self.block_of(i) else {
            return None;
        };
        let node = &self.nodes[i];
        let (n, q) = (node.n, &node.q);
        if q.a.len() != started_len(n) {
            return None;
        }
        if from > to || to > rows || rows == 0 || !n.is_multiple_of(rows) {
            return Some(Err("rows outside the data plate"));
        }
        let per = n / rows;
        let (lo, hi) = (from * per, to * per);
        Some(Ok(NodeState {
            phi: q.phi[2 * lo..2 * hi].to_vec(),
            u: q.u[2 * lo..2 * hi].to_vec(),
            a: cut(&q.a, n, lo, hi),
        }))
    }

    /// Whether `state` fits node i as a sampled node of this replica keeps it (per element, or
    /// started: [`started_len`]); `None` for any other node.
    pub(in crate::engine) fn sampled_state_fits(
        &self,
        i: usize,
        state: &NodeState,
    ) -> Option<bool> {
        let Some(Block::Sampled(_)) = self.block_of(i) else {
            return None;
        };
        let node = &self.nodes[i];
        let n = node.n;
        Some(
            state.phi.len() == 2 * n
                && state.u.len() == 2 * n
                && (state.a.len() == started_len(n) || state.a.len() == node.q.a.len()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cutting elements 2..5 of 7 keeps each slot's entries of those elements, the key, and moves
    /// the base on by 2; cutting again composes (the base adds up).
    #[test]
    fn a_cut_keeps_each_slot_and_moves_the_base() {
        let n = 7;
        let mut a: Vec<f64> = (0..started_len(n)).map(|k| k as f64 * 0.5).collect();
        a[base_at(n)] = 10.0;
        let c = cut(&a, n, 2, 5);
        assert_eq!(c.len(), started_len(3));
        for slot in SLOTS {
            for e in 0..3 {
                assert_eq!(c[at(slot, 3, e)], a[at(slot, n, e + 2)]);
            }
        }
        assert_eq!(c[key_at(3)], a[key_at(n)]);
        assert_eq!(base(&c, 3), 12);
        let cc = cut(&c, 3, 1, 2);
        assert_eq!(cc[at(Slot::Own, 1, 0)], a[at(Slot::Own, n, 3)]);
        assert_eq!(base(&cc, 1), 13);
    }

    /// Each older layout is upgraded to the current one with base 0; the 4n + 1 one with its
    /// plans unset.
    #[test]
    fn saved_layouts_upgrade() {
        let n = 3;
        for len in [before_base(n), before_plans(n), started_len(n)] {
            assert!(saved_a_fits(len, n));
            let a = upgrade_saved_a(vec![1.0; len], n);
            assert_eq!(a.len(), started_len(n));
            let want = if len == started_len(n) { 1 } else { 0 };
            assert_eq!(base(&a, n), want);
        }
        let a = upgrade_saved_a(vec![1.0; before_plans(n)], n);
        assert_eq!(a[at(Slot::Refits, n, 1)], -1.0);
        assert!(!saved_a_fits(started_len(n) + 1, n));
    }
}
