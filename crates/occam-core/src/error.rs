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
