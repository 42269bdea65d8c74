//! Messages a factorised node sends to its parents: to a parent slot (Winn (2.18), mixtures
//! (2.53)), to a mixture's index (2.53, and Discrete children of Discrete parents, Winn Table 2.1,
//! written out here as a CPT).

use super::super::*;

pub(in crate::engine) struct SlotMessages<'a> {
    pub cache: &'a Cache,
    pub id: usize,
    pub nodes: &'a [Node],
    pub child: &'a Node,
    pub slot: usize,
    pub out: &'a mut [f64],
}

impl DistVisitor for SlotMessages<'_> {
    type Output = ();
    /// Σ over child elements and configurations of w·m(u) into the parent's elements — Winn (2.18),
    /// mixtures (2.53): the component message scaled by Q(λ = k).
    fn visit<D: ExpFamily>(self, d: &D) {
        let (nodes, c, edge) = (self.nodes, self.child, &self.child.parents[self.slot]);
        let mlen = edge.stack * edge.plen;
        let mut m = self.cache.pool.zeroed(mlen);
        if c.config_only {
            // Parents depend on the component only: aggregate Σ_e r_ek u_e first (multilinearity).
            let cached = cached_stats(self.cache, nodes, self.id);
            let (stats, totals) = (&cached.0, &cached.1);
            // (The gather's scratch for stacked parents from the pool.)
            let mut buf = self.cache.pool.zeroed(0);
            for q in (0..c.configs).filter(|&q| totals[q] > 0.0) {
                for j in 0..c.period {
                    // Position j of a run, component q: extended element j·K + q.
                    let (ext, at) = (j * c.configs + q, (q * c.period + j) * c.len);
                    let pa = gather(nodes, c, ext, &mut buf);
                    d.message_to(
                        self.slot,
                        &stats[at..at + c.len],
                        totals[q],
                        &pa[..c.parents.len()],
                        &mut m,
                    );
                    edge.scatter(ext, &m, self.out);
                }
            }
            self.cache.pool.keep(m);
            self.cache.pool.keep(buf);
            return;
        }
        if let Some((_, reps)) = &c.groups {
            // Shared parents: sum the moments of each group, then one message per group.
            let sums = cached_group_sums(self.cache, nodes, self.id);
            let (stats, totals) = (&sums.0, &sums.1);
            // (The gather's scratch for stacked parents from the pool.)
            let mut buf = self.cache.pool.zeroed(0);
            for (g, &rep) in reps.iter().enumerate().filter(|(g, _)| totals[*g] > 0.0) {
                let rep = rep as usize;
                let pa = gather(nodes, c, rep, &mut buf);
                d.message_to(
                    self.slot,
                    &stats[g * c.len..(g + 1) * c.len],
                    totals[g],
                    &pa[..c.parents.len()],
                    &mut m,
                );
                edge.scatter(rep, &m, self.out);
            }
            self.cache.pool.keep(m);
            self.cache.pool.keep(buf);
            return;
        }
        let mut scaled = self.cache.pool.zeroed(c.len);
        let mut buf = self.cache.pool.zeroed(0);
        // A tree-block member: E[1(pa = q) u(x)] is its family's joint q, not w_q·u (module `tree`).
        let families = tree::families(c);
        for e in 0..c.n {
            if !c.participates(e) {
                continue;
            }
            let u = &c.q.u[e * c.len..(e + 1) * c.len];
            for q in 0..c.configs {
                let w = if let Some(f) = families {
                    let row = &f[(e * c.configs + q) * c.len..(e * c.configs + q + 1) * c.len];
                    scaled.copy_from_slice(row);
                    row.iter().sum()
                } else if c.configs == 1 {
                    1.0
                } else {
                    config_weight(nodes, c, e, q)
                };
                if w == 0.0 {
                    continue;
                }
                if families.is_none() {
                    scaled.iter_mut().zip(u).for_each(|(s, v)| *s = w * v);
                }
                let ext = e * c.configs + q;
                let pa = gather(nodes, c, ext, &mut buf);
                d.message_to(self.slot, &scaled, w, &pa[..c.parents.len()], &mut m);
                edge.scatter(ext, &m, self.out);
            }
        }
        self.cache.pool.keep(m);
        self.cache.pool.keep(scaled);
        self.cache.pool.keep(buf);
    }
}

pub(in crate::engine) struct SelectorMessages<'a> {
    pub cache: &'a Cache,
    pub id: usize,
    pub nodes: &'a [Node],
    pub child: &'a Node,
    pub selector: usize,
    pub out: &'a mut [f64],
}

impl DistVisitor for SelectorMessages<'_> {
    type Output = ();
    /// Message to a mixture index: entry k is ⟨ln p_k(x)⟩ = ⟨φ_k⟩·⟨u⟩ − ⟨A_k⟩ (f is the same for every
    /// k and omitted), summed over the other indices' configurations with their weights — Winn
    /// (2.53), and for a Discrete child of Discrete parents (Table 2.1) its CPT form (derived
    /// here).
    fn visit<D: ExpFamily>(self, d: &D) {
        let (nodes, c) = (self.nodes, self.child);
        let sel = &c.selectors[self.selector];
        if c.config_only {
            let l = cached_scores(d, self.cache, nodes, self.id);
            for r in (0..c.n / c.period).filter(|&r| c.participates(r * c.period)) {
                let ie = sel.at(r * c.period);
                kernels::add_into(
                    &mut self.out[ie * sel.k..(ie + 1) * sel.k],
                    &l[r * sel.k..(r + 1) * sel.k],
                );
            }
            return;
        }
        let mut phi = vec![0.0; c.len];
        let mut buf = Vec::new();
        for e in 0..c.n {
            if !c.participates(e) {
                continue;
            }
            let u = &c.q.u[e * c.len..(e + 1) * c.len];
            let ie = sel.at(e);
            for q in 0..c.configs {
                // Weight of the other selectors' digits.
                let mut w = 1.0;
                let mut rest = q;
                for (m, s) in c.selectors.iter().enumerate().rev() {
                    let k = rest % s.k;
                    rest /= s.k;
                    if m != self.selector {
                        w *= nodes[s.node].q.u[s.at(e) * s.k + k];
                    }
                }
                if w == 0.0 {
                    continue;
                }
                let pa = gather(nodes, c, e * c.configs + q, &mut buf);
                let a = d.prior(&pa[..c.parents.len()], &mut phi);
                let ll: f64 = phi.iter().zip(u).map(|(p, v)| p * v).sum::<f64>() - a;
                self.out[ie * sel.k + config_digit(c, self.selector, q)] += w * ll;
            }
        }
    }
}
