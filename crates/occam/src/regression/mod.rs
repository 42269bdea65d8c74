//! Bayesian linear regression with its exact evidence: type-II maximum likelihood (ML-II) of
//! the prior and noise precisions, with one shared prior precision (MacKay's evidence framework)
//! or one per input (automatic relevance determination, ARD), and scikit-learn's
//! `BayesianRidge` and `ARDRegression` algorithms for `occam.sklearn`.
//!
//! - [`design`]: the data reduced once to XᵀX, Xᵀy and an exact residual (blocked passes
//!   over the rows, the same numbers on any thread count);
//! - [`evidence`](mod@evidence): ln N(y; 0, β⁻¹I + XA⁻¹Xᵀ), the Gaussian posterior of w and
//!   the gradient in (ln α, ln β), from a D × D Cholesky factor;
//! - [`mackay`]: the fixed-point re-estimation α_i = γ_i/μ_i², β = (N − Σγ)/‖y − Xμ‖², with
//!   diverging α_i pruned;
//! - [`scikit`]: scikit-learn's two estimators step for step (Gamma hyper-priors, its update
//!   order and convergence test).
//!
//! The posterior of the weights is Gaussian, so at fixed hyper-parameters the evidence is exact
//! and the Laplace approximation coincides with it; VB ARD (a model in the language with Gamma
//! priors on the precisions, `examples/ard_regression/`) integrates the precisions instead of
//! maximising over them and gives a lower bound.

pub mod design;
pub mod evidence;
pub mod mackay;
pub mod scikit;

pub use design::Design;
pub use evidence::{evidence, Evidence};
pub use mackay::{maximise, Ml2Fit, Ml2Options, Prior};
pub use scikit::{ard_regression, bayesian_ridge, SkFit, SkOptions};
