//! A node's update — Winn (2.19): expected prior natural parameters plus child messages, then moments.

use super::super::*;

/// New φ, u, A for the latent elements of a node, given its summed child messages; the node's own
/// arrays are moved into `state` for the update (no node reads its own moments when updating).
struct Update<'a> {
    cache: &'a Cache,
    id: usize,
    nodes: &'a [Node],
    node: &'a Node,
    messages: &'a [f64],
    state: NodeState,
}

/// (φ, u, A or f) per element; with the first element that broke, if any.
type Updated = (NodeState, Option<(usize, String)>);

impl DistVisitor for Update<'_> {
    type Output = Updated;
    /// Winn (2.19): φ* = ⟨φ(pa)⟩ + Σ child messages, then u = ∂A/∂φ* (or u(mode) for MAP, §2.6.1).
    /// Elements are independent given the messages: chunks run in parallel.
    fn visit<D: ExpFamily>(self, d: &D) -> Updated {
        let (nodes, c, len) = (self.nodes, self.node, self.node.len);
        let NodeState {
            mut phi,
            mut u,
            mut a,
        } = self.state;
        // Long rows of a node without data (latent vectors): at most eight chunks, so that runs
        // of elements with the same precision share one factorisation (`moments_rows`; e.g. the
        // rows of a mixture of Bayesian PCA's W_k) across more of the node. The elements are
        // independent and every chunk of such a node takes the batched path: the chunking
        // changes no value.
        let batched = len > 8 && c.observed.is_none() && !c.map;
        let fewer = if batched { a.len().div_ceil(8) } else { 1 };
        let chunk = kernels::elements_per_chunk(len).max(fewer);
        // Shared priors once: per element group (a fixed prior borrowed for all), or per element
        // of a mixture from each component's prior. An ungrouped node's fixed prior is copied
        // per element by `prior_of` as it is.
        let cache = group_priors(d, self.cache, nodes, self.id)
            .or_else(|| mixture_element_priors(d, nodes, c).map(|t| Priors::Table(Arc::new(t))));
        let rows = |ch: usize, phi: &mut [f64], u: &mut [f64], a: &mut [f64]| {
            let messages = |e: usize, _: usize, pe: &mut [f64]| {
                kernels::add_into(pe, &self.messages[e * len..(e + 1) * len]);
            };
            update_rows(d, nodes, c, &cache, ch * chunk, phi, u, a, messages).err()
        };
        let errors: Vec<(usize, String)> = if a.len() <= chunk {
            // One chunk: on this thread (see `map_chunks`).
            rows(0, &mut phi, &mut u, &mut a).into_iter().collect()
        } else {
            phi.par_chunks_mut(chunk * len)
                .zip(u.par_chunks_mut(chunk * len))
                .zip(a.par_chunks_mut(chunk))
                .enumerate()
                .filter_map(|(ch, ((phi, u), a))| rows(ch, phi, u, a))
                .collect()
        };
        let first = errors.into_iter().min_by_key(|(e, _)| *e);
        (NodeState { phi, u, a }, first)
    }
}

/// ⟨φ⟩ and ⟨A⟩ of the prior of every element of a `config_only` mixture with one selector and
/// runs of one (φ per element, A per element), from each component's prior formed once: element
/// e's prior is Σ_q Q(z_e = q) (φ_q, A_q) (Winn (2.52)), summed as [`prior_of`] sums it (the same
/// order, the same skipped zero weights, so the same bits) without gathering every component's
/// parents again for every element. `None` for any other node.
pub(in crate::engine) fn mixture_element_priors<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    c: &Node,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let one_run = c.config_only && c.period == 1 && c.selectors.len() == 1;
    if !one_run || c.configs < 2 || c.groups.is_some() || c.fixed_prior.is_some() {
        return None;
    }
    // Component q's parents are those of element 0's extended element q (runs of one).
    let (theta, aq) = component_priors(d, nodes, c);
    let len = c.len;
    let mut phi = vec![0.0; c.n * len];
    let mut a = vec![0.0; c.n];
    // One selector: the weights are Q(z_e = q) read in place, the values `config_weight` forms
    // (1 × Q(z_e = q)).
    let sel = &c.selectors[0];
    let z = &nodes[sel.node].q.u;
    for (e, (pe, ae)) in phi.chunks_exact_mut(len).zip(a.iter_mut()).enumerate() {
        let ie = sel.at(e);
        let weights = &z[ie * sel.k..(ie + 1) * sel.k];
        for (t, (&w, &at)) in theta.chunks_exact(len).zip(weights.iter().zip(&aq)) {
            if w == 0.0 {
                continue;
            }
            *ae += w * at;
            pe.iter_mut().zip(t).for_each(|(p, t)| *p += w * t);
        }
    }
    Some((phi, a))
}

/// Winn (2.19) for the elements `start..` of one chunk (φ, u, A slices): φ = ⟨φ(pa)⟩ + the child
/// messages, which `add_messages(element, row, φ)` adds; then u = ∂A/∂φ (batched over the chunk when
/// every element is latent), or u(mode) for a MAP node (§2.6.1). Observed elements are left as they
/// are. Stops at the first element outside the domain, with its index and what broke.
#[allow(clippy::too_many_arguments)]
pub(in crate::engine) fn update_rows<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    c: &Node,
    priors: &Option<Priors>,
    start: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
    mut add_messages: impl FnMut(usize, usize, &mut [f64]),
) -> Result<(), (usize, String)> {
    let (len, rows) = (c.len, a.len());
    let latent = |e: usize| !c.is_observed(e) && c.participates(e);
    // `prior_of` needs a row of scratch for a mixture's components only.
    let mut tmp = if c.configs > 1 {
        vec![0.0; len]
    } else {
        Vec::new()
    };
    let mut buf = Vec::new();
    for r in (0..rows).filter(|&r| latent(start + r)) {
        let pe = &mut phi[r * len..(r + 1) * len];
        element_prior(d, nodes, c, priors, start + r, pe, &mut tmp, &mut buf);
        add_messages(start + r, r, pe);
    }
    if !c.map && (start..start + rows).all(latent) {
        return d
            .moments_rows(phi, u, a)
            .map_err(|(r, err)| (start + r, err.0.to_string()));
    }
    let mut x = vec![0.0; d.value_len()];
    for r in (0..rows).filter(|&r| latent(start + r)) {
        let (pe, ue) = (&phi[r * len..(r + 1) * len], &mut u[r * len..(r + 1) * len]);
        let moments = d.moments(pe, ue).map_err(|err| err.0.to_string());
        a[r] = if c.map {
            moments.and_then(|_| {
                d.mode(pe, &mut x);
                d.observe_value(&x, ue).map_err(|e| e.to_string())
            })
        } else {
            moments
        }
        .map_err(|what| (start + r, what))?;
    }
    Ok(())
}

impl Vmp {
    /// Runs `Update` on node i with its arrays moved out (returned, or put back on error).
    pub(in crate::engine) fn run_update(
        &mut self,
        i: usize,
        dist: &Dist,
        messages: &[f64],
    ) -> Result<NodeState, RunError> {
        // A gated block's W kept with one covariance per component (`gated_linear/weights.rs`),
        // e.g. a restart's start after the previous restart's fit: its arrays are shorter than
        // per element, and every value is written below.
        let grouped = self.gated_grouped_w(i);
        let n = &mut self.nodes[i];
        // Element-by-element updates write φ in place.
        n.keep_natural();
        if n.block.is_some() {
            // From a block's layout back to the ordinary one (initialisation).
            n.q.a = vec![0.0; n.n];
        }
        if grouped || linear::shared::is_shared(n) {
            // The element-by-element update (initialisation) writes per-element arrays.
            (n.q.phi, n.q.u) = (vec![0.0; n.n * n.len], vec![0.0; n.n * n.len]);
            n.lazy = Default::default();
        }
        let state = std::mem::take(&mut n.q);
        let (state, error) = dist.visit(Update {
            cache: &self.cache,
            id: i,
            nodes: &self.nodes,
            node: &self.nodes[i],
            messages,
            state,
        });
        match error {
            None => Ok(state),
            Some((e, what)) => {
                let n = &mut self.nodes[i];
                n.q = state;
                self.changed(i);
                Err(self.numerical(i, e, what))
            }
        }
    }

    /// The update of a factorised node's q — Winn (2.19): every element at once from the child
    /// messages, or one element at a time where a child couples them (see `coupled`).
    pub(in crate::engine) fn update_factorised(&mut self, i: usize) -> Result<(), RunError> {
        // The static node, shared: its family is read while the node is updated (a copy of a
        // family allocates, e.g. a Dirichlet's concentrations).
        let model = self.nodes[i].model.clone();
        let Body::Stochastic(dist) = &model.body else {
            return Err(self.not_stochastic(i));
        };
        if self.coupled(i) {
            return self.update_in_turn(i, dist);
        }
        let messages = self.child_messages(i);
        let updated = self.run_update(i, dist, &messages);
        self.recycle(messages);
        self.nodes[i].q = updated?;
        self.changed(i);
        self.refresh_dependents(i);
        Ok(())
    }
}

/// Winn (2.19) for element `e` of a node alone, from the node's summed child messages.
struct UpdateOne<'a> {
    nodes: &'a [Node],
    node: &'a Node,
    messages: &'a [f64],
    e: usize,
    state: &'a mut NodeState,
}

impl DistVisitor for UpdateOne<'_> {
    type Output = Result<(), (usize, String)>;
    fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
        let (len, e) = (self.node.len, self.e);
        let NodeState { phi, u, a } = self.state;
        let messages = |e: usize, _: usize, pe: &mut [f64]| {
            kernels::add_into(pe, &self.messages[e * len..(e + 1) * len]);
        };
        update_rows(
            d,
            self.nodes,
            self.node,
            &None,
            e,
            &mut phi[e * len..(e + 1) * len],
            &mut u[e * len..(e + 1) * len],
            &mut a[e..e + 1],
            messages,
        )
    }
}

impl Vmp {
    /// Whether node i's elements are read together by a child that couples them: the rows w_i of W
    /// in `W @ x`. The factor's second moment has cross terms w̄_iᵀ⟨x xᵀ⟩w̄_j (`factor::matvec`), so
    /// the message to one row reads the other rows' means whenever the child's precision has
    /// off-diagonal entries; updating every row at once from the old means is then a Jacobi step,
    /// not coordinate ascent, and can lower the bound. Children with a diagonal precision
    /// (GaussianARD means) leave the rows uncoupled.
    pub(in crate::engine) fn coupled(&self, i: usize) -> bool {
        let diagonal = |f: usize| {
            self.nodes[f].children.iter().all(|&(y, role)| {
                role == Role::Slot(0)
                    && matches!(self.nodes[y].body, Body::Stochastic(Dist::GaussianArd(_)))
            })
        };
        self.nodes[i].children.iter().any(|&(c, role)| {
            matches!(
                (role, &self.nodes[c].body),
                (Role::Slot(0), Body::Deterministic(Factor::MatVec(m))) if m.rows > 1
            ) && !diagonal(c)
        })
    }

    /// Winn (2.19) one element at a time (Gauss–Seidel over a node whose elements are coupled,
    /// see `coupled`): each element from the child messages given the others' current moments, so
    /// each step is a coordinate ascent step on the bound.
    fn update_in_turn(&mut self, i: usize, dist: &Dist) -> Result<(), RunError> {
        for e in 0..self.nodes[i].n {
            let node = &self.nodes[i];
            if node.is_observed(e) || !node.participates(e) {
                continue;
            }
            let messages = self.child_messages(i);
            let n = &mut self.nodes[i];
            n.keep_natural();
            let mut state = std::mem::take(&mut n.q);
            let done = dist.visit(UpdateOne {
                nodes: &self.nodes,
                node: &self.nodes[i],
                messages: &messages,
                e,
                state: &mut state,
            });
            self.recycle(messages);
            let n = &mut self.nodes[i];
            n.q = state;
            self.changed(i);
            done.map_err(|(e, what)| self.numerical(i, e, what))?;
            self.refresh_dependents(i);
        }
        Ok(())
    }
}
