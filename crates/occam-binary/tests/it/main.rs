//! occam-binary's integration tests, one module per former test file, linked into one test binary
//! (`cargo test -p occam-binary --test it [module::]`): one binary per crate instead of one per
//! file keeps the workspace's test build to a fraction of the link time and disk.

mod bm_props;
mod bm_sk_repro;
mod bm_stats;
mod bm_toy;
mod sbn_bars;
mod sbn_bounds;
mod sbn_chain;
mod sbn_cli;
mod sbn_common;
mod sbn_exact;
mod sbn_learn;
mod sbn_mixture;
mod sbn_third;
