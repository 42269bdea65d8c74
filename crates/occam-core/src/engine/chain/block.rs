//! A chain as a q-block: one joint q over the time plate of each sequence (module docs), updated
//! by forward–backward from its parents' expected parameters and its children's messages.

use super::super::qblock::QBlock;
use super::super::{Cache, Role, Vmp};
use crate::error::RunError;

/// A Markov chain node (discrete or Gaussian).
#[derive(Clone, Debug)]
pub(crate) struct ChainBlock {
    node: [usize; 1],
}

impl ChainBlock {
    pub(in crate::engine) fn new(node: usize) -> Self {
        ChainBlock { node: [node] }
    }
}

impl QBlock for ChainBlock {
    fn members(&self) -> &[usize] {
        &self.node
    }

    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError> {
        let messages = vmp.child_messages(member);
        vmp.update_chain(member, messages)
    }

    fn bound(&self, vmp: &Vmp, _: &Cache, member: usize, sizes: bool) -> f64 {
        let t = vmp.chain_bound(member);
        if sizes {
            t.abs()
        } else {
            t
        }
    }

    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        match role {
            Role::Slot(s) => vmp.chain_message(member, s, out),
            Role::Selector(m) => vmp.chain_selector_message(member, m, out),
        }
    }

    /// The chain given its parents' initial moments, or a seeded random or k-means path.
    fn start(&self, vmp: &mut Vmp, member: usize, rng: &mut crate::Rng) -> Result<(), RunError> {
        vmp.start_chain(member, rng)
    }
}
