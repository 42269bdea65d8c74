//! Browser tests (next commit).
