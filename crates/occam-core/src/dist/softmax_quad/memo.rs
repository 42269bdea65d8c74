//! Each row's quadrature formed once per state of its parents, not once per use.
//!
//! A softmax row's expectations (E[lse], E[g], E[H]) are read by its bound term (`prior`) and by
//! its message (`message_to`), and a sweep reads them several times at the same parents'
//! moments: the checked step of each parent compares the bound terms before and after (the
//! "before" of one update is the "after" of the previous one, or the last sweep's bound), and its
//! messages are read at the state the previous update's "after" already evaluated. On the iris
//! fit (W's q-block and the intercept's non-conjugate step) that is seven evaluations per row and
//! sweep for two distinct states.
//!
//! The memo keeps the expectations keyed by the exact bits of the parent's moments, so a reuse
//! returns the bits a fresh evaluation would (the quadrature is a deterministic function of those
//! bits): the results are the same with or without it, for any thread count and order. It holds
//! two generations of at most [`CAPACITY`] entries each (when the newer fills up it becomes the
//! older and the older is dropped), about 300 bytes an entry for K = 3, so at most ~20 MB per
//! node; a model with more rows than that reuses less, never computes otherwise. Clones of the
//! family share the memo.

use super::quad::{expect_lse_tiered, Expectations};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Entries per generation (module docs).
pub const CAPACITY: usize = 1 << 15;

type Table = HashMap<Box<[u64]>, Arc<Expectations>>;

/// The two generations (module docs).
#[derive(Default)]
struct Tables {
    newer: Table,
    older: Table,
}

/// The memo of one family instance (module docs).
#[derive(Clone, Default)]
pub struct Memo(Arc<Mutex<Tables>>);

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

impl Memo {
    /// [`expect_lse_tiered`]`(k, pa)`, from the memo when `pa` has been seen bit for bit.
    pub fn expect(&self, k: usize, pa: &[f64]) -> Arc<Expectations> {
        let key: Box<[u64]> = pa.iter().map(|v| v.to_bits()).collect();
        {
            let mut t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(v) = t.newer.get(&key) {
                return Arc::clone(v);
            }
            if let Some(v) = t.older.remove(&key) {
                t.newer.insert(key, Arc::clone(&v));
                return v;
            }
        }
        // Formed outside the lock: other rows are served meanwhile.
        let v = Arc::new(expect_lse_tiered(k, pa));
        let mut t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if t.newer.len() >= CAPACITY {
            t.older = std::mem::take(&mut t.newer);
        }
        t.newer.insert(key, Arc::clone(&v));
        v
    }

    /// Entries held (both generations).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        let t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        t.newer.len() + t.older.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reuse returns the bits of a fresh evaluation; a changed bit is a new entry; the
    /// generations bound the size.
    #[test]
    fn reuse_is_bit_identical_and_bounded() {
        let memo = Memo::default();
        let pa = [
            0.1, -0.4, 0.9, 1.2, 0.3, 0.1, 0.3, 2.0, -0.2, 0.1, -0.2, 3.5,
        ];
        let a = memo.expect(3, &pa);
        let b = memo.expect(3, &pa);
        let fresh = expect_lse_tiered(3, &pa);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.0.to_bits(), fresh.0.to_bits());
        assert!(a
            .1
            .iter()
            .zip(&fresh.1)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(a
            .2
            .iter()
            .zip(&fresh.2)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        let mut moved = pa;
        moved[1] = f64::from_bits(moved[1].to_bits() + 1);
        let c = memo.expect(3, &moved);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(memo.len(), 2);
        for i in 0..2 * CAPACITY + 7 {
            memo.expect(2, &[0.0, i as f64 * 1e-3, 0.0, 0.0, 0.0, 0.5]);
        }
        assert!(memo.len() <= 2 * CAPACITY);
    }
}
