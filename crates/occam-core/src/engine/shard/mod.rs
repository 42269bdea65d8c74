//! Data-parallel VMP: a model split along its data plate into shards, each its own compiled
//! [`Vmp`], with the globals replicated.
//!
//! For data exchangeable along a plate (the *data plate*, by default the one every observed node
//! has first), every node either has that plate (*local*: one piece per row, each shard holds its
//! rows) or not (*global*: the same on every shard). A global's update — Winn (2.19),
//! φ* = ⟨φ(pa)⟩ + Σ_children m_child — reads the data only through the sum of its children's
//! messages, and the children with the data plate split into shards: Σ_children = Σ_global
//! children + Σ_shards Σ_local children of the shard. A sharded sweep follows the single-process
//! schedule step by step:
//! - a local node's update runs on every shard, each from its own rows and the globals;
//! - a global's update is one reduction: every shard sends the messages of its local children
//!   ([`Vmp::local_messages`], n·len numbers for a global of n elements with moments of length
//!   len), they are summed, and every shard applies the same update to its replica from the sum
//!   ([`Vmp::update_global`]): only messages travel, never data nor local posteriors;
//! - the bound, Winn (2.31), is a sum of per-node terms: each shard's local terms plus the
//!   globals' terms, which every replica holds alike ([`Vmp::split_bound`]).
//!
//! The sweep is therefore the single-process sweep up to the order of floating-point additions.
//! Files: this one classifies the nodes ([`Split`]) and holds the engine's hooks; `state` moves
//! states between replicas and from a single-process model ([`GlobalState`]); `sweep` runs sharded
//! fits, batch and memoized ([`Sharded`]); `stochastic` runs stochastic VB ([`Svi`]), each shard a minibatch or, with
//! `minibatch`, rows drawn at random ([`MakeBatch`]); `restarts`
//! runs either with restarts, strict mode and an observer ([`Sharded::fit`]).

use super::*;

mod minibatch;
mod restarts;
mod state;
mod stochastic;
mod sweep;

pub use minibatch::MakeBatch;
pub use restarts::{SeeSweep, ShardMethod, ShardRunOptions, ShardedRun};
pub use state::GlobalState;
pub use stochastic::{EpochOrder, Svi, SviFit, SviOptions};
pub use sweep::{shards_allowance, Sharded, ShardedFit};

/// A model that cannot be split along its data plate, or shards that do not match.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SplitError {
    /// No plate to split along: none given and none inferred, or a plate the model lacks.
    #[error("no data plate: {0}")]
    NoPlate(String),
    /// A node that cannot be updated shard by shard.
    #[error("`{node}` cannot be split along the data plate `{plate}`: {why}")]
    Node {
        /// The node.
        node: String,
        /// The data plate.
        plate: String,
        /// Why.
        why: String,
    },
    /// Shards that are not compilations of one model, or a state that does not fit them.
    #[error("shards do not match: {0}")]
    Mismatch(String),
}

/// The split of a compiled model along its data plate: which nodes are local.
#[derive(Clone, Debug)]
pub struct Split {
    plate: String,
    local: Arc<[bool]>,
}

impl Split {
    /// The data plate's name.
    pub fn plate(&self) -> &str {
        &self.plate
    }

    /// Whether a node has the data plate (its rows live on the shards).
    pub fn is_local(&self, node: NodeId) -> bool {
        self.local[node.0]
    }
}

/// The messages of every shard's local children to the global being updated (see
/// [`Vmp::update_global`]).
#[derive(Debug)]
pub(in crate::engine) struct Outside {
    pub target: usize,
    pub local: Arc<[bool]>,
    pub messages: Vec<f64>,
}

impl Vmp {
    /// The data plate inferred from the data: the first plate of every observed stochastic node,
    /// if they agree (`None` when nothing is observed along a plate or they disagree).
    pub fn data_plate(&self) -> Option<&str> {
        let mut firsts = self
            .nodes
            .iter()
            .filter(|n| !n.observed.is_none() && matches!(n.body, Body::Stochastic(_)))
            .map(|n| n.plates.first().copied());
        let first = firsts.next()??;
        firsts
            .all(|p| p == Some(first))
            .then(|| self.plates[first].0.as_str())
    }

    /// Classifies every node as local (it has the data plate `plate`, or the inferred one) or
    /// global, and checks that the model can be updated shard by shard: no global reads a local
    /// node (a global that depends on the data's rows one by one, e.g. a sum over them), and every
    /// global the schedule updates is one mean-field node whose update reads its children's
    /// messages once (not a chain, tree, fused index, shared covariance or row-by-row update).
    pub fn split(&self, plate: Option<&str>) -> Result<Split, SplitError> {
        let name = match plate {
            Some(p) => p.to_string(),
            None => self.data_plate().map(str::to_string).ok_or_else(|| {
                SplitError::NoPlate(
                    "the observed nodes share no first plate; name the data plate".into(),
                )
            })?,
        };
        let Some(p) = self.plates.iter().position(|(n, _)| *n == name) else {
            let known: Vec<&str> = self.plates.iter().map(|(n, _)| n.as_str()).collect();
            return Err(SplitError::NoPlate(format!(
                "the model has no plate `{name}` (plates: {})",
                known.join(", ")
            )));
        };
        let local: Arc<[bool]> = self.nodes.iter().map(|n| n.plates.contains(&p)).collect();
        let split = Split { plate: name, local };
        for i in (0..self.nodes.len()).filter(|&i| !split.local[i]) {
            self.check_global(&split, i)?;
        }
        Ok(split)
    }

    /// Why global node i cannot be updated by [`Vmp::update_global`], if it cannot.
    fn check_global(&self, split: &Split, i: usize) -> Result<(), SplitError> {
        let n = &self.nodes[i];
        let fail = |why: String| {
            Err(SplitError::Node {
                node: n.name.clone(),
                plate: split.plate.clone(),
                why,
            })
        };
        let parents = n.parents.iter().filter_map(|e| match e.source {
            Source::Node(j) => Some(j),
            Source::Const(_) => None,
        });
        for j in parents.chain(n.selectors.iter().map(|s| s.node)) {
            if split.local[j] {
                return fail(format!(
                    "it has no data plate but reads `{}`, which has: it depends on every row in \
                     turn, not on a sum over rows",
                    self.nodes[j].name
                ));
            }
        }
        if !n.has_latent() {
            return Ok(());
        }
        let why = match self.block_of(i) {
            Some(Block::Factorised(_)) if self.coupled(i) => {
                "its rows are updated one at a time (Gauss–Seidel over `W @ x`), each needing its \
                 own reduction over the shards"
            }
            Some(Block::Factorised(_)) => return Ok(()),
            Some(Block::Chain(_)) => {
                "a Markov chain without the data plate is joint over the order of its steps; give \
                 the chain the data plate (one sequence per row)"
            }
            Some(Block::Fused(_)) => "a mixture index without the data plate",
            Some(Block::Shared(_)) => {
                "it keeps one covariance for all its elements (linear-Gaussian kernel), whose \
                 sharded update is not built"
            }
            Some(Block::Tree(_)) => "a tree-structured q, whose sharded update is not built",
            Some(Block::JointGaussian(_)) => {
                "a Gaussian q-block without the data plate, whose sharded update is not built"
            }
            Some(Block::SoftmaxJoint(_)) => {
                "its q is joint over the classes of a softmax regression, updated by a step \
                 checked against the bound over every row, whose sharded form is not built"
            }
            Some(Block::NonConjugate(_)) => {
                "its children are non-conjugate (quadrature logit, log-link Poisson): its update is \
                 a step checked against the bound over every row, whose sharded form is not built"
            }
            Some(Block::Linear(_)) => {
                "the data of a linear-Gaussian structure without the data plate"
            }
            // W of a gated block kept with one covariance per component (`gated_linear/weights.rs`):
            // its update reads the block's messages to its rows, which `update_global` sums over
            // the shards (the block's sums add up over rows).
            Some(Block::Gated(b)) if b.layout.w == i => return Ok(()),
            Some(Block::Gated(_)) => "a gated q-block, whose sharded update is not built",
            Some(Block::Sampled(s)) => match s.child_on_rows(&split.local) {
                // Its q reads the data only through the summed messages of its Gaussian
                // children (Winn (2.19)): `update_global` updates it on every replica alike.
                None => return Ok(()),
                Some(c) => {
                    return fail(format!(
                        "an importance-sampled node read by the Student-t values `{}`, which have \
                         the data plate: each importance weight needs their likelihood summed \
                         over every shard at each draw (a reduction per draw and per pilot pass, \
                         not only of messages), whose sharded form is not built; give `{}` the \
                         data plate (one mean per row) or fit it in one process",
                        self.nodes[c].name, n.name
                    ))
                }
            },
            None => return Ok(()),
        };
        fail(why.to_string())
    }

    /// The sum of the messages node `node` receives from its local children (directly or through
    /// deterministic nodes): this shard's share of a global's update.
    pub fn local_messages(&self, split: &Split, node: NodeId) -> Vec<f64> {
        self.leaf_messages(node.0, &|c| split.local[c])
    }

    /// Updates global `node` — Winn (2.19) — from its prior, its global children on this replica
    /// and `outside`: the sum over every shard of [`Vmp::local_messages`].
    pub fn update_global(
        &mut self,
        split: &Split,
        node: NodeId,
        outside: Vec<f64>,
    ) -> Result<(), RunError> {
        let i = node.0;
        let n = &self.nodes[i];
        if split.local[i] {
            return Err(RunError::Schedule(format!(
                "`{}` has the data plate `{}`: it is updated on each shard",
                n.name, split.plate
            )));
        }
        if outside.len() != n.n * n.len {
            return Err(RunError::Schedule(format!(
                "`{}` takes {} summed message values, not {}",
                n.name,
                n.n * n.len,
                outside.len()
            )));
        }
        self.outside = Some(Outside {
            target: i,
            local: split.local.clone(),
            messages: outside,
        });
        let done = self.update(node);
        self.outside = None;
        done
    }

    /// The bound's terms split in two: the sum over local nodes (this shard's rows) and over
    /// global nodes (alike on every replica) — Winn (2.31).
    pub fn split_bound(&self, split: &Split) -> (f64, f64) {
        let terms = self.node_bounds();
        let part = |want: bool| {
            terms
                .iter()
                .zip(split.local.iter())
                .filter(|(_, &l)| l == want)
                .map(|(t, _)| t)
                .sum()
        };
        (part(true), part(false))
    }
}
