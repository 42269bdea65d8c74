//! q-blocks: nodes whose q is one joint distribution over many plate elements, updated as a unit
//! (Winn ch. 5, structured VMP). The first is a discrete Markov chain over a time plate.
//!
//! A chain node z[S…, T] ~ MarkovChain(p0, A) holds, for every sequence (element of its other
//! plates), a q(z_0, …, z_{L−1}) that keeps the temporal edges: the cluster potentials of the
//! junction tree {z_{t−1}, z_t} are found exactly by forward–backward (Case I of Winn §5.4, (5.23)–(5.28))
//! from the expected log-parameters ⟨ln p0⟩, ⟨ln A⟩ and the summed messages η_t of the children
//! (mixtures indexed by the chain, Winn (2.53)). Its per-step moments are Categorical, ⟨u(z_t)⟩ =
//! q(z_t = ·), so every mixture child reads it like any other index.
//!
//! Storage in the node's arrays (snapshots and restarts carry it like any other node's state):
//! `phi` = η (T·K per sequence, the step's natural parameters as the children see them), `u` =
//! the marginals (zero beyond a sequence's length), `a` = per sequence [H, ξ (K×K)] where H = −⟨ln q⟩
//! and ξ = Σ_t q(z_{t−1}, z_t) are the expected transition counts.
//!
//! The bound term is ⟨ln p(z | p0, A)⟩ + H = γ_0·⟨ln p0⟩ + Σ ξ ∘ ⟨ln A⟩ + H (the SVMP bound with
//! the cluster and separator entropies summed, Winn §5.3 — the thesis states no formula; this is
//! the one its §5.6 numbers imply). Right after an update it equals ln Z − Σ_t η_t·γ_t, so with
//! every parameter known the chain's and its children's terms add up to the exact ln p(data).
//! Messages: to p0, γ_0 (Winn (1.92)); to row j of A, Σ_t q(z_{t−1} = j, z_t = ·).

mod forward_backward;
#[cfg(test)]
mod tests;

use super::*;
use crate::dist::SlotInput;
use crate::graph::{ParentSpec, PlateId};
use forward_backward::{entropy, forward_backward, viterbi};

/// A discrete Markov chain over a time plate: z_0 ~ Categorical(p0), z_t | z_{t−1} ~
/// Categorical(A[z_{t−1}]), one independent chain per element of the node's other plates.
#[derive(Clone, Debug)]
pub struct MarkovChain {
    /// Number of states K.
    pub k: usize,
    /// The time plate (steps); its size is the longest sequence's length.
    pub time: PlateId,
    /// Length of each sequence (row-major over the other plates), each at most the time plate's
    /// size; `None`: every sequence is as long as the time plate. Steps beyond a sequence's end
    /// are not part of the model: mixture children must leave them missing.
    pub lengths: Option<Vec<usize>>,
}

/// The static part of a chain node.
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    pub k: usize,
    pub steps: usize,
    pub lengths: Vec<usize>,
}

impl Chain {
    /// Length of a sequence's record in the node's `a`: [H, ξ].
    fn stride(&self) -> usize {
        1 + self.k * self.k
    }
}

impl Graph {
    /// Adds a Markov-chain q-block `name` over `plates` (the sequences) and the time plate.
    /// `parents` are the initial probabilities p0 (Dirichlet over K, or a constant) and the
    /// transition matrix A (a Dirichlet in a plate of size K, row j = transitions from state j, or a
    /// K×K row-major constant). The node's moments are per-step Categorical.
    ///
    /// ```
    /// use occam_core::prelude::*;
    /// let mut g = Graph::new();
    /// let t = g.plate("T", 6);
    /// let k = g.plate("K", 2);
    /// let chain = MarkovChain { k: 2, time: t, lengths: None };
    /// let a = g.add("A", Dirichlet { concentration: vec![1.0; 2] }, &[k], []).unwrap();
    /// let z = g.markov_chain("z", chain, &[], [cv(vec![0.5, 0.5]), p(a)]).unwrap();
    /// let mu = g.constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &[-1.0, 1.0]).unwrap();
    /// let x = g.add_mixture("x", Gaussian, &[t], &[(z, k)], [p(mu), c(4.0)]).unwrap();
    /// g.observe(x, &[-1.1, -0.9, 1.2, 0.8, 1.1, -1.0]).unwrap();
    /// let mut vmp = g.compile().unwrap();
    /// vmp.run(&RunOptions::default()).unwrap();
    /// assert_eq!(vmp.viterbi(z).unwrap()[0], [0, 0, 1, 1, 1, 0]);
    /// ```
    pub fn markov_chain(
        &mut self,
        name: &str,
        chain: MarkovChain,
        plates: &[PlateId],
        parents: [ParentSpec; 2],
    ) -> Result<NodeId, BuildError> {
        let shape = |what: String| BuildError::Shape {
            node: name.into(),
            what,
        };
        let MarkovChain { k, time, lengths } = chain;
        if k < 1 {
            return Err(shape("a Markov chain needs at least one state".into()));
        }
        if plates.contains(&time) {
            return Err(shape(format!(
                "the time plate `{}` is also one of the sequence plates",
                self.plates[time.0].0
            )));
        }
        let steps = self.plates[time.0].1;
        let seqs: usize = plates.iter().map(|p| self.plates[p.0].1).product();
        let lengths = lengths.unwrap_or_else(|| vec![steps; seqs]);
        if lengths.len() != seqs {
            return Err(shape(format!(
                "{} sequence length(s) given for {seqs} sequence(s)",
                lengths.len()
            )));
        }
        if let Some((s, l)) = lengths.iter().enumerate().find(|(_, &l)| l > steps) {
            return Err(shape(format!(
                "sequence {s} has length {l}, longer than the time plate `{}` ({steps})",
                self.plates[time.0].0
            )));
        }
        let dir = MomentKind::Dirichlet { k };
        let inputs = [
            SlotInput::single(dir),
            SlotInput {
                kind: dir,
                stack: k,
            },
        ];
        let names = ["initial".to_string(), "transition".to_string()];
        // Edges map the sequences (the node's plates without time) to parent elements.
        let body = Body::Chain(Chain {
            k,
            steps,
            lengths,
        });
        let id = self.add_node(
            name,
            body,
            MomentKind::Categorical { k },
            plates,
            &[],
            parents.into(),
            &inputs,
            &names,
            &[false, false],
        )?;
        let node = &mut self.nodes[id.0];
        node.plates.push(time.0);
        node.axes.push(crate::plate::Axis {
            id: time.0,
            size: steps,
        });
        node.n = seqs * steps;
        node.phi = vec![0.0; node.n * k];
        node.u = vec![0.0; node.n * k];
        node.a = vec![0.0; seqs * (1 + k * k)];
        Ok(id)
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
                what: "a Markov chain's q is exact given its neighbours; it cannot be MAP".into(),
            });
        }
        for &(c, role) in &z.children {
            let (child, Role::Selector(m)) = (&nodes[c], role) else {
                continue;
            };
            let map = &child.selectors[m].map;
            if let Some(e) = (0..child.n).find(|&e| {
                let ze = map[e] as usize;
                ze % ch.steps >= ch.lengths[ze / ch.steps] && child.participates(e)
            }) {
                let ze = map[e] as usize;
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

/// ⟨ln p0⟩ (K) and ⟨ln A⟩ (K×K) of sequence s.
fn log_params<'a>(
    nodes: &'a [Node],
    z: &'a Node,
    s: usize,
    buf: &'a mut Vec<f64>,
) -> (&'a [f64], &'a [f64]) {
    let pa = gather(nodes, z, s, buf);
    (pa[0], pa[1])
}

impl Vmp {
    /// Updates chain node i as a unit from `eta`, its children's summed messages: forward–backward
    /// per sequence (in parallel).
    pub(super) fn update_chain(&mut self, i: usize, eta: Vec<f64>) -> Result<(), RunError> {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("update_chain on a chain node")
        };
        let (k, steps, stride) = (ch.k, ch.steps, ch.stride());
        let mut u = vec![0.0; z.n * k];
        let mut a = vec![0.0; z.a.len()];
        let nodes = &self.nodes;
        let failed: Option<usize> = u
            .par_chunks_mut(steps * k)
            .zip(a.par_chunks_mut(stride))
            .enumerate()
            .filter_map(|(s, (gamma, rec))| {
                let len = ch.lengths[s];
                if len == 0 {
                    return None;
                }
                let mut buf = Vec::new();
                let (lp0, la) = log_params(nodes, z, s, &mut buf);
                let eta = &eta[s * steps * k..(s * steps + len) * k];
                let gamma = &mut gamma[..len * k];
                let (h, xi) = rec.split_at_mut(1);
                match forward_backward(k, lp0, la, eta, gamma, xi) {
                    Some(log_z) => {
                        h[0] = entropy(log_z, lp0, la, eta, gamma, xi);
                        None
                    }
                    None => Some(s),
                }
            })
            .min();
        if let Some(s) = failed {
            return Err(self.numerical(
                i,
                s * steps,
                format!(
                    "sequence {s} has no path of positive probability under the expected \
                     parameters and its children's messages"
                ),
            ));
        }
        let node = &mut self.nodes[i];
        node.phi = eta;
        node.u = u;
        node.a = a;
        self.changed(i);
        self.refresh_dependents(i);
        Ok(())
    }

    /// The chain's bound term: Σ_s γ_{s,0}·⟨ln p0⟩ + Σ ξ_s ∘ ⟨ln A⟩ + H_s (module docs).
    pub(super) fn chain_bound(&self, i: usize) -> f64 {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("chain_bound on a chain node")
        };
        let (k, stride) = (ch.k, ch.stride());
        (0..ch.lengths.len())
            .into_par_iter()
            .filter(|&s| ch.lengths[s] > 0)
            .map(|s| {
                let mut buf = Vec::new();
                let (lp0, la) = log_params(&self.nodes, z, s, &mut buf);
                let rec = &z.a[s * stride..(s + 1) * stride];
                let g0 = &z.u[s * ch.steps * k..s * ch.steps * k + k];
                dot(lp0, g0) + dot(la, &rec[1..]) + rec[0]
            })
            .sum()
    }

    /// Adds the chain's messages to its parent in slot `slot` into `out` (the parent's elements).
    pub(super) fn chain_message(&self, i: usize, slot: usize, out: &mut [f64]) {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("chain_message from a chain node")
        };
        let (k, stride) = (ch.k, ch.stride());
        let edge = &z.parents[slot];
        for s in (0..ch.lengths.len()).filter(|&s| ch.lengths[s] > 0) {
            let m = if slot == 0 {
                &z.u[s * ch.steps * k..s * ch.steps * k + k]
            } else {
                &z.a[s * stride + 1..(s + 1) * stride]
            };
            edge.scatter(s, m, out);
        }
    }

    /// The most probable state path of every sequence of a chain node (Viterbi on the expected
    /// log-parameters and the children's last messages), one `Vec` per sequence of its length;
    /// `None` if the node is not a chain.
    pub fn viterbi(&self, node: NodeId) -> Option<Vec<Vec<usize>>> {
        let z = &self.nodes[node.0];
        let Body::Chain(ch) = &z.body else {
            return None;
        };
        let k = ch.k;
        let mut buf = Vec::new();
        let paths = (0..ch.lengths.len())
            .map(|s| {
                let len = ch.lengths[s];
                let (lp0, la) = log_params(&self.nodes, z, s, &mut buf);
                let mut path = vec![0; len];
                let start = s * ch.steps * k;
                viterbi(k, lp0, la, &z.phi[start..start + len * k], &mut path);
                path
            })
            .collect();
        Some(paths)
    }

    /// Sequence lengths of a chain node (`None` if the node is not a chain).
    pub fn chain_lengths(&self, node: NodeId) -> Option<&[usize]> {
        match &self.nodes[node.0].body {
            Body::Chain(ch) => Some(&ch.lengths),
            _ => None,
        }
    }

    /// Draws every sequence of chain node i from the prior given its parents' (drawn) moments;
    /// returns the states (0 beyond a sequence's end) and leaves the node's moments one-hot.
    pub(super) fn sample_chain(&mut self, i: usize, rng: &mut Rng) -> Vec<f64> {
        use rand::Rng as _;
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("sample_chain on a chain node")
        };
        let k = ch.k;
        let mut x = vec![0.0; z.n];
        let mut u = vec![0.0; z.n * k];
        let mut buf = Vec::new();
        let draw = |logp: &[f64], rng: &mut Rng| {
            let p: Vec<f64> = logp.iter().map(|v| v.exp()).collect();
            let mut r = rng.random::<f64>() * p.iter().sum::<f64>();
            p.iter()
                .position(|&v| {
                    r -= v;
                    r <= 0.0
                })
                .unwrap_or(k - 1)
        };
        for s in 0..ch.lengths.len() {
            let (lp0, la) = log_params(&self.nodes, z, s, &mut buf);
            let mut state = 0;
            for t in 0..ch.lengths[s] {
                state = if t == 0 {
                    draw(lp0, rng)
                } else {
                    draw(&la[state * k..(state + 1) * k], rng)
                };
                let e = s * ch.steps + t;
                x[e] = state as f64;
                u[e * k + state] = 1.0;
            }
        }
        self.nodes[i].u = u;
        self.changed(i);
        x
    }
}
