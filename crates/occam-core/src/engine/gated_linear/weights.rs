//! W of a gated block in the grouped form: one covariance per component for the rows of W_k.
//!
//! The block's messages to the rows w_kd of W (Winn (2.47)–(2.49) weighted by r_nk, `block.rs`)
//! are [⟨τ⟩ Σ_n r_nk (y_nd − ⟨μ_kd⟩) m_nk, −½⟨τ⟩ Σ_n r_nk ⟨x_nk x_nkᵀ⟩]: their second part is the
//! same for every row d of component k. When the rows of W_k also share their prior (one group of
//! elements with the same parents per component, e.g. the ARD precisions α shared by every row),
//! Winn (2.19) gives every row of W_k the same precision Λ_k = −2Φ₂_k, so q(w_kd) = N(m_kd, Σ_k)
//! with one Σ_k = Λ_k⁻¹ per component (the Σ_w^(m) of Winn (3.25), as in Tipping & Bishop's BPCA).
//! W then keeps, once its first update has run, φ = [φ₁ per row (K·D·q), Φ₂_k (K·q²)],
//! u = [m_kd per row (K·D·q), Σ_k (K·q²)] and A per row (K·D): O(K·D·q) values instead of
//! O(K·D·q²), one q × q factorisation per component, the means m_kd = Σ_k φ₁_kd one product per
//! component, A_kd = ½ φ₁_kd·m_kd − ½ ln |Λ_k| + ½ q ln 2π (the Gaussian log-partition).
//!
//! Its bound term is Winn (2.34) summed over the rows: the prior part from the per-group sums
//! Σ_d [m_kd, m_kd m_kdᵀ + Σ_k] = [Σ_d m_kd, ⟨W_kᵀW_k⟩] (as the factorised path's group sums), and
//! the own part Σ_d (A_kd − φ_kd·u_kd) = D·H[N(0, Σ_k)] = D (½ q (1 + ln 2π) − ½ ln |Λ_k|) per
//! component; its messages to its parents are the family's, one per group from the same sums.
//! Before its first update (a start given per row) W keeps the per-element layout, which every
//! function here also reads.

use super::super::factorised::{factorised_bound, factorised_send};
use super::kernels::{dot, gemm, Sums};
use super::*;
use crate::engine::bound::prior_part;
use crate::linalg::{chol_inverse_into, chol_log_det, cholesky_into};
use crate::special::LN_2PI;
use faer::{Accum, MatMut, MatRef};

/// Whether W of the block `l` may take the grouped form (module docs): a latent, non-MAP Gaussian
/// vector node without selectors whose only child is the block's dot, whose elements are grouped
/// by their parents with every row of a component in one group, and D ≥ 2.
pub(super) fn groupable(nodes: &[Node], l: &Layout) -> bool {
    let Some(w) = nodes.get(l.w) else {
        return false;
    };
    let family = matches!(
        w.body,
        Body::Stochastic(Dist::GaussianArd(_) | Dist::MvGaussian(_))
    );
    let (k, d) = (l.k, l.d);
    // D ≥ 2: with one row per component the two layouts have the same lengths (and nothing
    // to share).
    family
        && d >= 2
        && w.kind == (MomentKind::Gaussian { d: l.q })
        && w.n == k * d
        && w.observed.is_none()
        && !w.map
        && w.selectors.is_empty()
        && w.configs == 1
        && !w.config_only
        && w.children.len() == 1
        && w.children[0].0 == l.f
        && w.groups.as_ref().is_some_and(|(group, _)| {
            group.len() == k * d && (0..k * d).all(|e| group[e] == group[(e / d.max(1)) * d])
        })
}

/// Whether W's state has the grouped form (module docs).
pub(super) fn is_grouped(node: &Node, l: &Layout) -> bool {
    is_grouped_state(&node.q, l)
}

/// Whether `q` has W's grouped layout (module docs).
pub(super) fn is_grouped_state(q: &NodeState, l: &Layout) -> bool {
    let len = l.k * l.d * l.q + l.k * l.q * l.q;
    q.u.len() == len && q.phi.len() == len && q.a.len() == l.k * l.d
}

/// ⟨W_k⟩ (K × D × q) and ⟨W_kᵀW_k⟩ (K × q × q) from W's state in either layout: grouped,
/// ⟨W_k⟩ᵀ⟨W_k⟩ + D Σ_k (one product per component); per element, Σ_d ⟨w_kd w_kdᵀ⟩.
pub(super) fn moments_of(node: &Node, l: &Layout) -> WMoments {
    let (k, q, d) = (l.k, l.q, l.d);
    if is_grouped(node, l) {
        let (means, covs) = node.q.u.split_at(k * d * q);
        let mut wtw = vec![0.0; k * q * q];
        for c in 0..k {
            let out = &mut wtw[c * q * q..(c + 1) * q * q];
            let m = MatRef::from_row_major_slice(&means[c * d * q..(c + 1) * d * q], d, q);
            gemm(
                MatMut::from_row_major_slice_mut(out, q, q),
                Accum::Replace,
                m.transpose(),
                m,
            );
            for (o, s) in out.iter_mut().zip(&covs[c * q * q..(c + 1) * q * q]) {
                *o += d as f64 * s;
            }
        }
        return WMoments {
            w: means.to_vec(),
            wtw,
        };
    }
    let len = q + q * q;
    let wu = &node.q.u;
    let mut w = vec![0.0; k * d * q];
    let mut wtw = vec![0.0; k * q * q];
    for c in 0..k {
        for j in 0..d {
            let row = &wu[(c * d + j) * len..(c * d + j + 1) * len];
            w[(c * d + j) * q..(c * d + j + 1) * q].copy_from_slice(&row[..q]);
            for (o, v) in wtw[c * q * q..(c + 1) * q * q].iter_mut().zip(&row[q..]) {
                *o += v;
            }
        }
    }
    WMoments { w, wtw }
}

/// The expected prior ⟨φ_p⟩, ⟨A_p⟩ of each of W's groups (`elements::group_priors`).
fn priors<'a>(cache: &Cache, nodes: &'a [Node], w: usize) -> Priors<'a> {
    struct P<'a, 'c>(&'c Cache, &'a [Node], usize);
    impl<'a> DistVisitor for P<'a, '_> {
        type Output = Option<Priors<'a>>;
        fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
            group_priors(d, self.0, self.1, self.2)
        }
    }
    nodes[w]
        .dist()
        .and_then(|d| d.visit(P(cache, nodes, w)))
        .expect("a grouped W is a stochastic node with groups (`groupable`)")
}

/// Per group g of W: the summed moments S_g = Σ_{rows in g} [m_kd, m_kd m_kdᵀ + Σ_k] and the
/// number of rows, from the grouped state and ⟨W_kᵀW_k⟩.
fn group_sums(node: &Node, l: &Layout, wm: &WMoments) -> (Vec<f64>, Vec<f64>) {
    let (k, q, d) = (l.k, l.q, l.d);
    let (group, reps) = node.groups.as_ref().expect("checked by `groupable`");
    let len = q + q * q;
    let mut sums = vec![0.0; reps.len() * len];
    let mut counts = vec![0.0; reps.len()];
    for c in 0..k {
        let g = group[c * d] as usize;
        let s = &mut sums[g * len..(g + 1) * len];
        for row in wm.w[c * d * q..(c + 1) * d * q].chunks_exact(q) {
            crate::kernels::add_into(&mut s[..q], row);
        }
        crate::kernels::add_into(&mut s[q..], &wm.wtw[c * q * q..(c + 1) * q * q]);
        counts[g] += d as f64;
    }
    (sums, counts)
}

/// Where the messages to W's rows come from.
enum Incoming<'a> {
    /// The block's sums on this replica: [⟨τ⟩ Σ_n r_nk (y_nd − ⟨μ_kd⟩) m_nk, −½⟨τ⟩ Σ_n r_nk
    /// ⟨x_nk x_nkᵀ⟩] (Winn (2.47)–(2.49) weighted by r_nk, as `block.rs` sends them).
    Sums,
    /// Those messages per row, [q, q²] each, already summed — a sharded fit's global update
    /// (`shard`: every shard's messages from its own rows, summed in shard order). The second
    /// part is the same for every row of a component: each shard sends the one vector of
    /// component k to all D rows and the sums over shards add the same numbers in the same order,
    /// so row (k, 0) holds component k's.
    Summed(&'a [f64]),
}

/// W's grouped q (see [`GatedLinear::update_weights`]) from the messages `incoming` and W's
/// priors, in `old`'s arrays when they have the grouped form; `Err((first row of component k,
/// old))` when component k's precision is not positive definite (`old` untouched).
fn solve(
    l: &Layout,
    cache: &Cache,
    nodes: &[Node],
    incoming: Incoming<'_>,
    old: NodeState,
) -> Result<NodeState, (usize, NodeState)> {
    let (k, q, d) = (l.k, l.q, l.d);
    let sums = Sums::of(l, &nodes[l.x].q.phi);
    let x_cov = &nodes[l.x].q.u[l.n * k * q..];
    let (tau, _) = l.tau(nodes);
    let prior = priors(cache, nodes, l.w);
    let len = q + q * q;
    let mu = &nodes[l.mu].q.u;
    // The message's second part for component c (entry i of q²) and first part for row (c, j).
    let second = |c: usize, i: usize| match incoming {
        Incoming::Sums => -0.5 * tau * (sums.xx[c * q * q + i] + sums.nm[c] * x_cov[c * q * q + i]),
        Incoming::Summed(m) => m[c * d * len + q + i],
    };
    let first = |c: usize, j: usize, i: usize| match incoming {
        Incoming::Sums => {
            let m = mu[2 * (c * d + j)];
            tau * (sums.tx[(c * d + j) * q + i] - m * sums.sx[c * q + i])
        }
        Incoming::Summed(m) => m[(c * d + j) * len + i],
    };
    let (group, _) = nodes[l.w].groups.as_ref().expect("checked by `groupable`");
    let prior_of = |c: usize| prior.row(group[c * d] as usize, len).0;
    // Φ₂_k, Σ_k and ½ ln |Λ_k| first, so that a failure leaves `old` untouched.
    let mut phi2 = vec![0.0; k * q * q];
    let mut covs = vec![0.0; k * q * q];
    let mut half_logdet = vec![0.0; k];
    let (mut chol, mut work) = (vec![0.0; q * q], vec![0.0; q * q]);
    for c in 0..k {
        let p2 = &mut phi2[c * q * q..(c + 1) * q * q];
        for (i, (o, pv)) in p2.iter_mut().zip(&prior_of(c)[q..]).enumerate() {
            *o = pv + second(c, i);
        }
        if !cholesky_into(p2, -2.0, q, &mut chol) {
            return Err((c * d, old));
        }
        chol_inverse_into(&chol, q, &mut covs[c * q * q..(c + 1) * q * q], &mut work);
        half_logdet[c] = 0.5 * chol_log_det(&chol, q);
    }
    let NodeState {
        mut phi,
        mut u,
        mut a,
    } = if is_grouped_state(&old, l) {
        old
    } else {
        NodeState::default()
    };
    let total = k * d * q + k * q * q;
    phi.resize(total, 0.0);
    u.resize(total, 0.0);
    a.resize(k * d, 0.0);
    let (phi1, phi2_out) = phi.split_at_mut(k * d * q);
    let (means, covs_out) = u.split_at_mut(k * d * q);
    phi2_out.copy_from_slice(&phi2);
    covs_out.copy_from_slice(&covs);
    for c in 0..k {
        let p1 = &prior_of(c)[..q];
        for j in 0..d {
            let at = (c * d + j) * q;
            for (i, (o, pv)) in phi1[at..at + q].iter_mut().zip(p1).enumerate() {
                *o = pv + first(c, j, i);
            }
        }
        let mc = &mut means[c * d * q..(c + 1) * d * q];
        gemm(
            MatMut::from_row_major_slice_mut(mc, d, q),
            Accum::Replace,
            MatRef::from_row_major_slice(&phi1[c * d * q..(c + 1) * d * q], d, q),
            MatRef::from_row_major_slice(&covs[c * q * q..(c + 1) * q * q], q, q),
        );
        for j in 0..d {
            let at = (c * d + j) * q;
            let quad = dot(&phi1[at..at + q], &mc[j * q..(j + 1) * q]);
            a[c * d + j] = 0.5 * quad - half_logdet[c] + 0.5 * q as f64 * LN_2PI;
        }
    }
    Ok(NodeState { phi, u, a })
}

impl GatedLinear {
    /// Winn (2.19) for W in the grouped form (module docs): per component k, Φ₂_k = ⟨φ_p⟩₂ −
    /// ½⟨τ⟩ Σ_n r_nk ⟨x_nk x_nkᵀ⟩ and φ₁_kd = ⟨φ_p⟩₁ + ⟨τ⟩ Σ_n r_nk (y_nd − ⟨μ_kd⟩) m_nk, one
    /// Cholesky factor of Λ_k = −2Φ₂_k for Σ_k and ln |Λ_k|, then the means Φ₁_k Σ_k (one product).
    pub(super) fn update_weights(&self, vmp: &mut Vmp) -> Result<(), RunError> {
        let l = &self.layout;
        if !self.ready(vmp) {
            return Err(RunError::Schedule(format!(
                "`{}` is updated before its gated q-block has started",
                vmp.nodes[l.w].name
            )));
        }
        // A sharded fit's global update (`shard`): the messages of every shard's rows, summed,
        // in place of this replica's sums (W's only child is the block's dot: `groupable`).
        let summed = vmp
            .outside
            .as_ref()
            .is_some_and(|o| o.target == l.w)
            .then(|| vmp.child_messages(l.w));
        let incoming = match &summed {
            Some(m) => Incoming::Summed(m),
            None => Incoming::Sums,
        };
        // W's arrays are reused when they have the grouped form (every value is overwritten).
        let old = std::mem::take(&mut vmp.nodes[l.w].q);
        match solve(l, &vmp.cache, &vmp.nodes, incoming, old) {
            Ok(state) => {
                let node = &mut vmp.nodes[l.w];
                node.q = state;
                node.lazy = Default::default();
                vmp.changed(l.w);
                vmp.refresh_dependents(l.w);
                Ok(())
            }
            Err((row, old)) => {
                vmp.nodes[l.w].q = old;
                Err(vmp.numerical(
                    l.w,
                    row,
                    "the precision of the rows of W_k in the gated q-block is not positive definite"
                        .into(),
                ))
            }
        }
    }

    /// W's bound term (module docs); per element when W is not grouped yet.
    pub(super) fn weights_term(&self, vmp: &Vmp, cache: &Cache, sizes: bool) -> f64 {
        let l = &self.layout;
        let node = &vmp.nodes[l.w];
        if !is_grouped(node, l) {
            return factorised_bound(vmp, cache, l.w, sizes);
        }
        let (k, q, d) = (l.k, l.q, l.d);
        let wm = l.w_moments(&vmp.nodes, cache);
        let priors = priors(cache, &vmp.nodes, l.w);
        let (s, counts) = group_sums(node, l, &wm);
        let len = s.len() / counts.len().max(1);
        let prior = prior_part(|g| priors.row(g, len), &s, &counts, sizes);
        let phi2 = &node.q.phi[k * d * q..];
        let mut chol = vec![0.0; q * q];
        let mut own = 0.0;
        for c in 0..k {
            if !cholesky_into(&phi2[c * q * q..(c + 1) * q * q], -2.0, q, &mut chol) {
                return f64::NAN;
            }
            own += d as f64 * (0.5 * q as f64 * (1.0 + LN_2PI) - 0.5 * chol_log_det(&chol, q));
        }
        prior + if sizes { own.abs() } else { own }
    }

    /// W's messages to the parent it reads in slot `slot` — Winn (2.18), one per group from the
    /// summed moments (exact by multilinearity); per element when W is not grouped yet.
    pub(super) fn weights_send(&self, vmp: &Vmp, role: Role, out: &mut [f64]) {
        let l = &self.layout;
        let node = &vmp.nodes[l.w];
        let Role::Slot(slot) = role else {
            return;
        };
        if !is_grouped(node, l) {
            return factorised_send(vmp, l.w, role, out);
        }
        let wm = l.w_moments(&vmp.nodes, &vmp.cache);
        let (stats, totals) = group_sums(node, l, &wm);
        struct Send<'a> {
            nodes: &'a [Node],
            node: &'a Node,
            slot: usize,
            stats: &'a [f64],
            totals: &'a [f64],
            out: &'a mut [f64],
        }
        impl DistVisitor for Send<'_> {
            type Output = ();
            fn visit<D: ExpFamily>(self, d: &D) {
                let (c, edge) = (self.node, &self.node.parents[self.slot]);
                let (_, reps) = c.groups.as_ref().expect("checked by `groupable`");
                let mut m = vec![0.0; edge.stack * edge.plen];
                let mut buf = Vec::new();
                for (g, &rep) in reps.iter().enumerate() {
                    if self.totals[g] <= 0.0 {
                        continue;
                    }
                    let pa = gather(self.nodes, c, rep as usize, &mut buf);
                    d.message_to(
                        self.slot,
                        &self.stats[g * c.len..(g + 1) * c.len],
                        self.totals[g],
                        &pa[..c.parents.len()],
                        &mut m,
                    );
                    edge.scatter(rep as usize, &m, self.out);
                }
            }
        }
        let dist = node.dist().expect("checked by `groupable`");
        dist.visit(Send {
            nodes: &vmp.nodes,
            node,
            slot,
            stats: &stats,
            totals: &totals,
            out,
        });
    }
}

impl Vmp {
    /// Whether node i is a gated block's W in the grouped form (module docs of `weights`).
    pub(in crate::engine) fn gated_grouped_w(&self, i: usize) -> bool {
        match self.block_of(i) {
            Some(Block::Gated(b)) => b.layout.w == i && is_grouped(&self.nodes[i], &b.layout),
            _ => false,
        }
    }
}

impl Vmp {
    /// Whether a saved state with these lengths of φ, u and A fits node i as a gated block's W:
    /// in the grouped form, or per element (a fresh model holds W per element until its first
    /// update, and a snapshot taken then is per element); `None` when node i is no such W.
    pub(in crate::engine) fn gated_w_state_fits(&self, i: usize, lens: [usize; 3]) -> Option<bool> {
        match self.block_of(i) {
            Some(Block::Gated(b)) if b.layout.grouped_w && b.layout.w == i => {
                let l = &b.layout;
                let grouped = l.k * l.d * l.q + l.k * l.q * l.q;
                let per_element = l.k * l.d * (l.q + l.q * l.q);
                Some(
                    lens == [grouped, grouped, l.k * l.d]
                        || lens == [per_element, per_element, l.k * l.d],
                )
            }
            _ => None,
        }
    }
}

/// W's per-element moments [m_kd, m_kd m_kdᵀ + Σ_k] and natural parameters [φ₁_kd, Φ₂_k] from
/// the grouped form, for readers.
pub(super) fn dense(node: &Node, l: &Layout) -> (Vec<f64>, Vec<f64>) {
    let (k, q, d) = (l.k, l.q, l.d);
    let len = q + q * q;
    let (means, covs) = node.q.u.split_at(k * d * q);
    let (phi1, phi2) = node.q.phi.split_at(k * d * q);
    let mut u = Vec::with_capacity(k * d * len);
    let mut phi = Vec::with_capacity(k * d * len);
    for c in 0..k {
        let cov = &covs[c * q * q..(c + 1) * q * q];
        for j in 0..d {
            let m = &means[(c * d + j) * q..(c * d + j + 1) * q];
            u.extend_from_slice(m);
            for a in 0..q {
                u.extend((0..q).map(|b| m[a] * m[b] + cov[a * q + b]));
            }
            phi.extend_from_slice(&phi1[(c * d + j) * q..(c * d + j + 1) * q]);
            phi.extend_from_slice(&phi2[c * q * q..(c + 1) * q * q]);
        }
    }
    (u, phi)
}
