//! The one pass over the data that the block's τ message and its bound term both need,
//! S_k = Σ_n r_nk ‖y_n − ⟨μ_k⟩‖² (the data part of the bracket of Winn (3.27) summed over n), kept
//! with the r and ⟨μ⟩ it was computed from: a sweep sends τ its message and then takes the bound
//! with the same r and ⟨μ⟩ (τ, α and π change in between, none of which S reads), so the second
//! request returns the first one's values. The key is an exact copy of the inputs, so a hit gives
//! the same bits as a recomputation, whatever happened in between (restarts, snapshots, a changed
//! schedule).

use std::sync::Mutex;

use rayon::prelude::*;

use super::kernels::dist2;
use super::Layout;

/// The last S with its inputs (module docs); a clone starts empty.
#[derive(Debug, Default)]
pub(crate) struct ResidualCache(Mutex<Option<Entry>>);

#[derive(Debug)]
struct Entry {
    r: Vec<f64>,
    mu: Vec<f64>,
    s: Vec<f64>,
}

impl Clone for ResidualCache {
    fn clone(&self) -> Self {
        ResidualCache::default()
    }
}

impl ResidualCache {
    /// S_k for every component k, from the cache when `r` and `mu` are the same bits as the last
    /// request's.
    pub(super) fn get(&self, l: &Layout, y: &[f64], r: &[f64], mu: &[f64]) -> Vec<f64> {
        let same = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = slot.as_ref() {
            if same(&e.mu, mu) && same(&e.r, r) {
                return e.s.clone();
            }
        }
        let s = compute(l, y, r, mu);
        match slot.as_mut() {
            Some(e) => {
                e.r.clear();
                e.r.extend_from_slice(r);
                e.mu.clear();
                e.mu.extend_from_slice(mu);
                e.s.clone_from(&s);
            }
            None => {
                *slot = Some(Entry {
                    r: r.to_vec(),
                    mu: mu.to_vec(),
                    s: s.clone(),
                })
            }
        }
        s
    }
}

/// S_k = Σ_n r_nk ‖y_n − ⟨μ_k⟩‖², one component per task, points in order.
fn compute(l: &Layout, y: &[f64], r: &[f64], mu: &[f64]) -> Vec<f64> {
    let (n, d, k) = (l.n, l.d, l.k);
    (0..k)
        .into_par_iter()
        .map(|c| {
            let mum = &mu[c * d..(c + 1) * d];
            let mut s = 0.0;
            for i in 0..n {
                s += r[i * k + c] * dist2(&y[i * d..(i + 1) * d], mum);
            }
            s
        })
        .collect()
}
