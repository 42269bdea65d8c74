//! A factorised node's bound term — Winn (2.34)–(2.36), with (2.36) corrected (see
//! docs/seed-corrections.md).

use super::super::*;
use crate::engine::bound::{dot_abs, prior_part};

pub(in crate::engine) struct BoundTerm<'a> {
    pub cache: &'a Cache,
    pub id: usize,
    pub nodes: &'a [Node],
    pub node: &'a Node,
    /// Instead of the term, the sizes of the pieces it adds (see [`Vmp::bound_roundoff`]).
    pub sizes: bool,
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
            let (len, priors) = (c.period * c.len, &*priors);
            let prior = |q: usize| (&priors.0[q * len..(q + 1) * len], priors.1[q]);
            return prior_part(prior, &stats.0, &stats.1, sizes) + own;
        }
        if c.groups.is_some() {
            let sums = cached_group_sums(self.cache, nodes, self.id);
            // (A fixed prior is borrowed for every group, not copied per group.)
            let priors = group_priors(d, self.cache, nodes, self.id).expect("a grouped node");
            let prior = |g: usize| priors.row(g, c.len);
            return prior_part(prior, &sums.0, &sums.1, sizes) + own;
        }
        let chunks = c.n.div_ceil(kernels::CHUNK);
        let sum = kernels::sum_chunks(chunks, |ch| {
            // A fixed prior is read in place (`prior_of` would copy it per element); the
            // scratch row is a mixture's only.
            let fixed = c.fixed_prior.as_ref();
            let pool = &self.cache.pool;
            let mut phi = if fixed.is_some() {
                Vec::new()
            } else {
                pool.zeroed(c.len)
            };
            let mut tmp = if c.configs > 1 {
                pool.zeroed(c.len)
            } else {
                Vec::new()
            };
            let mut buf = Vec::new();
            let mut total = 0.0;
            let range = ch * kernels::CHUNK..((ch + 1) * kernels::CHUNK).min(c.n);
            for e in range.filter(|&e| c.participates(e)) {
                let (phi, ap) = match fixed {
                    Some((fixed, a)) => (&fixed[..], *a),
                    None => {
                        let ap = prior_of(d, nodes, c, e, &mut phi, &mut tmp, &mut buf);
                        (&phi[..], ap)
                    }
                };
                let u = &c.q.u[e * c.len..(e + 1) * c.len];
                total += if sizes {
                    dot_abs(phi, u) + ap.abs()
                } else {
                    natural_dot(phi, u) - ap
                };
            }
            pool.keep(phi);
            pool.keep(tmp);
            total
        });
        sum + own
    }
}
