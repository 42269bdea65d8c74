//! The gated linear-Gaussian structure as a q-block (module docs of `gated_linear`): its update,
//! bound terms and messages, all from the responsibility-weighted sums of q(x, s).

use super::super::qblock::QBlock;
use super::kernels::{self, Sums};
use super::residual::ResidualCache;
use super::*;
use crate::special::LN_2PI;
use std::mem::take;

/// One gated block: s, x, the dot, the sum and y (module docs).
#[derive(Clone, Debug)]
pub(crate) struct GatedLinear {
    members: Vec<usize>,
    pub(in crate::engine) layout: Layout,
    /// Σ_n r_nk ‖y_n − ⟨μ_k⟩‖², shared by τ's message and the bound of one sweep.
    residuals: ResidualCache,
}

impl GatedLinear {
    pub(in crate::engine) fn new(nodes: &[Node], y: usize) -> Self {
        let layout = Layout::of(nodes, y);
        GatedLinear {
            members: layout.members(),
            layout,
            residuals: ResidualCache::default(),
        }
    }

    /// Recomputes the sums kept in x's φ from x's means and s's responsibilities (after a start).
    fn refresh_sums(&self, vmp: &mut Vmp) {
        let l = &self.layout;
        let (n, k, q) = (l.n, l.k, l.q);
        let mut phi = std::mem::take(&mut vmp.nodes[l.x].q.phi);
        let (xu, r) = (&vmp.nodes[l.x].q.u, &vmp.nodes[l.s].q.u);
        if xu.len() != n * k * q + k * q * q || r.len() != n * k {
            vmp.nodes[l.x].q.phi = phi;
            return;
        }
        kernels::sums(l, &vmp.nodes[l.y].data, &xu[..n * k * q], r, &mut phi);
        vmp.nodes[l.x].q.phi = phi;
        vmp.changed(l.x);
    }

    /// Whether x holds the block's state (it does from its start on).
    pub(super) fn ready(&self, vmp: &Vmp) -> bool {
        vmp.nodes[self.layout.x].q.phi.len() == self.layout.sums_len()
    }

    /// H[q(s)] + Σ_n Σ_k r_nk ⟨ln π_k⟩ (s's term).
    fn index_term(&self, vmp: &Vmp, sizes: bool) -> f64 {
        let l = &self.layout;
        let ln_pi = l.read(&vmp.nodes, l.s, 0);
        let mut t = 0.0;
        for row in vmp.nodes[l.s].q.u.chunks_exact(l.k) {
            for (&r, &lp) in row.iter().zip(ln_pi) {
                if r > 0.0 {
                    t += if sizes {
                        (r * lp).abs() + (r * r.ln()).abs()
                    } else {
                        r * (lp - r.ln())
                    };
                }
            }
        }
        t
    }

    /// Σ_n Σ_k r_nk (⟨ln N(x_nk | 0, I)⟩ + H[N(m_nk, Σ_k)]) (x's term): per component
    /// N_k (−½ tr Σ_k + ½ q + ½ ln |Σ_k|) − ½ tr Σ_n r_nk m_nk m_nkᵀ.
    fn latent_term(&self, vmp: &Vmp, sizes: bool) -> f64 {
        let l = &self.layout;
        let (n, k, q) = (l.n, l.k, l.q);
        let x = &vmp.nodes[l.x].q;
        let sums = Sums::of(l, &x.phi);
        let x_cov = &x.u[n * k * q..];
        let mut t = 0.0;
        for c in 0..k {
            let sx = &x_cov[c * q * q..(c + 1) * q * q];
            let tr_sx: f64 = (0..q).map(|i| sx[i * q + i]).sum();
            let tr_xx: f64 = (0..q).map(|i| sums.xx[c * q * q + i * q + i]).sum();
            let a = sums.nm[c] * (-0.5 * tr_sx + 0.5 * q as f64 + 0.5 * x.a[c]);
            t += if sizes {
                a.abs() + 0.5 * tr_xx
            } else {
                a - 0.5 * tr_xx
            };
        }
        t
    }

    /// Σ_n Σ_k r_nk ⟨ln N(y_n | W_k x_nk + μ_k, τ⁻¹ I)⟩ (y's term), with Σ_e f(y_e).
    fn data_term(&self, vmp: &Vmp, cache: &Cache, sizes: bool) -> f64 {
        let l = &self.layout;
        let (n, k, q) = (l.n, l.k, l.q);
        let e = l.inputs(&vmp.nodes, cache);
        let x = &vmp.nodes[l.x].q;
        let sums = Sums::of(l, &x.phi);
        let r = &vmp.nodes[l.s].q.u;
        let y = &vmp.nodes[l.y];
        let data = self.residuals.get(l, &y.data, r, &e.mu);
        let sr = kernels::weighted_residuals(l, &e, &data, &x.u[n * k * q..], &sums);
        let own: f64 = y.q.a.iter().sum();
        let mut t = if sizes { own.abs() } else { own };
        for c in 0..k {
            let a = sums.nm[c] * 0.5 * l.d as f64 * (e.ln_tau - LN_2PI);
            let b = 0.5 * e.tau * sr[c];
            t += if sizes { a.abs() + b.abs() } else { a - b };
        }
        t
    }
}

impl QBlock for GatedLinear {
    fn members(&self) -> &[usize] {
        &self.members
    }

    /// q(x, s) at once (Winn (5.20); module docs), scheduled through s or x; q(W) alone when W
    /// is a member (`weights`).
    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError> {
        let l = &self.layout;
        if l.grouped_w && member == l.w {
            return self.update_weights(vmp);
        }
        if member != l.s && member != l.x {
            return Ok(());
        }
        let e = l.inputs(&vmp.nodes, &vmp.cache);
        // x's array is reused (`solve` leaves it untouched when it fails).
        let buffer = std::mem::take(&mut vmp.nodes[l.x].q.u);
        let sq = &mut vmp.nodes[l.s].q;
        let old_index = [take(&mut sq.phi), take(&mut sq.u), take(&mut sq.a)];
        let solved = match kernels::solve(l, &e, &vmp.nodes[l.y].data, buffer, old_index) {
            Ok(s) => s,
            Err((c, buffer, [phi, u, a])) => {
                vmp.nodes[l.x].q.u = buffer;
                let sq = &mut vmp.nodes[l.s].q;
                (sq.phi, sq.u, sq.a) = (phi, u, a);
                return Err(vmp.numerical(
                    l.x,
                    c,
                    "the precision I + ⟨τ⟩⟨WᵀW⟩ of the gated q-block is not positive definite"
                        .into(),
                ));
            }
        };
        let mut sums = std::mem::take(&mut vmp.nodes[l.x].q.phi);
        let (n, k, q) = (l.n, l.k, l.q);
        kernels::sums(
            l,
            &vmp.nodes[l.y].data,
            &solved.x[..n * k * q],
            &solved.r,
            &mut sums,
        );
        let xq = &mut vmp.nodes[l.x].q;
        (xq.u, xq.phi, xq.a) = (solved.x, sums, solved.logdet);
        let sq = &mut vmp.nodes[l.s].q;
        (sq.u, sq.phi, sq.a) = (solved.r, solved.ell, solved.lse);
        vmp.changed(l.s);
        vmp.changed(l.x);
        Ok(())
    }

    /// s: H[q(s)] + ⟨ln p(s | π)⟩; x: Σ r (⟨ln p(x)⟩ + H[q(x | s)]); y: the r-weighted expected
    /// log density of the data (the dot and the sum have none); W, when a member: Winn (2.34)
    /// over its rows (`weights`).
    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        let l = &self.layout;
        if l.grouped_w && member == l.w {
            self.weights_term(vmp, cache, sizes)
        } else if member == l.s {
            self.index_term(vmp, sizes)
        } else if !self.ready(vmp) {
            0.0
        } else if member == l.x {
            self.latent_term(vmp, sizes)
        } else if member == l.y {
            self.data_term(vmp, cache, sizes)
        } else {
            0.0
        }
    }

    /// The derivatives of the block's terms (module docs): to π from s, to W through the dot, to μ
    /// through the sum, to τ from y; from W, when a member, to its own parents (`weights`).
    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        let l = &self.layout;
        if l.grouped_w && member == l.w {
            return self.weights_send(vmp, role, out);
        }
        let Role::Slot(slot) = role else {
            return;
        };
        let (n, k, q, d) = (l.n, l.k, l.q, l.d);
        let sums = Sums::of(l, &vmp.nodes[l.x].q.phi);
        if member == l.s {
            // ∂/∂⟨ln π_k⟩ = Σ_n r_nk (Winn (2.18) for a Categorical child).
            for row in vmp.nodes[l.s].q.u.chunks_exact(k) {
                for (o, r) in out.iter_mut().zip(row) {
                    *o += r;
                }
            }
            return;
        }
        let x_cov = &vmp.nodes[l.x].q.u[n * k * q..];
        let (tau, _) = l.tau(&vmp.nodes);
        let to = |node: usize| matches!(vmp.nodes[member].parents[slot].source, Source::Node(p) if p == node);
        if member == l.f && to(l.w) {
            // To w_kd: [⟨τ⟩ Σ_n r_nk (y_nd − ⟨μ_kd⟩) m_nk, −½⟨τ⟩ Σ_n r_nk ⟨x_nk x_nkᵀ⟩] (Winn
            // (2.47)–(2.49) weighted by r_nk).
            let len = q + q * q;
            let mu = &vmp.nodes[l.mu].q.u;
            for c in 0..k {
                let sx = &sums.sx[c * q..(c + 1) * q];
                let xx = &sums.xx[c * q * q..(c + 1) * q * q];
                let cov = &x_cov[c * q * q..(c + 1) * q * q];
                let second: Vec<f64> = xx
                    .iter()
                    .zip(cov)
                    .map(|(a, b)| -0.5 * tau * (a + sums.nm[c] * b))
                    .collect();
                for j in 0..d {
                    let o = &mut out[(c * d + j) * len..(c * d + j + 1) * len];
                    let tx = &sums.tx[(c * d + j) * q..(c * d + j + 1) * q];
                    let m = mu[2 * (c * d + j)];
                    let (first, rest) = o.split_at_mut(q);
                    for ((o, t), s) in first.iter_mut().zip(tx).zip(sx) {
                        *o += tau * (t - m * s);
                    }
                    for (o, v) in rest.iter_mut().zip(&second) {
                        *o += v;
                    }
                }
            }
        } else if member == l.mean && to(l.mu) {
            // To μ_kd: [⟨τ⟩ (Σ_n r_nk y_nd − ⟨w_kd⟩ᵀ Σ_n r_nk m_nk), −½⟨τ⟩ N_k].
            let wm = l.w_moments(&vmp.nodes, &vmp.cache);
            for c in 0..k {
                let sx = &sums.sx[c * q..(c + 1) * q];
                for j in 0..d {
                    let wj = &wm.w[(c * d + j) * q..(c * d + j + 1) * q];
                    let at = 2 * (c * d + j);
                    out[at] += tau * (sums.tr[j * k + c] - kernels::dot(wj, sx));
                    out[at + 1] += -0.5 * tau * sums.nm[c];
                }
            }
        } else if member == l.y && slot == 1 {
            // To τ: [−½ Σ_k Σ_n r_nk E‖y_n − W_k x_nk − μ_k‖², ½ N D] (Σ_k r_nk = 1).
            let (e, r) = (l.inputs(&vmp.nodes, &vmp.cache), &vmp.nodes[l.s].q.u);
            let data = self.residuals.get(l, &vmp.nodes[l.y].data, r, &e.mu);
            let sr = kernels::weighted_residuals(l, &e, &data, x_cov, &sums);
            out[0] += -0.5 * sr.iter().sum::<f64>();
            out[1] += 0.5 * (n * d) as f64;
        }
    }

    /// s and W (per element, until its first update) from their own starts; x at m = 0, Σ = I
    /// (the first update overwrites both); y, the dot and the sum need none. The sums follow
    /// whichever of s and x starts last.
    fn start(&self, vmp: &mut Vmp, member: usize, rng: &mut Rng) -> Result<(), RunError> {
        let l = &self.layout;
        if l.grouped_w && member == l.w {
            return vmp.start_stochastic(member, rng);
        }
        if member == l.s {
            vmp.start_stochastic(member, rng)?;
        } else if member == l.x {
            let (n, k, q) = (l.n, l.k, l.q);
            let mut u = vec![0.0; n * k * q + k * q * q];
            for c in 0..k {
                for i in 0..q {
                    u[n * k * q + c * q * q + i * q + i] = 1.0;
                }
            }
            let xq = &mut vmp.nodes[l.x].q;
            (xq.u, xq.a) = (u, vec![0.0; k]);
        } else {
            return Ok(());
        }
        self.refresh_sums(vmp);
        Ok(())
    }
}
