//! The discrete Markov chain: z_0 ~ Categorical(p0), z_t | z_{t−1} ~ Categorical(A[z_{t−1}]).
//!
//! Per sequence, q(z) ∝ exp(⟨ln p0⟩·u(z_0) + Σ_t u(z_{t−1})ᵀ⟨ln A⟩u(z_t) + Σ_t η_t·u(z_t)) (Winn (5.43)
//! with the children's messages (2.53)), found by forward–backward. Record: [H, ξ (K×K)], ξ_jk =
//! Σ_t q(z_{t−1} = j, z_t = k). Bound: γ_0·⟨ln p0⟩ + Σ ξ ∘ ⟨ln A⟩ + H. Messages: to p0, γ_0 (Winn
//! (1.92)); to row j of A, ξ_j·.

use super::forward_backward::{entropy, forward_backward, viterbi};
use super::*;

/// Forward–backward for one sequence: marginals into `u`, [H, ξ] into `rec`.
pub(super) fn update(
    k: usize,
    seq: &Seq<'_>,
    eta: &[f64],
    u: &mut [f64],
    rec: &mut [f64],
) -> Result<(), SequenceError> {
    let (lp0, la) = (seq.pa[0], seq.pa[1]);
    let (h, xi) = rec.split_at_mut(1);
    let log_z = forward_backward(k, lp0, la, eta, u, xi).ok_or(SequenceError::NoPath)?;
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
