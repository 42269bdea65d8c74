//! No code. This crate only turns on one set of features of the third-party crates that the
//! `occam` binary, the Python extension and the test build share, so that cargo compiles each of
//! them once in a target directory (why, and the check that keeps it so: this crate's
//! `Cargo.toml` and `scripts/check-features`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]
