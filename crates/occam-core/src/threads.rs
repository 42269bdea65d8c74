//! Running work on a pool of a chosen size.
//!
//! Every parallel loop in Occam cuts its work where the data lie (fixed blocks, not one per
//! thread) and reduces the blocks' results in a fixed order, so a result is the same bits on any
//! number of threads. The tests of every crate check that by running the same work through
//! [`on_threads`] with different counts.

/// Runs `f` on a new rayon pool of `threads` threads (0: rayon's default, one per core) and
/// returns its result; an error if the pool cannot be built.
pub fn on_threads<T: Send>(
    threads: usize,
    f: impl FnOnce() -> T + Send,
) -> Result<T, rayon::ThreadPoolBuildError> {
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?
        .install(f))
}
