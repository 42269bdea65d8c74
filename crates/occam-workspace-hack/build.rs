//! Empty: it exists so that `[build-dependencies]` (syn's features for the proc macros) applies.
fn main() {}
