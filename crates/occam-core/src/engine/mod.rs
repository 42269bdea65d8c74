//! The VMP engine: storage of every node's natural parameters and moments over its plates (struct of
//! arrays), the generic update (Winn (2.19)), messages (2.17–2.18, 2.46–2.49, 2.50–2.53) and the
//! bound as a sum of per-node terms (2.34–2.36, with (2.36) and the worked example (2.38)–(2.39)
//! corrected: see docs/seed-corrections.md).
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
//! The model the user built is static (module `network`, produced by [`crate::graph::Graph`]);
//! everything here is inference state, allocated when compiling.
//!
//! Files: this one holds the compiled model ([`Vmp`]), its caches and change tracking; `compile`
//! turns a [`Graph`] into a `Vmp` (state allocated, structures found, blocks assigned); `node` the
//! engine's node (the shared static node, its typed state `NodeState` and compiled facts);
//! `qblock` the q-block contract every part of q implements — `factorised`, `fused`,
//! `linear` (the kernel and the shared covariance), `chain` and `tree` — and that `update`,
//! `bound` and `messages` loop over; `access` what a compiled model answers (default schedule, moments,
//! means, names); `driver` the run loop (sweeps, restarts, pruning); `elements` what an element
//! reads (parent moments, priors, cached sums), `update` (2.19), `messages`, `bound`, `init`
//! (initialisation and ancestral sampling); `logit` the dot product of observed rows with one
//! Gaussian vector under a non-Gaussian child (logistic, Poisson regression) as matrix products.

use crate::dist::{Dist, DistVisitor, ExpFamily, OutOfDomain};
use crate::error::{BuildError, NotTransformable, RunError, SequenceError, StateError, ValueError};
use crate::factor::Factor;
use crate::graph::{Graph, NodeId, MAX_SLOTS};
use crate::kernels;
use crate::moments::MomentKind;
use crate::Rng;
use rand::SeedableRng;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

mod access;
mod ancestral;
mod bound;
mod cached;
mod chain;
mod compile;
mod driver;
mod elements;
mod factorised;
mod fused;
mod gated_linear;
mod init;
mod joint_gaussian;
mod linear;
mod logit;
mod messages;
mod node;
mod noncj;
mod packed;
mod pool;
mod predictive;
mod prune;
mod qblock;
mod sampled;
pub use sampled::SampledNode;
mod quality;
mod shard;
mod softmax_joint;
pub use softmax_joint::MAX_JOINT;
mod state;
mod transform;
mod tree;
mod update;

use cached::*;
pub use chain::{
    chain_family, ChainSums, GaussianMarkovChain, MarkovChain, CHAINS, GAUSSIAN_MARKOV_CHAIN,
    MARKOV_CHAIN,
};
pub use driver::{
    check_decrease, sampling_allowance, Fit, Flow, Observer, Offered, OfferedStart, Progress,
    RunOptions, Stage, Stop, StopReason, Warning, SETTLE_ROUNDS,
};
use elements::*;
use node::*;
pub use prune::{ScreenCounts, SCREEN_Z};
use qblock::{Block, QBlock};
pub use shard::{
    shards_allowance, EpochOrder, GlobalState, MakeBatch, SeeSweep, ShardMethod, ShardRunOptions,
    Sharded, ShardedFit, ShardedRun, Split, SplitError, Svi, SviFit, SviOptions,
};
pub use state::QState;
pub use transform::GaussianSums;

pub use crate::network::Init;
pub(crate) use crate::network::{observe_each, value_len, Body, Edge, ModelNode, Role, Source};

/// Products over a node's elements, reused until an input changes (entries are dropped by
/// `Vmp::changed`). They make a sweep's bound and most messages independent of the number of
/// elements: by multilinearity each is a small product of these sums with the parents' moments.
#[derive(Default)]
struct NodeCache {
    /// `config_only` mixture: S = Wᵀ U and the totals of W (inputs: the node and its selector).
    stats: Option<pool::Pair>,
    /// `config_only` mixture: L = U Θᵀ − A (inputs: the node and its parents).
    scores: Option<Arc<Vec<f64>>>,
    /// `config_only` mixture: Θ and ⟨A⟩ of every component (input: its parents), formed by the
    /// fused index update and read again by the bound; a grouped node: ⟨φ⟩ and ⟨A⟩ of each
    /// group's prior (input: its parents; `group_priors`).
    priors: Option<pool::Pair>,
    /// Node with element groups: Σ u of each group's participating elements and their number
    /// (input: the node).
    group_sums: Option<pool::Pair>,
    /// Σ over participating elements of A(φ) − φ·u (latent) or f(x) (observed, MAP) (input: the node).
    own: Option<f64>,
    /// Dot node with a linear-Gaussian child: products of the data with its column parent's moments
    /// (input: that parent; `linear`).
    linear: Option<Arc<linear::ColumnProducts>>,
    /// Sum node of a dot product and offsets: the data less the offsets' means (inputs: the
    /// offsets; `linear`).
    offsets: Option<Arc<linear::Effective>>,
    /// W of a gated q-block: ⟨W_k⟩ and ⟨W_kᵀW_k⟩ (input: the node; `gated_linear`).
    gated_w: Option<Arc<gated_linear::WMoments>>,
    /// The bound term of a fully observed child of a `logit` kernel (inputs: the node and its
    /// parents; `logit::memo_bound`).
    term: Option<f64>,
}

impl NodeCache {
    /// Drops the entry, its arrays given back to `pool` where no one else reads them.
    fn recycle(self, pool: &pool::Pool) {
        for pair in [self.stats, self.priors, self.group_sums]
            .into_iter()
            .flatten()
        {
            pool.keep_pair(pair);
        }
        if let Some(scores) = self.scores.and_then(Arc::into_inner) {
            pool.keep(scores);
        }
        if let Some(effective) = self.offsets.and_then(Arc::into_inner) {
            effective.recycle(pool);
        }
    }
}

/// The cached products of every node (locked to read or change them), and the work arrays the
/// updates, messages and bound terms that read them take and give back (module `pool`): a
/// steady sweep allocates none.
#[derive(Default)]
struct Cache {
    entries: Mutex<NodeMap<NodeCache>>,
    pool: pool::Pool,
}

impl std::ops::Deref for Cache {
    type Target = Mutex<NodeMap<NodeCache>>;
    fn deref(&self) -> &Self::Target {
        &self.entries
    }
}

/// A map keyed by node id. Node ids are small distinct integers, so they are hashed by one
/// multiplication (Fibonacci hashing: the product's high bits, which the table reads first, vary
/// with every bit of the id) instead of std's keyed SipHash, which cost ~4% of a small model's
/// sweep (the ICA toy of `bench_ica_cases`, callgrind). No result reads the map's order.
type NodeMap<V> = HashMap<usize, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The hasher of [`NodeMap`]: a `usize` key times 2⁶⁴/φ (other keys, never used, fold in their
/// bytes the same way).
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A compiled model, ready for inference.
pub struct Vmp {
    cache: Cache,
    pub(crate) nodes: Vec<Node>,
    pub(crate) plates: Vec<(String, usize)>,
    /// Deterministic nodes to refresh, in order, after each node's update.
    refresh_after: Vec<Vec<usize>>,
    /// The linear-Gaussian structure node i (its dot node F or its Gaussian child y) belongs to.
    linear: Vec<Option<Arc<linear::Linear>>>,
    /// The data-times-vector kernel serving dot node i (module `logit`).
    logit: Vec<Option<logit::LogitDot>>,
    /// The structure that is node i's only child, if node i may keep one covariance for all its
    /// elements (`linear::shared`).
    shared: Vec<Option<Arc<linear::Linear>>>,
    /// The tree-structured q-blocks (module `tree`).
    trees: Vec<tree::Tree>,
    /// The parts of q (module `qblock`): update, bound and messages loop over them.
    blocks: Arc<[Block]>,
    /// The block holding node i's q (`None`: deterministic nodes and constants).
    block_of: Vec<Option<u32>>,
    /// The deterministic descendants through which messages pass to node i, children first
    /// (see `child_messages`), formed when first asked for.
    passing_order: Vec<std::sync::OnceLock<Vec<usize>>>,
    /// The map of the messages those descendants pass on, kept empty between updates.
    passed: Mutex<NodeMap<Vec<f64>>>,
    /// A global's update in a sharded fit: the messages of the other shards' data (module `shard`).
    outside: Option<shard::Outside>,
    /// The pruning screen: the model compiled on a subsample of the data plate's rows
    /// ([`Vmp::set_prune_screen`], module `prune::screen`).
    screen: Option<Box<prune::Screen>>,
    /// A further candidate start for the next run ([`Vmp::offer_start`]).
    offered: Option<driver::OfferedStart>,
    initialized: bool,
}

impl Vmp {
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

    /// Drops cached products that read node i's moments (its own and its children's); their
    /// arrays go back to the pool. Node i's own priors (a mixture's component priors, a grouped
    /// node's group priors) read its parents' moments only and are kept.
    fn changed(&self, i: usize) {
        let pool = &self.cache.pool;
        let mut cache = self.cache.lock().expect("cache lock");
        if let Some(entry) = cache.get_mut(&i) {
            let priors = entry.priors.take();
            std::mem::take(entry).recycle(pool);
            entry.priors = priors;
        }
        for &(c, role) in &self.nodes[i].children {
            if let Some(l) = self.linear[c].as_ref().filter(|l| l.sum == Some(c)) {
                // An offset of a linear structure: the data less the offsets and their products.
                if let Some(entry) = cache.remove(&c) {
                    entry.recycle(pool);
                }
                if let Some(entry) = cache.get_mut(&l.f).filter(|_| l.products_read_offsets()) {
                    entry.linear = None;
                }
                continue;
            }
            if let Some(entry) = cache.get_mut(&c) {
                match role {
                    // Scores read the parents' moments; statistics read the selector's.
                    Role::Slot(s) => {
                        if let Some(scores) = entry.scores.take().and_then(Arc::into_inner) {
                            pool.keep(scores);
                        }
                        if let Some(priors) = entry.priors.take() {
                            pool.keep_pair(priors);
                        }
                        entry.term = None;
                        if self.linear[c].as_ref().is_some_and(|l| l.row_slot != s) {
                            entry.linear = None;
                        }
                    }
                    Role::Selector(_) => {
                        if let Some(stats) = entry.stats.take() {
                            pool.keep_pair(stats);
                        }
                        entry.term = None;
                    }
                }
            }
        }
    }

    /// Gives a message array (or any work array) back to the model's pool for the next
    /// `child_messages`.
    fn recycle(&self, buffer: Vec<f64>) {
        self.cache.pool.keep(buffer);
    }

    /// Drops every cached product.
    fn changed_all(&self) {
        let mut cache = self.cache.lock().expect("cache lock");
        for (_, entry) in cache.drain() {
            entry.recycle(&self.cache.pool);
        }
    }

    /// Recomputes a deterministic node's moments from its parents — Winn (2.41). A dot node served
    /// by the linear kernel keeps none (its child reads sums instead).
    fn refresh(&mut self, i: usize) {
        // (A sum of F and offsets is formed only from F's moments formed for sampling.)
        if let Some(l) = &self.linear[i] {
            if l.f == i || l.sum == Some(i) && self.nodes[l.f].q.u.is_empty() {
                return;
            }
        }
        if let Some(k) = self.logit[i] {
            // Filled in place (taken out while the kernel reads the other nodes).
            let mut u = std::mem::take(&mut self.nodes[i].q.u);
            k.fill_moments(&self.nodes, i, &mut u);
            self.nodes[i].q.u = u;
            self.changed(i);
            return;
        }
        // The static node, shared (no copy): its factor is read while node i's array is out.
        let model = self.nodes[i].model.clone();
        let Body::Deterministic(f) = &model.body else {
            return;
        };
        if model.gated.is_some() {
            // The dot and sum of a gated q-block keep no moments (`gated_linear`).
            return;
        }
        // Written in place: the node's own array, zeroed (no allocation per refresh; nothing
        // below reads node i's moments, only its parents' and its kept φ).
        let mut u = std::mem::take(&mut self.nodes[i].q.u);
        u.clear();
        u.resize(model.n * model.len, 0.0);
        let node = &self.nodes[i];
        if let Some(b) = self.softmax_joint_of(i) {
            // The logits of a softmax q-block: from its joint q (`softmax_joint`).
            b.fill_logits(self, &mut u);
            self.nodes[i].q.u = u;
            self.changed(i);
            return;
        }
        if node.joint_gaussian {
            // A Gaussian q-block's vector: its joint moments (`joint_gaussian`).
            let mut buf = Vec::new();
            joint_gaussian::refresh_joint(node, &mut u, |e, out| {
                let pa = gather(&self.nodes, node, e, &mut buf);
                out.clear();
                pa[..node.parents.len()]
                    .iter()
                    .for_each(|m| out.extend_from_slice(m));
            });
            self.nodes[i].q.u = u;
            self.changed(i);
            return;
        }
        let mut buf = Vec::new();
        for e in 0..node.n {
            let pa = gather(&self.nodes, node, e, &mut buf);
            f.moments(
                &pa[..node.parents.len()],
                &mut u[e * node.len..(e + 1) * node.len],
            );
        }
        self.nodes[i].q.u = u;
        self.changed(i);
    }
}
