//! occam-nn's integration tests, one module per former test file, linked into one test binary
//! (`cargo test -p occam-nn --test it [module::]`): one binary per crate instead of one per
//! file keeps the workspace's test build to a fraction of the link time and disk.

mod api;
mod ltu_inference;
mod ltu_learning;
mod ltu_smo;
mod ltu_table_3_1;
mod repro_committee;
