//! Errors of the sigmoid-belief-network code. Every variant names the place of the bad input.

use thiserror::Error;

/// Error raised by SBN construction, I/O, inference and learning.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SbnError {
    /// A unit index is out of range.
    #[error("{what}: unit {unit} is out of range (network has {n} units)")]
    UnitOutOfRange {
        /// Where the index was found.
        what: String,
        /// The offending index.
        unit: usize,
        /// Number of units.
        n: usize,
    },
    /// The parent lists contain a directed cycle (or a self loop).
    #[error("the parent lists contain a directed cycle through unit {unit}")]
    Cycle {
        /// A unit on the cycle.
        unit: usize,
    },
    /// The same parent was listed twice for one child.
    #[error("unit {child} lists parent {parent} twice")]
    DuplicateParent {
        /// Child unit.
        child: usize,
        /// Repeated parent.
        parent: usize,
    },
    /// A parameter is not finite.
    #[error("{what} is not finite ({value})")]
    NotFinite {
        /// Which parameter.
        what: String,
        /// Its value.
        value: f64,
    },
    /// Lengths do not agree.
    #[error("{what}: expected length {expected}, got {got}")]
    Length {
        /// What was being checked.
        what: String,
        /// Expected length.
        expected: usize,
        /// Found length.
        got: usize,
    },
    /// Enumeration over too many hidden units was requested.
    #[error("exact enumeration over {hidden} hidden units exceeds the limit of {max}")]
    TooManyHidden {
        /// Number of hidden units.
        hidden: usize,
        /// The limit.
        max: usize,
    },
    /// A text file (CSV) could not be parsed.
    #[error("{file}, line {line}: {why}")]
    Parse {
        /// File name or description.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// An I/O error (file name and message).
    #[error("{file}: {why}")]
    Io {
        /// File name.
        file: String,
        /// Message.
        why: String,
    },
    /// An option is invalid.
    #[error("invalid option {name}: {why}")]
    Option {
        /// Option name.
        name: String,
        /// Why it is invalid.
        why: String,
    },
    /// The method does not apply to this network (e.g. Markov-chain q on a non-layered net).
    #[error("{method} does not apply: {why}")]
    NotApplicable {
        /// Method name.
        method: String,
        /// Reason.
        why: String,
    },
}

/// Shorthand result type.
pub type Result<T> = std::result::Result<T, SbnError>;
