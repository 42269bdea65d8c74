//! The lower bound as a sum of per-node terms — Winn (2.31), (2.34–2.36), with (2.36) corrected
//! (see docs/seed-corrections.md).

use super::*;

struct BoundTerm<'a> {
    cache: &'a Cache,
    id: usize,
    nodes: &'a [Node],
    node: &'a Node,
    /// Instead of the term, the sizes of the pieces it adds (see [`Vmp::bound_roundoff`]).
    sizes: bool,
}

impl DistVisitor for BoundTerm<'_> {
    type Output = f64;
    /// Winn (2.34) for latent elements: (⟨φ_p⟩ − φ_q)·⟨u⟩ − ⟨A_p⟩ + A_q; (2.35–2.36, corrected:
    /// ⟨g⟩, not g'(⟨φ⟩)) for observed and MAP elements: ⟨φ_p⟩·u(x) + f(x) − ⟨A_p⟩. The prior part
    /// is multilinear in u, so for mixtures and grouped elements it is a product of cached sums with
    /// the parents' moments.
    fn visit<D: ExpFamily>(self, d: &D) -> f64 {
        let (nodes, c) = (self.nodes, self.node);
        let own = cached_own(self.cache, nodes, self.id);
        let sizes = self.sizes;
        let own = if sizes { own.abs() } else { own };
        if c.config_only {
            // Σ_e Σ_k r_ek (⟨φ_k⟩·u_e − ⟨A_k⟩) = Σ_k (⟨φ_k⟩·S_k − ⟨A_k⟩ T_k), S = Wᵀ U.
            let priors = cached_component_priors(d, self.cache, nodes, self.id);
            let stats = cached_stats(self.cache, nodes, self.id);
            return prior_part(&priors.0, &priors.1, &stats.0, &stats.1, sizes) + own;
        }
        if c.groups.is_some() {
            let (phi, a) = group_priors(d, nodes, c).expect("priors of a grouped node");
            let sums = cached_group_sums(self.cache, nodes, self.id);
            return prior_part(&phi, &a, &sums.0, &sums.1, sizes) + own;
        }
        let chunks = c.n.div_ceil(kernels::CHUNK);
        let sums: Vec<f64> = map_chunks(chunks, |ch| {
            let mut phi = vec![0.0; c.len];
            let mut tmp = vec![0.0; c.len];
            let mut buf = Vec::new();
            let mut total = 0.0;
            let range = ch * kernels::CHUNK..((ch + 1) * kernels::CHUNK).min(c.n);
            for e in range.filter(|&e| c.participates(e)) {
                let ap = prior_of(d, nodes, c, e, &mut phi, &mut tmp, &mut buf);
                let u = &c.u[e * c.len..(e + 1) * c.len];
                total += if sizes {
                    dot_abs(&phi, u) + ap.abs()
                } else {
                    natural_dot(&phi, u) - ap
                };
            }
            total
        });
        sums.iter().sum::<f64>() + own
    }
}

/// Ulps of the sizes of L's pieces that round-off may move L by (see `Vmp::bound_roundoff`).
const ROUNDOFF_ULPS: f64 = 8.0;

/// Σ_g (⟨φ_g⟩·S_g − ⟨A_g⟩ T_g): the prior part of a bound from summed moments S_g of T_g elements
/// (with `sizes`, Σ_g (Σ_i |φ_gi S_gi| + |A_g| T_g): the sizes of the pieces it adds).
fn prior_part(phi: &[f64], a: &[f64], sums: &[f64], counts: &[f64], sizes: bool) -> f64 {
    let len = sums.len() / counts.len().max(1);
    (0..counts.len())
        .filter(|&g| counts[g] > 0.0)
        .map(|g| {
            let (p, s) = (&phi[g * len..(g + 1) * len], &sums[g * len..(g + 1) * len]);
            if sizes {
                dot_abs(p, s) + (a[g] * counts[g]).abs()
            } else {
                natural_dot(p, s) - a[g] * counts[g]
            }
        })
        .sum()
}

/// Σ_i |a_i b_i|, a term with b_i = 0 counted as 0 (see [`natural_dot`]).
fn dot_abs(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| if *y == 0.0 { 0.0 } else { (x * y).abs() })
        .sum()
}

impl Vmp {
    /// The lower bound's term of each node (0 for deterministic nodes).
    pub fn node_bounds(&self) -> Vec<f64> {
        self.node_bounds_with(&self.cache)
    }

    fn node_bounds_with(&self, cache: &Cache) -> Vec<f64> {
        self.node_terms(cache, false)
    }

    /// Each node's bound term, or with `sizes` the sizes of the pieces the term adds where it is
    /// a sum of products of moments (the fused, mixture and grouped terms); |term| elsewhere.
    fn node_terms(&self, cache: &Cache, sizes: bool) -> Vec<f64> {
        let size = |t: f64| if sizes { t.abs() } else { t };
        self.nodes
            .iter()
            .enumerate()
            .map(|(id, n)| match &n.body {
                Body::Stochastic(_) if n.block.is_some() => size(self.tree_bound(id)),
                Body::Stochastic(_) if linear::shared::is_shared(n) => size(self.shared_bound(id)),
                Body::Stochastic(_) if self.linear[id].is_some() => {
                    let lin = self.linear[id].as_ref().expect("checked");
                    size(lin.bound(&self.nodes, cache) + lin.own)
                }
                Body::Stochastic(d) => d.visit(BoundTerm {
                    cache,
                    id,
                    nodes: &self.nodes,
                    node: n,
                    sizes,
                }),
                Body::Chain(_) => size(self.chain_bound(id)),
                Body::Deterministic(_) | Body::Constant => 0.0,
            })
            .collect()
    }

    /// The bound recomputed from the nodes' arrays alone, ignoring every cached product (tests
    /// compare it with [`Vmp::bound`] to check the caches' invalidation).
    #[doc(hidden)]
    pub fn fresh_bound(&self) -> f64 {
        self.node_bounds_with(&Cache::default()).iter().sum()
    }

    /// The evidence lower bound L(Q) = Σ nodes' terms — Winn (2.31).
    pub fn bound(&self) -> f64 {
        self.node_bounds().iter().sum()
    }

    /// How far round-off can move [`Vmp::bound`] at the current state: a change of L smaller than
    /// this is not one floating point can resolve. L is a sum of products of moments whose pieces
    /// may be far larger than L itself: on identical rows a mixture's ⟨Λ⟩ grows without limit and
    /// terms such as ½ tr(⟨Λ⟩ Σ r y yᵀ) of size 10¹² cancel to O(10²). Each piece is a moment
    /// product exact to a few ulps, so the error of L is a few ulps of the sum of the pieces' sizes
    /// (Σ_i |φ_i u_i| + |A| per element, or per component from the summed moments), not of |L|.
    /// Returned: 8 ulps of that sum. Measured on 81 strict fits of such mixtures
    /// (`crates/occam/tests/it/extreme_priors.rs`), the largest apparent decrease was 1.2 ulps of it;
    /// on well-conditioned models the value lies far below 10⁻⁹·|L| and changes nothing.
    pub fn bound_roundoff(&self) -> f64 {
        let sizes: f64 = self.node_terms(&self.cache, true).iter().sum();
        ROUNDOFF_ULPS * f64::EPSILON * sizes
    }
}
