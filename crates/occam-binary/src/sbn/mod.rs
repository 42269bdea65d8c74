//! Sigmoid belief networks (SBNs): exact enumeration, mean field with Saul's ξ bound, mixtures
//! of mean field, Markov-chain q, the Leisink–Kappen third-order bound, and learning.
//!
//! Coding: the model is stored in Lawrence's 0/1 coding (P(x_i=1|pa) = σ(b_i + Σ_j w_ij x_j),
//! Lawrence (2.1)–(2.3)); the third-order bound works internally in Leisink & Kappen's ±1 coding
//! (θ^{ij} = w_ij/4, θ^i = b_i/2 + ¼Σ_j w_ij; derived in [`crate::coding`]).
//!
//! | module | content |
//! |---|---|
//! | [`model`], [`io`], [`gen`] | the DAG network, evidence, CSV formats, generators (Saul 2–4–6, LK cascade, bars) |
//! | [`exact`] | ln P(v), posterior marginals and the exact gradient by enumeration (rayon, fixed chunks) |
//! | [`mf`] | Saul mean field (Lawrence §2.4.1) with optimised ξ and learning gradients |
//! | [`mixture`] | mixtures of mean field, smoothing distributions (Lawrence §2.4.2, corrected) |
//! | [`chain`] | Markov-chain q for layered nets (Lawrence §2.4.3, App. B) |
//! | [`third`], [`third_poly`] | LK first- and third-order bounds; moments by enumeration or in polynomial time |
//! | [`optim`] | monotone L-BFGS used for ξ and chain parameters |
//! | [`learn`] | batch gradient ascent on any bound or the exact likelihood |
//! | [`infer`], [`cli`], [`repro`] | one entry point per method, CLI functions, the paper reproductions |
//!
//! Every approximation returns an [`Approx`] that says whether its value is a rigorous lower
//! bound on ln P(v) (all methods here are; the exact value is reported as a bound as well).
//! Every optimiser in this module is monotone (coordinate maximisation or an ascent-checked line
//! search), so a bound started from another bound never ends below it.

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
