//! The lower bound as a sum of per-node terms — Winn (2.31), (2.34–2.36) as corrected in the digest.

use super::*;

struct BoundTerm<'a> {
    cache: &'a Cache,
    id: usize,
    nodes: &'a [Node],
    node: &'a Node,
}

impl DistVisitor for BoundTerm<'_> {
    type Output = f64;
    /// Winn (2.34) for latent elements: (⟨φ_p⟩ − φ_q)·⟨u⟩ − ⟨A_p⟩ + A_q; (2.35–2.36 corrected) for
    /// observed and MAP elements: ⟨φ_p⟩·u(x) + f(x) − ⟨A_p⟩. The prior part is multilinear in u, so
    /// for mixtures and grouped elements it is a product of cached sums with the parents' moments.
    fn visit<D: ExpFamily>(self, d: &D) -> f64 {
        let (nodes, c) = (self.nodes, self.node);
        let own = cached_own(self.cache, nodes, self.id);
        if c.config_only {
            // Σ_e Σ_k r_ek (⟨φ_k⟩·u_e − ⟨A_k⟩) = Σ_k (⟨φ_k⟩·S_k − ⟨A_k⟩ T_k), S = Wᵀ U.
            let (theta, a) = component_priors(d, nodes, c);
            let stats = cached_stats(self.cache, nodes, self.id);
            return prior_part(&theta, &a, &stats.0, &stats.1) + own;
        }
        if c.groups.is_some() {
            let (phi, a) = group_priors(d, nodes, c).expect("priors of a grouped node");
            let sums = cached_group_sums(self.cache, nodes, self.id);
            return prior_part(&phi, &a, &sums.0, &sums.1) + own;
        }
        let chunks = c.n.div_ceil(kernels::CHUNK);
        let sums: Vec<f64> = (0..chunks)
            .into_par_iter()
            .map(|ch| {
                let mut phi = vec![0.0; c.len];
                let mut tmp = vec![0.0; c.len];
                let mut buf = Vec::new();
                let mut total = 0.0;
                let range = ch * kernels::CHUNK..((ch + 1) * kernels::CHUNK).min(c.n);
                for e in range.filter(|&e| c.participates(e)) {
                    let ap = prior_of(d, nodes, c, e, &mut phi, &mut tmp, &mut buf);
                    total += dot(&phi, &c.u[e * c.len..(e + 1) * c.len]) - ap;
                }
                total
            })
            .collect();
        sums.iter().sum::<f64>() + own
    }
}

/// Σ_g (⟨φ_g⟩·S_g − ⟨A_g⟩ T_g): the prior part of a bound from summed moments S_g of T_g elements.
fn prior_part(phi: &[f64], a: &[f64], sums: &[f64], counts: &[f64]) -> f64 {
    let len = sums.len() / counts.len().max(1);
    (0..counts.len())
        .filter(|&g| counts[g] > 0.0)
        .map(|g| {
            dot(&phi[g * len..(g + 1) * len], &sums[g * len..(g + 1) * len]) - a[g] * counts[g]
        })
        .sum()
}

impl Vmp {
    /// The lower bound's term of each node (0 for deterministic nodes).
    pub fn node_bounds(&self) -> Vec<f64> {
        self.node_bounds_with(&self.cache)
    }

    fn node_bounds_with(&self, cache: &Cache) -> Vec<f64> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(id, n)| match &n.body {
                Body::Stochastic(_) if n.block.is_some() => self.tree_bound(id),
                Body::Stochastic(_) if linear::shared::is_shared(n) => self.shared_bound(id),
                Body::Stochastic(_) if self.linear[id].is_some() => {
                    let lin = self.linear[id].as_ref().expect("checked");
                    lin.bound(&self.nodes, cache) + lin.own
                }
                Body::Stochastic(d) => d.visit(BoundTerm {
                    cache,
                    id,
                    nodes: &self.nodes,
                    node: n,
                }),
                Body::Chain(_) => self.chain_bound(id),
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
}
