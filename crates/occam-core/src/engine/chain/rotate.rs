//! The engine's half of the rotation of a linear dynamical system (BayesPy's
//! `RotateGaussianMarkovChain`): the chain's summary statistics a caller needs to choose R, and
//! the exact transform of the chain's q under x_t → R x_t for every step of every sequence.
//!
//! q(X) is one Gaussian over all steps of a sequence, so X → (I ⊗ R) X keeps it in its family:
//! per step m → R m and ⟨xxᵀ⟩ → R⟨xxᵀ⟩Rᵀ; the record's sums S₋, S₊ and C = Σ⟨x_t x_{t−1}ᵀ⟩ go
//! to R S Rᵀ; the entropy gains L ln|det R| per sequence of L steps. The stored η (the children's
//! messages, read only by the next update) is carried along as the natural parameters of the
//! transformed law, η₁ → R⁻ᵀη₁, H₂ → R⁻ᵀH₂R⁻¹ (see `engine::transform`).

use super::*;
use crate::linalg::{inverse_and_log_det, mat_mul, transpose};

/// A Gaussian chain's sums over all its sequences (d × d matrices row-major), with the parents'
/// expected parameters it needs, for a rotation x_t → R x_t (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct ChainSums {
    /// State dimension d.
    pub d: usize,
    /// Σ_s L_s, the number of rotated state vectors (the entropy's factor).
    pub steps: usize,
    /// Σ_s ⟨x_0 x_0ᵀ⟩ over the sequences' first steps.
    pub initial_second: Vec<f64>,
    /// Σ_s ⟨Λ0⟩⟨m0⟩⟨x_0⟩ᵀ: the initial prior's linear natural parameter against the first means.
    pub initial_first: Vec<f64>,
    /// ⟨Λ0⟩, the same for every sequence.
    pub initial_precision: Vec<f64>,
    /// S₋ = Σ_s Σ_{t≥1} ⟨x_{t−1} x_{t−1}ᵀ⟩.
    pub prev: Vec<f64>,
    /// S₊ = Σ_s Σ_{t≥1} ⟨x_t x_tᵀ⟩.
    pub cur: Vec<f64>,
    /// C = Σ_s Σ_{t≥1} ⟨x_t x_{t−1}ᵀ⟩.
    pub cross: Vec<f64>,
    /// ⟨τ_i⟩, the expected noise precisions (the same for every sequence).
    pub noise: Vec<f64>,
}

/// L M R for d × d row-major matrices.
fn sandwich(l: &[f64], m: &[f64], r: &[f64], d: usize) -> Vec<f64> {
    mat_mul(&mat_mul(l, m, d, d, d), r, d, d, d)
}

impl Vmp {
    /// Node i's state dimension if it is a Gaussian chain a rotation may transform: no inputs, no
    /// mixture of parameters; otherwise why not.
    fn rotatable_chain(&self, i: usize) -> Result<usize, NotTransformable> {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            return Err(NotTransformable::NotChain);
        };
        let ChainKind::Gaussian { d } = ch.kind else {
            return Err(NotTransformable::DiscreteChain);
        };
        if ch.n_inputs > 0 {
            return Err(NotTransformable::ChainInputs);
        }
        if z.configs > 1 {
            return Err(NotTransformable::MixedParameters);
        }
        Ok(d)
    }

    /// The sums of Gaussian chain `node` over its sequences (see [`ChainSums`]); an error naming
    /// the node if it is not a rotatable chain or its sequences read different initial or noise
    /// parameters.
    pub fn gaussian_chain_sums(&self, node: NodeId) -> Result<ChainSums, RunError> {
        let i = self.id(node);
        let name = &self.nodes[i].name;
        let d = self
            .rotatable_chain(i)
            .map_err(|what| RunError::Schedule(format!("`{name}` {what}")))?;
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("checked above")
        };
        let (dd, row, stride) = (d * d, z.len, ch.stride());
        let mut out = ChainSums {
            d,
            steps: 0,
            initial_second: vec![0.0; dd],
            initial_first: vec![0.0; dd],
            initial_precision: Vec::new(),
            prev: vec![0.0; dd],
            cur: vec![0.0; dd],
            cross: vec![0.0; dd],
            noise: Vec::new(),
        };
        let mut buf = Vec::new();
        for s in (0..ch.lengths.len()).filter(|&s| ch.lengths[s] > 0) {
            let pa = seq_parents(&self.nodes, z, s, &mut buf);
            let (mean0, lam0) = (&pa[0][..d], &pa[1][..dd]);
            let noise: Vec<f64> = pa[3].chunks_exact(2).map(|t| t[0]).collect();
            if out.initial_precision.is_empty() {
                out.initial_precision = lam0.to_vec();
                out.noise = noise;
            } else if out.initial_precision != lam0 || out.noise != noise {
                return Err(RunError::Schedule(format!(
                    "`{name}`: its sequences have different initial precisions or noise; it \
                     cannot be rotated"
                )));
            }
            let mut phi1 = vec![0.0; d];
            crate::linalg::mat_vec(lam0, mean0, &mut phi1);
            let u0 = &z.q.u[s * ch.steps * row..s * ch.steps * row + row];
            for a in 0..d {
                for b in 0..d {
                    out.initial_first[a * d + b] += phi1[a] * u0[b];
                }
            }
            kernels::add_into(&mut out.initial_second, &u0[d..]);
            let rec = &z.q.a[s * stride..(s + 1) * stride];
            kernels::add_into(&mut out.prev, &rec[2..2 + dd]);
            kernels::add_into(&mut out.cur, &rec[2 + dd..2 + 2 * dd]);
            kernels::add_into(&mut out.cross, &rec[2 + 2 * dd..2 + 3 * dd]);
            out.steps += ch.lengths[s];
        }
        Ok(out)
    }

    /// Replaces chain `node`'s q(X) by the law of x_t → R x_t at every step (R row-major d × d,
    /// invertible); see the module doc. Other nodes are untouched: their cached products are
    /// dropped and the deterministic nodes below refreshed.
    pub fn transform_gaussian_chain(&mut self, node: NodeId, r: &[f64]) -> Result<(), RunError> {
        let i = self.id(node);
        let d = self
            .rotatable_chain(i)
            .map_err(|what| RunError::Schedule(format!("`{}` {what}", self.nodes[i].name)))?;
        let (r_inv, log_det) = inverse_and_log_det(r, d).ok_or_else(|| {
            self.numerical(i, 0, "the transform is not finite and invertible".into())
        })?;
        let (rt, r_inv_t) = (transpose(r, d, d), transpose(&r_inv, d, d));
        let dd = d * d;
        let z = &mut self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("checked above")
        };
        let (row, steps, stride) = (z.len, ch.steps, ch.stride());
        let lengths = ch.lengths.clone();
        for (s, &len) in lengths.iter().enumerate() {
            let span = s * steps * row..(s * steps + len) * row;
            for u in z.q.u[span.clone()].chunks_exact_mut(row) {
                let m = mat_mul(r, &u[..d], d, d, 1);
                let second = sandwich(r, &u[d..], &rt, d);
                u[..d].copy_from_slice(&m);
                u[d..].copy_from_slice(&second);
            }
            // η exists once the chain has been updated.
            if z.q.phi.len() == z.q.u.len() {
                for eta in z.q.phi[span].chunks_exact_mut(row) {
                    let h = mat_mul(&r_inv_t, &eta[..d], d, d, 1);
                    let j = sandwich(&r_inv_t, &eta[d..], &r_inv, d);
                    eta[..d].copy_from_slice(&h);
                    eta[d..].copy_from_slice(&j);
                }
            }
            let rec = &mut z.q.a[s * stride..(s + 1) * stride];
            if len > 0 {
                rec[0] += len as f64 * log_det;
            }
            for k in 0..3 {
                let block = &mut rec[2 + k * dd..2 + (k + 1) * dd];
                let rotated = sandwich(r, block, &rt, d);
                block.copy_from_slice(&rotated);
            }
        }
        z.lazy = std::sync::OnceLock::new();
        self.changed(i);
        self.refresh_dependents(i);
        Ok(())
    }
}
