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

/// Runs `f` on a thread of the current rayon pool and returns its result: in place when called
/// on a pool thread (e.g. inside [`on_threads`]), else handed to the global pool once while the
/// caller waits. The parallel loops inside `f` then start on a pool thread, which works on them
/// itself, where each loop started outside the pool would hand its work over and sleep until it
/// is done (two context switches per loop). Only the thread that runs the work changes, never a
/// value or the order of a sum.
pub fn in_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if rayon::current_thread_index().is_some() {
        f()
    } else {
        rayon::scope(|_| f())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Called from outside any pool (a test's own thread), `in_pool` runs `f` on a pool thread;
    /// called on a pool thread, on that same thread. Its value comes back either way.
    #[test]
    fn in_pool_runs_on_a_pool_thread_and_returns_the_value() {
        assert_eq!(rayon::current_thread_index(), None);
        assert!(in_pool(|| rayon::current_thread_index().is_some()));
        assert_eq!(in_pool(|| 6 * 7), 42);
        let same_thread = on_threads(2, || {
            let here = std::thread::current().id();
            in_pool(|| std::thread::current().id() == here)
        })
        .unwrap();
        assert!(same_thread);
    }
}
