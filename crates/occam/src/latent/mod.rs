//! Latent-variable models with their own drivers: Bayesian ICA (Lawrence §6.5.1–6.5.6), a model
//! of the VMP engine with q(x_n) joint over the sources (the engine's Gaussian q-block) from a
//! seeded PCA start, and the mixture of Bayesian PCA (Winn §3.4), a model of the engine with
//! q(x_n, s_n) joint (the engine's gated q-block) under a bound-driven search over the number of
//! components; with what they are built
//! on (the dense [`synth::Matrix`] and its products, the moment-matched mixture of PPCA of the
//! MBPCA predictive density, the seeded synthetic data sets of their tests), and the ARD read-off
//! of any fit ([`ard`]). Bayesian PCA, factor analysis and ARD regression are ordinary models of
//! the language, fitted by the one VMP engine; the studies built from many fits are crate
//! `occam-studies`.

pub mod ard;
mod dense;
pub mod ica;
pub mod mbpca;
pub mod mppca;
pub mod synth;

pub use ard::{effective_dimension, Ard};
