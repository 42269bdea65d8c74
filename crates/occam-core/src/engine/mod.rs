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

mod fused;

/// What a node computes.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    Stochastic(Dist),
    Deterministic(Factor),
    /// Known values with per-element moments (e.g. regressors); contributes nothing to the bound.
    Constant,
}

/// Where a parent slot's moments come from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    Node(usize),
    /// Fixed moments of a constant (already stacked), shared by every element.
    Const(Vec<f64>),
}

/// A parent slot: for every extended child element (element × selector configuration) and stacked
/// index, the parent element it reads.
#[derive(Clone, Debug)]
pub(crate) struct Edge {
    pub source: Source,
    pub map: Vec<u32>,
    pub stack: usize,
    pub plen: usize,
}

impl Edge {
    /// Adds a message for extended child element `ext` (`stack` parent messages back to back) into
    /// the parents' accumulator `out`.
    fn scatter(&self, ext: usize, m: &[f64], out: &mut [f64]) {
        for t in 0..self.stack {
            let pe = self.map[ext * self.stack + t] as usize;
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
    /// For the index of a mixture with observed children: k-means++ seeding (Arthur & Vassilvitskii
    /// 2007) on the observed values each index element selects, then a hard assignment of every
    /// element to its nearest seed. The default for mixture indices (sklearn's default is k-means
    /// too); falls back to `Random` when the index has no observed mixture child.
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
        matches!(self.body, Body::Stochastic(_))
            && (0..self.n).any(|e| !self.is_observed(e) && self.participates(e))
    }

    pub(crate) fn set_data(
        &mut self,
        values: &[f64],
        mask: Option<&[bool]>,
    ) -> Result<(), BuildError> {
        let dist = match &self.body {
            Body::Stochastic(d) => d.clone(),
            Body::Deterministic(_) | Body::Constant => {
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
        self.observed = mask.map_or_else(|| vec![true; self.n], |m| m.to_vec());
        self.data = values.to_vec();
        for e in 0..self.n {
            if !self.observed[e] {
                continue;
            }
            let x = &values[e * vlen..(e + 1) * vlen];
            let u = &mut self.u[e * self.len..(e + 1) * self.len];
            self.a[e] = observe(&dist, x, u).map_err(|why| BuildError::Value {
                node: self.name.clone(),
                element: e,
                why,
            })?;
        }
        Ok(())
    }
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

/// When to stop and how strict to be.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Maximum number of full sweeps.
    pub max_iter: usize,
    /// Stop when the bound's change over a sweep is below `tol · |L|`.
    pub tol: f64,
    /// Update order (latent nodes); `None`: parents before children, as added.
    pub order: Option<Vec<NodeId>>,
    /// Seed for random initialisation.
    pub seed: u64,
    /// A decrease of the bound is an error (tests) rather than a warning (users).
    pub decrease_is_error: bool,
    /// Compute the bound after every node update, not only after every sweep (slower; for tests).
    pub check_every_update: bool,
    /// After convergence, try deleting each used mixture component (smallest first) and keep a
    /// deletion whenever the converged bound increases (Winn §2.5.1 footnote 8, §3.3: model order
    /// adapted by deleting components, judged by L).
    pub prune_components: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_iter: 1000,
            tol: 1e-6,
            order: None,
            seed: 0,
            decrease_is_error: false,
            check_every_update: false,
            prune_components: false,
        }
    }
}

/// The outcome of a run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Fit {
    /// Final lower bound (nats).
    pub bound: f64,
    /// Sweeps performed.
    pub iterations: usize,
    /// Whether the tolerance was reached.
    pub converged: bool,
    /// Bound after every sweep.
    pub bound_trace: Vec<f64>,
    /// Per-node bound terms at the end, by name.
    pub node_bounds: Vec<(String, f64)>,
    /// Warnings (e.g. a bound decrease and its size).
    pub warnings: Vec<String>,
    /// Mixture components deleted by pruning (`RunOptions::prune_components`); each appends its
    /// converged bound to `bound_trace`, and its sweeps count in `iterations`.
    pub pruned_components: usize,
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
    initialized: bool,
}

/// Parent moments of one extended element: borrowed slices (stacked slots are gathered into `buf`).
fn gather<'a>(
    nodes: &'a [Node],
    node: &'a Node,
    ext: usize,
    buf: &'a mut Vec<f64>,
) -> [&'a [f64]; MAX_SLOTS] {
    buf.clear();
    for edge in &node.parents {
        if edge.stack > 1 {
            if let Source::Node(p) = edge.source {
                for t in 0..edge.stack {
                    let pe = edge.map[ext * edge.stack + t] as usize;
                    buf.extend_from_slice(&nodes[p].u[pe * edge.plen..(pe + 1) * edge.plen]);
                }
            }
        }
    }
    let mut out: [&[f64]; MAX_SLOTS] = [&[]; MAX_SLOTS];
    let mut offset = 0;
    let buf: &'a [f64] = buf;
    for (s, edge) in node.parents.iter().enumerate() {
        out[s] = match &edge.source {
            Source::Const(m) => m,
            Source::Node(p) if edge.stack == 1 => {
                let pe = edge.map[ext] as usize;
                &nodes[*p].u[pe * edge.plen..(pe + 1) * edge.plen]
            }
            Source::Node(_) => {
                let len = edge.stack * edge.plen;
                offset += len;
                &buf[offset - len..offset]
            }
        };
    }
    out
}

/// Weight of selector configuration q for child element e: ∏_m Q(z_m = k_m).
fn config_weight(nodes: &[Node], node: &Node, e: usize, mut q: usize) -> f64 {
    let mut w = 1.0;
    for sel in node.selectors.iter().rev() {
        let k = q % sel.k;
        q /= sel.k;
        let ie = sel.map[e] as usize;
        w *= nodes[sel.node].u[ie * sel.k + k];
    }
    w
}

/// Digit of selector m in configuration q.
fn config_digit(node: &Node, m: usize, q: usize) -> usize {
    let inner: usize = node.selectors[m + 1..].iter().map(|s| s.k).product();
    (q / inner) % node.selectors[m].k
}

/// Expected prior of element e: φ_p = Σ_q w_q ⟨φ(pa_q)⟩, returns Σ_q w_q ⟨A(pa_q)⟩ (Winn (2.52)).
fn prior_of<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    node: &Node,
    e: usize,
    phi: &mut [f64],
    tmp: &mut [f64],
    buf: &mut Vec<f64>,
) -> f64 {
    if node.configs == 1 {
        let pa = gather(nodes, node, e, buf);
        return d.prior(&pa[..node.parents.len()], phi);
    }
    phi.iter_mut().for_each(|v| *v = 0.0);
    let mut a = 0.0;
    for q in 0..node.configs {
        let w = config_weight(nodes, node, e, q);
        if w == 0.0 {
            continue;
        }
        let pa = gather(nodes, node, e * node.configs + q, buf);
        a += w * d.prior(&pa[..node.parents.len()], tmp);
        phi.iter_mut()
            .zip(tmp.iter())
            .for_each(|(p, t)| *p += w * t);
    }
    a
}

/// For a single-selector mixture whose parents depend only on the component and on the position
/// within runs of P consecutive elements that all read one selector element: P (1 when they depend on
/// the component alone). Runs longer than 1 need every element to take part (no missing leaf entry).
fn mixture_period(node: &Node) -> Option<usize> {
    let q = node.configs;
    if node.selectors.len() != 1 || q < 2 {
        return None;
    }
    let periodic = |p: usize| {
        node.parents.iter().all(|edge| {
            let block = p * q * edge.stack;
            matches!(edge.source, Source::Const(_))
                || edge
                    .map
                    .chunks_exact(block)
                    .all(|c| c == &edge.map[..block])
        })
    };
    if periodic(1) {
        return Some(1);
    }
    let map = &node.selectors[0].map;
    let p = map.iter().take_while(|&&m| m == map[0]).count();
    let runs_read_one =
        node.n % p == 0 && map.chunks_exact(p).all(|r| r.iter().all(|&m| m == r[0]));
    (runs_read_one && (0..node.n).all(|e| node.participates(e)) && periodic(p)).then_some(p)
}

/// Groups of elements with identical parent elements in every slot (see `Node::groups`), if there
/// are at most half as many groups as elements.
fn element_groups(node: &Node) -> Option<(Vec<u32>, Vec<u32>)> {
    if node.configs != 1 || node.n < 2 || !matches!(node.body, Body::Stochastic(_)) {
        return None;
    }
    let mut ids = std::collections::HashMap::new();
    let mut group = Vec::with_capacity(node.n);
    let mut reps = Vec::new();
    for e in 0..node.n {
        let key: Vec<u32> = node
            .parents
            .iter()
            .filter(|edge| matches!(edge.source, Source::Node(_)))
            .flat_map(|edge| {
                edge.map[e * edge.stack..(e + 1) * edge.stack]
                    .iter()
                    .copied()
            })
            .collect();
        let next = ids.len() as u32;
        let g = *ids.entry(key).or_insert_with(|| {
            reps.push(e as u32);
            next
        });
        group.push(g);
        if reps.len() * 2 > node.n {
            return None;
        }
    }
    Some((group, reps))
}

/// ⟨φ⟩ and ⟨A⟩ of the prior of each element group (see `Node::groups`): (φ per group, A per group).
fn group_priors<D: ExpFamily>(d: &D, nodes: &[Node], c: &Node) -> Option<(Vec<f64>, Vec<f64>)> {
    let (_, reps) = c.groups.as_ref()?;
    let mut phi = vec![0.0; reps.len() * c.len];
    let mut a = vec![0.0; reps.len()];
    let (mut tmp, mut buf) = (vec![0.0; c.len], Vec::new());
    for (g, &rep) in reps.iter().enumerate() {
        a[g] = prior_of(
            d,
            nodes,
            c,
            rep as usize,
            &mut phi[g * c.len..(g + 1) * c.len],
            &mut tmp,
            &mut buf,
        );
    }
    Some((phi, a))
}

/// The prior of element e: from its group's cache if there is one, else computed.
#[allow(clippy::too_many_arguments)]
fn element_prior<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    c: &Node,
    cache: &Option<(Vec<f64>, Vec<f64>)>,
    e: usize,
    phi: &mut [f64],
    tmp: &mut [f64],
    buf: &mut Vec<f64>,
) -> f64 {
    match (cache, &c.groups) {
        (Some((gphi, ga)), Some((group, _))) => {
            let g = group[e] as usize;
            phi.copy_from_slice(&gphi[g * c.len..(g + 1) * c.len]);
            ga[g]
        }
        _ => prior_of(d, nodes, c, e, phi, tmp, buf),
    }
}

/// W (runs × K): Q(z = k) for each run of `period` elements of a `config_only` mixture node (its
/// elements when `period` is 1), zero for elements that do not participate.
fn mixture_weights<'a>(nodes: &'a [Node], c: &Node) -> std::borrow::Cow<'a, [f64]> {
    let sel = &c.selectors[0];
    let z = &nodes[sel.node].u;
    let runs = c.n / c.period;
    let identity = (0..runs).all(|r| sel.map[r * c.period] as usize == r);
    if identity && z.len() == runs * sel.k && (0..c.n).all(|e| c.participates(e)) {
        return std::borrow::Cow::Borrowed(z);
    }
    let mut w = vec![0.0; runs * sel.k];
    w.par_chunks_mut(sel.k).enumerate().for_each(|(r, row)| {
        if c.participates(r * c.period) {
            let ie = sel.map[r * c.period] as usize;
            row.copy_from_slice(&z[ie * sel.k..(ie + 1) * sel.k]);
        }
    });
    std::borrow::Cow::Owned(w)
}

/// ⟨φ⟩ and ⟨A⟩ of every component of a `config_only` mixture, over a run: Θ (K × period·len), row k
/// the priors of the run's positions back to back, and a (K), their ⟨A⟩ summed.
fn component_priors<D: ExpFamily>(d: &D, nodes: &[Node], c: &Node) -> (Vec<f64>, Vec<f64>) {
    let row = c.period * c.len;
    let mut theta = vec![0.0; c.configs * row];
    let mut a = vec![0.0; c.configs];
    let mut buf = Vec::new();
    for q in 0..c.configs {
        for j in 0..c.period {
            let pa = gather(nodes, c, j * c.configs + q, &mut buf);
            let at = q * row + j * c.len;
            a[q] += d.prior(&pa[..c.parents.len()], &mut theta[at..at + c.len]);
        }
    }
    (theta, a)
}

/// L (runs × K): ⟨ln p_k(x_run)⟩ without f, for a `config_only` mixture.
fn component_scores<D: ExpFamily>(d: &D, nodes: &[Node], c: &Node) -> Vec<f64> {
    let (theta, a) = component_priors(d, nodes, c);
    let mut l = vec![0.0; c.n / c.period * c.configs];
    kernels::scores(&c.u, c.period * c.len, &theta, &a, &mut l);
    l
}

/// The entry of node `id` that `field` selects, from the cache when valid, else computed and kept.
fn cached<T: Clone>(
    cache: &Cache,
    id: usize,
    field: fn(&mut NodeCache) -> &mut Option<T>,
    compute: impl FnOnce() -> T,
) -> T {
    let mut guard = cache.lock().expect("cache lock");
    if let Some(v) = guard.get_mut(&id).and_then(|e| field(e).clone()) {
        return v;
    }
    drop(guard);
    let v = compute();
    guard = cache.lock().expect("cache lock");
    *field(guard.entry(id).or_default()) = Some(v.clone());
    v
}

/// S = Wᵀ U and the totals of W for mixture node `id`.
fn cached_stats(cache: &Cache, nodes: &[Node], id: usize) -> Arc<(Vec<f64>, Vec<f64>)> {
    cached(
        cache,
        id,
        |e| &mut e.stats,
        || {
            let c = &nodes[id];
            let w = mixture_weights(nodes, c);
            Arc::new(kernels::weighted_sums(
                &w,
                c.configs,
                &c.u,
                c.period * c.len,
            ))
        },
    )
}

/// L for mixture node `id`.
fn cached_scores<D: ExpFamily>(d: &D, cache: &Cache, nodes: &[Node], id: usize) -> Arc<Vec<f64>> {
    cached(
        cache,
        id,
        |e| &mut e.scores,
        || Arc::new(component_scores(d, nodes, &nodes[id])),
    )
}

/// Σ u and the number of participating elements of each element group of node `id`.
fn cached_group_sums(cache: &Cache, nodes: &[Node], id: usize) -> Arc<(Vec<f64>, Vec<f64>)> {
    cached(
        cache,
        id,
        |e| &mut e.group_sums,
        || {
            let c = &nodes[id];
            let (group, reps) = c.groups.as_ref().expect("group sums of a grouped node");
            let mut sums = vec![0.0; reps.len() * c.len];
            let mut counts = vec![0.0; reps.len()];
            for e in (0..c.n).filter(|&e| c.participates(e)) {
                let g = group[e] as usize;
                counts[g] += 1.0;
                kernels::add_into(
                    &mut sums[g * c.len..(g + 1) * c.len],
                    &c.u[e * c.len..(e + 1) * c.len],
                );
            }
            Arc::new((sums, counts))
        },
    )
}

/// Element e's own part of the bound: A(φ_q) − φ_q·u if latent, f(x) if observed or MAP.
fn own_term(c: &Node, e: usize) -> f64 {
    let r = e * c.len..(e + 1) * c.len;
    own_of(
        c.is_observed(e) || c.map,
        &c.phi[r.clone()],
        &c.u[r],
        c.a[e],
    )
}

/// `own_term` from an element's arrays (`a` holds f(x) for a point value).
fn own_of(point: bool, phi: &[f64], u: &[f64], a: f64) -> f64 {
    if point {
        a
    } else {
        a - dot(phi, u)
    }
}

/// Σ of `own_term` over node `id`'s participating elements (chunks in parallel, summed in order).
fn cached_own(cache: &Cache, nodes: &[Node], id: usize) -> f64 {
    cached(
        cache,
        id,
        |e| &mut e.own,
        || {
            let c = &nodes[id];
            let sums: Vec<f64> = (0..c.n.div_ceil(kernels::CHUNK))
                .into_par_iter()
                .map(|ch| {
                    (ch * kernels::CHUNK..((ch + 1) * kernels::CHUNK).min(c.n))
                        .filter(|&e| c.participates(e))
                        .map(|e| own_term(c, e))
                        .sum::<f64>()
                })
                .collect();
            sums.iter().sum()
        },
    )
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

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
        for e in 0..c.n {
            if !c.participates(e) {
                continue;
            }
            let u = &c.u[e * c.len..(e + 1) * c.len];
            for q in 0..c.configs {
                let w = if c.configs == 1 {
                    1.0
                } else {
                    config_weight(nodes, c, e, q)
                };
                if w == 0.0 {
                    continue;
                }
                scaled.iter_mut().zip(u).for_each(|(s, v)| *s = w * v);
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
    /// (2.53) and the CPT form of the digest.
    fn visit<D: ExpFamily>(self, d: &D) {
        let (nodes, c) = (self.nodes, self.child);
        let sel = &c.selectors[self.selector];
        if c.config_only {
            let l = cached_scores(d, self.cache, nodes, self.id);
            for r in (0..c.n / c.period).filter(|&r| c.participates(r * c.period)) {
                let ie = sel.map[r * c.period] as usize;
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
            let ie = sel.map[e] as usize;
            for q in 0..c.configs {
                // Weight of the other selectors' digits.
                let mut w = 1.0;
                let mut rest = q;
                for (m, s) in c.selectors.iter().enumerate().rev() {
                    let k = rest % s.k;
                    rest /= s.k;
                    if m != self.selector {
                        w *= nodes[s.node].u[s.map[e] as usize * s.k + k];
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

/// New φ, u, A for the latent elements of a node, given its summed child messages; the node's own
/// arrays are moved into `state` for the update (no node reads its own moments when updating).
struct Update<'a> {
    nodes: &'a [Node],
    node: &'a Node,
    messages: &'a [f64],
    state: State,
}

/// (φ, u, A or f) per element; with the first element that broke, if any.
type Updated = (State, Option<(usize, String)>);

impl DistVisitor for Update<'_> {
    type Output = Updated;
    /// Winn (2.19): φ* = ⟨φ(pa)⟩ + Σ child messages, then u = ∂A/∂φ* (or u(mode) for MAP, §2.6.1).
    /// Elements are independent given the messages: chunks run in parallel.
    fn visit<D: ExpFamily>(self, d: &D) -> Updated {
        let (nodes, c, len) = (self.nodes, self.node, self.node.len);
        let (mut phi, mut u, mut a) = self.state;
        let chunk = kernels::CHUNK;
        let cache = group_priors(d, nodes, c);
        let errors: Vec<(usize, String)> = phi
            .par_chunks_mut(chunk * len)
            .zip(u.par_chunks_mut(chunk * len))
            .zip(a.par_chunks_mut(chunk))
            .enumerate()
            .filter_map(|(ch, ((phi, u), a))| {
                let messages = |e: usize, _: usize, pe: &mut [f64]| {
                    kernels::add_into(pe, &self.messages[e * len..(e + 1) * len]);
                };
                update_rows(d, nodes, c, &cache, ch * chunk, phi, u, a, messages).err()
            })
            .collect();
        let first = errors.into_iter().min_by_key(|(e, _)| *e);
        ((phi, u, a), first)
    }
}

/// Winn (2.19) for the elements `start..` of one chunk (φ, u, A slices): φ = ⟨φ(pa)⟩ + the child
/// messages, which `add_messages(element, row, φ)` adds; then u = ∂A/∂φ (batched over the chunk when
/// every element is latent), or u(mode) for a MAP node (§2.6.1). Observed elements are left as they
/// are. Stops at the first element outside the domain, with its index and what broke.
#[allow(clippy::too_many_arguments)]
fn update_rows<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    c: &Node,
    priors: &Option<(Vec<f64>, Vec<f64>)>,
    start: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
    mut add_messages: impl FnMut(usize, usize, &mut [f64]),
) -> Result<(), (usize, String)> {
    let (len, rows) = (c.len, a.len());
    let latent = |e: usize| !c.is_observed(e) && c.participates(e);
    let (mut tmp, mut buf) = (vec![0.0; len], Vec::new());
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
                d.observe(&x, ue)
            })
        } else {
            moments
        }
        .map_err(|what| (start + r, what))?;
    }
    Ok(())
}

impl Vmp {
    pub(crate) fn new(graph: Graph) -> Result<Vmp, BuildError> {
        let Graph { plates, mut nodes } = graph;
        for node in nodes.iter_mut() {
            node.groups = element_groups(node);
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
        // Deterministic descendants reached through deterministic nodes only, in topological order.
        let mut refresh_after = vec![Vec::new(); nodes.len()];
        for (i, list) in refresh_after.iter_mut().enumerate() {
            let mut reach = vec![false; nodes.len()];
            reach[i] = true;
            for j in i + 1..nodes.len() {
                if matches!(nodes[j].body, Body::Deterministic(_))
                    && nodes[j]
                        .parents
                        .iter()
                        .any(|e| matches!(e.source, Source::Node(p) if reach[p]))
                {
                    reach[j] = true;
                    list.push(j);
                }
            }
        }
        let fused = (0..nodes.len())
            .map(|i| fused::fusable(&nodes, i))
            .collect();
        Ok(Vmp {
            nodes,
            plates,
            refresh_after,
            fused,
            initialized: false,
            cache: Cache::default(),
        })
    }

    fn id(&self, node: NodeId) -> usize {
        node.0
    }

    /// Initialises every latent q (in topological order) and every deterministic node's moments.
    pub fn initialize(&mut self, seed: u64) -> Result<(), RunError> {
        self.changed_all();
        let mut rng = Rng::seed_from_u64(seed);
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            let dist = match &node.body {
                Body::Deterministic(_) => {
                    self.refresh(i);
                    continue;
                }
                Body::Constant => continue,
                Body::Stochastic(d) => d.clone(),
            };
            let is_index = node
                .children
                .iter()
                .any(|(_, r)| matches!(r, Role::Selector(_)));
            let init = node.init.clone().unwrap_or(if is_index {
                Init::KMeansPlusPlus
            } else {
                Init::Prior
            });
            let init = match init {
                Init::KMeansPlusPlus => match self.kmeans_assignment(i, &mut rng) {
                    Some(moments) => Init::Moments(moments),
                    None => Init::Random,
                },
                other => other,
            };
            let zeros = vec![0.0; node.n * node.len];
            let (mut phi, mut u, mut a) = self.run_update(i, &dist, &zeros)?;
            let node = &self.nodes[i];
            let len = node.len;
            match init {
                Init::Prior | Init::KMeansPlusPlus => {}
                Init::Random => {
                    let mut x = vec![0.0; value_len(&dist)];
                    for e in (0..node.n).filter(|&e| !node.is_observed(e)) {
                        sample(&dist, &phi[e * len..(e + 1) * len], &mut rng, &mut x);
                        observe(&dist, &x, &mut u[e * len..(e + 1) * len])
                            .map_err(|w| self.numerical(i, e, w))?;
                    }
                }
                Init::Moments(values) => {
                    if values.len() != node.n * len {
                        return Err(self.numerical(
                            i,
                            0,
                            format!(
                                "initial moments need {} values, got {}",
                                node.n * len,
                                values.len()
                            ),
                        ));
                    }
                    for e in (0..node.n).filter(|&e| !node.is_observed(e)) {
                        u[e * len..(e + 1) * len].copy_from_slice(&values[e * len..(e + 1) * len]);
                    }
                }
                Init::Natural(values) => {
                    if values.len() != node.n * len {
                        return Err(self.numerical(
                            i,
                            0,
                            format!(
                                "initial parameters need {} values, got {}",
                                node.n * len,
                                values.len()
                            ),
                        ));
                    }
                    for e in (0..node.n).filter(|&e| !node.is_observed(e)) {
                        let r = e * len..(e + 1) * len;
                        phi[r.clone()].copy_from_slice(&values[r.clone()]);
                        a[e] = moments(&dist, &phi[r.clone()], &mut u[r])
                            .map_err(|w| self.numerical(i, e, w))?;
                    }
                }
            }
            let node = &mut self.nodes[i];
            node.phi = phi;
            node.u = u;
            node.a = a;
            self.changed(i);
        }
        self.initialized = true;
        Ok(())
    }

    /// One-hot moments for index node `i` from k-means++ seeds over its observed mixture child's
    /// values (see [`Init::KMeansPlusPlus`]); `None` if there is no such child.
    fn kmeans_assignment(&self, i: usize, rng: &mut Rng) -> Option<Vec<f64>> {
        use rand::Rng as _;
        let index = &self.nodes[i];
        let MomentKind::Categorical { k } = index.kind else {
            return None;
        };
        let (c, m) = index.children.iter().find_map(|&(c, role)| match role {
            Role::Selector(m)
                if !self.nodes[c].observed.is_empty()
                    && self.nodes[c].observed.iter().all(|&o| o) =>
            {
                Some((c, m))
            }
            _ => None,
        })?;
        let child = &self.nodes[c];
        let vlen = child.data.len() / child.n;
        let mut features: Vec<Vec<f64>> = vec![Vec::new(); index.n];
        for e in 0..child.n {
            features[child.selectors[m].map[e] as usize]
                .extend_from_slice(&child.data[e * vlen..(e + 1) * vlen]);
        }
        let width = features[0].len();
        if width == 0 || features.iter().any(|f| f.len() != width) {
            return None;
        }
        let dist2 =
            |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>();
        let mut seeds = vec![rng.random_range(0..index.n)];
        let mut nearest: Vec<f64> = features
            .iter()
            .map(|f| dist2(f, &features[seeds[0]]))
            .collect();
        while seeds.len() < k.min(index.n) {
            let total: f64 = nearest.iter().sum();
            let next = if total > 0.0 {
                let mut r = rng.random::<f64>() * total;
                nearest
                    .iter()
                    .position(|&d| {
                        r -= d;
                        r <= 0.0
                    })
                    .unwrap_or(index.n - 1)
            } else {
                rng.random_range(0..index.n)
            };
            seeds.push(next);
            for (d, f) in nearest.iter_mut().zip(&features) {
                *d = d.min(dist2(f, &features[next]));
            }
        }
        let mut u = vec![0.0; index.n * k];
        for (e, f) in features.iter().enumerate() {
            let best = (0..seeds.len())
                .min_by(|&a, &b| {
                    dist2(f, &features[seeds[a]]).total_cmp(&dist2(f, &features[seeds[b]]))
                })
                .unwrap_or(0);
            u[e * k + best] = 1.0;
        }
        Some(u)
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
            if let Some(entry) = cache.get_mut(&c) {
                match role {
                    // Scores read the parents' moments; statistics read the selector's.
                    Role::Slot(_) => entry.scores = None,
                    Role::Selector(_) => entry.stats = None,
                }
            }
        }
    }

    /// Drops every cached product.
    fn changed_all(&self) {
        self.cache.lock().expect("cache lock").clear();
    }

    /// Recomputes a deterministic node's moments from its parents — Winn (2.41).
    fn refresh(&mut self, i: usize) {
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

    /// Σ of all child messages to node `target`, per element (recursing through deterministic
    /// children, Winn (2.46–2.49)).
    fn child_messages(&self, target: usize) -> Vec<f64> {
        let t = &self.nodes[target];
        let mut out = vec![0.0; t.n * t.len];
        for &(ci, role) in &t.children {
            let c = &self.nodes[ci];
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
                    let md = self.child_messages(ci);
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
                (_, Role::Selector(_)) | (Body::Constant, _) => {
                    unreachable!("only stochastic nodes have selectors; constants have no parents")
                }
            }
        }
        out
    }

    /// Runs `Update` on node i with its arrays moved out (returned, or put back on error).
    fn run_update(&mut self, i: usize, dist: &Dist, messages: &[f64]) -> Result<State, RunError> {
        let n = &mut self.nodes[i];
        let state = (
            std::mem::take(&mut n.phi),
            std::mem::take(&mut n.u),
            std::mem::take(&mut n.a),
        );
        let (state, error) = dist.visit(Update {
            nodes: &self.nodes,
            node: &self.nodes[i],
            messages,
            state,
        });
        match error {
            None => Ok(state),
            Some((e, what)) => {
                let n = &mut self.nodes[i];
                (n.phi, n.u, n.a) = state;
                self.changed(i);
                Err(self.numerical(i, e, what))
            }
        }
    }

    /// Updates one node's q (its latent elements) — Winn (2.19).
    pub fn update(&mut self, node: NodeId) -> Result<(), RunError> {
        let i = self.id(node);
        let Body::Stochastic(dist) = &self.nodes[i].body else {
            return Err(RunError::Schedule(format!(
                "`{}` is not stochastic and has no q to update",
                self.nodes[i].name
            )));
        };
        if self.fused[i] {
            return self.update_fused(i);
        }
        let dist = dist.clone();
        let messages = self.child_messages(i);
        let (phi, u, a) = self.run_update(i, &dist, &messages)?;
        let n = &mut self.nodes[i];
        n.phi = phi;
        n.u = u;
        n.a = a;
        self.changed(i);
        self.refresh_dependents(i);
        Ok(())
    }

    /// The lower bound's term of each node (0 for deterministic nodes).
    pub fn node_bounds(&self) -> Vec<f64> {
        self.node_bounds_with(&self.cache)
    }

    fn node_bounds_with(&self, cache: &Cache) -> Vec<f64> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(id, n)| match &n.body {
                Body::Stochastic(d) => d.visit(BoundTerm {
                    cache,
                    id,
                    nodes: &self.nodes,
                    node: n,
                }),
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

    /// The default schedule: latent stochastic nodes, parents before children.
    pub fn default_order(&self) -> Vec<NodeId> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].has_latent())
            .map(NodeId)
            .collect()
    }

    /// Runs VMP sweeps until the bound converges — Winn Algorithm 1.1 — then, if asked, prunes
    /// surplus mixture components.
    pub fn run(&mut self, opts: &RunOptions) -> Result<Fit, RunError> {
        let fit = self.sweeps(opts)?;
        if opts.prune_components {
            self.prune(opts, fit)
        } else {
            Ok(fit)
        }
    }

    fn snapshot(&self) -> Vec<State> {
        self.nodes
            .iter()
            .map(|n| (n.phi.clone(), n.u.clone(), n.a.clone()))
            .collect()
    }

    fn restore(&mut self, state: Vec<State>) {
        for (n, (phi, u, a)) in self.nodes.iter_mut().zip(state) {
            n.phi = phi;
            n.u = u;
            n.a = a;
        }
        self.changed_all();
    }

    /// Greedy component deletion: for each mixture index, empty its used components one at a time
    /// (smallest total responsibility first), re-converge, and keep the change if L rises.
    fn prune(&mut self, opts: &RunOptions, mut best: Fit) -> Result<Fit, RunError> {
        let indices: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                self.nodes[i]
                    .children
                    .iter()
                    .any(|(_, r)| matches!(r, Role::Selector(_)))
                    && self.nodes[i].has_latent()
            })
            .collect();
        for i in indices {
            let MomentKind::Categorical { k } = self.nodes[i].kind else {
                continue;
            };
            'outer: loop {
                let n = &self.nodes[i];
                let mut used: Vec<(f64, usize)> = (0..k)
                    .map(|j| ((0..n.n).map(|e| n.u[e * k + j]).sum::<f64>(), j))
                    .filter(|(w, _)| *w > 0.5)
                    .collect();
                if used.len() <= 1 {
                    break;
                }
                used.sort_by(|a, b| a.0.total_cmp(&b.0));
                for &(_, j) in &used {
                    let saved = self.snapshot();
                    let node = &mut self.nodes[i];
                    for e in 0..node.n {
                        let row = &mut node.u[e * k..(e + 1) * k];
                        row[j] = 0.0;
                        let total: f64 = row.iter().sum();
                        if total > 0.0 {
                            row.iter_mut().for_each(|v| *v /= total);
                        } else {
                            row.iter_mut().enumerate().for_each(|(c, v)| {
                                *v = if c == j { 0.0 } else { 1.0 / (k - 1) as f64 }
                            });
                        }
                    }
                    self.changed(i);
                    self.refresh_dependents(i);
                    let trial = self.sweeps(opts)?;
                    if trial.bound > best.bound + opts.tol.max(1e-12) * best.bound.abs() {
                        // The trace keeps the VMP sweeps of the first run, then one entry per
                        // accepted deletion (its converged bound), so it never decreases.
                        best.bound_trace.push(trial.bound);
                        best.warnings.extend(trial.warnings);
                        best.bound = trial.bound;
                        best.iterations += trial.iterations;
                        best.converged = trial.converged;
                        best.node_bounds = trial.node_bounds;
                        best.pruned_components += 1;
                        continue 'outer;
                    }
                    self.restore(saved);
                }
                break;
            }
        }
        Ok(best)
    }

    fn refresh_dependents(&mut self, i: usize) {
        for j in self.refresh_after[i].clone() {
            self.refresh(j);
        }
    }

    fn sweeps(&mut self, opts: &RunOptions) -> Result<Fit, RunError> {
        let order = match &opts.order {
            Some(o) => {
                for id in o {
                    if !self.nodes[id.0].has_latent() {
                        return Err(RunError::Schedule(format!(
                            "`{}` has no latent elements to update",
                            self.nodes[id.0].name
                        )));
                    }
                }
                for id in self.default_order() {
                    if !o.contains(&id) {
                        return Err(RunError::Schedule(format!(
                            "latent node `{}` is missing from the order",
                            self.nodes[id.0].name
                        )));
                    }
                }
                o.clone()
            }
            None => self.default_order(),
        };
        if !self.initialized {
            self.initialize(opts.seed)?;
        }
        let mut trace: Vec<f64> = Vec::new();
        let mut warnings = Vec::new();
        let mut converged = false;
        let mut last = f64::NEG_INFINITY;
        for iteration in 1..=opts.max_iter {
            for &id in &order {
                self.update(id)?;
                // Until every factor has been updated once, initial moments (e.g. a one-hot draw) need
                // not be consistent with φ, so L is only a bound from the second sweep on.
                if opts.check_every_update && iteration > 1 {
                    let l = self.bound();
                    self.check_decrease(last, l, iteration, id, opts, &mut warnings)?;
                    last = l;
                }
            }
            let l = self.bound();
            if !l.is_finite() {
                return Err(RunError::Numerical {
                    node: "(bound)".into(),
                    element: 0,
                    what: format!("bound is {l}"),
                });
            }
            if let Some(&prev) = trace.last() {
                self.check_decrease(
                    prev,
                    l,
                    iteration,
                    *order.last().unwrap_or(&NodeId(0)),
                    opts,
                    &mut warnings,
                )?;
            }
            trace.push(l);
            last = l;
            if trace.len() > 1 {
                let prev = trace[trace.len() - 2];
                if (l - prev).abs() <= opts.tol * l.abs() {
                    converged = true;
                    break;
                }
            }
        }
        let terms = self.node_bounds();
        Ok(Fit {
            bound: last,
            iterations: trace.len(),
            converged,
            bound_trace: trace,
            node_bounds: self
                .nodes
                .iter()
                .zip(terms)
                .map(|(n, t)| (n.name.clone(), t))
                .collect(),
            warnings,
            pruned_components: 0,
        })
    }

    /// Runs from `restarts` seeded initialisations (seeds `opts.seed`, `opts.seed + 1`, …) and keeps
    /// the one with the highest bound; its state is left in the model. Deterministic per seed.
    pub fn run_restarts(&mut self, opts: &RunOptions, restarts: usize) -> Result<Fit, RunError> {
        let mut best: Option<(Fit, Vec<State>)> = None;
        for r in 0..restarts.max(1) {
            self.initialized = false;
            let fit = self.run(&RunOptions {
                seed: opts.seed.wrapping_add(r as u64),
                ..opts.clone()
            })?;
            if best.as_ref().is_none_or(|(b, _)| fit.bound > b.bound) {
                best = Some((fit, self.snapshot()));
            }
        }
        let (fit, state) = best.expect("at least one restart");
        self.restore(state);
        Ok(fit)
    }

    fn check_decrease(
        &self,
        prev: f64,
        now: f64,
        iteration: usize,
        after: NodeId,
        opts: &RunOptions,
        warnings: &mut Vec<String>,
    ) -> Result<(), RunError> {
        if prev.is_finite() && now < prev - 1e-9 * (1.0 + prev.abs()) {
            let err = RunError::BoundDecreased {
                iteration,
                by: prev - now,
                node: self.nodes[after.0].name.clone(),
            };
            if opts.decrease_is_error {
                return Err(err);
            }
            warnings.push(err.to_string());
        }
        Ok(())
    }

    /// Ancestral sampling from the generative model (data are ignored): every stochastic node is drawn
    /// from its conditional given its parents' drawn values, in topological order; deterministic
    /// nodes are evaluated on them. Returns the drawn values of every node (empty for deterministic
    /// and constant nodes), row-major over its plates. Leaves each node's moments at u(draw).
    pub fn sample_prior(&mut self, seed: u64) -> Result<Vec<Vec<f64>>, RunError> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut draws = Vec::with_capacity(self.nodes.len());
        for i in 0..self.nodes.len() {
            let dist = match &self.nodes[i].body {
                Body::Stochastic(d) => d.clone(),
                Body::Deterministic(_) => {
                    self.refresh(i);
                    draws.push(Vec::new());
                    continue;
                }
                Body::Constant => {
                    draws.push(Vec::new());
                    continue;
                }
            };
            let node = &self.nodes[i];
            let (n, len, vlen) = (node.n, node.len, value_len(&dist));
            let mut phi = vec![0.0; len];
            let mut tmp = vec![0.0; len];
            let mut buf = Vec::new();
            let mut x = vec![0.0; n * vlen];
            let mut u = vec![0.0; n * len];
            struct Prior<'a>(
                &'a [Node],
                &'a Node,
                usize,
                &'a mut [f64],
                &'a mut [f64],
                &'a mut Vec<f64>,
            );
            impl DistVisitor for Prior<'_> {
                type Output = ();
                fn visit<D: ExpFamily>(self, d: &D) {
                    prior_of(d, self.0, self.1, self.2, self.3, self.4, self.5);
                }
            }
            for e in 0..n {
                dist.visit(Prior(&self.nodes, node, e, &mut phi, &mut tmp, &mut buf));
                if moments(&dist, &phi, &mut tmp).is_err() {
                    return Err(self.numerical(
                        i,
                        e,
                        "the prior given the drawn parents is improper".into(),
                    ));
                }
                sample(&dist, &phi, &mut rng, &mut x[e * vlen..(e + 1) * vlen]);
                observe(
                    &dist,
                    &x[e * vlen..(e + 1) * vlen],
                    &mut u[e * len..(e + 1) * len],
                )
                .map_err(|w| self.numerical(i, e, w))?;
            }
            self.nodes[i].u = u;
            self.changed(i);
            draws.push(x);
        }
        Ok(draws)
    }

    /// Posterior moments ⟨u⟩ of a node, all elements (row-major over its plates).
    pub fn moments(&self, node: NodeId) -> &[f64] {
        &self.nodes[node.0].u
    }

    /// Posterior natural parameters φ of a node, all elements.
    pub fn natural(&self, node: NodeId) -> &[f64] {
        &self.nodes[node.0].phi
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
    pub fn mean(&self, node: NodeId) -> Option<Vec<f64>> {
        let n = &self.nodes[node.0];
        let mut out = Vec::new();
        for e in 0..n.n {
            let u = &n.u[e * n.len..(e + 1) * n.len];
            match n.kind {
                MomentKind::Gaussian { d } => out.extend_from_slice(&u[..d]),
                MomentKind::Gamma | MomentKind::Scalar => out.push(u[0]),
                MomentKind::Wishart { d } => out.extend_from_slice(&u[..d * d]),
                MomentKind::Categorical { .. } => out.extend_from_slice(u),
                MomentKind::Dirichlet { .. } => {
                    if n.is_observed(e) || n.map {
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

fn sample(d: &Dist, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
    struct S<'a>(&'a [f64], &'a mut Rng, &'a mut [f64]);
    impl DistVisitor for S<'_> {
        type Output = ();
        fn visit<D: ExpFamily>(self, d: &D) {
            d.sample(self.0, self.1, self.2)
        }
    }
    d.visit(S(phi, rng, x))
}

fn moments(d: &Dist, phi: &[f64], u: &mut [f64]) -> Result<f64, String> {
    struct M<'a>(&'a [f64], &'a mut [f64]);
    impl DistVisitor for M<'_> {
        type Output = Result<f64, String>;
        fn visit<D: ExpFamily>(self, d: &D) -> Result<f64, String> {
            d.moments(self.0, self.1).map_err(|e| e.0.to_string())
        }
    }
    d.visit(M(phi, u))
}
