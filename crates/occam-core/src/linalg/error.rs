//! The typed error of the dense-matrix routines that can refuse their input.

/// Why a dense-matrix routine ([`super::PrincipalAxes::fit`], [`super::least_squares`]) refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LinalgError {
    /// A row-major matrix whose length is not rows × cols, or two arrays of different lengths.
    #[error("shape mismatch: {what} (expected {expected}, got {got})")]
    Shape {
        /// What was being checked.
        what: &'static str,
        /// The expected length.
        expected: usize,
        /// The length found.
        got: usize,
    },
    /// Too few rows for the requested operation.
    #[error("too few rows: {what} needs at least {need}, got {got}")]
    TooFew {
        /// What needs the rows.
        what: &'static str,
        /// Rows needed.
        need: usize,
        /// Rows present.
        got: usize,
    },
    /// A value that is not finite.
    #[error("non-finite value in {what} at index {index}")]
    NonFinite {
        /// Which array.
        what: &'static str,
        /// Position of the value (row-major).
        index: usize,
    },
    /// A matrix that is singular (or not positive definite) to working precision.
    #[error("singular system in {what}")]
    Singular {
        /// Which factorisation.
        what: &'static str,
    },
}

/// The first non-finite entry of `x`, as a [`LinalgError::NonFinite`].
pub(crate) fn check_finite(what: &'static str, x: &[f64]) -> Result<(), LinalgError> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(LinalgError::NonFinite { what, index }),
        None => Ok(()),
    }
}
