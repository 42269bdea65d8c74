//! Why a fixed value (an observation, a constant, an initial value) is not a value of its
//! family or moment kind. Each message is the one the string errors it replaced printed, so CLI
//! output and goldens are unchanged.

use super::MomentKind;
use thiserror::Error;

/// A fixed value outside its family's support or its moment kind's domain
/// ([`crate::dist::ExpFamily::observe_value`], [`MomentKind::fixed_moments`]).
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ValueError {
    /// A real value that is NaN or infinite.
    #[error("{value} is not a finite real number")]
    NotFiniteReal {
        /// The value.
        value: f64,
    },
    /// A constant or initial value that is NaN or infinite.
    #[error("value {value} is not finite")]
    NotFinite {
        /// The value.
        value: f64,
    },
    /// The wrong number of values for a moment kind.
    #[error("expected {expected} value(s) for {kind}, got {got}")]
    Count {
        /// The moment kind.
        kind: MomentKind,
        /// Values it takes.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A value outside a continuous support such as "x > 0".
    #[error("{value} is outside the support {support}")]
    OutsideSupport {
        /// The value.
        value: f64,
        /// The support, as "x > 0" or "x ≥ 0".
        support: &'static str,
    },
    /// A non-positive value where a positive one is needed.
    #[error("{value} must be positive")]
    NotPositive {
        /// The value.
        value: f64,
    },
    /// A Bernoulli value that is neither 0 nor 1.
    #[error("{value} is not 0 or 1")]
    NotBinary {
        /// The value.
        value: f64,
    },
    /// A value that is not a whole number ≥ 0.
    #[error("{value} is not a non-negative count")]
    NotCount {
        /// The value.
        value: f64,
    },
    /// A Binomial value outside 0..=trials.
    #[error("{value} is not a count from 0 to {trials}")]
    NotCountUpTo {
        /// The value.
        value: f64,
        /// The number of trials.
        trials: u32,
    },
    /// An observed Categorical value that is not a category index.
    #[error("{value} is not a category: the categories are 0 to {last}")]
    NotCategory {
        /// The value.
        value: f64,
        /// The last category, k − 1.
        last: usize,
    },
    /// A constant Categorical value that is not a category index.
    #[error("category {value} is not one of 0 to {}", .k.saturating_sub(1))]
    NotCategoryIndex {
        /// The value.
        value: f64,
        /// The number of categories.
        k: usize,
    },
    /// Probabilities that are not positive or do not sum to 1.
    #[error("probabilities must be positive and sum to 1")]
    NotOnSimplex,
    /// A matrix with a NaN or infinite entry.
    #[error("matrix has a non-finite entry")]
    MatrixNotFinite,
    /// A matrix that is not symmetric positive definite.
    #[error("matrix is not symmetric positive definite")]
    NotPositiveDefinite,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::{Categorical, ExpFamily, Gamma, Poisson, Wishart};

    #[test]
    fn families_and_kinds_name_the_bad_value_with_the_old_messages() {
        let mut u = [0.0; 8];
        let e = Poisson.observe_value(&[-1.0], &mut u).unwrap_err();
        assert_eq!(e, ValueError::NotCount { value: -1.0 });
        assert_eq!(e.to_string(), "-1 is not a non-negative count");
        let e = Gamma { shape: 2.0 }
            .observe_value(&[0.0], &mut u)
            .unwrap_err();
        assert_eq!(e.to_string(), "0 is outside the support x > 0");
        let e = Categorical { k: 3 }
            .observe_value(&[3.0], &mut u)
            .unwrap_err();
        assert_eq!(
            e,
            ValueError::NotCategory {
                value: 3.0,
                last: 2
            }
        );
        let e = Wishart { d: 2, dof: 3.0 }
            .observe_value(&[1.0, 2.0, 2.0, 1.0], &mut u)
            .unwrap_err();
        assert_eq!(e, ValueError::NotPositiveDefinite);
        // The message the engine reports.
        assert_eq!(
            Poisson
                .observe_value(&[0.5], &mut u)
                .map_err(|e| e.to_string()),
            Err("0.5 is not a non-negative count".to_string())
        );
        let e = MomentKind::Gamma.fixed_moments(&[1.0, 2.0]).unwrap_err();
        assert_eq!(e.to_string(), "expected 1 value(s) for Gamma, got 2");
        assert_eq!(
            MomentKind::Categorical { k: 2 }.fixed_moments(&[2.0]),
            Err(ValueError::NotCategoryIndex { value: 2.0, k: 2 })
        );
        // Ranges read as a user counts them: "0 to 2", never Rust's "0..3".
        assert_eq!(
            Categorical { k: 3 }
                .observe_value(&[3.0], &mut u)
                .unwrap_err()
                .to_string(),
            "3 is not a category: the categories are 0 to 2"
        );
        assert_eq!(
            ValueError::NotCategoryIndex { value: 2.0, k: 2 }.to_string(),
            "category 2 is not one of 0 to 1"
        );
        assert_eq!(
            ValueError::NotCountUpTo {
                value: 4.0,
                trials: 3
            }
            .to_string(),
            "4 is not a count from 0 to 3"
        );
    }
}
