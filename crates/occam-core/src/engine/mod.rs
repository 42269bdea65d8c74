//! The VMP engine: storage of every node's natural parameters and moments over its plates (struct of
//! arrays), the generic update (Winn (2.19)), messages (2.17–2.18, 2.46–2.49, 2.50–2.53) and the
//! bound as a sum of per-node terms (2.34–2.36, corrected as in the digest's errata E3–E4).
//!
//! Written once for every family: a node update gathers the messages of its children, adds the
//! expected prior natural parameters, and maps φ to moments; the per-family formulas live in
//! [`crate::dist`] and [`crate::factor`].
//!
//! Speed without special cases in the formulas: messages and bound terms are multilinear in the
//! moments, so sums over elements that share parents (per component of a mixture, per group of
//! elements) are formed once, cached per node until an input changes (`NodeCache`), and multiplied
//! by the parents' moments. A mixture index whose children are such mixtures is updated in one
//! pass that also produces those sums (module `fused`); a sweep then touches each element once.
//!
//! Files: this one holds the storage types, scheduling (sweeps, restarts, pruning) and accessors;
//! `elements` what an element reads (parent moments, priors, cached sums), `update` (2.19),
//! `messages`, `bound`, `init` (initialisation and ancestral sampling) and `fused`.

use crate::dist::{Dist, DistVisitor, ExpFamily};
use crate::error::{BuildError, RunError};
use crate::factor::Factor;
use crate::graph::{Graph, NodeId, MAX_SLOTS};
use crate::kernels;
use crate::moments::MomentKind;
use crate::plate::{count, Axis};
use crate::Rng;
use rand::SeedableRng;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

mod bound;
mod chain;
mod driver;
mod elements;
mod fused;
mod init;
mod linear;
mod messages;
mod prune;
mod transform;
mod tree;
mod update;

pub use chain::{
    chain_family, GaussianMarkovChain, MarkovChain, CHAINS, GAUSSIAN_MARKOV_CHAIN, MARKOV_CHAIN,
};
pub use driver::{Fit, Flow, Observer, Progress, RunOptions, Stage, Stop, StopReason, Warning};
use elements::*;
pub use transform::GaussianSums;

/// What a node computes.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    Stochastic(Dist),
    Deterministic(Factor),
    /// Known values with per-element moments (e.g. regressors); contributes nothing to the bound.
    Constant,
    /// A q-block: one joint q over the time plate of each sequence (module `chain`).
    Chain(chain::Chain),
}

/// Where a parent slot's moments come from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    Node(usize),
    /// Fixed moments of a constant (already stacked), shared by every element.
    Const(Vec<f64>),
}

/// A parent slot: for every extended child element (element × selector configuration) and stacked
/// index, the parent element it reads. A parent without plates read unstacked has no map (the
/// broadcast rule: every element reads element 0; `Edge::at`).
#[derive(Clone, Debug)]
pub(crate) struct Edge {
    pub source: Source,
    pub map: Vec<u32>,
    pub stack: usize,
    pub plen: usize,
}

impl Edge {
    /// The parent element read by extended child element `ext` (unstacked).
    pub(crate) fn at(&self, ext: usize) -> usize {
        self.map.get(ext).map_or(0, |&m| m as usize)
    }

    /// Adds a message for extended child element `ext` (`stack` parent messages back to back) into
    /// the parents' accumulator `out`.
    fn scatter(&self, ext: usize, m: &[f64], out: &mut [f64]) {
        for t in 0..self.stack {
            let pe = self.at(ext * self.stack + t);
            let src = &m[t * self.plen..(t + 1) * self.plen];
            out[pe * self.plen..(pe + 1) * self.plen]
                .iter_mut()
                .zip(src)
                .for_each(|(o, v)| *o += v);
        }
    }
}

/// A Categorical index of a mixture node: `map[e]` is the index node's element for child element e.
#[derive(Clone, Debug)]
pub(crate) struct Selector {
    pub node: usize,
    pub k: usize,
    pub map: Vec<u32>,
}

/// How a child is attached to a parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Slot(usize),
    Selector(usize),
}

/// How a latent node's q starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// q = the prior given the parents' initial moments (Winn §2.5.1, method 2).
    Prior,
    /// Moments of a draw from the prior, seeded (symmetry breaking, method 1).
    Random,
    /// For the index of a mixture with observed children: k-means ([`crate::kmeans`]: greedy
    /// k-means++ seeding, then Lloyd iterations) on the observed values each index element selects,
    /// and a hard assignment of every element to its cluster. The default for mixture indices
    /// (scikit-learn's default is k-means too); falls back to `Random` when the index has no
    /// observed mixture child.
    KMeansPlusPlus,
    /// Given moment vectors, one per element (e.g. responsibilities of a Categorical).
    Moments(Vec<f64>),
    /// Given natural parameters, one vector per element.
    Natural(Vec<f64>),
}

/// A node's (φ, u, A) arrays, moved in and out as a unit.
type State = (Vec<f64>, Vec<f64>, Vec<f64>);

/// A node's storage: natural parameters, moments and log-partition for every plate element.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub name: String,
    pub plates: Vec<usize>,
    pub axes: Vec<Axis>,
    pub n: usize,
    pub len: usize,
    pub kind: MomentKind,
    pub body: Body,
    pub parents: Vec<Edge>,
    pub selectors: Vec<Selector>,
    pub configs: usize,
    pub children: Vec<(usize, Role)>,
    pub phi: Vec<f64>,
    pub u: Vec<f64>,
    /// A(φ) of latent elements; f(x) of observed and MAP elements.
    pub a: Vec<f64>,
    /// `observed[e]`: element e is data (empty: no element is).
    pub observed: Vec<bool>,
    /// Observed values (row-major, `value_len` per element).
    pub data: Vec<f64>,
    pub map: bool,
    pub init: Option<Init>,
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
    /// The tree-structured q-block the node is a member of (module `tree`).
    pub block: Option<usize>,
}

impl Node {
    pub(crate) fn new(
        name: String,
        plates: Vec<usize>,
        axes: Vec<Axis>,
        body: Body,
        kind: MomentKind,
        parents: Vec<Edge>,
        selectors: Vec<Selector>,
    ) -> Self {
        let n = count(&axes);
        let len = kind.len();
        let configs = selectors.iter().map(|s| s.k).product();
        Node {
            name,
            plates,
            axes,
            n,
            len,
            kind,
            body,
            parents,
            selectors,
            configs,
            children: Vec::new(),
            phi: vec![0.0; n * len],
            u: vec![0.0; n * len],
            a: vec![0.0; n],
            observed: Vec::new(),
            data: Vec::new(),
            map: false,
            init: None,
            config_only: false,
            period: 1,
            groups: None,
            lazy: std::sync::OnceLock::new(),
            block: None,
        }
    }

    fn dist(&self) -> Option<&Dist> {
        match &self.body {
            Body::Stochastic(d) => Some(d),
            _ => None,
        }
    }

    fn is_observed(&self, e: usize) -> bool {
        !self.observed.is_empty() && self.observed[e]
    }

    /// Whether element e takes part in messages and the bound: a missing element of a leaf is
    /// integrated out exactly and does not.
    fn participates(&self, e: usize) -> bool {
        self.is_observed(e) || self.observed.is_empty() || !self.children.is_empty()
    }

    fn has_latent(&self) -> bool {
        matches!(self.body, Body::Chain(_))
            || matches!(self.body, Body::Stochastic(_))
                && (0..self.n).any(|e| !self.is_observed(e) && self.participates(e))
    }

    pub(crate) fn set_data(
        &mut self,
        values: &[f64],
        mask: Option<&[bool]>,
    ) -> Result<(), BuildError> {
        let dist = match &self.body {
            Body::Stochastic(d) => d.clone(),
            Body::Deterministic(_) | Body::Constant | Body::Chain(_) => {
                return Err(BuildError::Shape {
                    node: self.name.clone(),
                    what: "only stochastic nodes can be observed".into(),
                })
            }
        };
        let vlen = value_len(&dist);
        if values.len() != self.n * vlen {
            return Err(BuildError::Shape {
                node: self.name.clone(),
                what: format!(
                    "expected {} observed values ({} elements × {vlen}), got {}",
                    self.n * vlen,
                    self.n,
                    values.len()
                ),
            });
        }
        if let Some(m) = mask {
            if m.len() != self.n {
                return Err(BuildError::Shape {
                    node: self.name.clone(),
                    what: format!("mask has {} entries for {} elements", m.len(), self.n),
                });
            }
        }
        let observed = mask.map_or_else(|| vec![true; self.n], |m| m.to_vec());
        // Checked here; u(x) and f(x) are formed at compilation, for the nodes that keep them
        // (`observed_state`: the data of a linear-Gaussian structure keeps its values only).
        observe_each(&dist, self.len, values, &observed, |_, _, _| {}).map_err(|(e, why)| {
            BuildError::Value {
                node: self.name.clone(),
                element: e,
                why,
            }
        })?;
        self.observed = observed;
        self.data = values.to_vec();
        Ok(())
    }

    /// u(x) and f(x) of the observed elements (values checked by `set_data`).
    fn observed_state(&mut self) {
        let Some(dist) = self.dist().cloned() else {
            return;
        };
        let (len, u, a) = (self.len, &mut self.u, &mut self.a);
        observe_each(&dist, len, &self.data, &self.observed, |e, ue, f| {
            u[e * len..(e + 1) * len].copy_from_slice(ue);
            a[e] = f;
        })
        .expect("values are checked when observed");
    }

    /// Σ f(x) over the observed elements (values checked by `set_data`).
    fn observed_own(&self) -> f64 {
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

/// Finds the linear-Gaussian structures (module `linear`), drops the state they make unnecessary
/// (the dot node's moments, constant covariates' outer products) and gives every other constant its
/// moments.
fn linear_structures(nodes: &mut [Node], enabled: bool) -> Vec<Option<Arc<linear::Linear>>> {
    let mut out: Vec<Option<Arc<linear::Linear>>> = vec![None; nodes.len()];
    if enabled {
        for f in 0..nodes.len() {
            if let Some(mut l) = linear::detect(nodes, f) {
                // y's own term once (its elements are data or missing leaf entries); y keeps
                // neither u(y) nor f(y) per element (formed on request, `Vmp::moments`).
                let yn = &mut nodes[l.y];
                l.own = yn.observed_own();
                (yn.u, yn.a) = (Vec::new(), Vec::new());
                let l = Arc::new(l);
                let y = l.y;
                for i in [Some(f), l.sum].into_iter().flatten() {
                    let node = &mut nodes[i];
                    (node.phi, node.u, node.a) = (Vec::new(), Vec::new(), Vec::new());
                    out[i] = Some(l.clone());
                }
                out[y] = Some(l);
            }
        }
    }
    for i in 0..nodes.len() {
        if !matches!(nodes[i].body, Body::Constant) {
            continue;
        }
        let points_only = nodes[i].children.iter().all(|&(c, role)| {
            out[c]
                .as_ref()
                .is_some_and(|l| l.f == c && l.points && role == Role::Slot(l.row_slot))
        });
        if points_only && !nodes[i].children.is_empty() {
            continue;
        }
        nodes[i].u = constant_moments(&nodes[i]);
    }
    out
}

/// u(x) of an observed node's data elements, zero for its missing ones.
fn observed_moments(node: &Node) -> Vec<f64> {
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
fn constant_moments(node: &Node) -> Vec<f64> {
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

fn value_len(d: &Dist) -> usize {
    struct V;
    impl DistVisitor for V {
        type Output = usize;
        fn visit<D: ExpFamily>(self, d: &D) -> usize {
            d.value_len()
        }
    }
    d.visit(V)
}

/// u(x) and f(x) of every observed element e of `values` (`observed[e]`), one dispatch on the
/// family for all of them: `each(e, u, f)`; stops at the first invalid value.
fn observe_each(
    d: &Dist,
    len: usize,
    values: &[f64],
    observed: &[bool],
    each: impl FnMut(usize, &[f64], f64),
) -> Result<(), (usize, String)> {
    struct O<'a, F>(&'a [f64], &'a [bool], usize, F);
    impl<F: FnMut(usize, &[f64], f64)> DistVisitor for O<'_, F> {
        type Output = Result<(), (usize, String)>;
        fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
            let O(values, observed, len, mut each) = self;
            let (vlen, mut u) = (d.value_len(), vec![0.0; len]);
            for (e, _) in observed.iter().enumerate().filter(|(_, &o)| o) {
                let f = d.observe(&values[e * vlen..(e + 1) * vlen], &mut u);
                each(e, &u, f.map_err(|why| (e, why))?);
            }
            Ok(())
        }
    }
    d.visit(O(values, observed, len, each))
}

fn observe(d: &Dist, x: &[f64], u: &mut [f64]) -> Result<f64, String> {
    struct O<'a>(&'a [f64], &'a mut [f64]);
    impl DistVisitor for O<'_> {
        type Output = Result<f64, String>;
        fn visit<D: ExpFamily>(self, d: &D) -> Result<f64, String> {
            d.observe(self.0, self.1)
        }
    }
    d.visit(O(x, u))
}

/// Products over a node's elements, reused until an input changes (entries are dropped by
/// `Vmp::changed`). They make a sweep's bound and most messages independent of the number of
/// elements: by multilinearity each is a small product of these sums with the parents' moments.
#[derive(Default)]
struct NodeCache {
    /// `config_only` mixture: S = Wᵀ U and the totals of W (inputs: the node and its selector).
    stats: Option<Arc<(Vec<f64>, Vec<f64>)>>,
    /// `config_only` mixture: L = U Θᵀ − A (inputs: the node and its parents).
    scores: Option<Arc<Vec<f64>>>,
    /// Node with element groups: Σ u of each group's participating elements and their number
    /// (input: the node).
    group_sums: Option<Arc<(Vec<f64>, Vec<f64>)>>,
    /// Σ over participating elements of A(φ) − φ·u (latent) or f(x) (observed, MAP) (input: the node).
    own: Option<f64>,
    /// Dot node with a linear-Gaussian child: products of the data with its column parent's moments
    /// (input: that parent; `linear`).
    linear: Option<Arc<linear::ColumnProducts>>,
    /// Sum node of a dot product and offsets: the data less the offsets' means (inputs: the
    /// offsets; `linear`).
    offsets: Option<Arc<linear::Effective>>,
}

type Cache = Mutex<HashMap<usize, NodeCache>>;

/// A compiled model, ready for inference.
pub struct Vmp {
    cache: Cache,
    pub(crate) nodes: Vec<Node>,
    pub(crate) plates: Vec<(String, usize)>,
    /// Deterministic nodes to refresh, in order, after each node's update.
    refresh_after: Vec<Vec<usize>>,
    /// `fused[i]`: node i is a mixture index updated by `fused::update_fused`.
    fused: Vec<bool>,
    /// The linear-Gaussian structure node i (its dot node F or its Gaussian child y) belongs to.
    linear: Vec<Option<Arc<linear::Linear>>>,
    /// The structure that is node i's only child, if node i may keep one covariance for all its
    /// elements (`linear::shared`).
    shared: Vec<Option<Arc<linear::Linear>>>,
    /// The tree-structured q-blocks (module `tree`).
    trees: Vec<tree::Block>,
    /// The last message array, kept for the next update (see `child_messages`).
    scratch: Mutex<Vec<f64>>,
    initialized: bool,
}

impl Vmp {
    /// Compiles `graph`; `linear_kernels: false` keeps every dot product on the element-by-element
    /// path (the reference the kernels are tested against).
    pub(crate) fn new(graph: Graph, linear_kernels: bool) -> Result<Vmp, BuildError> {
        let Graph {
            plates, mut nodes, ..
        } = graph;
        for node in nodes.iter_mut() {
            node.groups = element_groups(node);
            // A member's messages and bound read its family's joint q, not products of marginals.
            if node.block.is_some() {
                continue;
            }
            if let Some(period) = mixture_period(node) {
                node.config_only = true;
                node.period = period;
            }
        }
        for n in &nodes {
            if n.map && !n.observed.is_empty() && n.observed.iter().all(|&o| o) {
                return Err(BuildError::Shape {
                    node: n.name.clone(),
                    what: "an observed node cannot be MAP".into(),
                });
            }
        }
        chain::check(&nodes)?;
        let trees = tree::build(&nodes)?;
        // Deterministic descendants reached through deterministic nodes only, in topological order.
        // A search along child edges from each node: linear in the edges reached, where a scan of
        // every later node made compiling a chain of 10⁴ variables quadratic. Children come after
        // their parents, so sorted indices are a topological order.
        let mut refresh_after = vec![Vec::new(); nodes.len()];
        let mut mark = vec![usize::MAX; nodes.len()];
        for (i, list) in refresh_after.iter_mut().enumerate() {
            let mut stack = vec![i];
            mark[i] = i;
            while let Some(x) = stack.pop() {
                for (j, role) in &nodes[x].children {
                    if matches!(role, Role::Slot(_))
                        && mark[*j] != i
                        && matches!(nodes[*j].body, Body::Deterministic(_))
                    {
                        mark[*j] = i;
                        list.push(*j);
                        stack.push(*j);
                    }
                }
            }
            list.sort_unstable();
        }
        let fused = (0..nodes.len())
            .map(|i| nodes[i].block.is_none() && fused::fusable(&nodes, i))
            .collect();
        let linear = linear_structures(&mut nodes, linear_kernels);
        for (i, node) in nodes.iter_mut().enumerate() {
            if !node.observed.is_empty() && linear[i].as_ref().is_none_or(|l| l.y != i) {
                node.observed_state();
            }
        }
        let shared = linear::shared::designate(&nodes, &linear);
        Ok(Vmp {
            nodes,
            plates,
            refresh_after,
            fused,
            linear,
            shared,
            trees,
            scratch: Mutex::default(),
            initialized: false,
            cache: Cache::default(),
        })
    }

    fn id(&self, node: NodeId) -> usize {
        node.0
    }

    fn numerical(&self, node: usize, element: usize, what: String) -> RunError {
        RunError::Numerical {
            node: self.nodes[node].name.clone(),
            element,
            what,
        }
    }

    /// Drops cached products that read node i's moments (its own and its children's).
    fn changed(&self, i: usize) {
        let mut cache = self.cache.lock().expect("cache lock");
        cache.remove(&i);
        for &(c, role) in &self.nodes[i].children {
            if let Some(l) = self.linear[c].as_ref().filter(|l| l.sum == Some(c)) {
                // An offset of a linear structure: the data less the offsets and their products.
                cache.remove(&c);
                if let Some(entry) = cache.get_mut(&l.f) {
                    entry.linear = None;
                }
                continue;
            }
            if let Some(entry) = cache.get_mut(&c) {
                match role {
                    // Scores read the parents' moments; statistics read the selector's.
                    Role::Slot(s) => {
                        entry.scores = None;
                        if self.linear[c].as_ref().is_some_and(|l| l.row_slot != s) {
                            entry.linear = None;
                        }
                    }
                    Role::Selector(_) => entry.stats = None,
                }
            }
        }
    }

    /// Keeps a message array for the next `child_messages`.
    fn recycle(&self, buffer: Vec<f64>) {
        let mut scratch = self.scratch.lock().expect("scratch lock");
        if buffer.capacity() > scratch.capacity() {
            *scratch = buffer;
        }
    }

    /// Drops every cached product.
    fn changed_all(&self) {
        self.cache.lock().expect("cache lock").clear();
    }

    /// Recomputes a deterministic node's moments from its parents — Winn (2.41). A dot node served
    /// by the linear kernel keeps none (its child reads sums instead).
    fn refresh(&mut self, i: usize) {
        // (A sum of F and offsets is formed only from F's moments formed for sampling.)
        if let Some(l) = &self.linear[i] {
            if l.f == i || l.sum == Some(i) && self.nodes[l.f].u.is_empty() {
                return;
            }
        }
        let node = &self.nodes[i];
        let Body::Deterministic(f) = &node.body else {
            return;
        };
        let mut u = vec![0.0; node.n * node.len];
        let mut buf = Vec::new();
        for e in 0..node.n {
            let pa = gather(&self.nodes, node, e, &mut buf);
            f.moments(
                &pa[..node.parents.len()],
                &mut u[e * node.len..(e + 1) * node.len],
            );
        }
        self.nodes[i].u = u;
        self.changed(i);
    }

    /// The default schedule: latent stochastic nodes, parents before children, except that nodes
    /// whose start carries information — a mixture index's k-means++ assignment, a random or given
    /// start (see `start` in `init`) — come after the others. The first sweep then updates the
    /// component parameters and the other factors of a product *from* that start; updating a
    /// mixture index first would recompute it from the prior's identical components and lose it
    /// (every point equally in every component, one component left after a few sweeps).
    /// Coordinate ascent raises the bound in any order; the order only decides where it ends.
    pub fn default_order(&self) -> Vec<NodeId> {
        let latent: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].has_latent() && !self.tree_follower(i))
            .collect();
        let (from_start, rest): (Vec<usize>, Vec<usize>) = latent
            .into_iter()
            .partition(|&i| !matches!(self.start(i), Init::Prior));
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
                for q in node.u.chunks(k) {
                    counts.iter_mut().zip(q).for_each(|(c, p)| *c += p);
                }
                (NodeId(i), counts.iter().filter(|&&c| c >= 1.0).count(), k)
            })
            .collect()
    }

    /// Posterior moments ⟨u⟩ of a node, all elements (row-major over its plates). Empty for a dot
    /// node served by the linear kernel, and for the sum of it and offsets (their moments are not
    /// kept). The data of that kernel keep their values only; u(y) is formed on the first call. Constant covariates read only
    /// by that kernel keep their values; their moments are formed on the first call.
    pub fn moments(&self, node: NodeId) -> &[f64] {
        let n = &self.nodes[node.0];
        if n.u.is_empty() && matches!(n.body, Body::Constant) {
            return &self.lazy_constant(n).0;
        }
        if n.u.is_empty() && self.serves_data(node.0) {
            return &n.lazy.get_or_init(|| (observed_moments(n), Vec::new())).0;
        }
        if linear::shared::is_shared(n) {
            return &n.lazy.get_or_init(|| linear::shared::dense_state(n)).0;
        }
        &n.u
    }

    /// Posterior natural parameters φ of a node, all elements (zero for constants; empty for a dot
    /// node served by the linear kernel).
    pub fn natural(&self, node: NodeId) -> &[f64] {
        let n = &self.nodes[node.0];
        if n.phi.is_empty() && matches!(n.body, Body::Constant) {
            return &self.lazy_constant(n).1;
        }
        if linear::shared::is_shared(n) {
            return &n.lazy.get_or_init(|| linear::shared::dense_state(n)).1;
        }
        &n.phi
    }

    /// Whether node i is the data of a linear-Gaussian structure (it keeps no per-element moments).
    fn serves_data(&self, i: usize) -> bool {
        self.linear[i].as_ref().is_some_and(|l| l.y == i)
    }

    fn lazy_constant<'a>(&self, n: &'a Node) -> &'a (Vec<f64>, Vec<f64>) {
        n.lazy
            .get_or_init(|| (constant_moments(n), vec![0.0; n.n * n.len]))
    }

    /// Moment layout of a node.
    pub fn kind(&self, node: NodeId) -> MomentKind {
        self.nodes[node.0].kind
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
    /// nodes, ⟨Λ⟩ for Wishart, E[p] for Dirichlet/Beta, Q(x = ·) for Categorical.
    /// `None` for a dot node served by the linear kernel (its moments are not kept).
    pub fn mean(&self, node: NodeId) -> Option<Vec<f64>> {
        let n = &self.nodes[node.0];
        if n.u.is_empty() && !self.serves_data(node.0) {
            // Constant covariates kept as values only (their outer products are never formed).
            return matches!(n.body, Body::Constant).then(|| n.data.clone());
        }
        let all = self.moments(node);
        if let (true, MomentKind::Gaussian { d }) = (linear::shared::is_shared(n), n.kind) {
            // Means stored first, one covariance after them.
            return Some(n.u[..n.n * d].to_vec());
        }
        let mut out = Vec::new();
        for e in 0..n.n {
            let u = &all[e * n.len..(e + 1) * n.len];
            match n.kind {
                MomentKind::Gaussian { d } => out.extend_from_slice(&u[..d]),
                MomentKind::Gamma | MomentKind::Scalar => out.push(u[0]),
                MomentKind::Wishart { d } => out.extend_from_slice(&u[..d * d]),
                MomentKind::Categorical { .. } => out.extend_from_slice(u),
                MomentKind::Dirichlet { .. } => {
                    // Known tables (constants) keep ⟨ln p⟩ only, like observed values.
                    if n.is_observed(e) || n.map || matches!(n.body, Body::Constant) {
                        out.extend(u.iter().map(|v| v.exp()));
                    } else {
                        let phi = &n.phi[e * n.len..(e + 1) * n.len];
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
        !self.nodes[node.0].observed.is_empty()
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
