//! Boltzmann machines (Ising models): exact references (enumeration, junction tree), Gibbs sampling,
//! mean field, TAP, mixtures of mean field (Lawrence ch. 4), the Leisink–Kappen third-order bound,
//! learning, file formats and the functions behind the CLI.
//!
//! Everything works on [`BoltzmannMachine`] in ±1 coding with an exact log-weight offset, so
//! clamping, temperature and 0/1 conversion never lose the log Z constant.

// Dense numerical kernels index several arrays with one loop variable; iterator chains would
// obscure the equations they implement.
#![allow(clippy::needless_range_loop)]

pub mod cli;
pub mod error;
pub mod exact;
pub mod gibbs;
pub mod io;
pub mod jt;
pub mod learn;
pub mod mf;
pub mod mixture;
pub mod model;
pub mod optim;
pub mod sk;
pub mod tap;
pub mod third_order;

pub use error::{BmError, Result};
pub use model::BoltzmannMachine;

/// What a reported log Z number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Quality {
    /// Exact up to floating point.
    Exact,
    /// A guaranteed lower bound on log Z.
    LowerBound,
    /// A stochastic estimate with a standard error.
    Estimate,
    /// A deterministic approximation that is not a bound (e.g. TAP).
    Approximation,
}

impl Quality {
    /// True only for guaranteed lower bounds.
    pub fn is_lower_bound(self) -> bool {
        matches!(self, Quality::LowerBound)
    }
}
