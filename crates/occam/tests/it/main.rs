//! occam's integration tests, one module per former test file, linked into one test binary
//! (`cargo test -p occam --test it [module::]`): one binary per crate instead of one per
//! file keeps the workspace's test build to a fraction of the link time and disk.

mod binding;
mod bound_oracle;
mod bound_oracle_discrete;
mod chain_inputs;
mod chains;
mod defaults;
mod driver;
mod extreme_priors;
mod fuzz;
mod latent;
mod mbpca;
mod outputs;
mod parity;
mod shards;
mod square_ard;
mod trees;
mod unit_plates;
