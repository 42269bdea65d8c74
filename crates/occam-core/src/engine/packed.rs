//! Packed moments of an observed mixture child: the fused index update's two products over the
//! data, the scores L = U Θᵀ (Winn (2.53)) and the statistics S = Wᵀ U, read each run's moments
//! once per component. When the child's family declares moments that are equal for every value
//! ([`ExpFamily::packed_moments`](crate::dist::ExpFamily::packed_moments): the symmetric xxᵀ of
//! a Gaussian vector holds each off-diagonal product twice), the data's moments are copied once,
//! when compiling, into the shorter layout; Θ is folded onto it (the parameters of the moments
//! sharing a position summed, so Θ·u is unchanged up to rounding) and S is unfolded after the
//! pass (each moment takes its position's sum: exact). At d = 10 the products run over 65
//! values instead of 110.

use super::node::Node;

/// A run of packed moments is used when it is at most this fraction of the full run: the copy
/// costs memory (n × packed length) for every fit, and a small saving (d = 2: 5 of 6 moments)
/// is not worth it next to the kernels that handle short runs directly.
const MAX_FRACTION: f64 = 2.0 / 3.0;

/// The packed moments of an observed mixture child (a `config_only` node whose elements are all
/// data): `at[m]` is the packed position of moment m of a run, `len` the packed run length, `u`
/// every run's packed moments (runs × `len`, row-major).
#[derive(Clone, Debug)]
pub(crate) struct Packed {
    at: Vec<usize>,
    /// Packed moments per run.
    pub len: usize,
    /// The runs' packed moments.
    pub u: Vec<f64>,
}

impl Packed {
    /// The packing of `node`'s data moments, if its family declares one that saves enough (see
    /// [`MAX_FRACTION`]); `None` for a node that is not a `config_only` mixture with every element
    /// observed.
    pub(super) fn of(node: &Node) -> Option<Packed> {
        if !node.config_only || !node.observed.is_all() || node.q.u.len() != node.n * node.len {
            return None;
        }
        let one = node.dist()?.packed_moments()?;
        let per = one.iter().max().map_or(0, |m| m + 1);
        debug_assert_eq!(one.len(), node.len, "a packing maps every moment");
        let (run, len) = (node.period * node.len, node.period * per);
        if run == 0 || len as f64 > MAX_FRACTION * run as f64 {
            return None;
        }
        // A run is `period` elements back to back: element j's moments go to j · per + at.
        let at: Vec<usize> = (0..node.period)
            .flat_map(|j| one.iter().map(move |&m| j * per + m))
            .collect();
        let runs = node.n / node.period;
        let mut u = vec![0.0; runs * len];
        for (full, packed) in node.q.u.chunks_exact(run).zip(u.chunks_exact_mut(len)) {
            for (&v, &p) in full.iter().zip(&at) {
                packed[p] = v;
            }
        }
        Some(Packed { at, len, u })
    }

    /// Θ (rows × full run) folded onto the packed layout: each position's parameters summed, in
    /// the order of the full layout.
    pub(super) fn fold(&self, theta: &[f64]) -> Vec<f64> {
        let run = self.at.len();
        let mut out = vec![0.0; theta.len() / run * self.len];
        for (full, packed) in theta.chunks_exact(run).zip(out.chunks_exact_mut(self.len)) {
            for (&t, &p) in full.iter().zip(&self.at) {
                packed[p] += t;
            }
        }
        out
    }

    /// S (rows × packed run) unfolded onto the full layout: every moment takes its position's
    /// value.
    pub(super) fn unfold(&self, s: &[f64]) -> Vec<f64> {
        let run = self.at.len();
        let mut out = vec![0.0; s.len() / self.len * run];
        for (packed, full) in s.chunks_exact(self.len).zip(out.chunks_exact_mut(run)) {
            for (f, &p) in full.iter_mut().zip(&self.at) {
                *f = packed[p];
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
