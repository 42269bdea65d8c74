//! The engine's node: a built node's structure (see [`crate::network`]) with its inference state —
//! natural parameters, moments and log-partition of every plate element (struct of arrays), and
//! the compiled facts the fast paths read (mixture runs, element groups, lazily formed moments).

use super::*;
use crate::network::GatedRole;

/// A node's inference state: natural parameters, moments and log-partition of every plate element
/// (struct of arrays), moved in and out as a unit (updates, restart snapshots).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NodeState {
    /// φ of every element (`len` per element); empty where it is formed on request.
    pub phi: Vec<f64>,
    /// u = ∂A/∂φ of every element (`len` per element).
    pub u: Vec<f64>,
    /// A(φ) of latent elements; f(x) of observed and MAP elements (a chain: one record per
    /// sequence; a tree-block member: its family marginals, see module `tree`).
    pub a: Vec<f64>,
}

impl NodeState {
    /// Makes `self` a copy of `src`, reusing `self`'s buffers (no allocation once they are large
    /// enough; a derived `clone_from` would allocate anew).
    pub(crate) fn copy_from(&mut self, src: &NodeState) {
        self.phi.clone_from(&src.phi);
        self.u.clone_from(&src.u);
        self.a.clone_from(&src.a);
    }
}

/// The engine's node: the built node it reads (shared with the [`Graph`] it was compiled from and
/// with every other compilation of it, never copied), its state, and the compiled facts the fast
/// paths read. Fields of the built node are read through `Deref`.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// The static node: family or factor, plates, edges, data, start.
    pub model: Arc<ModelNode>,
    /// φ, u and A of every element.
    pub q: NodeState,
    /// Mixture with one selector whose parents depend on the component only (not on the element),
    /// or on the component and the position within runs of `period` consecutive elements that read
    /// one selector element (e.g. x[N, D] with mu[K, D] selected by z[N]: runs of D). A run's moments
    /// are then one row of length `period · len`, and its statistics and log-densities are matrix
    /// products (`kernels`).
    pub config_only: bool,
    /// Run length of a `config_only` mixture (1: parents depend on the component alone).
    pub period: usize,
    /// For nodes without selectors whose elements share parents: the group (distinct tuple of
    /// parent elements) of each element and one representative element per group. Messages are then
    /// sent once per group from the summed moments (exact by multilinearity).
    pub groups: Option<(Vec<u32>, Vec<u32>)>,
    /// A constant kept as values only (`u` empty, see `linear`), or a node in the shared form
    /// (`linear::shared`): its per-element moments and natural parameters, formed on request.
    pub lazy: std::sync::OnceLock<(Vec<f64>, Vec<f64>)>,
    /// An observed mixture child's data moments in its family's packed layout, read by the fused
    /// index update (module `packed`); set when compiling.
    pub packed: Option<super::packed::Packed>,
    /// The prior ⟨φ⟩ and ⟨A⟩ shared by every element of a stochastic node without selectors whose
    /// every parent is an inline constant (e.g. a Dirichlet's or a Wishart's fixed
    /// hyperparameters), computed once when compiling instead of at each update and bound.
    pub fixed_prior: Option<(Vec<f64>, f64)>,
    /// A start that replaces the model's `init` for one run (the driver's candidate starts of a
    /// mixture index, `driver/candidates.rs`); `None`: the model's own.
    pub start_override: Option<Init>,
}

impl std::ops::Deref for Node {
    type Target = ModelNode;
    fn deref(&self) -> &ModelNode {
        &self.model
    }
}

impl Node {
    /// The engine's node for a built one: its structure, and zeroed state (natural parameters,
    /// moments, and one log-partition per element — one record per sequence for a chain; none
    /// for a constant, whose moments are formed from its values when compiling).
    pub(super) fn from_model(model: Arc<ModelNode>) -> Self {
        let (n, len) = (model.n, model.len);
        let compact = matches!(
            model.gated,
            Some(GatedRole::Latent | GatedRole::Product | GatedRole::Mean)
        );
        let q = match &model.body {
            // A gated block's x, dot and sum: the block's start forms x's compact state
            // (`gated_linear`); the dot and the sum keep none.
            _ if compact => NodeState::default(),
            Body::Constant => NodeState::default(),
            Body::Chain(ch) => NodeState {
                phi: vec![0.0; n * len],
                u: vec![0.0; n * len],
                a: vec![0.0; ch.lengths.len() * ch.stride()],
            },
            _ => NodeState {
                phi: vec![0.0; n * len],
                u: vec![0.0; n * len],
                a: vec![0.0; n],
            },
        };
        Node {
            model,
            q,
            config_only: false,
            period: 1,
            groups: None,
            lazy: std::sync::OnceLock::new(),
            packed: None,
            fixed_prior: None,
            start_override: None,
        }
    }

    pub(super) fn dist(&self) -> Option<&Dist> {
        match &self.body {
            Body::Stochastic(d) => Some(d),
            _ => None,
        }
    }

    pub(super) fn is_observed(&self, e: usize) -> bool {
        self.observed.get(e)
    }

    /// Whether element e takes part in messages and the bound: a missing element of a leaf is
    /// integrated out exactly and does not.
    pub(super) fn participates(&self, e: usize) -> bool {
        self.is_observed(e) || self.observed.is_none() || !self.children.is_empty()
    }

    /// Whether φ is not kept and formed on request from q: a fused mixture index updated as
    /// whole blocks with one prior (module `fused`) keeps u and A only (`phi` empty), since φ_ek = ln u_ek + A_e for a
    /// Categorical (u = exp(φ − A), Winn (2.19)); see [`Node::natural_row`].
    pub(super) fn natural_on_request(&self) -> bool {
        self.forms_natural_for(&self.q.phi, &self.q.u)
    }

    /// Whether a q of this node with natural parameters `phi` and moments `u` keeps no φ and
    /// forms it on request ([`Node::natural_on_request`] for the node's own q; a saved state's
    /// arrays when one is put back).
    pub(super) fn forms_natural_for(&self, phi: &[f64], u: &[f64]) -> bool {
        phi.is_empty()
            && !u.is_empty()
            && matches!(self.kind, MomentKind::Categorical { .. })
            && matches!(self.body, Body::Stochastic(_))
    }

    /// φ of element e (a Categorical whose φ is not kept) into `out`: ln u + A for a latent
    /// element (−∞ where u = 0), zero for a data element (as the update leaves it).
    pub(super) fn natural_row(&self, e: usize, out: &mut [f64]) {
        let u = &self.q.u[e * self.len..(e + 1) * self.len];
        natural_of(self.is_observed(e), u, self.q.a[e], out);
    }

    /// Every element's φ of a Categorical whose φ is not kept (see [`Node::natural_row`]).
    pub(super) fn natural_rows(&self) -> Vec<f64> {
        self.natural_rows_from(&self.q.u, &self.q.a)
    }

    /// [`Node::natural_rows`] from moved-out q (`u`) and A (`a`).
    pub(super) fn natural_rows_from(&self, u: &[f64], a: &[f64]) -> Vec<f64> {
        let mut phi = vec![0.0; u.len()];
        for (e, (row, q)) in phi
            .chunks_exact_mut(self.len)
            .zip(u.chunks_exact(self.len))
            .enumerate()
        {
            natural_of(self.is_observed(e), q, a[e], row);
        }
        phi
    }

    /// After an edit of a Categorical's moments u alone (a pruning deletion or relabelling): a
    /// kept φ belongs to the old q, so it is dropped and formed from u on request
    /// ([`Node::natural_row`]: φ_ek = ln u_ek + A_e, whose softmax is u) until the next update
    /// keeps one again; the lazily formed φ is dropped too.
    pub(super) fn drop_natural(&mut self) {
        debug_assert!(matches!(self.kind, MomentKind::Categorical { .. }));
        self.q.phi = Vec::new();
        self.lazy = Default::default();
    }

    /// Which of a Categorical's k categories some observed element takes (its one-hot u).
    pub(super) fn observed_categories(&self, k: usize) -> Vec<bool> {
        let mut named = vec![false; k];
        for e in (0..self.n).filter(|&e| self.is_observed(e)) {
            for (j, v) in self.q.u[e * k..(e + 1) * k].iter().enumerate() {
                named[j] |= *v > 0.0;
            }
        }
        named
    }

    /// Forms and keeps φ if it is not kept (before an update that writes φ element by element).
    pub(super) fn keep_natural(&mut self) {
        if self.natural_on_request() {
            self.q.phi = self.natural_rows();
        }
    }

    pub(super) fn has_latent(&self) -> bool {
        matches!(self.body, Body::Chain(_))
            || matches!(self.body, Body::Stochastic(_))
                && !self.observed.is_all()
                && (0..self.n).any(|e| !self.is_observed(e) && self.participates(e))
    }

    /// u(x) and f(x) of the observed elements (values checked by `set_data`).
    pub(super) fn observed_state(&mut self) {
        let Some(dist) = self.dist().cloned() else {
            return;
        };
        let (len, u, a) = (self.len, &mut self.q.u, &mut self.q.a);
        observe_each(
            &dist,
            len,
            &self.model.data,
            &self.model.observed,
            |e, ue, f| {
                u[e * len..(e + 1) * len].copy_from_slice(ue);
                a[e] = f;
            },
        )
        .expect("values are checked when observed");
    }

    /// Σ f(x) over the observed elements (values checked by `set_data`).
    pub(super) fn observed_own(&self) -> f64 {
        let Some(dist) = self.dist() else {
            return 0.0;
        };
        let mut own = 0.0;
        observe_each(dist, self.len, &self.data, &self.observed, |_, _, f| {
            own += f
        })
        .expect("values are checked when observed");
        own
    }
}

/// A Categorical element's φ from its q (`u`) and A: ln u + A (−∞ where u = 0), zero for a data
/// element (as the update leaves it).
fn natural_of(observed: bool, u: &[f64], a: f64, out: &mut [f64]) {
    if observed {
        out.iter_mut().for_each(|p| *p = 0.0);
    } else {
        out.iter_mut().zip(u).for_each(|(p, v)| *p = v.ln() + a);
    }
}

/// u(x) of an observed node's data elements, zero for its missing ones.
pub(super) fn observed_moments(node: &Node) -> Vec<f64> {
    let mut u = vec![0.0; node.n * node.len];
    if let Some(dist) = node.dist() {
        let len = node.len;
        observe_each(dist, len, &node.data, &node.observed, |e, ue, _| {
            u[e * len..(e + 1) * len].copy_from_slice(ue)
        })
        .expect("values are checked when observed");
    }
    u
}

/// The moments of a constant node's values.
pub(super) fn constant_moments(node: &Node) -> Vec<f64> {
    let vlen = node.kind.value_len();
    let mut u = Vec::with_capacity(node.n * node.len);
    for x in node.data.chunks_exact(vlen) {
        u.extend(
            node.kind
                .fixed_moments(x)
                .expect("constants are checked when added"),
        );
    }
    u
}

pub(super) fn observe(d: &Dist, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
    struct O<'a>(&'a [f64], &'a mut [f64]);
    impl DistVisitor for O<'_> {
        type Output = Result<f64, ValueError>;
        fn visit<D: ExpFamily>(self, d: &D) -> Result<f64, ValueError> {
            d.observe_value(self.0, self.1)
        }
    }
    d.visit(O(x, u))
}
