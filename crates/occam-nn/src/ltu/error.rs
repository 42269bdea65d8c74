//! The error type of the linear-threshold-unit code.

use thiserror::Error;

/// Everything that can go wrong in `ltu`: bad shapes, bad values, bad options, unreadable data.
#[derive(Debug, Error)]
pub enum LtuError {
    /// A slice or matrix has the wrong length.
    #[error("{what}: expected length {expected}, got {got}")]
    Shape {
        /// What was being checked.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A value that must be finite is NaN or infinite.
    #[error("{what}: non-finite value at index {index}")]
    NonFinite {
        /// What was being checked.
        what: &'static str,
        /// Flat index of the first bad value.
        index: usize,
    },
    /// A class label or unit state that must be −1 or +1 is not.
    #[error("{what}: value {value} at index {index} is not -1 or +1")]
    NotBipolar {
        /// What was being checked.
        what: &'static str,
        /// Flat index of the first bad value.
        index: usize,
        /// The value found.
        value: f64,
    },
    /// An option is out of its valid range.
    #[error("invalid option `{name}`: {why}")]
    InvalidOption {
        /// The option's name.
        name: &'static str,
        /// Why it is invalid.
        why: String,
    },
    /// Exact enumeration was asked for a network with too many hidden units.
    #[error("exact enumeration over {hidden} hidden units exceeds the limit of {max}")]
    TooManyHidden {
        /// Number of hidden units in the network.
        hidden: usize,
        /// The largest number enumerated.
        max: usize,
    },
    /// A data file could not be parsed.
    #[error("{file}: record {record}: {why}")]
    Data {
        /// The file (or embedded data set) being read.
        file: String,
        /// 1-based record number (0 for the header or the whole file).
        record: usize,
        /// What is wrong.
        why: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Result alias for `ltu`.
pub type Result<T> = std::result::Result<T, LtuError>;

/// Checks that every value is finite.
pub(crate) fn check_finite(what: &'static str, v: &[f64]) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(LtuError::NonFinite { what, index }),
        None => Ok(()),
    }
}

/// Checks that every value is exactly −1 or +1.
pub(crate) fn check_bipolar(what: &'static str, v: &[f64]) -> Result<()> {
    match v.iter().position(|&x| x != 1.0 && x != -1.0) {
        Some(index) => Err(LtuError::NotBipolar {
            what,
            index,
            value: v[index],
        }),
        None => Ok(()),
    }
}

/// Checks a length.
pub(crate) fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(LtuError::Shape {
            what,
            expected,
            got,
        })
    }
}
