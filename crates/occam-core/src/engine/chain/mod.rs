//! q-blocks: nodes whose q is one joint distribution over many plate elements, updated as a unit
//! (Winn ch. 5, structured VMP): a chain over the last of the node's plates (time), one independent
//! chain per element of its other plates (the sequences, of possibly different lengths).
//!
//! Each sequence's q keeps the temporal edges: with the parents' expected natural parameters and the
//! summed messages η_t of its children, it is the exact posterior of a chain (a junction tree with
//! clusters {x_{t−1}, x_t}, Case I of Winn §5.4 (5.23)–(5.28): one collect/distribute pass is the
//! optimal update). The node exposes per-step moments of the ordinary kind (Categorical one-hot for
//! a discrete chain, [x, xxᵀ] for a Gaussian one), so children — mixtures indexed by the chain,
//! dot products, Gaussians — read it like any other parent.
//!
//! Storage in the node's arrays (snapshots and restarts carry it like any other node's state):
//! `phi` = η (per step, as the children see it), `u` = the per-step moments (zero beyond a
//! sequence's end), `a` = one record per sequence: its entropy H = −⟨ln q⟩ and the expected
//! sufficient statistics its parents' messages and the bound need (pairwise counts ξ for the
//! discrete chain; Σ⟨x_{t−1}x_{t−1}ᵀ⟩, Σ⟨x_t x_tᵀ⟩, Σ⟨x_t x_{t−1}ᵀ⟩ for the Gaussian one).
//!
//! The bound term is ⟨ln p(x | parents)⟩ + H summed over sequences (the SVMP bound with cluster and
//! separator entropies summed, Winn §5.3; the thesis states no formula). It uses the parents'
//! current moments, so it stays exact when they change after the chain's update; right after an
//! update with every parameter known, chain and children add up to the exact ln p(data).
//! A discrete chain's parameters may be a mixture over per-sequence Categoricals (selectors, as
//! for a mixture node): sequence s then reads Σ_q q(selectors_s = q)·(parents' moments of q)
//! ([`seq_parents`]), its parents get the expected statistics weighted by q, and its selectors get
//! ⟨ln p(z_s | parameters of q)⟩ ([`Vmp::chain_selector_message`]).
//! Families: `discrete` (forward–backward, Viterbi), `gaussian` (block-tridiagonal smoothing,
//! [`crate::tridiag`]; with inputs, too). The q-block is `block` ([`super::qblock::QBlock`]); the
//! builders ([`Graph::markov_chain`], [`Graph::gaussian_markov_chain`], …) are in `graph/chain.rs`.

mod block;
mod discrete;
mod forecast;
mod forward_backward;
mod gaussian;
mod rotate;
mod spec;
mod start;
#[cfg(test)]
mod tests;

use super::*;
pub use crate::graph::GaussianMarkovChain;
pub use crate::graph::MarkovChain;
pub(super) use block::ChainBlock;
pub use rotate::ChainSums;
pub use spec::{chain_family, CHAINS, GAUSSIAN_MARKOV_CHAIN, MARKOV_CHAIN};

pub(crate) use crate::network::{Chain, ChainKind};

impl Chain {
    /// Length of a sequence's record in the node's `a`.
    pub(crate) fn stride(&self) -> usize {
        match self.kind {
            ChainKind::Discrete { k } => 1 + k * k,
            ChainKind::Gaussian { d } => gaussian::stride(d, self.n_inputs),
        }
    }
}

/// Checks at compile time that no mixture child reads a step beyond its sequence's end and that
/// no chain is observed or MAP.
pub(super) fn check(nodes: &[Node]) -> Result<(), BuildError> {
    for z in nodes {
        let Body::Chain(ch) = &z.body else { continue };
        if z.map {
            return Err(BuildError::Shape {
                node: z.name.clone(),
                what: "a chain's q is exact given its neighbours; it cannot be MAP".into(),
            });
        }
        if matches!(z.init, Some(Init::Moments(_) | Init::Natural(_))) {
            return Err(BuildError::Shape {
                node: z.name.clone(),
                what: "a chain starts from its prior or from a random path (`Init::Prior`, \
                       `Init::Random`), not from given moments"
                    .into(),
            });
        }
        for &(c, role) in &z.children {
            let child = &nodes[c];
            // The child element → chain element map (skipped for stacked or mixture slot edges and
            // deterministic children, whose own children are checked against their values).
            let rule = match role {
                Role::Selector(m) => &child.selectors[m].rule,
                Role::Slot(s)
                    if matches!(child.body, Body::Stochastic(_))
                        && child.configs == 1
                        && child.parents[s].stack == 1 =>
                {
                    &child.parents[s].rule
                }
                Role::Slot(_) => continue,
            };
            if let Some(e) = (0..child.n).find(|&e| {
                let ze = rule.at(e);
                ze % ch.steps >= ch.lengths[ze / ch.steps] && child.participates(e)
            }) {
                let ze = rule.at(e);
                return Err(BuildError::Shape {
                    node: child.name.clone(),
                    what: format!(
                        "element {e} reads step {} of sequence {} of chain `{}`, which has length {}; \
                         mark it missing",
                        ze % ch.steps,
                        ze / ch.steps,
                        z.name,
                        ch.lengths[ze / ch.steps]
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Sequence s's parents' moments (slot order). When the chain has selectors (its parameters are a
/// mixture, e.g. `A[c]` with a per-sequence regime c), the average over the selectors'
/// configurations weighted by their q: ⟨ln p(z_s | ·)⟩ is linear in ⟨ln p0⟩ and ⟨ln A⟩, so its
/// expectation over a mean-field q(c_s) is the chain's with Σ_m q(c_s = m)⟨ln A_m⟩ (Winn (2.52)).
/// With one-hot selector moments (a draw) this is the selected component's parameters.
pub(super) fn seq_parents<'a>(
    nodes: &'a [Node],
    z: &'a Node,
    s: usize,
    buf: &'a mut Vec<f64>,
) -> [&'a [f64]; MAX_SLOTS] {
    if z.configs == 1 {
        return gather(nodes, z, s, buf);
    }
    let mut sums: Vec<Vec<f64>> = z
        .parents
        .iter()
        .map(|e| vec![0.0; e.stack * e.plen])
        .collect();
    let mut tmp = Vec::new();
    for q in 0..z.configs {
        let w = config_weight(nodes, z, s, q);
        if w == 0.0 {
            continue;
        }
        let pa = gather(nodes, z, s * z.configs + q, &mut tmp);
        for (sum, pa) in sums.iter_mut().zip(pa) {
            sum.iter_mut().zip(pa).for_each(|(o, v)| *o += w * v);
        }
    }
    buf.clear();
    sums.iter().for_each(|v| buf.extend_from_slice(v));
    let buf: &'a [f64] = buf;
    let mut out: [&[f64]; MAX_SLOTS] = [&[]; MAX_SLOTS];
    let mut offset = 0;
    for (slot, v) in sums.iter().enumerate() {
        out[slot] = &buf[offset..offset + v.len()];
        offset += v.len();
    }
    out
}

/// One sequence as the per-family code sees it: its parents' moments (slot order), its length
/// and its inputs (P per step, `len`·P values; empty without inputs).
pub(super) struct Seq<'a> {
    pub pa: [&'a [f64]; MAX_SLOTS],
    pub len: usize,
    pub inputs: &'a [f64],
}

impl Chain {
    /// The inputs of sequence s over its first `len` steps.
    fn seq_inputs(&self, s: usize, len: usize) -> &[f64] {
        let p = self.n_inputs;
        if p == 0 {
            return &[];
        }
        &self.inputs[s * self.steps * p..(s * self.steps + len) * p]
    }
}

impl Vmp {
    /// Updates chain node i as a unit from `eta`, its children's summed messages: exact inference
    /// per sequence, in parallel.
    pub(super) fn update_chain(&mut self, i: usize, eta: Vec<f64>) -> Result<(), RunError> {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("update_chain on a chain node")
        };
        let (row, steps, stride) = (z.len, ch.steps, ch.stride());
        // The old arrays are written over (fresh ones per sweep cost page faults at large T).
        let node = &mut self.nodes[i];
        let (mut u, mut a) = (std::mem::take(&mut node.q.u), std::mem::take(&mut node.q.a));
        u.resize(node.n * row, 0.0);
        a.iter_mut().for_each(|v| *v = 0.0);
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("update_chain on a chain node")
        };
        let nodes = &self.nodes;
        let failed: Option<(usize, SequenceError)> = u
            .par_chunks_mut(steps * row)
            .zip(a.par_chunks_mut(stride))
            .enumerate()
            .filter_map(|(s, (u, rec))| {
                let len = ch.lengths[s];
                // Steps beyond the end are not part of the model: zero moments.
                u[len * row..].iter_mut().for_each(|v| *v = 0.0);
                if len == 0 {
                    return None;
                }
                let mut buf = Vec::new();
                let seq = Seq {
                    pa: seq_parents(nodes, z, s, &mut buf),
                    len,
                    inputs: ch.seq_inputs(s, len),
                };
                let eta = &eta[s * steps * row..(s * steps + len) * row];
                let u = &mut u[..len * row];
                match ch.kind {
                    ChainKind::Discrete { k } => discrete::update(k, &seq, eta, u, rec),
                    ChainKind::Gaussian { d } => gaussian::update(d, &seq, eta, u, rec),
                }
                .err()
                .map(|why| (s, why))
            })
            .min_by_key(|(s, _)| *s);
        let node = &mut self.nodes[i];
        node.q.u = u;
        node.q.a = a;
        if let Some((s, why)) = failed {
            self.changed(i);
            return Err(self.numerical(i, s * steps, format!("sequence {s}: {why}")));
        }
        let old = std::mem::replace(&mut node.q.phi, eta);
        self.recycle(old);
        self.changed(i);
        self.refresh_dependents(i);
        Ok(())
    }

    /// The chain's bound term: Σ over sequences of ⟨ln p(sequence | parents)⟩ + H (module docs).
    pub(super) fn chain_bound(&self, i: usize) -> f64 {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("chain_bound on a chain node")
        };
        let (row, stride) = (z.len, ch.stride());
        (0..ch.lengths.len())
            .into_par_iter()
            .filter(|&s| ch.lengths[s] > 0)
            .map(|s| {
                let mut buf = Vec::new();
                let seq = Seq {
                    pa: seq_parents(&self.nodes, z, s, &mut buf),
                    len: ch.lengths[s],
                    inputs: ch.seq_inputs(s, ch.lengths[s]),
                };
                let rec = &z.q.a[s * stride..(s + 1) * stride];
                let u = &z.q.u[s * ch.steps * row..(s * ch.steps + seq.len) * row];
                match ch.kind {
                    ChainKind::Discrete { k } => discrete::bound(k, &seq, u, rec),
                    ChainKind::Gaussian { d } => gaussian::bound(d, &seq, u, rec),
                }
            })
            .sum()
    }

    /// Adds the chain's messages to its parent in slot `slot` into `out` (the parent's elements).
    pub(super) fn chain_message(&self, i: usize, slot: usize, out: &mut [f64]) {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("chain_message from a chain node")
        };
        let (row, stride) = (z.len, ch.stride());
        let edge = &z.parents[slot];
        let mut m = vec![0.0; edge.stack * edge.plen];
        let mut buf = Vec::new();
        for s in (0..ch.lengths.len()).filter(|&s| ch.lengths[s] > 0) {
            let seq = Seq {
                pa: seq_parents(&self.nodes, z, s, &mut buf),
                len: ch.lengths[s],
                inputs: ch.seq_inputs(s, ch.lengths[s]),
            };
            let rec = &z.q.a[s * stride..(s + 1) * stride];
            let u = &z.q.u[s * ch.steps * row..(s * ch.steps + seq.len) * row];
            match ch.kind {
                ChainKind::Discrete { k } => discrete::message(k, slot, u, rec, &mut m),
                ChainKind::Gaussian { d } => gaussian::message(d, slot, &seq, u, rec, &mut m),
            }
            if z.configs == 1 {
                edge.scatter(s, &m, out);
                continue;
            }
            // A mixture of parameters: component q's parent gets the expected statistics
            // weighted by q(selectors = q), e.g. q(c_s = m)·ξ_s to A_m (Winn (2.54)).
            let mut mq = vec![0.0; m.len()];
            for q in 0..z.configs {
                let w = config_weight(&self.nodes, z, s, q);
                if w == 0.0 {
                    continue;
                }
                mq.iter_mut().zip(&m).for_each(|(o, v)| *o = w * v);
                edge.scatter(s * z.configs + q, &mq, out);
            }
        }
    }

    /// Adds the message of chain node i to its selector `sel` into `out` (the selector's
    /// elements): entry k of sequence s's selector element is ⟨ln p(z_s | parameters of
    /// component k)⟩ = γ_0·⟨ln p0_k⟩ + Σ_jl ξ_s,jl ⟨ln A_k,jl⟩ under the chain's q, summed over the
    /// other selectors' configurations with their weights (Winn (2.53)).
    pub(super) fn chain_selector_message(&self, i: usize, sel: usize, out: &mut [f64]) {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("chain_selector_message from a chain node")
        };
        let ChainKind::Discrete { k } = ch.kind else {
            unreachable!("only discrete chains take selectors")
        };
        let (row, stride, selector) = (z.len, ch.stride(), &z.selectors[sel]);
        let mut buf = Vec::new();
        for s in (0..ch.lengths.len()).filter(|&s| ch.lengths[s] > 0) {
            let rec = &z.q.a[s * stride..(s + 1) * stride];
            let u = &z.q.u[s * ch.steps * row..(s * ch.steps + ch.lengths[s]) * row];
            let ie = selector.at(s);
            for q in 0..z.configs {
                let mut w = 1.0;
                let mut rest = q;
                for (m, other) in z.selectors.iter().enumerate().rev() {
                    let digit = rest % other.k;
                    rest /= other.k;
                    if m != sel {
                        w *= self.nodes[other.node].q.u[other.at(s) * other.k + digit];
                    }
                }
                if w == 0.0 {
                    continue;
                }
                let seq = Seq {
                    pa: gather(&self.nodes, z, s * z.configs + q, &mut buf),
                    len: ch.lengths[s],
                    inputs: &[],
                };
                out[ie * selector.k + config_digit(z, sel, q)] +=
                    w * discrete::expected_log_p(k, &seq, u, rec);
            }
        }
    }

    /// Sequence lengths of a chain node (`None` if the node is not a chain).
    pub fn chain_lengths(&self, node: NodeId) -> Option<&[usize]> {
        match &self.nodes[node.0].body {
            Body::Chain(ch) => Some(&ch.lengths),
            _ => None,
        }
    }

    /// Draws every sequence of chain node i from the prior given its parents' (drawn) moments;
    /// returns the draws (zero beyond a sequence's end) and leaves the node's moments at them.
    pub(super) fn sample_chain(&mut self, i: usize, rng: &mut Rng) -> Vec<f64> {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("sample_chain on a chain node")
        };
        let vlen = match ch.kind {
            ChainKind::Discrete { .. } => 1,
            ChainKind::Gaussian { d } => d,
        };
        let (row, steps) = (z.len, ch.steps);
        let mut x = vec![0.0; z.n * vlen];
        let mut u = vec![0.0; z.n * row];
        let mut buf = Vec::new();
        for s in 0..ch.lengths.len() {
            let seq = Seq {
                pa: seq_parents(&self.nodes, z, s, &mut buf),
                len: ch.lengths[s],
                inputs: ch.seq_inputs(s, ch.lengths[s]),
            };
            let x = &mut x[s * steps * vlen..(s * steps + seq.len) * vlen];
            let (u, after) = u[s * steps * row..(s + 1) * steps * row].split_at_mut(seq.len * row);
            match ch.kind {
                ChainKind::Discrete { k } => {
                    discrete::sample(k, &seq, rng, x, u);
                    // Beyond the end, state 0: children (whose draws there are not part of the
                    // model) still get a proper prior.
                    after.chunks_exact_mut(k).for_each(|r| r[0] = 1.0);
                }
                ChainKind::Gaussian { d } => gaussian::sample(d, &seq, rng, x, u),
            }
        }
        self.nodes[i].q.u = u;
        self.changed(i);
        x
    }
}
