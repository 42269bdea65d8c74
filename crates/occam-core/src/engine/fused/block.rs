//! The fused mixture index as a q-block: a Categorical index whose children are mixtures updated
//! in one pass that also forms their component statistics (module docs of `fused`). Its bound term
//! and messages to its own parents are a factorised node's (Winn (2.34), (2.18)).

use super::super::factorised::{factorised_bound, factorised_send};
use super::super::pool::Kept;
use super::super::qblock::QBlock;
use super::super::{Cache, Role, Vmp};
use crate::error::RunError;

/// A fusable mixture index.
#[derive(Clone, Debug)]
pub(crate) struct FusedIndex {
    node: [usize; 1],
    /// The update's sums, kept between sweeps (`fused::Work`).
    work: Kept<super::Work>,
}

impl FusedIndex {
    pub(in crate::engine) fn new(node: usize) -> Self {
        FusedIndex {
            node: [node],
            work: Kept::default(),
        }
    }
}

impl QBlock for FusedIndex {
    fn members(&self) -> &[usize] {
        &self.node
    }

    /// Winn (2.19) with the children's scores formed in the same pass (`Vmp::update_fused`).
    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError> {
        vmp.update_fused(member, &self.work)
    }

    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        factorised_bound(vmp, cache, member, sizes)
    }

    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        factorised_send(vmp, member, role, out)
    }
}

#[cfg(test)]
impl Vmp {
    /// Whether node i is updated by the fused path.
    pub(in crate::engine) fn is_fused(&self, i: usize) -> bool {
        matches!(self.block_of(i), Some(super::super::Block::Fused(_)))
    }

    /// Puts every fused index on the factorised path (the reference the fused path is tested
    /// against).
    pub(in crate::engine) fn unfuse(&mut self) {
        use super::super::{factorised::Factorised, Block};
        let blocks: Vec<Block> = self
            .blocks
            .iter()
            .map(|b| match b {
                Block::Fused(f) => Block::Factorised(Factorised::new(f.node[0])),
                b => b.clone(),
            })
            .collect();
        self.blocks = blocks.into();
    }
}
