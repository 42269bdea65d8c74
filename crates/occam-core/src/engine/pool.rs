//! Work arrays kept by a compiled model between updates: the summed messages of an update, the
//! messages a deterministic node passes on, a message row. A steady sweep takes them from here
//! and gives them back, so it allocates none of them (on a model of a few hundred values the
//! allocator's calls and the heap's fragmentation cost more time than the arithmetic: bench
//! results of issue 27). No value depends on which array is handed out: every array is handed
//! out zeroed, as a fresh one would be.

use std::sync::{Arc, Mutex};

/// At most this many arrays are kept (a sweep holds a few at once; more would only hold memory).
const KEPT: usize = 16;

/// A cached product of two arrays shared by its readers (`NodeCache`'s sums, statistics and
/// priors).
pub(super) type Pair = Arc<(Vec<f64>, Vec<f64>)>;

/// Arrays of `f64` given back for reuse (module docs), and cached pairs of arrays no longer read
/// (their shared box and both arrays reused). Taken and given under a lock that is never held
/// while an array is in use: a task running at the same time (a parallel loop's worker, a
/// replica sharing the model) gets its own array, fresh if none is kept.
#[derive(Debug, Default)]
pub(super) struct Pool {
    arrays: Mutex<Vec<Vec<f64>>>,
    pairs: Mutex<Vec<Pair>>,
}

impl Pool {
    /// A pair of arrays of `n0` and `n1` zeros filled by `fill`, in a box no one else reads: a
    /// kept pair if any (no allocation when its arrays hold the lengths), else a new one.
    pub(super) fn pair_with(
        &self,
        n0: usize,
        n1: usize,
        fill: impl FnOnce(&mut [f64], &mut [f64]),
    ) -> Pair {
        let kept = self.pairs.lock().ok().and_then(|mut p| p.pop());
        if let Some(mut pair) = kept {
            if let Some((a, b)) = Arc::get_mut(&mut pair) {
                a.clear();
                a.resize(n0, 0.0);
                b.clear();
                b.resize(n1, 0.0);
                fill(a, b);
                return pair;
            }
        }
        let (mut a, mut b) = (vec![0.0; n0], vec![0.0; n1]);
        fill(&mut a, &mut b);
        Arc::new((a, b))
    }

    /// Gives a pair back once no one else reads it (dropped otherwise, or when `KEPT` are kept).
    pub(super) fn keep_pair(&self, mut pair: Pair) {
        if Arc::get_mut(&mut pair).is_none() {
            return;
        }
        if let Ok(mut kept) = self.pairs.lock() {
            if kept.len() < KEPT {
                kept.push(pair);
            }
        }
    }

    /// An array of `len` zeros: the smallest kept array that holds `len` values (no allocation),
    /// else the largest kept one grown, else a new one.
    pub(super) fn zeroed(&self, len: usize) -> Vec<f64> {
        let mut v = self.take(len);
        v.clear();
        v.resize(len, 0.0);
        v
    }

    /// A kept array (contents unspecified) with room for `len` values if one has it.
    fn take(&self, len: usize) -> Vec<f64> {
        let Ok(mut kept) = self.arrays.lock() else {
            return Vec::new();
        };
        let fits = kept
            .iter()
            .enumerate()
            .filter(|(_, v)| v.capacity() >= len)
            .min_by_key(|(_, v)| v.capacity())
            .map(|(i, _)| i);
        let largest = || {
            kept.iter()
                .enumerate()
                .max_by_key(|(_, v)| v.capacity())
                .map(|(i, _)| i)
        };
        match fits.or_else(largest) {
            Some(i) => kept.swap_remove(i),
            None => Vec::new(),
        }
    }

    /// Gives an array back for reuse (dropped if `KEPT` are kept already, or if it holds nothing).
    pub(super) fn keep(&self, v: Vec<f64>) {
        if v.capacity() == 0 {
            return;
        }
        if let Ok(mut kept) = self.arrays.lock() {
            if kept.len() < KEPT {
                kept.push(v);
            } else if let Some(small) = kept.iter_mut().min_by_key(|k| k.capacity()) {
                // Keep the larger of the two: the next large request then needs no growth.
                if small.capacity() < v.capacity() {
                    *small = v;
                }
            }
        }
    }
}

/// A block's work arrays of type `T`, kept between its updates: taken out while an update runs
/// (an update running at the same time, as on a sharded fit's replica sharing the block, finds
/// them taken and starts from `T::default()`), given back after. A copy of the block starts
/// with none.
#[derive(Debug, Default)]
pub(super) struct Kept<T>(Mutex<Option<T>>);

impl<T> Clone for Kept<T> {
    fn clone(&self) -> Self {
        Kept(Mutex::new(None))
    }
}

impl<T: Default> Kept<T> {
    /// The kept work arrays, or new ones.
    pub(super) fn take(&self) -> T {
        self.0
            .lock()
            .map(|mut w| w.take().unwrap_or_default())
            .unwrap_or_default()
    }

    /// Keeps `work` for the next update.
    pub(super) fn keep(&self, work: T) {
        if let Ok(mut w) = self.0.lock() {
            *w = Some(work);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrays come back zeroed whatever they held, with the length asked for; a kept array that
    /// holds the request is reused (its storage, not a new allocation).
    #[test]
    fn arrays_come_back_zeroed_and_reused() {
        let pool = Pool::default();
        let mut a = pool.zeroed(8);
        assert_eq!(a, vec![0.0; 8]);
        a.iter_mut().for_each(|v| *v = 7.0);
        let at = a.as_ptr();
        pool.keep(a);
        let b = pool.zeroed(5);
        assert_eq!(b, vec![0.0; 5]);
        assert_eq!(b.as_ptr(), at);
        // Two at once: the second is another array.
        let c = pool.zeroed(3);
        assert_ne!(c.as_ptr(), b.as_ptr());
        pool.keep(b);
        pool.keep(c);
        // The smallest that fits is handed out first.
        let d = pool.zeroed(4);
        assert!(d.capacity() >= 4);
        assert_eq!(d, vec![0.0; 4]);
    }

    /// A pair given back is handed out again (the same box and arrays), zeroed to the lengths asked
    /// for; a pair still read elsewhere is not kept.
    #[test]
    fn pairs_are_reused_once_unshared() {
        let pool = Pool::default();
        let p = pool.pair_with(4, 2, |a, b| {
            assert_eq!((&*a, &*b), (&[0.0; 4][..], &[0.0; 2][..]));
            a[1] = 3.0;
        });
        assert_eq!(p.0, [0.0, 3.0, 0.0, 0.0]);
        let at = Arc::as_ptr(&p);
        pool.keep_pair(p);
        let q = pool.pair_with(3, 1, |a, b| {
            assert_eq!((&*a, &*b), (&[0.0; 3][..], &[0.0; 1][..]));
        });
        assert_eq!(Arc::as_ptr(&q), at);
        let reader = q.clone();
        pool.keep_pair(q);
        assert!(pool.pairs.lock().unwrap().is_empty());
        drop(reader);
    }

    /// At most `KEPT` arrays are kept, the largest ones.
    #[test]
    fn keeps_at_most_the_largest() {
        let pool = Pool::default();
        for len in 1..=KEPT + 4 {
            pool.keep(vec![1.0; len]);
        }
        let kept = pool.arrays.lock().unwrap();
        assert_eq!(kept.len(), KEPT);
        assert!(kept.iter().all(|v| v.capacity() > 4));
    }
}
