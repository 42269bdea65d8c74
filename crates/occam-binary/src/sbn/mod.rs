//! Sigmoid belief networks (SBNs): exact enumeration, mean field with Saul's ξ bound, mixtures
//! of mean field, Markov-chain q, the Leisink–Kappen third-order bound, and learning.
//!
//! Coding: the model is stored in Lawrence's 0/1 coding (P(x_i=1|pa) = σ(b_i + Σ_j w_ij x_j),
//! Lawrence (2.1)–(2.3)); the third-order bound works internally in Leisink & Kappen's ±1 coding
//! (θ^{ij} = w_ij/4, θ^i = b_i/2 + ¼Σ_j w_ij; LK digest §4.2).
//!
//! Every approximation returns an [`Approx`] that says whether its value is a rigorous lower
//! bound on ln P(v).

pub mod chain;
pub mod cli;
pub mod error;
pub mod exact;
pub mod gen;
pub mod infer;
pub mod io;
pub mod learn;
pub mod math;
pub mod mf;
pub mod mixture;
pub mod model;
pub mod optim;
pub mod repro;
pub mod third;
pub mod third_poly;

pub use error::{Result, SbnError};
pub use model::{Evidence, Sbn};

/// Result of an approximation to ln P(v).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Approx {
    /// Method name.
    pub method: String,
    /// The approximate value of ln P(v).
    pub value: f64,
    /// True if `value` is a rigorous lower bound on ln P(v).
    pub is_lower_bound: bool,
    /// Iterations used by the optimiser.
    pub iterations: usize,
    /// True if the optimiser met its tolerance.
    pub converged: bool,
}
