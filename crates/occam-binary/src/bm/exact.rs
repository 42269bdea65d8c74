//! Exact log Z, means ⟨s_i⟩ and correlations ⟨s_i s_j⟩ by enumeration (Leisink & Kappen (14)),
//! using the generic deterministic chunked enumeration of [`crate::exact`] with an O(n)-per-state
//! Gray-code walker.

use super::error::{BmError, Result};
use super::model::BoltzmannMachine;
use crate::exact::{bit_moments_gray, log_sum_exp_gray, GrayWalker};

/// Largest number of free units accepted by enumeration.
pub const MAX_EXACT_UNITS: usize = 30;

/// Exact reference values in ±1 coding.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactResult {
    /// log Z (including the model offset).
    pub log_z: f64,
    /// ⟨s_i⟩.
    pub means: Vec<f64>,
    /// ⟨s_i s_j⟩, row-major n×n (diagonal 1).
    pub correlations: Vec<f64>,
}

/// Incremental log-weight: flipping s_k changes log w by −2 s_k f_k, f = h + W s (field of k).
pub struct BmWalker<'a> {
    bm: &'a BoltzmannMachine,
    s: Vec<f64>,
    f: Vec<f64>,
    lw: f64,
}

impl<'a> BmWalker<'a> {
    /// A walker for `bm`.
    pub fn new(bm: &'a BoltzmannMachine) -> Self {
        let n = bm.n();
        Self {
            bm,
            s: vec![0.0; n],
            f: vec![0.0; n],
            lw: 0.0,
        }
    }
}

impl GrayWalker for BmWalker<'_> {
    fn start(&mut self, state: u64) -> f64 {
        for (i, s) in self.s.iter_mut().enumerate() {
            *s = if state >> i & 1 == 1 { 1.0 } else { -1.0 };
        }
        self.bm.fields(&self.s, &mut self.f);
        self.lw = self.bm.log_weight(&self.s);
        self.lw
    }

    #[inline]
    fn flip(&mut self, k: usize) -> f64 {
        let n = self.bm.n();
        let sk = self.s[k];
        self.lw -= 2.0 * sk * self.f[k];
        self.s[k] = -sk;
        let row = &self.bm.weights()[k * n..(k + 1) * n];
        let d = -2.0 * sk;
        for (fj, wj) in self.f.iter_mut().zip(row) {
            *fj += d * wj;
        }
        self.lw
    }
}

fn check(bm: &BoltzmannMachine) -> Result<()> {
    if bm.n() > MAX_EXACT_UNITS {
        return Err(BmError::TooManyUnits {
            units: bm.n(),
            max: MAX_EXACT_UNITS,
        });
    }
    Ok(())
}

/// Exact log Z only (fastest path; 2²⁵ states take seconds on two cores in release).
pub fn exact_log_z(bm: &BoltzmannMachine) -> Result<f64> {
    check(bm)?;
    log_sum_exp_gray(bm.n(), || BmWalker::new(bm)).map_err(|e| BmError::TooManyUnits {
        units: e.bits,
        max: e.max,
    })
}

/// Exact log Z, means and correlations.
pub fn exact(bm: &BoltzmannMachine) -> Result<ExactResult> {
    check(bm)?;
    let n = bm.n();
    let m = bit_moments_gray(n, || BmWalker::new(bm)).map_err(|e| BmError::TooManyUnits {
        units: e.bits,
        max: e.max,
    })?;
    let means: Vec<f64> = m.p_on.iter().map(|p| 2.0 * p - 1.0).collect();
    let mut corr = vec![1.0; n * n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                // s_i s_j = (2b_i − 1)(2b_j − 1)
                corr[i * n + j] =
                    1.0 - 2.0 * m.p_on[i] - 2.0 * m.p_on[j] + 4.0 * m.p_pair[i * n + j];
            }
        }
    }
    Ok(ExactResult {
        log_z: m.log_z,
        means,
        correlations: corr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{bit_moments, log_sum_exp_states};

    fn small() -> BoltzmannMachine {
        let n = 9;
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..i {
                let v = (((i * 7 + j * 13) % 17) as f64 - 8.0) * 0.15;
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        let h = (0..n).map(|i| (i as f64 - 4.0) * 0.2).collect();
        BoltzmannMachine::new(w, h, 0.3).unwrap()
    }

    fn state(s: u64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| if s >> i & 1 == 1 { 1.0 } else { -1.0 })
            .collect()
    }

    #[test]
    fn walker_matches_direct_enumeration() {
        let bm = small();
        let n = bm.n();
        let direct = log_sum_exp_states(n, |s| bm.log_weight(&state(s, n))).unwrap();
        let fast = exact_log_z(&bm).unwrap();
        assert!((direct - fast).abs() < 1e-11, "{direct} vs {fast}");
        let r = exact(&bm).unwrap();
        let m = bit_moments(n, |s| bm.log_weight(&state(s, n))).unwrap();
        for i in 0..n {
            assert!((r.means[i] - (2.0 * m.p_on[i] - 1.0)).abs() < 1e-12);
        }
        // brute-force correlation for one pair
        let (i, j) = (2, 7);
        let mut num = 0.0;
        for s in 0..(1u64 << n) {
            let x = state(s, n);
            num += (bm.log_weight(&x) - direct).exp() * x[i] * x[j];
        }
        assert!((r.correlations[i * n + j] - num).abs() < 1e-12);
    }

    #[test]
    fn too_large_is_error() {
        let bm = BoltzmannMachine::new(vec![0.0; 31 * 31], vec![0.0; 31], 0.0).unwrap();
        assert!(matches!(
            exact_log_z(&bm),
            Err(BmError::TooManyUnits { .. })
        ));
    }

    #[test]
    fn no_couplings_closed_form() {
        let h = vec![0.3, -1.0, 2.0];
        let bm = BoltzmannMachine::new(vec![0.0; 9], h.clone(), 0.0).unwrap();
        let r = exact(&bm).unwrap();
        let lz: f64 = h.iter().map(|x| (2.0 * f64::cosh(*x)).ln()).sum();
        assert!((r.log_z - lz).abs() < 1e-13);
        for (m, x) in r.means.iter().zip(&h) {
            assert!((m - x.tanh()).abs() < 1e-13);
        }
    }
}
