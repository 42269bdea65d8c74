//! The mean-field part of q: a stochastic node whose elements are independent given the messages
//! they receive. Its update is Winn (2.19) (`update`), its bound term (2.34)–(2.36) (`bound`), its
//! messages to parents (2.18) and to mixture indices (2.53) (`messages`); they are also what the
//! fused index, the shared covariance and the tree blocks fall back on or build from.

use super::*;

mod bound;
mod messages;
mod update;

pub(super) use bound::BoundTerm;
pub(super) use messages::{SelectorMessages, SlotMessages};
#[cfg(test)]
pub(in crate::engine) use update::mixture_element_priors;
pub(in crate::engine) use update::update_rows;

/// One factorised node (the block of every stochastic node no other block claims).
#[derive(Clone, Debug)]
pub(crate) struct Factorised {
    node: [usize; 1],
}

impl Factorised {
    pub(super) fn new(node: usize) -> Self {
        Factorised { node: [node] }
    }
}

impl QBlock for Factorised {
    fn members(&self) -> &[usize] {
        &self.node
    }

    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError> {
        vmp.update_factorised(member)
    }

    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        factorised_bound(vmp, cache, member, sizes)
    }

    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        factorised_send(vmp, member, role, out)
    }
}

/// Winn (2.34)–(2.36) for node `id`, elements independent (see [`BoundTerm`]).
pub(super) fn factorised_bound(vmp: &Vmp, cache: &Cache, id: usize, sizes: bool) -> f64 {
    let memo = !sizes && super::logit::memo_bound(vmp, id);
    if memo {
        if let Some(t) = cache
            .lock()
            .expect("cache lock")
            .get(&id)
            .and_then(|e| e.term)
        {
            return t;
        }
    }
    let n = &vmp.nodes[id];
    let d = n.dist().expect("factorised nodes are stochastic");
    let t = d.visit(BoundTerm {
        cache,
        id,
        nodes: &vmp.nodes,
        node: n,
        sizes,
    });
    if memo {
        cache
            .lock()
            .expect("cache lock")
            .entry(id)
            .or_default()
            .term = Some(t);
    }
    t
}

/// The messages of stochastic node `id` to the parent it reads as `role` — Winn (2.18), (2.53).
pub(super) fn factorised_send(vmp: &Vmp, id: usize, role: Role, out: &mut [f64]) {
    let c = &vmp.nodes[id];
    let d = c.dist().expect("factorised nodes are stochastic");
    match role {
        Role::Slot(slot) => d.visit(SlotMessages {
            cache: &vmp.cache,
            id,
            nodes: &vmp.nodes,
            child: c,
            slot,
            out,
        }),
        Role::Selector(selector) => d.visit(SelectorMessages {
            cache: &vmp.cache,
            id,
            nodes: &vmp.nodes,
            child: c,
            selector,
            out,
        }),
    }
}
