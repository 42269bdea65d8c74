//! Errors of the Boltzmann-machine half. Every variant names the place of the bad input.

use thiserror::Error;

/// Errors returned by model construction, file readers, exact references and the CLI functions.
#[derive(Debug, Error)]
pub enum BmError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A syntax or content error at a known place in a text file.
    #[error("{file}:{line}: {what}")]
    Parse {
        /// File name (or `<string>`).
        file: String,
        /// 1-based line number.
        line: usize,
        /// What was expected or what was wrong.
        what: String,
    },
    /// A model whose parameters are inconsistent (shape, symmetry, diagonal, non-finite values).
    #[error("invalid model: {0}")]
    InvalidModel(String),
    /// An option outside its valid range.
    #[error("invalid option `{option}`: {why}")]
    InvalidOption {
        /// Option name.
        option: &'static str,
        /// Why it is invalid.
        why: String,
    },
    /// Enumeration was asked for too many free units.
    #[error("exact enumeration over {units} units exceeds the limit of {max}")]
    TooManyUnits {
        /// Number of free units.
        units: usize,
        /// The limit.
        max: usize,
    },
    /// Data that do not fit the model.
    #[error("data: {0}")]
    Data(String),
}

/// Shorthand result type.
pub type Result<T> = std::result::Result<T, BmError>;
