//! occam-cli's integration tests, one module per former test file, linked into one test binary
//! (`cargo test -p occam-cli --test it [module::]`): one binary per crate instead of one per
//! file keeps the workspace's test build to a fraction of the link time and disk.

mod bayespy;
mod binary;
mod bound_kinds;
mod cli;
mod cli_docs;
mod common;
mod compare_methods;
mod crashes;
mod data_select;
mod docs;
mod errors;
mod errors_limits;
mod figures;
mod fuzz_flags;
mod gated;
mod golden;
mod guide_commands;
mod parquet_text;
mod predict;
mod progress;
mod shard_runs;
mod shards;
mod stream;
mod stream_csv;
mod stream_parquet;
mod tutorial;
mod view;
mod winn_1d;
