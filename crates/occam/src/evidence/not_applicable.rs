//! Why an estimator of the evidence does not apply to a model or a fit. The variants name the
//! variable (and row, value) concerned; the text is what `occam compare --method` prints after
//! "not applicable".

use thiserror::Error;

/// Why an estimator does not apply.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum NotApplicable {
    /// The model as a whole is outside the estimators' class.
    #[error("{0}")]
    Model(&'static str),
    /// A variable is outside the class: `` `var` why ``.
    #[error("`{var}` {why}")]
    Variable {
        /// The variable.
        var: String,
        /// Why, as a predicate (`is deterministic`).
        why: String,
    },
    /// A part of a variable (a slot, a parameter, its q) is outside the class: `` `var`: why ``.
    #[error("`{var}`: {why}")]
    Part {
        /// The variable.
        var: String,
        /// Which part and why (`a latent mean`).
        why: String,
    },
    /// An observed value outside its family's support.
    #[error("`{var}` value {value} (row {row}) {why}")]
    Value {
        /// The observed variable.
        var: String,
        /// Its row (1-based).
        row: usize,
        /// The value.
        value: f64,
        /// Why it cannot be taken.
        why: String,
    },
    /// A row of an observation that its conjugate pair cannot take.
    #[error("`{var}` row {row}: {why}")]
    Row {
        /// The observed variable.
        var: String,
        /// Its row (1-based).
        row: usize,
        /// Why.
        why: String,
    },
    /// A Gaussian mean and precision with independent priors: no closed form.
    #[error(
        "the mean `{mean}` and precision `{precision}` have independent priors (no closed form; \
         a Normal–Gamma prior writes the mean's precision as c * {precision})"
    )]
    IndependentPriors {
        /// The mean's variable.
        mean: String,
        /// The precision's variable.
        precision: String,
    },
    /// A limit of an estimator, a value or the fit's posterior (the text says which).
    #[error("{0}")]
    Other(String),
}

impl NotApplicable {
    /// `` `var` why ``.
    pub fn variable(var: &str, why: impl Into<String>) -> Self {
        NotApplicable::Variable {
            var: var.to_string(),
            why: why.into(),
        }
    }

    /// `` `var`: why ``.
    pub fn part(var: &str, why: impl Into<String>) -> Self {
        NotApplicable::Part {
            var: var.to_string(),
            why: why.into(),
        }
    }
}
