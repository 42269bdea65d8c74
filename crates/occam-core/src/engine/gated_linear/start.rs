//! The gated block's default start from the data: k-means of y for the index s, each cluster's
//! principal axes for W_k, its centre for μ_k and the mean discarded variance for 1/τ
//! ([`crate::kmeans::local_pca`], Winn Algorithm 3.1 steps 1–2, the start of
//! `occam::latent::mbpca`), then q(x, s) given those (one update of the block, Winn
//! (3.20)–(3.21), (3.29)–(3.30)).
//!
//! Without it s starts from the k-means labels with W at its prior (⟨W⟩ = 0), x at m = 0: the
//! first sweep's W update then reads only zeros from q(x, s), every component collapses onto its
//! mean and the fit ends on a poor optimum (one of three components in use on the sphere of
//! `examples/mbpca`, 72 nats below the optimum with three).
//!
//! It is the start wherever s starts by default (no `init` of its own, not one of the driver's
//! random-label candidate starts), 1 ≤ q < D and N ≥ 2K; each of W, μ and τ takes its part
//! only when it is latent with no `init` of its own. Seeded by the restart's seed alone.

use super::super::qblock::QBlock;
use super::*;
use crate::kmeans::local_pca;

/// A block started from the data: its index in `Vmp::blocks` and the nodes whose
/// `start_override` was set for it (cleared by [`Vmp::finish_gated_data_starts`]).
pub(in crate::engine) struct DataStart {
    block: usize,
    overridden: Vec<usize>,
}

impl Vmp {
    /// Sets the data start (module docs) of every gated block that takes one as the
    /// `start_override` of its index, W, μ and τ, for the restart seeded by `seed`.
    pub(in crate::engine) fn gated_data_starts(&mut self, seed: u64) -> Vec<DataStart> {
        let mut started = Vec::new();
        for b in 0..self.blocks.len() {
            let Block::Gated(g) = &self.blocks[b] else {
                continue;
            };
            let l = g.layout.clone();
            let s = &self.nodes[l.s];
            if s.init.is_some() || s.start_override.is_some() {
                continue;
            }
            let (n, k, q, d) = (l.n, l.k, l.q, l.d);
            if q == 0 || q >= d || n < 2 * k.max(1) {
                continue;
            }
            let y = &self.nodes[l.y].data;
            let Ok(lp) = local_pca(&y[..n * d], n, d, k, q, seed) else {
                continue;
            };
            let free = |i: usize| self.nodes[i].init.is_none() && self.nodes[i].has_latent();
            let mut set = vec![(l.s, Init::Moments(one_hot(&lp.labels, k)))];
            if free(l.w) {
                // ⟨w_kd⟩ and ⟨w_kd w_kdᵀ⟩ = ⟨w_kd⟩⟨w_kd⟩ᵀ (a point mass at the axes).
                let u =
                    lp.w.chunks_exact(q)
                        .flat_map(|row| {
                            let outer = row.iter().flat_map(|a| row.iter().map(move |b| a * b));
                            row.iter().copied().chain(outer).collect::<Vec<_>>()
                        })
                        .collect();
                set.push((l.w, Init::Moments(u)));
            }
            if free(l.mu) {
                let u = lp.centres.iter().flat_map(|&m| [m, m * m]).collect();
                set.push((l.mu, Init::Moments(u)));
            }
            if let Source::Node(tau) = self.nodes[l.y].parents[1].source {
                // Only a positive, finite discarded variance (constant data give 0: no start for τ).
                let noise_ok = lp.noise > 0.0 && lp.noise.is_finite();
                if noise_ok && free(tau) && self.nodes[tau].n == 1 && self.nodes[tau].len == 2 {
                    // ⟨τ⟩ = 1/σ², ⟨ln τ⟩ = −ln σ².
                    let u = vec![1.0 / lp.noise, -lp.noise.ln()];
                    set.push((tau, Init::Moments(u)));
                }
            }
            let mut overridden = Vec::with_capacity(set.len());
            for (i, init) in set {
                self.nodes[i].start_override = Some(init);
                overridden.push(i);
            }
            started.push(DataStart {
                block: b,
                overridden,
            });
        }
        started
    }

    /// After every node has started (`nodes`: how that went): clears the overrides of
    /// [`Vmp::gated_data_starts`] and updates each such block once, so that q(x, s) (the
    /// responsibilities and the m_nk, Σ_k) follows from the starting W, μ and τ before any of
    /// them is updated from it.
    pub(in crate::engine) fn finish_gated_data_starts(
        &mut self,
        started: Vec<DataStart>,
        nodes: Result<(), RunError>,
    ) -> Result<(), RunError> {
        for d in &started {
            for &i in &d.overridden {
                self.nodes[i].start_override = None;
            }
        }
        nodes?;
        let blocks = self.blocks.clone();
        for d in started {
            let Block::Gated(g) = &blocks[d.block] else {
                continue;
            };
            blocks[d.block].update(self, g.layout.s)?;
        }
        Ok(())
    }
}

/// One-hot rows of `labels` over `k` components.
fn one_hot(labels: &[usize], k: usize) -> Vec<f64> {
    let mut u = vec![0.0; labels.len() * k];
    for (e, &c) in labels.iter().enumerate() {
        u[e * k + c] = 1.0;
    }
    u
}
