//! A table's values, shared rather than copied: [`Values`] holds the numbers behind an
//! `Arc`, so a data set, the model loaded from it and every graph lowered from that model hold a
//! large covariate matrix once (issue 29: logistic regression's X was held twice, 16 MB each at
//! N = 10⁵, D = 20). It reads as a `Vec<f64>` and writes copy-on-write: a write to values that
//! are shared copies them first (`Arc::make_mut`), so a table keeps the value semantics of a
//! vector and no holder ever sees another's change.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// Row-major values of a table (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Values(Arc<Vec<f64>>);

impl Values {
    /// Another reference to the same values, for a holder that only reads them (a graph's
    /// constant or observed node).
    pub fn shared(&self) -> Arc<Vec<f64>> {
        Arc::clone(&self.0)
    }

    /// The values as a vector: taken over when no one else holds them, else copied.
    pub fn into_vec(self) -> Vec<f64> {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
    }

    /// Whether `self` and `other` are the same array (not merely equal values).
    pub fn same_array(&self, other: &Arc<Vec<f64>>) -> bool {
        Arc::ptr_eq(&self.0, other)
    }
}

impl From<Vec<f64>> for Values {
    /// Takes the vector over (no copy).
    fn from(v: Vec<f64>) -> Values {
        Values(Arc::new(v))
    }
}

impl<'a> IntoIterator for &'a Values {
    type Item = &'a f64;
    type IntoIter = std::slice::Iter<'a, f64>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Deref for Values {
    type Target = Vec<f64>;
    fn deref(&self) -> &Vec<f64> {
        &self.0
    }
}

impl DerefMut for Values {
    /// Copy-on-write: the values are copied first if another holder shares them.
    fn deref_mut(&mut self) -> &mut Vec<f64> {
        Arc::make_mut(&mut self.0)
    }
}

impl PartialEq<Vec<f64>> for Values {
    fn eq(&self, other: &Vec<f64>) -> bool {
        **self == *other
    }
}

impl PartialEq<Values> for Vec<f64> {
    fn eq(&self, other: &Values) -> bool {
        *self == **other
    }
}

impl PartialEq<[f64]> for Values {
    fn eq(&self, other: &[f64]) -> bool {
        self.as_slice() == other
    }
}

impl<const N: usize> PartialEq<[f64; N]> for Values {
    fn eq(&self, other: &[f64; N]) -> bool {
        self.as_slice() == other
    }
}

impl FromIterator<f64> for Values {
    fn from_iter<I: IntoIterator<Item = f64>>(iter: I) -> Values {
        Values::from(iter.into_iter().collect::<Vec<f64>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_values_are_one_array_and_a_write_copies_them_first() {
        let mut a = Values::from(vec![1.0, 2.0, 3.0]);
        let held = a.shared();
        assert!(a.same_array(&held));
        let b = a.clone();
        assert!(b.same_array(&held));
        a[1] = 5.0;
        assert!(!a.same_array(&held), "a write to shared values copies them");
        assert_eq!(*held, vec![1.0, 2.0, 3.0]);
        assert_eq!(b, [1.0, 2.0, 3.0]);
        assert_eq!(a, [1.0, 5.0, 3.0]);
        drop((held, b));
        let before = a.shared();
        drop(before);
        let p = a.as_ptr();
        a[0] = 7.0;
        assert_eq!(a.as_ptr(), p, "a write to unshared values is in place");
        let v = a.into_vec();
        assert_eq!((v.as_ptr(), v), (p, vec![7.0, 5.0, 3.0]));
    }
}
