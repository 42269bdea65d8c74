//! # occam-nn: Lawrence's networks
//!
//! Bayesian multi-layer perceptrons with variational Gaussian and mixture-of-Gaussians (committee)
//! posteriors, node relevance determination, the evidence-procedure and hybrid Monte Carlo
//! baselines (Lawrence's thesis ch. 5 and 6.3; Lawrence & Azzouzi's VB committee paper), and linear
//! threshold units (thesis ch. 3).
//!
//! Design: the Bayesian MLP is not expressed as a conjugate-exponential graph for `occam_core`'s
//! message passing, because ⟨f⟩ and ⟨f²⟩ of an erf network are not conjugate moments; instead the
//! whole variational bound is one differentiable function of the Gaussian (and smoothing) parameters
//! ([`bnn::objective`]), maximised by L-BFGS, alternated with the closed-form Gamma updates of the
//! hyper-parameters — the papers' own scheme. Every prior is "a weight's precision is the product of
//! one or two Gamma hyper-parameters" ([`bnn::prior`]), which covers a single α, grouped α, ARD and
//! NRD with one update rule. The mixture posterior reuses the same data term per component; only the
//! entropy bound ([`bnn::entropy`]) couples them. Reproductions ([`repro`]) return serialisable tables
//! of measured numbers next to the documents' numbers.
//!
//! ```
//! use occam_nn::bnn::vb::{fit_vb, VbOptions};
//! use occam_nn::data::Dataset;
//! let x: Vec<f64> = (0..20).map(|i| i as f64 / 10.0 - 1.0).collect();
//! let t: Vec<f64> = x.iter().map(|v| (2.0 * v).sin()).collect();
//! let data = Dataset::new(x, 1, t).unwrap();
//! let opts = VbOptions { cycles: 2, iters_per_cycle: 50, ..VbOptions::committee_paper(3, 1) };
//! let fit = fit_vb(&data, &opts).unwrap();
//! let pred = fit.predict(&[0.25]).unwrap();
//! assert!((pred[0].mean - 0.5f64.sin()).abs() < 0.3 && pred[0].var_total > pred[0].var_function);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod baselines;
pub mod bnn;
pub mod data;
pub mod ltu;
pub mod net;
pub mod normal;
pub mod repro;
