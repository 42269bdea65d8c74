//! Every node's state saved and put back: the kept restart, pruning trials and candidate starts
//! restore from these.

use super::super::qblock::QBlock;
use super::*;

impl Vmp {
    /// Every node's state (φ, u, A), to restore later: each block's snapshot of its members
    /// (`QBlock::snapshot`), and the moments of deterministic nodes and constants.
    pub(crate) fn snapshot(&self) -> Vec<NodeState> {
        (0..self.nodes.len())
            .map(|i| match self.block_of(i) {
                Some(block) => block.snapshot(self, i),
                None => self.nodes[i].q.clone(),
            })
            .collect()
    }

    /// Puts back a snapshot and drops every cached product.
    pub(crate) fn restore(&mut self, mut state: Vec<NodeState>) {
        self.put_back(&mut state, false);
    }

    /// [`Vmp::snapshot`] into `buf`, reusing its buffers, for trials repeated from one state
    /// (pruning): a fresh snapshot per trial allocated and faulted in a copy of every state,
    /// 15% of the time of a GMM fit at N = 10⁶. Fully observed nodes, whose state no update
    /// changes (an observed node is never MAP), are not copied.
    pub(crate) fn snapshot_into(&self, buf: &mut Vec<NodeState>) {
        buf.resize_with(self.nodes.len(), NodeState::default);
        for (i, out) in buf.iter_mut().enumerate() {
            if self.fully_observed(i) {
                continue;
            }
            match self.block_of(i) {
                Some(block) => block.snapshot_into(self, i, out),
                None => out.copy_from(&self.nodes[i].q),
            }
        }
    }

    /// Puts back a snapshot of [`Vmp::snapshot_into`] by swapping (`buf` then holds the replaced
    /// states, whose buffers the next snapshot reuses) and drops every cached product.
    pub(crate) fn restore_swap(&mut self, buf: &mut [NodeState]) {
        self.put_back(buf, true);
    }

    /// Swaps `buf` in as every node's state (each block's `QBlock::restore_swap`) but, when
    /// `skip_observed`, fully observed nodes (which [`Vmp::snapshot_into`] leaves out).
    fn put_back(&mut self, buf: &mut [NodeState], skip_observed: bool) {
        let blocks = self.blocks.clone();
        for (i, s) in buf.iter_mut().enumerate() {
            if skip_observed && self.fully_observed(i) {
                continue;
            }
            match self.block_of[i] {
                Some(b) => blocks[b as usize].restore_swap(self, i, s),
                None => {
                    let n = &mut self.nodes[i];
                    std::mem::swap(&mut n.q, s);
                    // Per-element moments formed on request (`Vmp::moments`) belong to the old
                    // state.
                    n.lazy = Default::default();
                }
            }
        }
        self.changed_all();
    }

    /// Whether node `i` is a stochastic node with every element observed: its state (u(x), f(x))
    /// is set with the data and never updated.
    fn fully_observed(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        matches!(n.body, crate::network::Body::Stochastic(_)) && n.observed.is_all()
    }

    pub(crate) fn refresh_dependents(&mut self, i: usize) {
        if matches!(self.nodes[i].body, crate::network::Body::Deterministic(_)) {
            let mut mark = vec![usize::MAX; self.nodes.len()];
            for j in super::super::compile::deterministic_descendants(&self.nodes, i, &mut mark) {
                self.refresh(j);
            }
            return;
        }
        // The kept list read in place (`refresh` never changes it): no copy per update.
        for k in 0..self.refresh_after[i].len() {
            let j = self.refresh_after[i][k];
            self.refresh(j);
        }
    }
}
