//! occam-lang's integration tests, one module per former test file, linked into one test binary
//! (`cargo test -p occam-lang --test it [module::]`): one binary per crate instead of one per
//! file keeps the workspace's test build to a fraction of the link time and disk.

mod diagnostics;
mod diagnostics_gated;
mod fuzz;
mod limits;
mod links;
mod models;
