//! # occam-core: variational message passing
//!
//! A VMP engine for conjugate-exponential Bayesian networks (Winn 2003, ch. 1–2): nodes in named
//! plates, exponential-family distributions (one file each under [`dist`]), deterministic factors
//! ([`factor`]), mixtures over a Categorical index, and the evidence lower bound as a sum of
//! per-node terms.
//!
//! Design: distributions are stateless formulas over one plate element's flat slices; every node
//! stores its natural parameters and moments for all plate elements contiguously (struct of
//! arrays), and the update and bound are written once, in [`engine`], for every family.
//!
//! ```
//! use occam_core::prelude::*;
//! // Winn §1.8.5: four points, unknown mean and precision.
//! let mut g = Graph::new();
//! let n = g.plate("N", 4);
//! let mu = g.add("mu", Gaussian, &[], [c(0.0), c(1e-3)]).unwrap();
//! let tau = g.add("tau", Gamma { shape: 1e-3 }, &[], [c(1e-3)]).unwrap();
//! let x = g.add("x", Gaussian, &[n], [p(mu), p(tau)]).unwrap();
//! g.observe(x, &[4.2, 5.6, 5.1, 3.9]).unwrap();
//! let mut vmp = g.compile().unwrap();
//! let fit = vmp.run(&RunOptions::default()).unwrap();
//! assert!(fit.converged);
//! let mean = vmp.mean(mu).unwrap()[0];
//! assert!((mean - 4.7).abs() < 0.01);
//! ```
#![deny(missing_docs)]
// The crate's only unsafe code is the AVX-512 kernels and `vzeroupper`, each called after a CPU
// feature check: every unsafe block states why it is sound in a `// SAFETY:` comment, and
// `.ci/run` (scripts/check-lints) keeps these lints here.
#![deny(clippy::undocumented_unsafe_blocks)]
#![deny(clippy::multiple_unsafe_ops_per_block)]
#![deny(unsafe_op_in_unsafe_fn)]
// Domain checks are written `!(x > 0.0)` on purpose: the negation also rejects NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
// Dense kernels index several arrays with one index; iterator chains would hide the formulas.
#![allow(clippy::needless_range_loop)]

pub mod assignment;
pub mod dist;
pub mod engine;
pub mod error;
pub mod exactsum;
pub mod factor;
pub mod graph;
pub mod junction;
mod kernels;
pub mod kmeans;
mod lanes;
pub mod linalg;
pub mod models;
pub mod moments;
mod network;
pub mod optim;
mod plate;
pub mod quad;
pub mod spec;
pub mod special;
pub mod threads;
pub mod tridiag;

/// The random number generator used everywhere (seeded explicitly).
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// Everything a model-building program needs.
pub mod prelude {
    pub use crate::dist::*;
    pub use crate::engine::{
        Fit, Flow, GaussianMarkovChain, Init, MarkovChain, Observer, Progress, RunOptions, Stage,
        Stop, StopReason, Vmp, Warning,
    };
    pub use crate::error::{BuildError, RunError};
    pub use crate::factor::{Concat, Dot, Factor, GammaProduct, Gate, MatVec, Product, Sum};
    pub use crate::graph::{c, cv, p, Graph, NodeId, ParentSpec, PlateId};
    pub use crate::moments::MomentKind;
}
