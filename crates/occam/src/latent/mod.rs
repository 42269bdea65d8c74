//! Latent-variable models fitted by hand-derived updates beside the engine: Bayesian ICA
//! (Lawrence §6.5.1–6.5.6) and the mixture of Bayesian PCA (Winn §3.4), with what they are built
//! on (the dense [`synth::Matrix`] and its products, the moment-matched mixture of PPCA of the
//! MBPCA predictive density, the seeded synthetic data sets of their tests), and the ARD read-off
//! of any fit ([`ard`]). Bayesian PCA, factor analysis and ARD regression are ordinary models of
//! the language, fitted by the one VMP engine. ICA and MBPCA are to become engine q-blocks
//! (issue 27 step 2); the studies built from many fits are crate `occam-studies`.

pub mod ard;
mod dense;
pub mod ica;
pub mod mbpca;
pub mod mppca;
#[cfg(test)]
mod stationary;
pub mod synth;

pub use ard::{effective_dimension, Ard};
