//! Per-element moments of a gated block's x, dot and sum, formed on request for readers
//! (summaries, reports, predictions) from the block's compact state (module docs): x_nk given
//! s_n = k is N(m_nk, Σ_k), so its moments are [m_nk, m_nk m_nkᵀ + Σ_k]; the dot f_nkd = w_kdᵀ x_nk
//! and the sum f_nkd + μ_kd take Winn (2.41)'s moments of a product and a sum of independent
//! parents, given the same component. The engine itself never reads these (its messages come
//! from the block's sums); they are dropped whenever a node they depend on is updated.

use super::weights;
use super::*;
use crate::engine::qblock::Block;
use crate::linalg::Cholesky;

impl Vmp {
    /// The block of gated node `i` (its x, dot or sum), if the block has its state.
    fn gated_layout(&self, i: usize) -> Option<&Layout> {
        let Some(Block::Gated(b)) = self.block_of(i) else {
            return None;
        };
        let l = &b.layout;
        let ready = self.nodes[l.x].q.u.len() == l.n * l.k * l.q + l.k * l.q * l.q;
        ready.then_some(l)
    }

    /// A gated block's x as the block keeps it: the means m_nk (N·K·q, row-major over N, K) and
    /// the covariances Σ_k (K·q²); `None` for any other node or before the block's start.
    /// ([`Vmp::moments`] gives the per-element moments [m_nk, m_nk m_nkᵀ + Σ_k] instead.)
    pub fn gated_latent(&self, x: NodeId) -> Option<(&[f64], &[f64])> {
        let l = self.gated_layout(x.0).filter(|l| l.x == x.0)?;
        Some(self.nodes[l.x].q.u.split_at(l.n * l.k * l.q))
    }

    /// The per-element moments of gated node `i` (x, the dot or the sum; see the module doc) and,
    /// for x, its per-element natural parameters [Σ_k⁻¹ m_nk, −½ Σ_k⁻¹]; empty before the
    /// block's start. For W in the grouped form, its rows' [m_kd, m_kd m_kdᵀ + Σ_k] and
    /// [φ₁_kd, Φ₂_k] (`weights`).
    pub(in crate::engine) fn gated_dense(&self, i: usize) -> (Vec<f64>, Vec<f64>) {
        if let Some(Block::Gated(b)) = self.block_of(i) {
            if b.layout.w == i && weights::is_grouped(&self.nodes[i], &b.layout) {
                return weights::dense(&self.nodes[i], &b.layout);
            }
        }
        let Some(l) = self.gated_layout(i) else {
            return Default::default();
        };
        let (n, k, q, d) = (l.n, l.k, l.q, l.d);
        let (means, covs) = self.nodes[l.x].q.u.split_at(n * k * q);
        let second = |e: usize, a: usize, b: usize| {
            let c = e % k;
            means[e * q + a] * means[e * q + b] + covs[c * q * q + a * q + b]
        };
        let len = q + q * q;
        if i == l.x {
            let mut out = vec![0.0; n * k * len];
            for (e, o) in out.chunks_exact_mut(len).enumerate() {
                o[..q].copy_from_slice(&means[e * q..(e + 1) * q]);
                for a in 0..q {
                    for b in 0..q {
                        o[q + a * q + b] = second(e, a, b);
                    }
                }
            }
            let mut phi = vec![0.0; n * k * len];
            let mut prec = vec![0.0; k * q * q];
            for (c, p) in prec.chunks_exact_mut(q * q).enumerate() {
                if let Some(ch) = Cholesky::new(&covs[c * q * q..(c + 1) * q * q], q) {
                    ch.inverse_into(p);
                }
            }
            for (e, o) in phi.chunks_exact_mut(len).enumerate() {
                let (p, m) = (&prec[(e % k) * q * q..(e % k + 1) * q * q], &means[e * q..]);
                for a in 0..q {
                    o[a] = (0..q).map(|b| p[a * q + b] * m[b]).sum();
                    for b in 0..q {
                        o[q + a * q + b] = -0.5 * p[a * q + b];
                    }
                }
            }
            return (out, phi);
        }
        let (wu, mu) = (self.moments(NodeId(l.w)), self.moments(NodeId(l.mu)));
        let mut out = Vec::with_capacity(2 * n * k * d);
        for e in 0..n * k {
            let (c, m) = (e % k, &means[e * q..(e + 1) * q]);
            for j in 0..d {
                let w = &wu[(c * d + j) * len..(c * d + j + 1) * len];
                let f1: f64 = w[..q].iter().zip(m).map(|(a, b)| a * b).sum();
                let mut f2 = 0.0;
                for a in 0..q {
                    for b in 0..q {
                        f2 += w[q + a * q + b] * second(e, a, b);
                    }
                }
                if i == l.f {
                    out.extend([f1, f2]);
                } else {
                    let (m1, m2) = (mu[2 * (c * d + j)], mu[2 * (c * d + j) + 1]);
                    out.extend([f1 + m1, f2 + 2.0 * f1 * m1 + m2]);
                }
            }
        }
        (out, Vec::new())
    }

    /// Drops the per-element moments formed for readers that node `i`'s update made stale (its
    /// own if it is in a gated block, and its gated children's: x, the dot and the sum).
    pub(in crate::engine) fn forget_gated_dense(&mut self, i: usize) {
        let touches = self.nodes[i].gated.is_some()
            || self.nodes[i]
                .children
                .iter()
                .any(|&(c, _)| self.nodes[c].gated.is_some());
        if !touches {
            return;
        }
        let gated = |v: &Vmp, j: usize| v.nodes[j].gated.is_some().then_some(j);
        let at = gated(self, i).or_else(|| {
            self.nodes[i]
                .children
                .iter()
                .find_map(|&(c, _)| gated(self, c))
        });
        let Some(Block::Gated(b)) = at.and_then(|j| self.block_of(j)) else {
            return;
        };
        let (x, f, mean) = (b.layout.x, b.layout.f, b.layout.mean);
        for j in [x, f, mean] {
            self.nodes[j].lazy = Default::default();
        }
    }
}
