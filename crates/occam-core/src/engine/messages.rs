//! Messages to a node from its children: to a parent slot (Winn (2.18), mixtures (2.53)), to a
//! mixture's index (2.53, and Discrete children of Discrete parents, Winn Table 2.1, written out
//! here as a CPT), through deterministic children (2.46–2.49).

use super::*;

struct SlotMessages<'a> {
    cache: &'a Cache,
    id: usize,
    nodes: &'a [Node],
    child: &'a Node,
    slot: usize,
    out: &'a mut [f64],
}

impl DistVisitor for SlotMessages<'_> {
    type Output = ();
    /// Σ over child elements and configurations of w·m(u) into the parent's elements — Winn (2.18),
    /// mixtures (2.53): the component message scaled by Q(λ = k).
    fn visit<D: ExpFamily>(self, d: &D) {
        let (nodes, c, edge) = (self.nodes, self.child, &self.child.parents[self.slot]);
        let mlen = edge.stack * edge.plen;
        let mut m = vec![0.0; mlen];
        if c.config_only {
            // Parents depend on the component only: aggregate Σ_e r_ek u_e first (multilinearity).
            let cached = cached_stats(self.cache, nodes, self.id);
            let (stats, totals) = (&cached.0, &cached.1);
            let mut buf = Vec::new();
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
            return;
        }
        if let Some((_, reps)) = &c.groups {
            // Shared parents: sum the moments of each group, then one message per group.
            let sums = cached_group_sums(self.cache, nodes, self.id);
            let (stats, totals) = (&sums.0, &sums.1);
            let mut buf = Vec::new();
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
            return;
        }
        let mut scaled = vec![0.0; c.len];
        let mut buf = Vec::new();
        // A tree-block member: E[1(pa = q) u(x)] is its family's joint q, not w_q·u (module `tree`).
        let families = tree::families(c);
        for e in 0..c.n {
            if !c.participates(e) {
                continue;
            }
            let u = &c.u[e * c.len..(e + 1) * c.len];
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
    }
}

struct SelectorMessages<'a> {
    cache: &'a Cache,
    id: usize,
    nodes: &'a [Node],
    child: &'a Node,
    selector: usize,
    out: &'a mut [f64],
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
            let u = &c.u[e * c.len..(e + 1) * c.len];
            let ie = sel.at(e);
            for q in 0..c.configs {
                // Weight of the other selectors' digits.
                let mut w = 1.0;
                let mut rest = q;
                for (m, s) in c.selectors.iter().enumerate().rev() {
                    let k = rest % s.k;
                    rest /= s.k;
                    if m != self.selector {
                        w *= nodes[s.node].u[s.at(e) * s.k + k];
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

impl Vmp {
    /// Σ of all child messages to node `target`, per element (recursing through deterministic
    /// children, Winn (2.46–2.49)).
    pub(super) fn child_messages(&self, target: usize) -> Vec<f64> {
        self.child_messages_where(target, &|_| true)
    }

    /// Σ of the messages to node `target` of the children `keep` accepts.
    ///
    /// A deterministic child passes on the messages it receives from its own children, so the
    /// sum needs theirs first. Those are computed here without recursion (a chain of 10⁴
    /// deterministic nodes overflowed the stack): the deterministic descendants are listed
    /// children-first by an explicit depth-first walk and each one's incoming messages computed
    /// once, in that order, from those already computed.
    pub(super) fn child_messages_where(
        &self,
        target: usize,
        keep: &dyn Fn(usize) -> bool,
    ) -> Vec<f64> {
        let order = self.deterministic_descendants(target, keep);
        let mut done: std::collections::HashMap<usize, Vec<f64>> =
            std::collections::HashMap::with_capacity(order.len());
        for d in order {
            let md = self.child_messages_from(d, &|_| true, &done);
            done.insert(d, md);
        }
        self.child_messages_from(target, keep, &done)
    }

    /// The deterministic children of `node` whose messages pass through to it (every slot child
    /// not handled by a linear-Gaussian structure).
    fn passing_children<'a>(
        &'a self,
        node: usize,
        keep: &'a dyn Fn(usize) -> bool,
    ) -> impl Iterator<Item = usize> + 'a {
        self.nodes[node]
            .children
            .iter()
            .filter(move |(ci, role)| {
                keep(*ci)
                    && matches!(role, Role::Slot(_))
                    && matches!(self.nodes[*ci].body, Body::Deterministic(_))
                    && self.linear[*ci].is_none()
            })
            .map(|&(ci, _)| ci)
    }

    /// The deterministic descendants of `target` reached through [`Vmp::passing_children`],
    /// each after all of its own (post-order of an explicit depth-first walk).
    fn deterministic_descendants(&self, target: usize, keep: &dyn Fn(usize) -> bool) -> Vec<usize> {
        let all = |_: usize| true;
        let mut order = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<(usize, Vec<usize>)> =
            vec![(target, self.passing_children(target, keep).collect())];
        while let Some((node, pending)) = stack.last_mut() {
            match pending.pop() {
                Some(c) => {
                    if seen.insert(c) {
                        let next: Vec<usize> = self.passing_children(c, &all).collect();
                        stack.push((c, next));
                    }
                }
                None => {
                    let node = *node;
                    stack.pop();
                    if node != target || !stack.is_empty() {
                        order.push(node);
                    }
                }
            }
        }
        order
    }

    /// [`Vmp::child_messages_where`] with the incoming messages of every deterministic child
    /// already in `done`.
    fn child_messages_from(
        &self,
        target: usize,
        keep: &dyn Fn(usize) -> bool,
        done: &std::collections::HashMap<usize, Vec<f64>>,
    ) -> Vec<f64> {
        let t = &self.nodes[target];
        // A recycled buffer (see `Vmp::recycle`): large message arrays are not returned to the
        // system and faulted in again on every update.
        let mut out = std::mem::take(&mut *self.scratch.lock().expect("scratch lock"));
        out.clear();
        out.resize(t.n * t.len, 0.0);
        for &(ci, role) in t.children.iter().filter(|(ci, _)| keep(*ci)) {
            let c = &self.nodes[ci];
            if let (Some(lin), Role::Slot(s)) = (&self.linear[ci], role) {
                // Through a dot node to a factor, through the sum to an offset, or from the Gaussian
                // child to the precision.
                if ci == lin.f {
                    lin.message(&self.nodes, &self.cache, s, &mut out);
                } else if lin.sum == Some(ci) {
                    lin.offset_message(&self.nodes, &self.cache, s, &mut out);
                } else {
                    lin.tau_message(&self.nodes, &self.cache, &mut out);
                }
                continue;
            }
            match (&c.body, role) {
                (Body::Stochastic(d), Role::Slot(s)) => d.visit(SlotMessages {
                    cache: &self.cache,
                    id: ci,
                    nodes: &self.nodes,
                    child: c,
                    slot: s,
                    out: &mut out,
                }),
                (Body::Stochastic(d), Role::Selector(m)) => d.visit(SelectorMessages {
                    cache: &self.cache,
                    id: ci,
                    nodes: &self.nodes,
                    child: c,
                    selector: m,
                    out: &mut out,
                }),
                (Body::Deterministic(f), Role::Slot(s)) => {
                    let md = &done[&ci];
                    let edge = &c.parents[s];
                    let mut m = vec![0.0; edge.stack * edge.plen];
                    let mut buf = Vec::new();
                    for e in 0..c.n {
                        let pa = gather(&self.nodes, c, e, &mut buf);
                        f.message_to(
                            s,
                            &md[e * c.len..(e + 1) * c.len],
                            &pa[..c.parents.len()],
                            &mut m,
                        );
                        edge.scatter(e, &m, &mut out);
                    }
                }
                (Body::Chain(_), Role::Slot(s)) => self.chain_message(ci, s, &mut out),
                (Body::Chain(_), Role::Selector(m)) => self.chain_selector_message(ci, m, &mut out),
                (_, Role::Selector(_)) | (Body::Constant, _) => {
                    unreachable!("only stochastic nodes and chains have selectors; constants have no parents")
                }
            }
        }
        out
    }
}
