//! # occam-nn: Lawrence's networks
//!
//! Bayesian multi-layer perceptrons with variational Gaussian and mixture-of-Gaussians (committee)
//! posteriors, node relevance determination, the evidence-procedure and hybrid Monte Carlo
//! baselines (Lawrence's thesis ch. 5 and 6.3; Lawrence & Azzouzi's VB committee paper), and linear
//! threshold units (thesis ch. 3).
#![deny(missing_docs)]

pub mod baselines;
pub mod bnn;
pub mod data;
pub mod ltu;
pub mod normal;
pub mod optim;
pub mod quad;
pub mod repro;
