//! Messages to a node from its children: each child's block sends its own (`QBlock::send`);
//! deterministic children pass on theirs (Winn (2.46–2.49)).

use super::*;

impl Vmp {
    /// Σ of all child messages to node `target`, per element (recursing through deterministic
    /// children, Winn (2.46–2.49)). The array comes from the model's pool: give it back with
    /// [`Vmp::recycle`] when done.
    pub(super) fn child_messages(&self, target: usize) -> Vec<f64> {
        if let Some(o) = self.outside.as_ref().filter(|o| o.target == target) {
            // A global of a sharded fit: this shard's copy of the global's other children, plus
            // the summed messages of every shard's local children (module `shard`).
            let mut m = self.leaf_messages(target, &|c| !o.local[c]);
            kernels::add_into(&mut m, &o.messages);
            return m;
        }
        // Every child kept: the deterministic descendants' order depends on the network alone,
        // formed once per target (the network is fixed once compiled).
        let order = self.passing_order[target]
            .get_or_init(|| self.deterministic_descendants(target, &|_| true));
        self.messages_in_order(target, order, &|_| true, &|_| true)
    }

    /// Σ of the messages to node `target` sent by the stochastic descendants `leaf` accepts,
    /// directly or through deterministic nodes (each passes on what its accepted descendants
    /// send: the messages of Winn (2.46–2.49) are linear in the child's message, so the sum over
    /// a partition of the leaves is the sum of the parts).
    pub(super) fn leaf_messages(&self, target: usize, leaf: &dyn Fn(usize) -> bool) -> Vec<f64> {
        let keep = |c: usize| self.block_of(c).is_none() || leaf(c);
        let order = self.deterministic_descendants(target, &keep);
        self.messages_in_order(target, &order, &keep, &keep)
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
        self.messages_in_order(target, &order, &|_| true, keep)
    }

    /// The messages to `target` of the children `keep` accepts, after those of the
    /// deterministic descendants `order` (children first), each from the children `inner`
    /// accepts. The descendants' arrays and the map holding them are the model's, kept between
    /// calls (no allocation once warm; the map's order is never read).
    fn messages_in_order(
        &self,
        target: usize,
        order: &[usize],
        inner: &dyn Fn(usize) -> bool,
        keep: &dyn Fn(usize) -> bool,
    ) -> Vec<f64> {
        if order.is_empty() {
            return self.child_messages_from(target, keep, &NodeMap::default());
        }
        let mut done = self
            .passed
            .lock()
            .map(|mut d| std::mem::take(&mut *d))
            .unwrap_or_default();
        for &d in order {
            let md = self.child_messages_from(d, inner, &done);
            done.insert(d, md);
        }
        let out = self.child_messages_from(target, keep, &done);
        for (_, v) in done.drain() {
            self.recycle(v);
        }
        if let Ok(mut d) = self.passed.lock() {
            *d = done;
        }
        out
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
                    && self.nodes[*ci].gated.is_none()
            })
            .map(|&(ci, _)| ci)
    }

    /// The deterministic descendants of `target` reached through [`Vmp::passing_children`],
    /// each after all of its own (post-order of an explicit depth-first walk).
    fn deterministic_descendants(&self, target: usize, keep: &dyn Fn(usize) -> bool) -> Vec<usize> {
        let all = |_: usize| true;
        let mut order = Vec::new();
        let first: Vec<usize> = self.passing_children(target, keep).collect();
        if first.is_empty() {
            // No deterministic child passes messages on (the common case): nothing to walk, and
            // no stack allocated for it on every update.
            return order;
        }
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(target, first)];
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
        done: &NodeMap<Vec<f64>>,
    ) -> Vec<f64> {
        let t = &self.nodes[target];
        // From the pool (see `Vmp::recycle`): large message arrays are not returned to the
        // system and faulted in again on every update.
        let mut out = self.cache.pool.zeroed(t.n * t.len);
        for &(ci, role) in t.children.iter().filter(|(ci, _)| keep(*ci)) {
            if let Some(block) = self.block_of(ci) {
                block.send(self, ci, role, &mut out);
                continue;
            }
            let c = &self.nodes[ci];
            match (&c.body, role) {
                (Body::Deterministic(_), Role::Slot(s))
                    if self.logit[ci].is_some_and(|k| k.x_slot != s) =>
                {
                    let k = self.logit[ci].expect("checked");
                    k.message(&self.nodes, ci, &done[&ci], &mut out);
                }
                (Body::Deterministic(f), Role::Slot(s)) => {
                    let md = &done[&ci];
                    let edge = &c.parents[s];
                    let mut m = self.cache.pool.zeroed(edge.stack * edge.plen);
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
                    self.recycle(m);
                }
                _ => unreachable!(
                    "stochastic nodes and chains are in blocks; only they have selectors; \
                     constants have no parents"
                ),
            }
        }
        out
    }
}
