//! The q-block contract: what one part of q provides to the engine. The variational posterior is a
//! product of blocks — q = Π_b q_b — and the generic update, bound and message passing are one loop
//! over them (`Vmp::update`, `Vmp::node_bounds`, `Vmp::child_messages`): nothing outside a block's
//! own folder knows its structure.
//!
//! A block provides (see [`QBlock`]):
//! - its **members**: the nodes whose q (or whose own variational parameters) it holds, each
//!   member's φ, u and A living in the member's [`NodeState`] (so restart snapshots and restores
//!   carry every block alike);
//! - its **update** — the optimal q_b given the messages it receives (Winn (2.19) for a factorised
//!   node, (5.20) for a structured block), which never lowers the bound;
//! - its **bound term** per member — Winn (2.34)–(2.36) for a factorised node; a structured block
//!   adds its joint entropy once;
//! - the **messages it sends to its parents**, one member and edge at a time: Winn (2.18), (2.53),
//!   (2.46–2.49) or a block's own expectation of them; they equal ∂(bound)/∂u_parent;
//! - its **start** (Winn §2.5.1) and, through its members' store, its restart snapshot.
//!
//! A factor with its own variational parameters is a block too: the weights of an
//! importance-sampled node are kept in the store of the factor's node (its member); the block's
//! update re-optimises them, its bound term is the local bound, and its messages to the parents
//! are the derivatives of that bound. A local parameter whose optimum is closed form in the
//! parents' moments needs no block: the logit families (`dist/logistic.rs`) take the
//! Jaakkola–Jordan ξ² = ⟨η²⟩ at every use, so their bound term is max_ξ of the local bound and
//! their messages its derivatives (envelope theorem) — an ordinary family.
//!
//! # Checklist: adding a block
//! 1. A folder `engine/<block>/` with the structure's kernels and `block.rs` holding a struct and
//!    `impl QBlock` for it (members, update, bound, send, start); derivation comments cite the
//!    equations.
//! 2. Its builder — the `impl Graph` method that declares it (e.g. [`Graph::joint_q`] in
//!    `graph/joint_q.rs`, the chains in `graph/chain.rs`) — in `graph/`, storing what it needs on
//!    the built nodes (`network::ModelNode`).
//! 3. One variant in [`Block`] and one arm in `for_block!` below; one rule in [`assign`] saying which
//!    nodes it claims (earlier rules win).
//! 4. Its cached products, if any, in `NodeCache`, dropped by `Vmp::changed` when an input changes.
//! 5. One model of the kind in `engine/qblock/tests/models.rs`, listed in `cases` of
//!    `engine/qblock/tests.rs` (the contract test: bound terms against a from-scratch bound —
//!    add the block's independent reference to `tests/scratch.rs` —, an update never lowers the
//!    bound, messages against finite differences); its `kind` matches every variant, so a new
//!    block is named there before the test compiles.

use super::*;

pub(super) use super::node::NodeState;

/// One part of q: its members, update, bound term, messages to parents and start (module docs).
///
/// Calls are per block (a few per sweep); the loops over elements stay inside each
/// implementation, monomorphic over the family (`DistVisitor`).
pub(super) trait QBlock {
    /// The nodes whose q or variational parameters the block holds, in node order.
    fn members(&self) -> &[usize];

    /// The optimal q of the block given the messages it receives, scheduled through `member`
    /// (blocks whose q is joint update every member at once).
    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError>;

    /// Member `member`'s term of the bound; with `sizes`, the sizes of the pieces it adds (see
    /// [`Vmp::bound_roundoff`]).
    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64;

    /// Adds into `out` (per element of the parent) the messages `member` sends to the parent it
    /// reads as `role`.
    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]);

    /// Starts `member`'s q (Winn §2.5.1), as its `Init` or the default start asks.
    fn start(&self, vmp: &mut Vmp, member: usize, rng: &mut Rng) -> Result<(), RunError> {
        vmp.start_stochastic(member, rng)
    }

    /// Member `member`'s state for a restart snapshot.
    fn snapshot(&self, vmp: &Vmp, member: usize) -> NodeState {
        vmp.nodes[member].q.clone()
    }

    /// Puts back a snapshot of `member`.
    fn restore(&self, vmp: &mut Vmp, member: usize, mut state: NodeState) {
        self.restore_swap(vmp, member, &mut state);
    }

    /// [`QBlock::snapshot`] into `out`, reusing its buffers (a block that overrides `snapshot`
    /// overrides this too).
    fn snapshot_into(&self, vmp: &Vmp, member: usize, out: &mut NodeState) {
        out.copy_from(&vmp.nodes[member].q);
    }

    /// [`QBlock::restore`] by swapping: `state` is put back and receives the replaced state, whose
    /// buffers the next [`QBlock::snapshot_into`] reuses (a block that overrides `restore`
    /// overrides this too).
    fn restore_swap(&self, vmp: &mut Vmp, member: usize, state: &mut NodeState) {
        let n = &mut vmp.nodes[member];
        std::mem::swap(&mut n.q, state);
        // Per-element moments formed on request (`Vmp::moments`) belong to the old state.
        n.lazy = Default::default();
    }
}

/// Every kind of block (static dispatch: one `match` per block call).
#[derive(Clone, Debug)]
pub(super) enum Block {
    /// A node of the mean-field part (module `factorised`).
    Factorised(factorised::Factorised),
    /// A mixture index updated in one pass with its children's statistics (module `fused`).
    Fused(fused::FusedIndex),
    /// A Gaussian node keeping one covariance for all its elements (module `linear::shared`).
    Shared(linear::SharedCovariance),
    /// The dot node, offsets sum and Gaussian child of a linear-Gaussian structure (`linear`).
    Linear(linear::LinearKernel),
    /// A Markov chain's joint q over each sequence (module `chain`).
    Chain(chain::ChainBlock),
    /// A tree-structured q over discrete nodes (module `tree`).
    Tree(tree::TreeBlock),
    /// A Gaussian q joint over scalar Gaussian nodes read as one vector (module `joint_gaussian`).
    JointGaussian(joint_gaussian::JointGaussian),
    /// A node with non-conjugate children, updated by a checked step (module `noncj`).
    NonConjugate(noncj::NonConjugate),
    /// q(x_n, s_n) joint over a mixture index and the latent vectors it gates (`gated_linear`).
    Gated(gated_linear::GatedLinear),
    /// A node whose q is importance sampled (module `sampled`).
    Sampled(sampled::Sampled),
    /// The weights of a softmax regression's classes, one Gaussian q over all of them (module
    /// `softmax_joint`).
    SoftmaxJoint(softmax_joint::SoftmaxJoint),
}

macro_rules! for_block {
    ($b:expr, $x:ident => $body:expr) => {
        match $b {
            Block::Factorised($x) => $body,
            Block::Fused($x) => $body,
            Block::Shared($x) => $body,
            Block::Linear($x) => $body,
            Block::Chain($x) => $body,
            Block::Tree($x) => $body,
            Block::JointGaussian($x) => $body,
            Block::NonConjugate($x) => $body,
            Block::Gated($x) => $body,
            Block::Sampled($x) => $body,
            Block::SoftmaxJoint($x) => $body,
        }
    };
}

impl QBlock for Block {
    fn members(&self) -> &[usize] {
        for_block!(self, b => b.members())
    }
    fn update(&self, vmp: &mut Vmp, member: usize) -> Result<(), RunError> {
        for_block!(self, b => b.update(vmp, member))
    }
    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        for_block!(self, b => b.bound(vmp, cache, member, sizes))
    }
    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        for_block!(self, b => b.send(vmp, member, role, out))
    }
    fn start(&self, vmp: &mut Vmp, member: usize, rng: &mut Rng) -> Result<(), RunError> {
        for_block!(self, b => b.start(vmp, member, rng))
    }
    fn snapshot(&self, vmp: &Vmp, member: usize) -> NodeState {
        for_block!(self, b => b.snapshot(vmp, member))
    }
    fn restore(&self, vmp: &mut Vmp, member: usize, state: NodeState) {
        for_block!(self, b => b.restore(vmp, member, state))
    }
    fn snapshot_into(&self, vmp: &Vmp, member: usize, out: &mut NodeState) {
        for_block!(self, b => b.snapshot_into(vmp, member, out))
    }
    fn restore_swap(&self, vmp: &mut Vmp, member: usize, state: &mut NodeState) {
        for_block!(self, b => b.restore_swap(vmp, member, state))
    }
}

/// The blocks of a compiled model and the block of each node (`None`: deterministic nodes and
/// constants, whose moments follow from their parents). Rules in order, the first that claims a
/// node wins: tree blocks, gated blocks, Gaussian q-blocks, softmax q-blocks,
/// chains, linear-Gaussian structures, shared covariances, fused indices,
/// and every other stochastic node alone.
pub(super) fn assign(
    nodes: &[Node],
    trees: &[tree::Tree],
    linear: &[Option<Arc<linear::Linear>>],
    shared: &[Option<Arc<linear::Linear>>],
    fused: &[bool],
) -> (Vec<Block>, Vec<Option<u32>>) {
    let mut blocks = Vec::new();
    let mut of: Vec<Option<u32>> = vec![None; nodes.len()];
    let mut claim = |block: Block, of: &mut Vec<Option<u32>>| {
        let b = blocks.len() as u32;
        for &m in block.members() {
            of[m] = Some(b);
        }
        blocks.push(block);
    };
    for (t, tree) in trees.iter().enumerate() {
        claim(Block::Tree(tree::TreeBlock::new(t, tree)), &mut of);
    }
    let data = |n: &&Node| n.gated == Some(crate::network::GatedRole::Data);
    for (y, _) in nodes.iter().enumerate().filter(|(_, n)| data(n)) {
        claim(
            Block::Gated(gated_linear::GatedLinear::new(nodes, y)),
            &mut of,
        );
    }
    for (x, _) in nodes.iter().enumerate().filter(|(_, n)| n.joint_gaussian) {
        let block = joint_gaussian::JointGaussian::new(nodes, x);
        claim(Block::JointGaussian(block), &mut of);
    }
    for i in 0..nodes.len() {
        if of[i].is_none() {
            if let Some(b) = softmax_joint::detect(nodes, i) {
                claim(Block::SoftmaxJoint(b), &mut of);
            }
        }
    }
    for (i, node) in nodes.iter().enumerate() {
        if of[i].is_some() {
            continue;
        }
        let block = match &node.body {
            Body::Stochastic(_) if sampled::needs_sampling(nodes, i) => {
                Block::Sampled(sampled::Sampled::new(nodes, i))
            }
            Body::Chain(_) => Block::Chain(chain::ChainBlock::new(i)),
            _ if linear[i].is_some() => {
                let lin = linear[i].clone().expect("checked");
                Block::Linear(linear::LinearKernel::new(lin))
            }
            Body::Stochastic(_) if shared[i].is_some() => {
                Block::Shared(linear::SharedCovariance::new(i))
            }
            Body::Stochastic(_) if fused[i] => Block::Fused(fused::FusedIndex::new(i)),
            Body::Stochastic(_) if noncj::needs_checked_step(nodes, i) => {
                Block::NonConjugate(noncj::NonConjugate::new(nodes, i))
            }
            Body::Stochastic(_) => Block::Factorised(factorised::Factorised::new(i)),
            Body::Deterministic(_) | Body::Constant => continue,
        };
        claim(block, &mut of);
    }
    (blocks, of)
}

impl Vmp {
    /// The block holding node i's q, if any.
    pub(super) fn block_of(&self, i: usize) -> Option<&Block> {
        self.block_of[i].map(|b| &self.blocks[b as usize])
    }
}

#[cfg(test)]
pub(in crate::engine) mod tests;
