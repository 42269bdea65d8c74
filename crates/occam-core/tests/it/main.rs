//! occam-core's integration tests, one module per former test file, linked into one test binary
//! (`cargo test -p occam-core --test it [module::]`): one binary per crate instead of one per
//! file keeps the workspace's test build to a fraction of the link time and disk.

mod bayespy_fixtures;
mod chains;
mod chains_init;
mod chains_lds;
mod chains_mixture;
mod chains_property;
mod chains_rotate;
mod linear;
mod mixture_messages;
mod mixtures;
mod monotone_bound;
mod monotone_logit;
mod monotone_noncj;
mod monotone_shape;
mod sampling;
mod starts;
mod structure;
mod trees;
mod winn_closed_forms;
