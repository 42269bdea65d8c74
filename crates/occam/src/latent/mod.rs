//! Latent-variable models: Bayesian PCA with automatic relevance determination, its baselines and
//! reproductions (Winn ch. 3), and Bayesian ICA (Lawrence §6.5.1–6.5.6).
//!
//! Bayesian PCA, factor analysis, ARD regression and ICA are ordinary models of the language,
//! fitted by the one VMP engine; this module adds what those models need around the engine:
//! reading the effective dimension off an ARD prior ([`ard`]), the maximum-likelihood PPCA
//! baseline ([`ppca`]), the seeded synthetic data sets of the reproductions ([`synth`]) and the
//! studies built from many fits ([`bpca`]).

pub mod ard;
pub mod bpca;
mod dense;
pub mod digits;
pub mod figures;
pub mod ica;
pub mod mbpca;
pub mod mppca;
pub mod pca_outputs;
pub mod ppca;
pub mod rotation;
#[cfg(test)]
mod stationary;
pub mod synth;
pub mod vqpca;

pub use ard::{effective_dimension, Ard};
