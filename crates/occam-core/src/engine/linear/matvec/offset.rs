//! A vector offset: y_n ~ N(W x_n + μ, Λ⁻¹) with μ one Gaussian D-vector (or a constant) shared by
//! every n — factor analysis with a mean.
//!
//! μ is independent of W, x and Λ under q, so with s_y = Σ_n m_n y_n and s_x = Σ_n m_n x̄_n,
//! ⟨(y_n − F_n − μ)(y_n − F_n − μ)ᵀ⟩ summed over the data is the offset-free sum on the data
//! less μ̄, ỹ_n = y_n − μ̄, plus (Σ m) Cov(μ). Neither Ỹ nor its products are formed: the kernel's
//! two data sums become
//!
//! * Ỹ X = YX − μ̄ s_xᵀ (D × q), and
//! * Σ m ỹ ỹᵀ + (Σ m) Cov(μ) = Σ m y yᵀ − s_y μ̄ᵀ − μ̄ s_yᵀ + (Σ m) ⟨μ μᵀ⟩ (D × D),
//!
//! and x_n's first part (Ỹ Λ̄ᵀ W̄)_n loses m_n μ̄ᵀ Λ̄ᵀ W̄. The message to μ is the sum factor's
//! (Winn §2.2.2: [φ₁ + (φ₂ + φ₂ᵀ) ⟨rest⟩, φ₂]) of the MvGaussian's message [Λ̄ y_n, −½ Λ̄] to its
//! mean (2.21), summed over the data: [Λ̄ s_y − Λ̄ₛ W̄ s_x, −½ (Σ m) Λ̄], Λ̄ₛ = ½(Λ̄ + Λ̄ᵀ).

use super::super::*;
use super::{MatVecForm, Sums};

/// The offset's moments: μ̄ (D) and ⟨μ μᵀ⟩ (D × D).
pub(super) struct Moments<'a> {
    pub(super) mean: &'a [f64],
    pub(super) outer: &'a [f64],
}

/// The sum's slot that holds μ, if sum node `m` is F (in slot `fslot`) plus one Gaussian D-vector
/// or constant read by every element, independent of W, x and Λ (`taken`).
pub(super) fn detect(
    nodes: &[Node],
    m: usize,
    fslot: usize,
    d: usize,
    taken: &[usize],
) -> Option<usize> {
    let sn = &nodes[m];
    let slot = 1 - fslot;
    if sn.parents.len() != 2 {
        return None;
    }
    match &sn.parents[slot].source {
        Source::Const(v) => (v.len() == d + d * d).then_some(slot),
        Source::Node(p) => {
            let node = &nodes[*p];
            let fits = node.n == 1
                && node.configs == 1
                && node.kind == (MomentKind::Gaussian { d })
                && matches!(node.body, Body::Stochastic(_) | Body::Constant)
                && !taken.contains(p);
            fits.then_some(slot)
        }
    }
}

impl MatVecForm {
    /// μ's moments, if y's mean has an offset.
    pub(super) fn offset<'a>(&self, lin: &Linear, nodes: &'a [Node]) -> Option<Moments<'a>> {
        let (slot, s) = (self.offset?, lin.sum?);
        let d = self.d;
        let u = match &nodes[s].parents[slot].source {
            Source::Const(v) => &v[..],
            Source::Node(p) => &nodes[*p].q.u[..d + d * d],
        };
        Some(Moments {
            mean: &u[..d],
            outer: &u[d..d + d * d],
        })
    }

    /// Replaces the data sums in `s` by those of the data less μ (see the module doc).
    pub(super) fn apply_offset(&self, lin: &Linear, nodes: &[Node], s: &mut Sums) {
        let Some(mu) = self.offset(lin, nodes) else {
            return;
        };
        let (d, q) = (self.d, lin.q);
        let data = self.data(lin, nodes);
        for i in 0..d {
            for (a, o) in s.yc[i * q..(i + 1) * q].iter_mut().enumerate() {
                *o -= mu.mean[i] * s.xp.mb[a];
            }
            for j in 0..d {
                s.yy[i * d + j] += -data.ysum[i] * mu.mean[j] - mu.mean[i] * data.ysum[j]
                    + data.count * mu.outer[i * d + j];
            }
        }
    }

    /// Adds the message to μ (one element of D + D²) into `out` — see the module doc.
    pub(in crate::engine::linear) fn offset_message(
        &self,
        lin: &Linear,
        nodes: &[Node],
        cache: &Cache,
        out: &mut [f64],
    ) {
        let (d, q) = (self.d, lin.q);
        let s = self.sums(lin, nodes, cache);
        let data = self.data(lin, nodes);
        // W̄ s_x (D).
        let wx: Vec<f64> = s.wm.chunks_exact(q).map(|w| dot(w, &s.xp.mb)).collect();
        for i in 0..d {
            for j in 0..d {
                let (lij, lji) = (s.lam[i * d + j], s.lam[j * d + i]);
                out[i] += lij * data.ysum[j] - 0.5 * (lij + lji) * wx[j];
                out[d + i * d + j] += -0.5 * data.count * lij;
            }
        }
    }
}
