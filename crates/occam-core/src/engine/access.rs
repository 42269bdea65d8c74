//! What a compiled model answers about its nodes: the default schedule, moments, natural
//! parameters, means, names, plates and families.

use super::*;

impl Vmp {
    /// The default schedule: latent stochastic nodes, parents before children, except that nodes
    /// whose start carries information — a mixture index's k-means++ assignment, a random or given
    /// start (see `start` in `init`) — come after the others. The first sweep then updates the
    /// component parameters and the other factors of a product *from* that start; updating a
    /// mixture index first would recompute it from the prior's identical components and lose it
    /// (every point equally in every component, one component left after a few sweeps).
    /// Coordinate ascent raises the bound in any order; the order only decides where it ends.
    pub fn default_order(&self) -> Vec<NodeId> {
        let latent: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                self.nodes[i].has_latent()
                    && !self.tree_follower(i)
                    && !self.joint_follower(i)
                    && !self.gated_follower(i)
            })
            .collect();
        let (from_start, rest): (Vec<usize>, Vec<usize>) = latent
            .into_iter()
            .partition(|&i| !matches!(*self.start(i), Init::Prior));
        rest.into_iter().chain(from_start).map(NodeId).collect()
    }

    /// For every mixture index (a latent Categorical that selects mixture components): the node,
    /// the number of its components in use — those whose expected number of elements,
    /// Σₑ Q(zₑ = k), is at least 1 — and its number of components.
    pub fn components_in_use(&self) -> Vec<(NodeId, usize, usize)> {
        (0..self.nodes.len())
            .filter(|&i| self.is_mixture_index(i))
            .map(|i| {
                let node = &self.nodes[i];
                let k = node.len;
                let mut counts = vec![0.0; k];
                for q in node.q.u.chunks(k) {
                    counts.iter_mut().zip(q).for_each(|(c, p)| *c += p);
                }
                (NodeId(i), counts.iter().filter(|&&c| c >= 1.0).count(), k)
            })
            .collect()
    }

    /// Posterior moments ⟨u⟩ of a node, all elements (row-major over its plates). Empty for a dot
    /// node served by the linear kernel, and for the sum of it and offsets (their moments are not
    /// kept). A gated block's x, dot and sum give their per-element moments given the component,
    /// and its W kept with one covariance per component its rows' (`gated_linear/dense.rs`). The data of that kernel keep their values only; u(y) is formed on the first call. Constant covariates read only
    /// by that kernel keep their values; their moments are formed on the first call.
    pub fn moments(&self, node: NodeId) -> &[f64] {
        let n = &self.nodes[node.0];
        if n.q.u.is_empty() && matches!(n.body, Body::Constant) {
            return &self.lazy_constant(n).0;
        }
        if n.q.u.is_empty() && self.serves_data(node.0) {
            return &n.lazy.get_or_init(|| (observed_moments(n), Vec::new())).0;
        }
        if linear::shared::is_shared(n) {
            return &n.lazy.get_or_init(|| linear::shared::dense_state(n)).0;
        }
        if gated_derived(n) || self.gated_grouped_w(node.0) {
            return &n.lazy.get_or_init(|| self.gated_dense(node.0)).0;
        }
        &n.q.u
    }

    /// Posterior natural parameters φ of a node, all elements (zero for constants; empty for a dot
    /// node served by the linear kernel).
    pub fn natural(&self, node: NodeId) -> &[f64] {
        let n = &self.nodes[node.0];
        if n.q.phi.is_empty() && matches!(n.body, Body::Constant) {
            return &self.lazy_constant(n).1;
        }
        if linear::shared::is_shared(n) {
            return &n.lazy.get_or_init(|| linear::shared::dense_state(n)).1;
        }
        if gated_derived(n) || self.gated_grouped_w(node.0) {
            return &n.lazy.get_or_init(|| self.gated_dense(node.0)).1;
        }
        if n.natural_on_request() {
            // A fused mixture index keeps q(z) and A only: φ = ln q + A, formed on the first call.
            return &n.lazy.get_or_init(|| (Vec::new(), n.natural_rows())).1;
        }
        &n.q.phi
    }

    /// Whether node i is the data of a linear-Gaussian structure (it keeps no per-element moments).
    pub(super) fn serves_data(&self, i: usize) -> bool {
        self.linear[i].as_ref().is_some_and(|l| l.y == i)
    }

    pub(super) fn lazy_constant<'a>(&self, n: &'a Node) -> &'a (Vec<f64>, Vec<f64>) {
        n.lazy
            .get_or_init(|| (constant_moments(n), vec![0.0; n.n * n.len]))
    }

    /// Moment layout of a node.
    pub fn kind(&self, node: NodeId) -> MomentKind {
        self.nodes[node.0].kind
    }

    /// A constant's values or an observed node's data (row-major; empty for a latent node): the
    /// array the graph was given (`Graph::constant_shared`, `Graph::observe_shared`), not a copy,
    /// so `Arc::ptr_eq` tells whether the caller's data set and the fit hold one array.
    pub fn data_array(&self, node: NodeId) -> &std::sync::Arc<Vec<f64>> {
        &self.nodes[node.0].data
    }

    /// Number of plate elements of a node.
    pub fn elements(&self, node: NodeId) -> usize {
        self.nodes[node.0].n
    }

    /// Looks a node up by name.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(NodeId)
    }

    /// Posterior mean of a node, one value vector per element: ⟨x⟩ for Gaussian, Gamma and scalar
    /// nodes, ⟨Λ⟩ for Wishart, E\[p\] for Dirichlet/Beta, Q(x = ·) for Categorical.
    /// `None` for a dot node served by the linear kernel (its moments are not kept).
    pub fn mean(&self, node: NodeId) -> Option<Vec<f64>> {
        let n = &self.nodes[node.0];
        if n.q.u.is_empty() && !self.serves_data(node.0) && !gated_derived(n) {
            // Constant covariates kept as values only (their outer products are never formed).
            return matches!(n.body, Body::Constant).then(|| n.data.to_vec());
        }
        let all = self.moments(node);
        if let (true, MomentKind::Gaussian { d }) = (linear::shared::is_shared(n), n.kind) {
            // Means stored first, one covariance after them.
            return Some(n.q.u[..n.n * d].to_vec());
        }
        let mut out = Vec::new();
        for e in 0..n.n {
            let u = &all[e * n.len..(e + 1) * n.len];
            match n.kind {
                MomentKind::Gaussian { d } => out.extend_from_slice(&u[..d]),
                MomentKind::Gamma | MomentKind::Scalar => out.push(u[0]),
                // u[0] = c·⟨a⟩ (MomentKind::GammaShape).
                MomentKind::GammaShape => out.push(match n.dist() {
                    Some(crate::dist::Dist::ShapeGamma(g)) => u[0] / g.scale,
                    _ => u[0],
                }),
                MomentKind::Wishart { d } => out.extend_from_slice(&u[..d * d]),
                MomentKind::Categorical { .. } => out.extend_from_slice(u),
                MomentKind::Dirichlet { .. } => {
                    // Known tables (constants) keep ⟨ln p⟩ only, like observed values.
                    let phi = || &n.q.phi[e * n.len..(e + 1) * n.len];
                    if n.is_observed(e) || n.map || matches!(n.body, Body::Constant) {
                        out.extend(u.iter().map(|v| v.exp()));
                    } else if let Some(m) = n.dist().and_then(|d| d.mean(phi())) {
                        out.extend(m);
                    } else {
                        let phi = phi();
                        let total: f64 = phi.iter().map(|p| p + 1.0).sum();
                        out.extend(phi.iter().map(|p| (p + 1.0) / total));
                    }
                }
            }
        }
        Some(out)
    }

    /// Names and sizes of the plates.
    pub fn plates(&self) -> &[(String, usize)] {
        &self.plates
    }

    /// Distribution name of a stochastic node or factor name of a deterministic one.
    pub fn family(&self, node: NodeId) -> &'static str {
        match &self.nodes[node.0].body {
            Body::Stochastic(d) => d.name(),
            Body::Deterministic(f) => f.name(),
            Body::Constant => "constant",
            Body::Chain(ch) => match ch.kind {
                chain::ChainKind::Discrete { .. } => "MarkovChain",
                chain::ChainKind::Gaussian { .. } => "GaussianMarkovChain",
            },
        }
    }

    /// Names of all nodes, in order.
    pub fn names(&self) -> Vec<&str> {
        self.nodes.iter().map(|n| n.name.as_str()).collect()
    }

    /// Whether a node has observed elements.
    pub fn is_observed(&self, node: NodeId) -> bool {
        !self.nodes[node.0].observed.is_none()
    }

    /// The node's plate names.
    pub fn node_plates(&self, node: NodeId) -> Vec<&str> {
        self.nodes[node.0]
            .plates
            .iter()
            .map(|&p| self.plates[p].0.as_str())
            .collect()
    }

    /// Uses the node's `dist` (if stochastic).
    pub fn distribution(&self, node: NodeId) -> Option<&Dist> {
        self.nodes[node.0].dist()
    }
}

/// A gated block's dot or sum (no moments kept), or its x (compact moments): readers get
/// per-element moments formed on request (`gated_linear/dense.rs`).
fn gated_derived(n: &Node) -> bool {
    use crate::network::GatedRole;
    matches!(
        n.gated,
        Some(GatedRole::Latent | GatedRole::Product | GatedRole::Mean)
    )
}
