//! The softmax q-block: q(W) one Gaussian over all K·D weights of the classes of a multinomial
//! regression `c[N] ~ Categorical(softmax(W @ x[N]))`, W[K] over D, instead of Π_k q(w_k).
//!
//! **Why.** softmax(η) is unchanged when one vector is added to every class's weights, so the
//! data inform only the contrasts w_k − w_0 and the posterior is strongly correlated across
//! classes (the sum Σ_k w_k keeps its prior). A q independent across classes cannot represent
//! that: it narrows even the sum direction (sds 15–32% too small on the 30-point test of
//! `crates/occam/tests/it/softmax.rs`, against 0.3–1.2% for a joint q).
//!
//! **The block** (structured VMP, Winn (5.20), with the messages of Winn (2.18)/(2.49)). The node
//! W (one Gaussian vector per class, possibly repeated over further plates: each group of K
//! consecutive elements read together by one row of `W @ x` is one q) is read only by the
//! matrix–vector product η_n = W x_n with known rows x_n (data), and η only by softmax
//! Categoricals, directly or through sums (an intercept, `W @ x[N] + b`: the sum's moments and
//! messages are Winn (2.41)–(2.49) with η's joint moments, its terms independent in q). With v = (w_0, …, w_{K−1}) ∈ R^{KD}, η_n = B_n v, B_n = I_K ⊗ x_nᵀ. The child's
//! message to η_n is [a_n, H_n] on (⟨η_n⟩, ⟨η_n η_nᵀ⟩) (joint in η's coordinates, Winn (2.18)),
//! so its message to v is [B_nᵀ a_n, B_nᵀ H_n B_n]: block (k, k') of the second part is
//! H_n[k, k'] x_n x_nᵀ — Böhning's fixed curvature A gives A ⊗ x_n x_nᵀ, the exact family
//! (`softmax_quad`) its expected Hessian E[H_n]. With the prior's (block-diagonal, the classes'
//! priors are independent given their parents) natural parameters [φ₁, φ₂] the target is
//! Λ* = −2(φ₂ + Σ_n B_nᵀ H_n B_n) (symmetrised), m* = Λ*⁻¹(φ₁ + Σ_n B_nᵀ a_n).
//!
//! For Böhning's family the messages are constant in q and the target is the optimum (Winn
//! (2.19)); for the exact family they are the gradient of the bound at the current q (Knowles &
//! Minka 2011, eq. (6)) and the target a natural-gradient step that may overshoot, so, as in
//! `noncj`, the bound terms that read W (W's own and the softmax children's) are evaluated after
//! the step and, if they fell, the step is shortened along m(ρ) = m + ρ(m* − m),
//! Λ(ρ) = Λ + ρ(Λ* − Λ) (an ascent direction at ρ = 0; see `noncj`'s module docs) — at most
//! [`HALVINGS`] times, else the old q is kept. The bound never decreases.
//!
//! **State.** Each element of W keeps its marginal q(w_k) = N(m_k, Σ_kk) as its own φ, u, A: all
//! that W's prior term and its messages to its parents read (the prior is a function of each
//! w_k alone). The joint [m, Σ] of each group is kept in η's `phi` (η is deterministic and
//! keeps no natural parameters otherwise) and η's moments are formed from it
//! ([`SoftmaxJoint::fill_logits`]): ⟨η_nk⟩ = m_kᵀx_n, ⟨η_nk η_nk'⟩ = ⟨η_nk⟩⟨η_nk'⟩ + x_nᵀΣ_kk'x_n,
//! with the cross-class covariance the per-class product would drop. η's `a` keeps each group's
//! entropy gap H[q(v)] − Σ_k H[q(w_k)] = ½ ln|Σ| − ½ Σ_k ln|Σ_kk| ≤ 0, which W's bound term adds
//! once to the marginals' terms, Winn (2.34)–(2.36). Restart snapshots carry both (W is the
//! block's member; η, a deterministic node, is snapshotted whole). Before the first update (and
//! after a start) η's kept state is empty and its moments are the product's (`MatVec`).
//!
//! **Cost.** Per sweep N·K²D² multiply-adds to form Σ_n B_nᵀH_nB_n and the same to form η's
//! second moments, and one (KD)³/3 Cholesky per group; memory (KD)² per group. The block is
//! built up to KD = [`MAX_JOINT`] and not for a node declared mean-field
//! ([`Graph::mean_field`](crate::graph::Graph::mean_field)).

mod draw;
mod solve;

pub(super) use draw::JointDraw;

use super::factorised::{factorised_bound, factorised_send};
use super::qblock::QBlock;
use super::*;

/// Step halvings tried before the old q is kept (ρ down to 2⁻²⁰), as `noncj`.
const HALVINGS: usize = 20;

/// The largest K·D given the joint q: (KD)² = 1.05·10⁶ values (8.4 MB) per group and a
/// Cholesky of 3.6·10⁸ multiply-adds per group and sweep.
pub const MAX_JOINT: usize = 1024;

/// A softmax q-block (module docs).
#[derive(Clone, Debug)]
pub(crate) struct SoftmaxJoint {
    /// W.
    node: [usize; 1],
    /// η = W @ x.
    pub(super) eta: usize,
    /// The known rows x (a constant node).
    x: usize,
    /// Classes K and inputs D.
    k: usize,
    d: usize,
    /// Groups of K elements of W (one joint q each).
    pub(super) groups: usize,
    /// The group of W read by each row of η.
    row_group: Vec<u32>,
    /// W and the softmax Categoricals reading η: the nodes whose bound terms read W's q.
    watched: Vec<usize>,
}

/// Whether node `c` is a softmax Categorical (either family) reading its parent in its logits
/// slot, element by element.
fn softmax_child(nodes: &[Node], c: usize, role: Role) -> bool {
    let n = &nodes[c];
    role == Role::Slot(0)
        && n.selectors.is_empty()
        && n.configs == 1
        && n.gated.is_none()
        && n.block.is_none()
        && matches!(
            n.body,
            Body::Stochastic(Dist::CategoricalSoftmax(_) | Dist::CategoricalSoftmaxQuad(_))
        )
}

/// The softmax Categoricals reached from η (node `i`) through `Sum` nodes only (the logits
/// `W @ x + b`: a sum of independent terms, whose moments follow from η's joint ones, Winn
/// (2.41)), each read element by element; `None` if any other node reads them.
fn softmax_leaves(nodes: &[Node], i: usize, out: &mut Vec<usize>) -> Option<()> {
    let node = &nodes[i];
    if node.children.is_empty() {
        return None;
    }
    for &(c, role) in &node.children {
        let cn = &nodes[c];
        let Role::Slot(s) = role else {
            return None;
        };
        if cn.n != node.n || !cn.parents[s].rule.is_identity(cn.n) || cn.parents[s].stack != 1 {
            return None;
        }
        match &cn.body {
            Body::Deterministic(Factor::Sum(_))
                if cn.selectors.is_empty()
                    && cn.configs == 1
                    && !cn.joint_gaussian
                    && cn.gated.is_none() =>
            {
                softmax_leaves(nodes, c, out)?;
            }
            _ if softmax_child(nodes, c, role) => out.push(c),
            _ => return None,
        }
    }
    Some(())
}

/// The block of node `w`, if it has the form of the module docs: a latent, non-MAP Gaussian
/// vector node (no mixture, not declared mean-field) whose only child is a `W @ x` with constant
/// x, read by softmax Categoricals only (directly or through sums: an intercept), each row of the product reading K consecutive elements
/// kK … kK + K − 1 of W, with KD ≤ [`MAX_JOINT`].
pub(super) fn detect(nodes: &[Node], w: usize) -> Option<SoftmaxJoint> {
    let wn = &nodes[w];
    let MomentKind::Gaussian { d } = wn.kind else {
        return None;
    };
    let family = matches!(
        wn.body,
        Body::Stochastic(Dist::Gaussian(_) | Dist::MvGaussian(_) | Dist::GaussianArd(_))
    );
    if !family
        || wn.len != d + d * d
        || wn.map
        || wn.mean_field
        || !wn.observed.is_none()
        || !wn.selectors.is_empty()
        || wn.configs != 1
        || wn.block.is_some()
        || wn.gated.is_some()
        || wn.init.is_some()
    {
        return None;
    }
    let [(eta, Role::Slot(0))] = wn.children.as_slice() else {
        return None;
    };
    let en = &nodes[*eta];
    let Body::Deterministic(Factor::MatVec(mv)) = &en.body else {
        return None;
    };
    let k = mv.rows;
    let (we, xe) = (&en.parents[0], &en.parents[1]);
    let (Source::Node(pw), Source::Node(x)) = (&we.source, &xe.source) else {
        return None;
    };
    let xn = &nodes[*x];
    let ok = *pw == w
        && mv.cols == d
        && k >= 2
        && k * d <= MAX_JOINT
        && we.stack == k
        && xe.stack == 1
        && en.selectors.is_empty()
        && en.configs == 1
        && !en.joint_gaussian
        && en.gated.is_none()
        && en.n > 0
        && matches!(xn.body, Body::Constant)
        && xn.kind == (MomentKind::Gaussian { d })
        && xn.data.len() == xn.n * d
        && wn.n.is_multiple_of(k);
    let mut leaves = Vec::new();
    if !ok || softmax_leaves(nodes, *eta, &mut leaves).is_none() {
        return None;
    }
    let mut row_group = Vec::with_capacity(en.n);
    for e in 0..en.n {
        let base = we.at(e * k);
        if !base.is_multiple_of(k) || (0..k).any(|t| we.at(e * k + t) != base + t) {
            return None;
        }
        row_group.push((base / k) as u32);
    }
    let mut watched = vec![w];
    leaves.sort_unstable();
    leaves.dedup();
    watched.extend(leaves);
    Some(SoftmaxJoint {
        node: [w],
        eta: *eta,
        x: *x,
        k,
        d,
        groups: wn.n / k,
        row_group,
        watched,
    })
}

impl SoftmaxJoint {
    /// K·D, the dimension of one group's joint q.
    fn dim(&self) -> usize {
        self.k * self.d
    }

    /// Row e of x.
    fn row<'a>(&self, vmp: &'a Vmp, e: usize) -> &'a [f64] {
        let at = vmp.nodes[self.eta].parents[1].at(e);
        &vmp.nodes[self.x].data[at * self.d..(at + 1) * self.d]
    }

    /// The length of the kept joint [m, Σ] of every group (η's `phi` once updated).
    pub(super) fn kept_len(&self) -> usize {
        self.groups * (self.dim() + self.dim() * self.dim())
    }

    /// The kept joint [m, Σ] of every group, if the block has been updated since its start.
    fn kept<'a>(&self, vmp: &'a Vmp) -> Option<&'a [f64]> {
        let phi = &vmp.nodes[self.eta].q.phi;
        (phi.len() == self.kept_len() && phi.iter().any(|&v| v != 0.0)).then_some(phi.as_slice())
    }

    /// The terms of the bound that read W's q.
    fn local_bound(&self, vmp: &Vmp) -> f64 {
        super::noncj::watched_bound(vmp, &self.watched)
    }

    /// η's moments (module docs): from the kept joint, or the product's before the first update.
    pub(super) fn fill_logits(&self, vmp: &Vmp, u: &mut [f64]) {
        let node = &vmp.nodes[self.eta];
        let (len, k, j) = (node.len, self.k, self.dim());
        let Some(kept) = self.kept(vmp) else {
            let Body::Deterministic(f) = &node.body else {
                unreachable!("η is a matrix–vector product")
            };
            let mut buf = Vec::new();
            for e in 0..node.n {
                let pa = gather(&vmp.nodes, node, e, &mut buf);
                f.moments(&pa[..node.parents.len()], &mut u[e * len..(e + 1) * len]);
            }
            return;
        };
        let mut sx = vec![0.0; j];
        for e in 0..node.n {
            let g = self.row_group[e] as usize;
            let (m, cov) = kept[g * (j + j * j)..(g + 1) * (j + j * j)].split_at(j);
            solve::logit_moments(
                m,
                cov,
                self.row(vmp, e),
                k,
                &mut sx,
                &mut u[e * len..(e + 1) * len],
            );
        }
    }

    /// Installs the joint [m, Σ] of every group (`joint`, Σ's Cholesky-based quantities formed
    /// here): W's marginals, the kept state and the gaps, then η's moments. `false` (nothing
    /// changed) if a marginal covariance is not positive definite.
    fn install(&self, vmp: &mut Vmp, joint: Vec<f64>, gaps: Vec<f64>) -> Result<(), RunError> {
        let w = self.node[0];
        let (d, j) = (self.d, self.dim());
        let len = d + d * d;
        let mut q = vmp.nodes[w].q.clone();
        for g in 0..self.groups {
            let (m, cov) = joint[g * (j + j * j)..(g + 1) * (j + j * j)].split_at(j);
            for c in 0..self.k {
                let e = g * self.k + c;
                let r = e * len..(e + 1) * len;
                let ok = solve::marginal(
                    m,
                    cov,
                    c,
                    d,
                    &mut q.phi[r.clone()],
                    &mut q.u[r],
                    &mut q.a[e],
                );
                if !ok {
                    return Err(vmp.numerical(
                        w,
                        e,
                        "the marginal covariance of the softmax q-block is not positive definite"
                            .into(),
                    ));
                }
            }
        }
        let node = &mut vmp.nodes[w];
        node.q = q;
        node.lazy = Default::default();
        let eta = &mut vmp.nodes[self.eta];
        (eta.q.phi, eta.q.a) = (joint, gaps);
        vmp.changed(w);
        vmp.refresh_dependents(w);
        Ok(())
    }

    /// The current joint [m, Σ] of every group: the kept one, or the product of the marginals.
    fn current(&self, vmp: &Vmp) -> Vec<f64> {
        let j = self.dim();
        if let Some(kept) = self.kept(vmp) {
            return kept.to_vec();
        }
        let (d, k) = (self.d, self.k);
        let u = &vmp.nodes[self.node[0]].q.u;
        let len = d + d * d;
        let mut out = vec![0.0; self.groups * (j + j * j)];
        for (g, out) in out.chunks_exact_mut(j + j * j).enumerate() {
            let (m, cov) = out.split_at_mut(j);
            for c in 0..k {
                let ue = &u[(g * k + c) * len..(g * k + c + 1) * len];
                m[c * d..(c + 1) * d].copy_from_slice(&ue[..d]);
                for a in 0..d {
                    for b in 0..d {
                        cov[(c * d + a) * j + c * d + b] = ue[d + a * d + b] - ue[a] * ue[b];
                    }
                }
            }
        }
        out
    }
}

impl QBlock for SoftmaxJoint {
    fn members(&self) -> &[usize] {
        &self.node
    }

    /// Every group's joint q at once, by the checked step (module docs).
    fn update(&self, vmp: &mut Vmp, _member: usize) -> Result<(), RunError> {
        let w = self.node[0];
        let (k, d, j) = (self.k, self.d, self.dim());
        let old = self.current(vmp);
        let old_state = (
            vmp.nodes[w].q.clone(),
            vmp.nodes[self.eta].q.phi.clone(),
            vmp.nodes[self.eta].q.a.clone(),
        );
        let before = self.local_bound(vmp);
        // The prior's natural parameters per element: W's update with no messages (Winn (2.19)),
        // W's own q put back.
        let dist = vmp.nodes[w].dist().expect("W is stochastic").clone();
        let none = vec![0.0; vmp.nodes[w].n * vmp.nodes[w].len];
        let saved = vmp.nodes[w].q.clone();
        let prior = vmp.run_update(w, &dist, &none);
        vmp.nodes[w].q = saved;
        let prior = prior?.phi;
        // The target's natural parameters [h, Λ*] per group.
        let messages = vmp.child_messages(self.eta);
        let mut target = solve::prior_natural(&prior, self.groups, k, d);
        let elen = k + k * k;
        for e in 0..vmp.nodes[self.eta].n {
            let g = self.row_group[e] as usize;
            solve::add_row(
                &messages[e * elen..(e + 1) * elen],
                self.row(vmp, e),
                k,
                &mut target[g * (j + j * j)..(g + 1) * (j + j * j)],
            );
        }
        vmp.recycle(messages);
        // Full step: [m*, Σ*] and the gaps, in place of [h, Λ*].
        let mut gaps = vec![0.0; self.groups];
        let mut old_lambda = vec![0.0; self.groups * j * j];
        for g in 0..self.groups {
            let r = g * (j + j * j)..(g + 1) * (j + j * j);
            if !solve::invert_in_place(&mut target[r.clone()], j, &mut gaps[g], k, d) {
                return Err(vmp.numerical(
                    w,
                    g * k,
                    "the precision of the softmax q-block is not positive definite".into(),
                ));
            }
            // The old q's precision, for the path of a shortened step.
            let (_, cov) = old[r].split_at(j);
            if !solve::precision(cov, j, &mut old_lambda[g * j * j..(g + 1) * j * j]) {
                return Err(vmp.numerical(
                    w,
                    g * k,
                    "the covariance of the softmax q-block is not positive definite".into(),
                ));
            }
        }
        let full = target;
        let full_lambda: Vec<f64> = (0..self.groups)
            .flat_map(|g| {
                let (_, cov) = full[g * (j + j * j)..(g + 1) * (j + j * j)].split_at(j);
                let mut l = vec![0.0; j * j];
                let ok = solve::precision(cov, j, &mut l);
                debug_assert!(ok);
                l
            })
            .collect();
        let slack = 64.0 * f64::EPSILON * before.abs();
        let accept = |now: f64| now >= before - slack || !before.is_finite() && now.is_finite();
        if self.install(vmp, full.clone(), gaps).is_ok() && accept(self.local_bound(vmp)) {
            return Ok(());
        }
        let mut rho = 1.0;
        for _ in 0..HALVINGS {
            rho *= 0.5;
            let Some((joint, gaps)) = solve::along(
                &old,
                &full,
                &old_lambda,
                &full_lambda,
                rho,
                self.groups,
                k,
                d,
            ) else {
                continue;
            };
            if self.install(vmp, joint, gaps).is_ok() && accept(self.local_bound(vmp)) {
                return Ok(());
            }
        }
        // None raised the bound: the old q back.
        let node = &mut vmp.nodes[w];
        node.q = old_state.0;
        node.lazy = Default::default();
        let eta = &mut vmp.nodes[self.eta];
        (eta.q.phi, eta.q.a) = (old_state.1, old_state.2);
        vmp.changed(w);
        vmp.refresh_dependents(w);
        Ok(())
    }

    /// W's factorised term (its prior and its marginals' entropies) plus every group's entropy
    /// gap (module docs).
    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        let own = factorised_bound(vmp, cache, member, sizes);
        if self.kept(vmp).is_none() {
            return own;
        }
        let gaps = &vmp.nodes[self.eta].q.a;
        let gap: f64 = gaps[..self.groups].iter().sum();
        own + if sizes { gap.abs() } else { gap }
    }

    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        factorised_send(vmp, member, role, out)
    }

    /// W's own start; the kept joint is cleared, so q starts as the product of the marginals.
    fn start(&self, vmp: &mut Vmp, member: usize, rng: &mut Rng) -> Result<(), RunError> {
        let eta = &mut vmp.nodes[self.eta];
        eta.q.phi.iter_mut().for_each(|v| *v = 0.0);
        eta.q.a.iter_mut().for_each(|v| *v = 0.0);
        vmp.start_stochastic(member, rng)
    }
}

impl Vmp {
    /// The softmax q-block whose logits node is `i`, if any.
    pub(super) fn softmax_joint_of(&self, i: usize) -> Option<&SoftmaxJoint> {
        let node = &self.nodes[i];
        let Body::Deterministic(Factor::MatVec(_)) = node.body else {
            return None;
        };
        let Source::Node(w) = node.parents[0].source else {
            return None;
        };
        match self.block_of(w) {
            Some(Block::SoftmaxJoint(b)) if b.eta == i => Some(b),
            _ => None,
        }
    }

    /// Whether node `node` has a joint q over the K classes of its weights (the softmax q-block,
    /// engine module `softmax_joint`).
    pub fn joint_over_classes(&self, node: NodeId) -> bool {
        matches!(self.block_of(node.0), Some(Block::SoftmaxJoint(_)))
    }

    /// The kept joint q of node `node`'s weights, if it has the softmax q-block and has been
    /// updated: per group of K classes its K·D means, then its (K·D) × (K·D) covariance,
    /// row-major; and per group its entropy gap (module docs: State). What
    /// [`Vmp::set_joint_q`] gives a model compiled for new rows, whose logits (a node of the
    /// rows' plate, where the block keeps them) start empty.
    pub fn joint_q(&self, node: NodeId) -> Option<(Vec<f64>, Vec<f64>)> {
        let Some(Block::SoftmaxJoint(b)) = self.block_of(node.0) else {
            return None;
        };
        let kept = b.kept(self)?;
        let gaps = &self.nodes[b.eta].q.a;
        Some((kept.to_vec(), gaps[..b.groups.min(gaps.len())].to_vec()))
    }

    /// Gives node `node`'s softmax q-block the joint q `joint` and the gaps `gaps`
    /// ([`Vmp::joint_q`] of a model of the same weights): an error if the node has no such block
    /// or the sizes differ. Its marginals (the node's own q) are not changed: set them first
    /// ([`Vmp::set_q_state`]).
    pub fn set_joint_q(
        &mut self,
        node: NodeId,
        joint: &[f64],
        gaps: &[f64],
    ) -> Result<(), StateError> {
        let name = self.nodes[node.0].name.clone();
        let (eta, want, groups) = match self.block_of(node.0) {
            Some(Block::SoftmaxJoint(b)) => (b.eta, b.kept_len(), b.groups),
            _ => (usize::MAX, 0, 0),
        };
        if want == 0 || joint.len() != want || gaps.len() != groups {
            return Err(StateError::JointQ {
                node: name,
                saved: joint.len(),
                model: want,
            });
        }
        if joint.iter().chain(gaps).any(|v| v.is_nan()) {
            return Err(StateError::NaN { node: name });
        }
        let q = &mut self.nodes[eta].q;
        (q.phi, q.a) = (joint.to_vec(), gaps.to_vec());
        self.refresh(eta);
        Ok(())
    }

    /// The joint covariance of node `node`'s weights over its K classes, if it has the softmax
    /// q-block and has been updated: one (K·D) × (K·D) row-major matrix per group of K classes,
    /// entry (kD + a, k'D + b) the covariance of w[k, a] and w[k', b].
    pub fn joint_covariance(&self, node: NodeId) -> Option<Vec<f64>> {
        let Some(Block::SoftmaxJoint(b)) = self.block_of(node.0) else {
            return None;
        };
        let j = b.dim();
        let kept = b.kept(self)?;
        Some(
            kept.chunks_exact(j + j * j)
                .flat_map(|g| g[j..].iter().copied())
                .collect(),
        )
    }
}
