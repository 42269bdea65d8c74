//! A gated linear-Gaussian q-block: q(x_n, s_n) joint over a mixture index s_n and the latent
//! vectors x_nk it gates (a mixture of Bayesian PCA, Winn §3.3, (3.10)–(3.30)).
//!
//! The model (declared by [`Graph::gated_q`]): s_n ~ Categorical(π), x_nk ~ N(0, I_q) and, given
//! s_n = k, y_n ~ N(W_k x_nk + μ_k, τ⁻¹ I_D), with W[K, D] (rows w_kd ∈ ℝ^q), μ[K, D] and τ
//! outside the block (any conjugate priors: the mixture of Bayesian PCA's ARD W with α shared by
//! every component, Gaussian μ, Gamma τ). The gate cannot be a mean-field gate of a dot product
//! of two latents: q keeps x_n joint with s_n in the "pick" form of Winn §2.2.3,
//! q(x_n, s_n = k) = r_nk N(x_nk | m_nk, Σ_k). Structured VMP (Winn (5.20)) gives (Winn
//! (3.20)–(3.21), (3.29)–(3.30)):
//!
//! - Σ_k = (I + ⟨τ⟩⟨W_kᵀW_k⟩)⁻¹, one per component, with ⟨W_kᵀW_k⟩ = Σ_d ⟨w_kd w_kdᵀ⟩;
//! - m_nk = ⟨τ⟩ Σ_k p_nk with the projection p_nk = ⟨W_k⟩ᵀ(y_n − ⟨μ_k⟩);
//! - r_nk ∝ exp ℓ_nk, ℓ_nk = ⟨ln π_k⟩ + ⟨ln p(y_n | x_nk, k)⟩ + ⟨ln p(x_nk)⟩ + H[N(m_nk, Σ_k)].
//!
//! Every other factor reads q(x, s) through the responsibility-weighted sums of `kernels::Sums`
//! (N_k, Σ r m, Σ r m mᵀ, Σ r y mᵀ, Σ r y), kept in x's store. Since E_q[1(s_n = k) g(x_nk)] =
//! r_nk E[g(x_nk) | k], the messages to W, μ and τ are the linear-Gaussian messages (Winn
//! (2.47)–(2.49)) weighted by r_nk, and the block's bound terms are H[q(s)] + Σ r_nk H[N(m_nk, Σ_k)]
//! plus the r-weighted expected log densities (`block.rs`).
//!
//! Storage: s keeps u = r, φ = ℓ and A = ln Σ_k exp ℓ_nk (a Categorical's own state); x keeps
//! u = [m_nk (N·K·q), Σ_k (K·q²)], A = [ln |Σ_k|] (K) and the sums in its φ: O(N·K·q) instead of
//! O(N·K·q²). The dot and sum nodes keep no moments (as the linear kernel's dot node).

use super::*;
use crate::network::GatedRole;

pub(super) mod block;
mod dense;
mod kernels;
mod residual;
mod rows;
mod start;
#[cfg(test)]
mod tests;
mod weights;

pub(crate) use block::GatedLinear;

/// The nodes and sizes of one gated block (all indices into `Vmp::nodes`).
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub s: usize,
    pub x: usize,
    pub f: usize,
    pub mean: usize,
    pub y: usize,
    /// W (a node: slot `w_slot` of the dot).
    pub w: usize,
    /// μ (a node: slot `mu_slot` of the sum).
    pub mu: usize,
    /// N points, K components, q latent dimensions, D data dimensions.
    pub n: usize,
    pub k: usize,
    pub q: usize,
    pub d: usize,
    /// Whether W is a member of the block, kept with one covariance per component (`weights`).
    pub grouped_w: bool,
}

impl Layout {
    /// The block's nodes from its data node `y` (roles set by [`Graph::gated_q`]).
    pub(super) fn of(nodes: &[Node], y: usize) -> Layout {
        let node = |e: &Edge| match e.source {
            Source::Node(p) => Some(p),
            Source::Const(_) => None,
        };
        let mean = node(&nodes[y].parents[0]).expect("checked by `gated_q`");
        let s = nodes[y].selectors[0].node;
        let f = nodes[mean]
            .parents
            .iter()
            .filter_map(node)
            .find(|&p| nodes[p].gated == Some(GatedRole::Product))
            .expect("checked by `gated_q`");
        let x = nodes[f]
            .parents
            .iter()
            .filter_map(node)
            .find(|&p| nodes[p].gated == Some(GatedRole::Latent))
            .expect("checked by `gated_q`");
        let other = |of: usize, not: usize| {
            nodes[of]
                .parents
                .iter()
                .find(|e| node(e) != Some(not))
                .and_then(node)
        };
        let q = match nodes[x].kind {
            MomentKind::Gaussian { d } => d,
            _ => 0,
        };
        let (n, k) = (nodes[s].n, nodes[s].len);
        let mut l = Layout {
            s,
            x,
            f,
            mean,
            y,
            w: other(f, x).unwrap_or(usize::MAX),
            mu: other(mean, f).unwrap_or(usize::MAX),
            n,
            k,
            q,
            d: nodes[y].n / n.max(1),
            grouped_w: false,
        };
        l.grouped_w = weights::groupable(nodes, &l);
        l
    }

    /// The block's members, in node order.
    pub(super) fn members(&self) -> Vec<usize> {
        let mut m = vec![self.s, self.x, self.f, self.mean, self.y];
        if self.grouped_w {
            m.push(self.w);
        }
        m.sort_unstable();
        m
    }

    /// Length of the sums kept in x's φ (see `kernels::Sums`).
    pub(super) fn sums_len(&self) -> usize {
        let (k, q, d) = (self.k, self.q, self.d);
        k + k * q + k * q * q + k * d * q + d * k
    }
}

/// Checks every gated block (module docs): plates [N], [N, K], [N, K, D], [N, K, D], [N, D] for s,
/// x, the dot, the sum and y (in that order, read element by element), W[K, D] and μ[K, D] latent
/// or observed nodes, one precision, one prior of s, x's prior N(0, I) and every y observed.
pub(super) fn check(nodes: &[Node]) -> Result<(), BuildError> {
    for y in (0..nodes.len()).filter(|&i| nodes[i].gated == Some(GatedRole::Data)) {
        let l = Layout::of(nodes, y);
        let bad = |what: &str| BuildError::Shape {
            node: nodes[y].name.clone(),
            what: format!("in the gated q-block of `{}`: {what}", nodes[l.x].name),
        };
        let (n, k, q, d) = (l.n, l.k, l.q, l.d);
        if l.w == usize::MAX || l.mu == usize::MAX {
            return Err(bad("W and the offsets μ must be nodes"));
        }
        let (fw, fx) = slots(&nodes[l.f], l.x);
        let (mm, mf) = slots(&nodes[l.mean], l.f);
        if nodes[l.x].n != n * k
            || nodes[l.f].n != n * k * d
            || nodes[l.mean].n != n * k * d
            || nodes[y].n != n * d
            || nodes[l.w].n != k * d
            || nodes[l.mu].n != k * d
            || nodes[l.w].kind != (MomentKind::Gaussian { d: q })
            || nodes[l.mu].kind != (MomentKind::Gaussian { d: 1 })
            || nodes[y].configs != k
        {
            return Err(bad(
                "the sizes are not s[N], x[N, K], W[K, D], μ[K, D], y[N, D]",
            ));
        }
        if [fw, fx, mf, mm].iter().any(|&s| s > 1) {
            return Err(bad(
                "the plates must be read element by element in the order N, K, D",
            ));
        }
        let (f, mean) = (&nodes[l.f], &nodes[l.mean]);
        let indexed = by_strides(nodes, &l)
            || (0..n * k * d).all(|e| {
                let (i, c, j) = (e / (k * d), (e / d) % k, e % d);
                f.parents[fx].at(e) == i * k + c
                    && f.parents[fw].at(e) == c * d + j
                    && mean.parents[mf].at(e) == e
                    && mean.parents[mm].at(e) == c * d + j
                    && nodes[y].parents[0].at((i * d + j) * k + c) == e
                    && nodes[y].selectors[0].at(i * d + j) == i
            });
        if !indexed {
            return Err(bad(
                "the plates must be read element by element in the order N, K, D",
            ));
        }
        let broadcast = |node: usize, slot: usize| {
            let e = &nodes[node].parents[slot];
            (e.rule.is_broadcast()
                || (0..nodes[node].n * nodes[node].configs.max(1)).all(|x| e.at(x) == 0))
                && match e.source {
                    Source::Node(p) => nodes[p].n == 1,
                    Source::Const(_) => true,
                }
        };
        if !broadcast(y, 1) || !broadcast(l.s, 0) {
            return Err(bad(
                "one precision τ and one prior of the index, shared by every point",
            ));
        }
        if !nodes[y].observed.is_all() {
            return Err(bad("every data value must be observed"));
        }
        if !nodes[l.x].observed.is_none() || nodes[l.x].map || nodes[l.s].map {
            return Err(bad(
                "the index and the latent node must be latent and not MAP",
            ));
        }
        if !standard_prior(nodes, l.x, q) {
            return Err(bad("the latent node's prior must be N(0, I)"));
        }
    }
    Ok(())
}

/// Whether the block's plates are read element by element in the order N, K, D (as `check` asks)
/// by the index rules' strides alone, O(1) in N, K and D (`IndexRule::reads_as`): a compile, and
/// so every candidate of an order search, paid N·K·D look-ups for this before. `false` leaves the
/// answer to the element-by-element check.
pub(super) fn by_strides(nodes: &[Node], l: &Layout) -> bool {
    let (n, k, d) = (l.n, l.k, l.d);
    let ((fw, fx), (mm, mf)) = (slots(&nodes[l.f], l.x), slots(&nodes[l.mean], l.f));
    let (f, mean, y) = (&nodes[l.f], &nodes[l.mean], &nodes[l.y]);
    let reads =
        |e: Option<&Edge>, axes: &[(usize, usize)]| e.is_some_and(|e| e.rule.reads_as(axes));
    // Over (N, K, D): x reads [i, c], W and μ read [c, j], the sum reads the dot's element; over
    // (N, D, K): y reads the sum's [i, c, j]; over (N, D): the index reads [i].
    reads(f.parents.get(fx), &[(n, k), (k, 1), (d, 0)])
        && reads(f.parents.get(fw), &[(n, 0), (k, d), (d, 1)])
        && reads(mean.parents.get(mf), &[(n, k * d), (k, d), (d, 1)])
        && reads(mean.parents.get(mm), &[(n, 0), (k, d), (d, 1)])
        && reads(y.parents.first(), &[(n, k * d), (d, 1), (k, d)])
        && y.selectors
            .first()
            .is_some_and(|s| s.rule.reads_as(&[(n, 1), (d, 0)]))
}

/// (slot of the other parent, slot of `member`) of a two-slot node.
fn slots(node: &Node, member: usize) -> (usize, usize) {
    let at = node
        .parents
        .iter()
        .position(|e| matches!(e.source, Source::Node(p) if p == member))
        .unwrap_or(usize::MAX);
    (if at == 0 { 1 } else { 0 }, at)
}

/// Whether node x's prior is N(0, I_q) at every element: constant parents whose expected prior
/// natural parameters are [0, −½ I].
fn standard_prior(nodes: &[Node], x: usize, q: usize) -> bool {
    let node = &nodes[x];
    let Some(dist) = node.dist() else {
        return false;
    };
    if node
        .parents
        .iter()
        .any(|e| !matches!(e.source, Source::Const(_)))
    {
        return false;
    }
    let mut buf = Vec::new();
    let pa = gather(nodes, node, 0, &mut buf);
    let mut phi = vec![0.0; node.len];
    struct Prior<'a>(&'a [&'a [f64]], &'a mut [f64]);
    impl DistVisitor for Prior<'_> {
        type Output = ();
        fn visit<D: ExpFamily>(self, d: &D) {
            d.prior(self.0, self.1);
        }
    }
    dist.visit(Prior(&pa[..node.parents.len()], &mut phi));
    (0..q).all(|i| phi[i] == 0.0)
        && (0..q * q).all(|c| phi[q + c] == if c / q == c % q { -0.5 } else { 0.0 })
}

/// The parents' expectations a block update and bound read.
pub(super) struct Inputs {
    /// ⟨W_k⟩ and ⟨W_kᵀW_k⟩.
    pub wm: Arc<WMoments>,
    /// ⟨μ_k⟩, K × D.
    pub mu: Vec<f64>,
    /// Σ_d Var μ_kd = Σ_d (⟨μ_kd²⟩ − ⟨μ_kd⟩²), length K.
    pub mu_var: Vec<f64>,
    /// ⟨ln π_k⟩, length K.
    pub ln_pi: Vec<f64>,
    /// ⟨τ⟩ and ⟨ln τ⟩.
    pub tau: f64,
    pub ln_tau: f64,
}

/// The expectations of W a block update and bound read, formed from W's per-row moments.
#[derive(Debug)]
pub(crate) struct WMoments {
    /// ⟨W_k⟩, K × D × q.
    pub w: Vec<f64>,
    /// ⟨W_kᵀW_k⟩ = Σ_d ⟨w_kd w_kdᵀ⟩, K × q × q.
    pub wtw: Vec<f64>,
}

impl Layout {
    /// The moments of slot `slot` of node `node`, element 0.
    fn read<'a>(&self, nodes: &'a [Node], node: usize, slot: usize) -> &'a [f64] {
        let e = &nodes[node].parents[slot];
        match &e.source {
            Source::Node(p) => &nodes[*p].q.u[..e.plen],
            Source::Const(m) => &m[..e.plen],
        }
    }

    /// ⟨τ⟩ and ⟨ln τ⟩.
    pub(super) fn tau(&self, nodes: &[Node]) -> (f64, f64) {
        let tau = self.read(nodes, self.y, 1);
        (tau[0], tau[1])
    }

    /// ⟨W_k⟩ and ⟨W_kᵀW_k⟩ from W's state (`weights::moments_of`), kept in the cache until W
    /// changes: a sweep's block update, τ's message and the bound read them with W updated once
    /// in between.
    pub(super) fn w_moments(&self, nodes: &[Node], cache: &Cache) -> Arc<WMoments> {
        super::cached::cached(
            cache,
            self.w,
            |e| &mut e.gated_w,
            || Arc::new(weights::moments_of(&nodes[self.w], self)),
        )
    }

    /// The parents' expectations (see [`Inputs`]).
    pub(super) fn inputs(&self, nodes: &[Node], cache: &Cache) -> Inputs {
        let (k, d) = (self.k, self.d);
        let wm = self.w_moments(nodes, cache);
        let mu_u = &nodes[self.mu].q.u;
        let mu: Vec<f64> = (0..k * d).map(|e| mu_u[2 * e]).collect();
        let mu_var = (0..k)
            .map(|c| {
                (0..d)
                    .map(|j| {
                        let e = c * d + j;
                        mu_u[2 * e + 1] - mu_u[2 * e] * mu_u[2 * e]
                    })
                    .sum()
            })
            .collect();
        let tau = self.read(nodes, self.y, 1);
        Inputs {
            wm,
            mu,
            mu_var,
            ln_pi: self.read(nodes, self.s, 0)[..k].to_vec(),
            tau: tau[0],
            ln_tau: tau[1],
        }
    }
}

impl Vmp {
    /// Whether node i is a gated block's member other than its index and W (the schedule skips
    /// it: updating the index updates q(x, s)).
    pub(super) fn gated_follower(&self, i: usize) -> bool {
        matches!(self.block_of(i), Some(Block::Gated(b)) if b.layout.s != i && b.layout.w != i)
    }
}
