//! The proptest configuration every fuzz harness of the workspace shares (this file is included
//! by `#[path]` from `occam-lang/tests/it/fuzz.rs`, `occam/tests/it/fuzz.rs` and
//! `occam-cli/tests/it/fuzz_flags.rs`, so the rule exists once).
//!
//! Each harness is bounded by its own default number of cases per property (it runs in seconds in
//! a debug build, as CI needs); `OCCAM_FUZZ_CASES=N` runs N cases per property for a longer local
//! run. Failures are recorded beside the test file (`*.proptest-regressions`) and tried first from
//! then on.

use proptest::test_runner::{Config, FileFailurePersistence};

/// Cases per property: `OCCAM_FUZZ_CASES`, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("OCCAM_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The configuration: [`cases`] and failure persistence beside the test source.
pub fn config(default: u32) -> Config {
    Config {
        cases: cases(default),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    }
}
