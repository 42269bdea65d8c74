//! Errors of the core: building a graph and running inference. Each names the node, slot or
//! plate involved, so a user can find the place in the model.

use crate::moments::MomentKind;
use thiserror::Error;

// A value's error lives with the moment kinds it names (`moments::value`): moments read it, so
// defining it here would make `error` and `moments` import each other.
pub use crate::moments::ValueError;

/// An invalid model, found when the graph is built — never at run time.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BuildError {
    /// A parent's moments are not what the slot needs (Winn Table 2.1).
    #[error("node `{node}`: slot `{slot}` expects {expected}, but `{parent}` provides {got}")]
    Conjugacy {
        /// Child node.
        node: String,
        /// Slot name.
        slot: String,
        /// Parent name.
        parent: String,
        /// Expected moment kind.
        expected: MomentKind,
        /// Provided moment kind.
        got: MomentKind,
    },
    /// A parent lives in a plate the child does not.
    #[error(
        "node `{node}`: parent `{parent}` is in plate `{plate}`, which `{node}` is not in{hint}"
    )]
    PlateMismatch {
        /// Child node.
        node: String,
        /// Parent node.
        parent: String,
        /// The offending plate.
        plate: String,
        /// Extra context.
        hint: String,
    },
    /// Wrong number of parents, values or dimensions.
    #[error("node `{node}`: {what}")]
    Shape {
        /// Node.
        node: String,
        /// What is wrong.
        what: String,
    },
    /// A name that is not defined.
    #[error("unknown {what} `{name}`")]
    UnknownName {
        /// What kind of thing.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A name used twice.
    #[error("{what} `{name}` is defined twice")]
    Duplicate {
        /// What kind of thing.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// An invalid constant or observed value.
    #[error("node `{node}`, element {element}: {why}")]
    Value {
        /// Node.
        node: String,
        /// Plate element (row-major over the node's plates).
        element: usize,
        /// Why it is invalid.
        why: String,
    },
}

/// A failure while running inference.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RunError {
    /// An update produced parameters outside the family's domain.
    #[error("numerical breakdown at node `{node}`, element {element}: {what}")]
    Numerical {
        /// Node.
        node: String,
        /// Plate element.
        element: usize,
        /// What went wrong.
        what: String,
    },
    /// The bound decreased: a bug (VMP updates never decrease it).
    #[error(
        "the lower bound decreased by {by:e} at iteration {iteration} (after updating `{node}`)"
    )]
    BoundDecreased {
        /// Iteration (1-based).
        iteration: usize,
        /// Size of the decrease.
        by: f64,
        /// The last node updated.
        node: String,
    },
    /// A schedule that does not name every latent node, or names an observed one.
    #[error("invalid update order: {0}")]
    Schedule(String),
    /// An observer stopped the run (e.g. Ctrl-C in Python).
    #[error("interrupted at iteration {iteration}")]
    Interrupted {
        /// Iteration (1-based) after which the run stopped.
        iteration: usize,
    },
}

/// Why a node's q cannot be transformed by a rotation (parameter expansion): the reason follows
/// the node's name in the caller's message (`` `x` is not a chain ``).
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum NotTransformable {
    /// Not a GaussianARD or MvGaussian vector.
    #[error("is not a Gaussian vector (GaussianARD or MvGaussian)")]
    NotGaussianVector,
    /// Some elements are observed.
    #[error("has observed elements")]
    Observed,
    /// MAP, a mixture, or a member of a joint q-block.
    #[error("is MAP, a mixture or in a joint q-block")]
    Structured,
    /// Not a chain.
    #[error("is not a chain")]
    NotChain,
    /// A discrete chain.
    #[error("is a discrete chain")]
    DiscreteChain,
    /// A Gaussian chain with inputs.
    #[error("has inputs (controls), which a rotation does not transform")]
    ChainInputs,
    /// A chain whose parameters are a mixture.
    #[error("has a mixture of parameters")]
    MixedParameters,
}

/// Why the smoothing of one sequence of a chain failed (the caller names the node and sequence).
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum SequenceError {
    /// Forward–backward found every path impossible.
    #[error(
        "no state path has positive probability under the expected parameters and the \
         children's messages"
    )]
    NoPath,
    /// The Gaussian chain's block-tridiagonal precision is not positive definite.
    #[error("the chain's posterior precision is not positive definite at step {step}")]
    NotPositiveDefinite {
        /// The step (0-based) where the factorisation broke.
        step: usize,
    },
}

/// Why a saved q state cannot be put back ([`crate::engine::Vmp::set_q_state`]).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum StateError {
    /// Another number of nodes.
    #[error("{saved} nodes saved, the model has {model}")]
    NodeCount {
        /// Nodes in the saved state.
        saved: usize,
        /// Nodes of the model.
        model: usize,
    },
    /// A node's arrays have other lengths.
    #[error(
        "node `{node}`: saved sizes (φ {}, u {}, A {}) differ from the model's (φ {}, u {}, A {})",
        saved[0], saved[1], saved[2], model[0], model[1], model[2]
    )]
    Sizes {
        /// The node.
        node: String,
        /// Saved lengths of φ, u and A.
        saved: [usize; 3],
        /// The model's lengths of φ, u and A.
        model: [usize; 3],
    },
    /// A saved joint q (a softmax q-block's, `Vmp::joint_q`) that the node cannot take.
    #[error(
        "node `{node}`: a saved joint q of {saved} values, the model's softmax q-block holds {model}"
    )]
    JointQ {
        /// The node.
        node: String,
        /// Values saved.
        saved: usize,
        /// Values the model's block holds (0 without a block).
        model: usize,
    },
    /// A saved array holds NaN.
    #[error("node `{node}`: saved state holds NaN")]
    NaN {
        /// The node.
        node: String,
    },
}

/// Why state moments cannot be put into a chain node ([`crate::engine::Vmp::set_chain_moments`]).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ChainMomentsError {
    /// The node is not a chain.
    #[error("`{node}` is not a chain")]
    NotChain {
        /// The node.
        node: String,
    },
    /// Another number of sequences, or a sequence longer than the time plate or not a whole
    /// number of steps.
    #[error(
        "`{node}`: {given} sequences of moments do not fit {sequences} sequences of {steps} steps"
    )]
    Sizes {
        /// The node.
        node: String,
        /// Sequences given.
        given: usize,
        /// Sequences of the chain.
        sequences: usize,
        /// Steps of the time plate.
        steps: usize,
    },
}
