//! The discrete Markov chain: z_0 ~ Categorical(p0), z_t | z_{t−1} ~ Categorical(A[z_{t−1}]).
//!
//! Per sequence, q(z) ∝ exp(⟨ln p0⟩·u(z_0) + Σ_t u(z_{t−1})ᵀ⟨ln A⟩u(z_t) + Σ_t η_t·u(z_t)) (Winn (5.43)
//! with the children's messages (2.53)), found by forward–backward. Record: [H, ξ (K×K)], ξ_jk =
//! Σ_t q(z_{t−1} = j, z_t = k). Bound: γ_0·⟨ln p0⟩ + Σ ξ ∘ ⟨ln A⟩ + H. Messages: to p0, γ_0 (Winn
//! (1.92)); to row j of A, ξ_j·.

use super::forward_backward::{entropy, forward_backward, viterbi};
use super::*;

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
    /// are not part of the model: children must leave them missing.
    pub lengths: Option<Vec<usize>>,
}

impl Graph {
    /// Adds a Markov-chain q-block `name` over `plates` (the sequences) and the time plate.
    /// `parents` are the initial probabilities p0 (Dirichlet over K, or a constant) and the
    /// transition matrix A (a Dirichlet in a plate of size K, row j = transitions from state j, or a
    /// K×K row-major constant). The node's moments are per-step Categorical. Its q starts from
    /// its [`Init`]: `Init::Prior` (the default: the chain given its parents' initial moments, no
    /// children's messages yet) or `Init::Random` (a path drawn from the chain's prior).
    /// [`Graph::markov_chain_mixture`] makes the parameters a mixture.
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
        self.markov_chain_mixture(name, chain, plates, &[], parents)
    }

    /// A Markov chain whose parameters are a mixture: each `(index, plate)` is a Categorical over
    /// `plate`, per sequence (its plates within `plates`), that picks the element of `plate` the
    /// parents are read at — `A[M, K]` with index `c[S]` over M gives sequence s the transition
    /// matrix `A[c_s]` (and `p0[M]` the initial probabilities `p0[c_s]`; a parent without the
    /// plate is shared). In q the chain sees Σ_m q(c_s = m)⟨ln A_m⟩, A_m gets q(c_s = m)·ξ_s and
    /// c_s gets ⟨ln p(z_s | A_m)⟩ per m (Winn (2.52)–(2.54) with the chain as the mixture's
    /// component). An index that varies along the time plate is refused.
    ///
    /// ```
    /// use occam_core::prelude::*;
    /// let mut g = Graph::new();
    /// let (s, t, m, k) = (g.plate("S", 2), g.plate("T", 4), g.plate("M", 2), g.plate("K", 2));
    /// let regime = g.add("c", Categorical { k: 2 }, &[s], [cv(vec![0.5, 0.5])]).unwrap();
    /// let a = g.add("A", Dirichlet { concentration: vec![1.0; 2] }, &[m, k], []).unwrap();
    /// let chain = MarkovChain { k: 2, time: t, lengths: None };
    /// let z = g
    ///     .markov_chain_mixture("z", chain, &[s], &[(regime, m)], [cv(vec![0.5, 0.5]), p(a)])
    ///     .unwrap();
    /// let mut vmp = g.compile().unwrap();
    /// vmp.run(&RunOptions::default()).unwrap();
    /// assert_eq!(vmp.chain_lengths(z).unwrap(), [4, 4]);
    /// ```
    pub fn markov_chain_mixture(
        &mut self,
        name: &str,
        chain: MarkovChain,
        plates: &[PlateId],
        index: &[(NodeId, PlateId)],
        parents: [ParentSpec; 2],
    ) -> Result<NodeId, BuildError> {
        let MarkovChain { k, time, lengths } = chain;
        if k < 1 {
            return Err(BuildError::Shape {
                node: name.into(),
                what: "a Markov chain needs at least one state".into(),
            });
        }
        let dir = MomentKind::Dirichlet { k };
        let inputs = [
            SlotInput::single(dir),
            SlotInput {
                kind: dir,
                stack: k,
            },
        ];
        self.add_chain(
            name,
            ChainKind::Discrete { k },
            MomentKind::Categorical { k },
            time,
            lengths,
            plates,
            index,
            parents.into(),
            &inputs,
            &["initial", "transition"],
        )
    }
}

/// Forward–backward for one sequence: marginals into `u`, [H, ξ] into `rec`.
pub(super) fn update(
    k: usize,
    seq: &Seq<'_>,
    eta: &[f64],
    u: &mut [f64],
    rec: &mut [f64],
) -> Result<(), String> {
    let (lp0, la) = (seq.pa[0], seq.pa[1]);
    let (h, xi) = rec.split_at_mut(1);
    let log_z = forward_backward(k, lp0, la, eta, u, xi).ok_or_else(|| {
        "no state path has positive probability under the expected parameters and the \
         children's messages"
            .to_string()
    })?;
    h[0] = entropy(log_z, lp0, la, eta, u, xi);
    Ok(())
}

/// γ_0·⟨ln p0⟩ + Σ ξ ∘ ⟨ln A⟩ + H.
pub(super) fn bound(k: usize, seq: &Seq<'_>, u: &[f64], rec: &[f64]) -> f64 {
    expected_log_p(k, seq, u, rec) + rec[0]
}

/// ⟨ln p(z | p0, A)⟩ under q: γ_0·⟨ln p0⟩ + Σ ξ ∘ ⟨ln A⟩.
pub(super) fn expected_log_p(k: usize, seq: &Seq<'_>, u: &[f64], rec: &[f64]) -> f64 {
    dot(seq.pa[0], &u[..k]) + dot(seq.pa[1], &rec[1..])
}

/// To p0: γ_0; to A (K rows): ξ.
pub(super) fn message(k: usize, slot: usize, u: &[f64], rec: &[f64], m: &mut [f64]) {
    if slot == 0 {
        m.copy_from_slice(&u[..k]);
    } else {
        m.copy_from_slice(&rec[1..]);
    }
}

/// Ancestral draw of one sequence given the parents' (drawn) ⟨ln p⟩: states into `x`, one-hot `u`.
pub(super) fn sample(k: usize, seq: &Seq<'_>, rng: &mut Rng, x: &mut [f64], u: &mut [f64]) {
    use rand::Rng as _;
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
    let mut state = 0;
    for t in 0..seq.len {
        state = if t == 0 {
            draw(seq.pa[0], rng)
        } else {
            draw(&seq.pa[1][state * k..(state + 1) * k], rng)
        };
        x[t] = state as f64;
        u[t * k + state] = 1.0;
    }
}

impl Vmp {
    /// The most probable state path of every sequence of a discrete chain node (Viterbi on the
    /// expected log-parameters and the children's last messages), one `Vec` per sequence of its
    /// length; `None` if the node is not a discrete chain.
    pub fn viterbi(&self, node: NodeId) -> Option<Vec<Vec<usize>>> {
        let z = &self.nodes[node.0];
        let Body::Chain(Chain {
            kind: ChainKind::Discrete { k },
            steps,
            lengths,
            ..
        }) = &z.body
        else {
            return None;
        };
        let (k, steps) = (*k, *steps);
        let mut buf = Vec::new();
        let paths = (0..lengths.len())
            .map(|s| {
                let len = lengths[s];
                let pa = seq_parents(&self.nodes, z, s, &mut buf);
                let mut path = vec![0; len];
                let start = s * steps * k;
                viterbi(k, pa[0], pa[1], &z.q.phi[start..start + len * k], &mut path);
                path
            })
            .collect();
        Some(paths)
    }
}
