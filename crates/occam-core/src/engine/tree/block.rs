//! A tree-structured q as a q-block: its members' joint q, updated exactly by junction tree (module
//! docs); each member's bound term weighs its family by the joint's family marginals, and its
//! messages to parents read them too (`factorised::SlotMessages`).

use super::super::factorised::factorised_send;
use super::super::qblock::QBlock;
use super::super::{Cache, Role, Vmp};
use super::Tree;
use crate::error::RunError;

/// Tree block number `tree` of the model and its members.
#[derive(Clone, Debug)]
pub(crate) struct TreeBlock {
    tree: usize,
    members: Vec<usize>,
}

impl TreeBlock {
    pub(in crate::engine) fn new(tree: usize, block: &Tree) -> Self {
        TreeBlock {
            tree,
            members: block.members.clone(),
        }
    }
}

impl QBlock for TreeBlock {
    fn members(&self) -> &[usize] {
        &self.members
    }

    /// Winn (5.20) by one junction-tree pass, whichever member is scheduled.
    fn update(&self, vmp: &mut Vmp, _: usize) -> Result<(), RunError> {
        vmp.update_tree(self.tree)
    }

    fn bound(&self, vmp: &Vmp, _: &Cache, member: usize, sizes: bool) -> f64 {
        let t = vmp.tree_bound(member);
        if sizes {
            t.abs()
        } else {
            t
        }
    }

    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        factorised_send(vmp, member, role, out)
    }
}
