//! # occam: automatic variational Bayesian inference and model comparison
//!
//! Write a probabilistic model as a short text file, attach data, and Occam derives and runs
//! variational message passing (Winn's VMP/VIBES), reports every variable's posterior and the
//! lower bound on the log evidence, and compares models by their bounds. This crate is the
//! library that the `occam` command line, the Python package and any Rust program call.
//!
//! ## Fitting the VIBES tutorial mixture
//!
//! The tutorial's second step (Winn's VIBES tutorial, `examples/vibes_tutorial/`) is a mixture of
//! twenty diagonal Gaussians for 2-D data; the surplus components are pruned when that raises the
//! bound:
//!
//! ```
//! use occam::{DataSet, Model, Settings};
//!
//! # fn main() -> occam::Result<()> {
//! # let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/vibes_tutorial");
//! // Data: a CSV file with a header (or `.npy`/`.npz`, or an in-memory array).
//! let mut data = DataSet::new();
//! data.insert_file("x", format!("{root}/x.csv").as_ref())?;
//!
//! // The model file: `x[N, D] ~ Gaussian(mean = mu[lambda], precision = gamma[lambda])`, with
//! // `lambda[N] ~ Categorical(pi)` selecting one of K = 20 components.
//! let model = Model::from_file(format!("{root}/mixture.occam"), &data)?;
//!
//! // Fit: five restarts from seeds 0..5, the best kept (restored from a snapshot).
//! let fitted = model.fit(&Settings { restarts: 5, ..Settings::default() })?;
//! println!("L = {:.2} nats", fitted.bound());
//! assert!(fitted.outcome().converged);
//! // The bound never decreases along the trace of the kept run.
//! let trace = &fitted.outcome().bound_trace;
//! assert!(trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
//!
//! // Posteriors in the family's own terms, shaped by the variable's plates (row-major).
//! let pi = fitted.posterior("pi")?;
//! let weights = pi.param("mean").unwrap();
//! assert_eq!(weights.shape, vec![20]);
//! let used = weights.values.iter().filter(|&&w| w > 0.01).count();
//! assert!(used < 20, "pruning leaves only the components the data support");
//! let mu = fitted.posterior("mu")?;
//! assert_eq!(mu.param("mean").unwrap().shape, vec![20, 2]);
//!
//! // Every variable's posterior, in model order (the JSON report and the text summary of
//! // `occam fit` are drawn from these by crate `occam-report`).
//! assert_eq!(fitted.posteriors().len(), fitted.loaded().model.variables.len());
//! # Ok(())
//! # }
//! ```
//!
//! ## Comparing models
//!
//! [`compare`] fits several models on the same data and returns their bounds, differences to the
//! best and posterior model probabilities under given prior weights (a softmax of the bounds).
//!
//! ## Layers
//!
//! This crate is the pipeline only: text + data → model → fit → posterior. What a fit looks like
//! (JSON and text reports, `check` output, the model graph, figures, output files) is crate
//! `occam-report`, which reads these results; the hand-derived studies (digits, PPCA/VQPCA
//! baselines, the BPCA dimension curve) are crate `occam-studies`; file reading is `occam-io`.
//!
//! - [`model`]: reading a model file (or text) with its data ([`data`]: CSV, `.npy`, `.npz`,
//!   arrays, read by `occam-io`), resolving it with `occam-lang` and lowering it to an
//!   `occam-core` graph ([`lower`]).
//! - [`driver`]: fit settings and outcome over the engine's one run loop
//!   ([`occam_core::engine::Vmp::run_observed`]: tolerance, restarts by snapshot, pruning, an
//!   observer per sweep), with the parameter-expansion rotations of [`rotation`].
//! - [`posterior`], [`chains`]: posteriors as arrays, the per-step reports of chains;
//!   [`sample`]: ancestral sampling; [`atomic`]: output files written atomically.
//! - [`predict`]: the posterior predictive for new rows and missing entries; [`saved`]: fits
//!   saved as versioned files, read back to predict or to warm-start a fit.
//! - [`latent`]: the hand-derived latent models (Bayesian ICA, the mixture of Bayesian PCA) and
//!   the ARD read-off; [`nn`]: Lawrence's networks; [`binary`]: the binary networks;
//!   [`regression`]: Bayesian linear regression with its exact evidence (ML-II, ARD and
//!   scikit-learn's `BayesianRidge`/`ARDRegression`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod atomic;
pub mod chains;
mod compare;
pub mod data;
pub mod driver;
pub mod error;
pub mod evidence;
mod fitted;
pub mod latent;
pub mod lower;
pub mod minibatch;
pub mod model;
pub mod nn;
pub mod posterior;
pub mod predict;
pub mod quality;
mod rank;
pub mod regression;
pub mod rotation;
pub mod sample;
pub mod sampled;
pub mod saved;
pub mod shard;
pub mod stream;
mod warning;

/// The binary networks (crate `occam-binary`: Boltzmann machines, sigmoid belief networks), for
/// the surfaces that reach them through the facade.
pub use occam_binary as binary;

pub use compare::{compare, compare_kinds, compare_observed, compare_swept, Compared};
pub use data::DataSet;
pub use driver::{Components, Outcome, Settings};
pub use error::{Error, Result};
pub use fitted::{Fitted, Model};
pub use occam_core::prelude::{Flow, Observer, Progress, Stage, Stop, StopReason};
pub use posterior::{Param, Posterior};
pub use rank::{check_kinds, probabilities};
pub use warning::Warning;
