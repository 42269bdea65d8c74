//! The linear-Gaussian structures as q-blocks: the kernel (a dot node F, its offsets' sum and the
//! Gaussian child y, whose messages and bound term are formed from sums over the data, module
//! docs of `linear`), and a Gaussian parent of F that keeps one covariance for all its elements
//! (`shared`).

use super::super::factorised::{factorised_bound, factorised_send};
use super::super::qblock::QBlock;
use super::super::{Body, Cache, Role, Vmp};
use super::{shared, Linear};
use crate::error::RunError;
use std::sync::Arc;

/// The nodes of one linear-Gaussian structure: F, the sum (if any) and y.
#[derive(Clone, Debug)]
pub(crate) struct LinearKernel {
    members: Vec<usize>,
    lin: Arc<Linear>,
}

impl LinearKernel {
    pub(in crate::engine) fn new(lin: Arc<Linear>) -> Self {
        let mut members: Vec<usize> = [Some(lin.f), lin.sum, Some(lin.y)]
            .into_iter()
            .flatten()
            .collect();
        members.sort_unstable();
        LinearKernel { members, lin }
    }
}

impl QBlock for LinearKernel {
    fn members(&self) -> &[usize] {
        &self.members
    }

    /// F and the sum are deterministic; y's latent elements (if any) as a factorised node's.
    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError> {
        vmp.update_factorised(member)
    }

    /// y's term from the kernel's sums plus its own Σ f(y) (F and the sum have none).
    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        if member != self.lin.y || !matches!(vmp.nodes[member].body, Body::Stochastic(_)) {
            return 0.0;
        }
        let t = self.lin.bound(&vmp.nodes, cache) + self.lin.own;
        if sizes {
            t.abs()
        } else {
            t
        }
    }

    /// Through F to a factor, through the sum to an offset, or from y to its precision.
    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        let Role::Slot(s) = role else {
            return factorised_send(vmp, member, role, out);
        };
        let (nodes, cache, lin) = (&vmp.nodes, &vmp.cache, &self.lin);
        if member == lin.f {
            lin.message(nodes, cache, s, out);
        } else if lin.sum == Some(member) {
            lin.offset_message(nodes, cache, s, out);
        } else {
            lin.tau_message(nodes, cache, out);
        }
    }
}

/// A Gaussian parent of F keeping one covariance for all its elements (module `shared`).
#[derive(Clone, Debug)]
pub(crate) struct SharedCovariance {
    node: [usize; 1],
}

impl SharedCovariance {
    pub(in crate::engine) fn new(node: usize) -> Self {
        SharedCovariance { node: [node] }
    }
}

impl QBlock for SharedCovariance {
    fn members(&self) -> &[usize] {
        &self.node
    }

    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError> {
        vmp.update_shared(member)
    }

    /// In the shared form, its term from the shared covariance; otherwise (before the first
    /// update) a factorised node's.
    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        if !shared::is_shared(&vmp.nodes[member]) {
            return factorised_bound(vmp, cache, member, sizes);
        }
        let t = vmp.shared_bound(member);
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
