//! The Boltzmann machine in ±1 coding with an exact log-weight offset.
//!
//! log w(s) = c + ½ sᵀ W s + hᵀ s, s ∈ {−1, +1}ⁿ, W symmetric with zero diagonal
//! (Leisink & Kappen (13); Lawrence (4.1)–(4.3) with each pair counted once, ½ sᵀWs: the thesis's
//! Σ_i E_i counts every pair twice, and the once-per-pair form is the one its (4.10) implies).
//! The offset c carries the exact constants produced by clamping, temperature and coding changes,
//! so log Z of every derived model equals log Z of the original.

use super::error::{BmError, Result};

/// The largest number of units of a Boltzmann machine (file readers, learning): its dense
/// weight matrix holds `MAX_UNITS²` doubles, 128 MiB.
pub const MAX_UNITS: usize = 4096;

/// A Boltzmann machine / Ising model in ±1 coding. Weights are row-major n×n.
#[derive(Debug, Clone, PartialEq)]
pub struct BoltzmannMachine {
    n: usize,
    w: Vec<f64>,
    h: Vec<f64>,
    offset: f64,
}

impl BoltzmannMachine {
    /// A random n-unit machine with every weight W_ij = W_ji and threshold h_i drawn from
    /// U(−1, 1) (Lawrence Fig. 4.2's networks): Xoshiro256++ seeded with `seed`, the pairs i > j
    /// row by row, then the thresholds; offset 0.
    pub fn uniform(n: usize, seed: u64) -> Result<Self> {
        use rand::{Rng as _, SeedableRng as _};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..i {
                let v = rng.random_range(-1.0..1.0);
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        let h = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        Self::new(w, h, 0.0)
    }

    /// Builds a model, checking shape, symmetry (to 1e-12 relative), zero diagonal and finiteness.
    pub fn new(w: Vec<f64>, h: Vec<f64>, offset: f64) -> Result<Self> {
        let n = h.len();
        if w.len() != n * n {
            return Err(BmError::InvalidModel(format!(
                "weight matrix has {} entries, expected {}×{} = {}",
                w.len(),
                n,
                n,
                n * n
            )));
        }
        if !offset.is_finite() {
            return Err(BmError::InvalidModel("offset is not finite".into()));
        }
        for (i, hi) in h.iter().enumerate() {
            if !hi.is_finite() {
                return Err(BmError::InvalidModel(format!(
                    "threshold {i} is not finite"
                )));
            }
        }
        for i in 0..n {
            if w[i * n + i] != 0.0 {
                return Err(BmError::InvalidModel(format!(
                    "diagonal weight w[{i}][{i}] = {} must be 0",
                    w[i * n + i]
                )));
            }
            for j in 0..i {
                let (a, b) = (w[i * n + j], w[j * n + i]);
                if !a.is_finite() || !b.is_finite() {
                    return Err(BmError::InvalidModel(format!(
                        "weight w[{i}][{j}] is not finite"
                    )));
                }
                if (a - b).abs() > 1e-12 * (1.0 + a.abs().max(b.abs())) {
                    return Err(BmError::InvalidModel(format!(
                        "weights not symmetric: w[{i}][{j}] = {a}, w[{j}][{i}] = {b}"
                    )));
                }
            }
        }
        let mut m = Self { n, w, h, offset };
        m.symmetrize();
        Ok(m)
    }

    /// A model with no units (log Z = offset).
    pub fn empty(offset: f64) -> Self {
        Self {
            n: 0,
            w: Vec::new(),
            h: Vec::new(),
            offset,
        }
    }

    fn symmetrize(&mut self) {
        let n = self.n;
        for i in 0..n {
            for j in 0..i {
                let a = 0.5 * (self.w[i * n + j] + self.w[j * n + i]);
                self.w[i * n + j] = a;
                self.w[j * n + i] = a;
            }
        }
    }

    /// Number of units.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Row-major symmetric weights.
    pub fn weights(&self) -> &[f64] {
        &self.w
    }
    /// Thresholds (biases).
    pub fn thresholds(&self) -> &[f64] {
        &self.h
    }
    /// The additive log-weight constant.
    pub fn offset(&self) -> f64 {
        self.offset
    }
    /// Weight w_ij.
    #[inline]
    pub fn w(&self, i: usize, j: usize) -> f64 {
        self.w[i * self.n + j]
    }
    /// Sets the symmetric pair w_ij = w_ji (i ≠ j).
    pub fn set_pair(&mut self, i: usize, j: usize, v: f64) {
        assert!(i != j, "diagonal weights are fixed at zero");
        self.w[i * self.n + j] = v;
        self.w[j * self.n + i] = v;
    }
    /// Mutable thresholds.
    pub fn thresholds_mut(&mut self) -> &mut [f64] {
        &mut self.h
    }
    /// Sets the offset.
    pub fn set_offset(&mut self, c: f64) {
        self.offset = c;
    }

    /// log w(s) = c + ½ sᵀWs + hᵀs for s given as ±1 values.
    pub fn log_weight(&self, s: &[f64]) -> f64 {
        let n = self.n;
        let mut acc = self.offset;
        for i in 0..n {
            let row = &self.w[i * n..(i + 1) * n];
            let mut f = 0.0;
            for j in 0..i {
                f += row[j] * s[j];
            }
            acc += s[i] * (f + self.h[i]);
        }
        acc
    }

    /// Local fields h_i + Σ_j w_ij x_j.
    pub fn fields(&self, x: &[f64], out: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let row = &self.w[i * n..(i + 1) * n];
            out[i] = self.h[i] + dot(row, x);
        }
    }

    /// The model at temperature T: every log-weight term (including c) divided by T.
    pub fn at_temperature(&self, t: f64) -> Result<Self> {
        if !(t.is_finite() && t > 0.0) {
            return Err(BmError::InvalidOption {
                option: "temperature",
                why: format!("must be finite and > 0, got {t}"),
            });
        }
        let scaled = Self {
            n: self.n,
            w: self.w.iter().map(|x| x / t).collect(),
            h: self.h.iter().map(|x| x / t).collect(),
            offset: self.offset / t,
        };
        // A tiny temperature overflows the scaled parameters (1e-310 turns 0.5 into inf), and
        // every method would then return NaN.
        let worst = scaled.w.iter().chain(&scaled.h).chain([&scaled.offset]);
        if worst.into_iter().any(|x| !x.is_finite()) {
            return Err(BmError::InvalidOption {
                option: "temperature",
                why: format!(
                    "{t:e} divides the weights and thresholds past the largest finite number; use a temperature ≥ {:e}",
                    self.min_temperature()
                ),
            });
        }
        Ok(scaled)
    }

    /// The smallest temperature at which every scaled parameter stays finite (with a margin).
    fn min_temperature(&self) -> f64 {
        let big = self
            .w
            .iter()
            .chain(&self.h)
            .chain([&self.offset])
            .fold(0.0f64, |m, x| m.max(x.abs()));
        big / f64::MAX * 1e6
    }

    /// Conditions on clamped units (index, ±1 value): returns the model over the free units
    /// (in increasing index order) with h_f += Σ_c w_fc s_c and c += Σ_c h_c s_c + ½ Σ_cc' w_cc' s_c s_c',
    /// so that its log Z is the log of the clamped sum Σ_{s_free} w(s_free, s_clamped).
    pub fn clamp(&self, clamps: &[(usize, f64)]) -> Result<(Self, Vec<usize>)> {
        let n = self.n;
        let mut val = vec![0.0; n];
        let mut is_clamped = vec![false; n];
        for &(i, v) in clamps {
            if i >= n {
                return Err(BmError::Data(format!(
                    "clamped unit {i} out of range 0..{n}"
                )));
            }
            if v != 1.0 && v != -1.0 {
                return Err(BmError::Data(format!(
                    "clamped unit {i} has value {v}, expected ±1"
                )));
            }
            if is_clamped[i] && val[i] != v {
                return Err(BmError::Data(format!(
                    "unit {i} clamped twice to different values"
                )));
            }
            is_clamped[i] = true;
            val[i] = v;
        }
        let free: Vec<usize> = (0..n).filter(|&i| !is_clamped[i]).collect();
        let nf = free.len();
        let mut w = vec![0.0; nf * nf];
        let mut h = vec![0.0; nf];
        for (a, &i) in free.iter().enumerate() {
            let mut hi = self.h[i];
            for j in 0..n {
                if is_clamped[j] {
                    hi += self.w(i, j) * val[j];
                }
            }
            h[a] = hi;
            for (b, &j) in free.iter().enumerate() {
                w[a * nf + b] = self.w(i, j);
            }
        }
        let mut c = self.offset;
        for i in 0..n {
            if is_clamped[i] {
                c += self.h[i] * val[i];
                for j in 0..i {
                    if is_clamped[j] {
                        c += self.w(i, j) * val[i] * val[j];
                    }
                }
            }
        }
        Ok((
            Self {
                n: nf,
                w,
                h,
                offset: c,
            },
            free,
        ))
    }
}

/// Dot product of equal-length slices.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// sech²(x) = 1 − tanh²(x), computed without cancellation.
#[inline]
pub fn sech2(x: f64) -> f64 {
    let a = x.abs();
    if a > 350.0 {
        return 0.0;
    }
    let e = (-2.0 * a).exp();
    4.0 * e / ((1.0 + e) * (1.0 + e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_asymmetric_and_diagonal() {
        assert!(BoltzmannMachine::new(vec![0.0, 1.0, 2.0, 0.0], vec![0.0, 0.0], 0.0).is_err());
        assert!(BoltzmannMachine::new(vec![1.0, 0.0, 0.0, 0.0], vec![0.0, 0.0], 0.0).is_err());
        assert!(BoltzmannMachine::new(vec![0.0, 1.0, 1.0, 0.0], vec![0.0], 0.0).is_err());
        assert!(BoltzmannMachine::new(vec![0.0, 1.0, 1.0, 0.0], vec![0.0, 0.5], 0.0).is_ok());
    }

    #[test]
    fn clamping_preserves_log_weight() {
        let bm = BoltzmannMachine::new(
            vec![0.0, 0.3, -0.7, 0.3, 0.0, 0.4, -0.7, 0.4, 0.0],
            vec![0.1, -0.2, 0.5],
            0.25,
        )
        .unwrap();
        let (c, free) = bm.clamp(&[(1, -1.0)]).unwrap();
        assert_eq!(free, vec![0, 2]);
        for &(a, b) in &[(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)] {
            let full = bm.log_weight(&[a, -1.0, b]);
            let red = c.log_weight(&[a, b]);
            assert!((full - red).abs() < 1e-14, "{full} vs {red}");
        }
    }

    #[test]
    fn sech2_is_one_minus_tanh_squared() {
        for &x in &[-800.0, -3.0, 0.0, 0.7, 20.0, 800.0] {
            let t: f64 = f64::tanh(x);
            assert!((sech2(x) - (1.0 - t * t)).abs() < 1e-12);
        }
    }
}
