//! occam's integration tests, one module per former test file, linked into one test binary
//! (`cargo test -p occam --test it [module::]`): one binary per crate instead of one per
//! file keeps the workspace's test build to a fraction of the link time and disk.

mod binding;
mod bound_oracle;
mod chain_inputs;
mod chains;
mod defaults;
mod driver;
mod evidence;
mod evidence_ais;
mod evidence_cv;
mod evidence_hmm;
mod evidence_hmm_cs;
mod evidence_laplace;
mod evidence_mixtures;
mod extreme_priors;
mod functions;
mod fuzz;
mod gamma_shape;
mod latent;
mod logistic;
mod logistic_pima;
mod mbpca;
mod mbpca_lang;
mod minibatch;
mod noncj;
mod noncj_broad;
mod outputs;
mod parity;
mod plate_sweep;
mod predict;
mod predict_chains;
mod predict_density;
mod prune_screen;
mod regression;
mod robust_regression;
mod sampled;
mod sampled_exact_proposal;
mod shards;
mod shards_gated;
mod softmax;
mod softmax_gap;
mod square_ard;
mod stochastic;
mod trees;
mod unit_plates;
