//! Seeded synthetic data sets of the latent-variable reproductions. Every draw comes from the
//! seed given, so a data set is a pure function of its arguments.

use occam_core::Rng;
use rand::{Rng as _, SeedableRng};
use rand_distr::StandardNormal;

/// A row-major `rows × cols` matrix of numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// The values, row by row.
    pub values: Vec<f64>,
}

impl Matrix {
    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.cols..(i + 1) * self.cols]
    }

    /// Column `j` as a vector.
    pub fn column(&self, j: usize) -> Vec<f64> {
        (0..self.rows)
            .map(|i| self.values[i * self.cols + j])
            .collect()
    }
}

fn normal(rng: &mut Rng) -> f64 {
    rng.sample(StandardNormal)
}

/// `n` points of a zero-mean Gaussian with independent axes of standard deviations `sd`
/// (Winn Ex. 3.1 and Fig. 3.3 draw their data this way; BPCA's priors are rotation invariant,
/// so axis-aligned directions lose no generality).
pub fn gaussian_axes(n: usize, sd: &[f64], seed: u64) -> Matrix {
    let mut rng = Rng::seed_from_u64(seed);
    let values = (0..n)
        .flat_map(|_| sd.iter().map(|s| s * normal(&mut rng)).collect::<Vec<_>>())
        .collect();
    Matrix {
        rows: n,
        cols: sd.len(),
        values,
    }
}

/// Winn Ex. 3.1: standard deviation 1 in 3 directions and 0.5 in the other 7 (10-D). Read as
/// PPCA, that is 3 latent directions of variance 0.75 on top of isotropic noise of std 0.5.
pub fn winn_ex31(n: usize, seed: u64) -> Matrix {
    let sd: Vec<f64> = (0..10).map(|d| if d < 3 { 1.0 } else { 0.5 }).collect();
    gaussian_axes(n, &sd, seed)
}

/// Winn Fig. 3.3: per-axis standard deviations 1.0, 0.9, …, 0.1 (10-D).
pub fn winn_fig33(n: usize, seed: u64) -> Matrix {
    let sd: Vec<f64> = (0..10).map(|d| 1.0 - 0.1 * d as f64).collect();
    gaussian_axes(n, &sd, seed)
}

/// A draw of Lawrence's ICA toy (§6.2).
#[derive(Clone, Debug)]
pub struct IcaToy {
    /// Observations, n × sensors.
    pub t: Matrix,
    /// The true sources, n × sources.
    pub sources: Matrix,
    /// The true mixing matrix, sensors × sources.
    pub mixing: Matrix,
}

/// Lawrence §6.5.5's toy: `sources` independent sources, each a two-component mixture of
/// zero-mean Gaussians with variances 1 and 50 in equal proportion; mixing entries ~ N(0, 1) into
/// `sensors` sensors; Gaussian noise of variance `noise_var` (the thesis prints "inverse noise
/// variance 1e-4"; a noise *variance* of 1e-4 is meant, since a precision of 1e-4 would bury the
/// sources).
pub fn ica_toy(n: usize, sources: usize, sensors: usize, noise_var: f64, seed: u64) -> IcaToy {
    let mut rng = Rng::seed_from_u64(seed);
    let mixing: Vec<f64> = (0..sensors * sources).map(|_| normal(&mut rng)).collect();
    let s: Vec<f64> = (0..n * sources)
        .map(|_| {
            let sd = if rng.random::<f64>() < 0.5 {
                1.0
            } else {
                50f64.sqrt()
            };
            sd * normal(&mut rng)
        })
        .collect();
    let mut t = Vec::with_capacity(n * sensors);
    for i in 0..n {
        for p in 0..sensors {
            let clean: f64 = (0..sources)
                .map(|j| mixing[p * sources + j] * s[i * sources + j])
                .sum();
            t.push(clean + noise_var.sqrt() * normal(&mut rng));
        }
    }
    IcaToy {
        t: Matrix {
            rows: n,
            cols: sensors,
            values: t,
        },
        sources: Matrix {
            rows: n,
            cols: sources,
            values: s,
        },
        mixing: Matrix {
            rows: sensors,
            cols: sources,
            values: mixing,
        },
    }
}

/// Factor-analysis data: `n` points in 8-D from 2 latent factors (loadings ~ N(0, 1)) plus
/// independent noise whose standard deviation differs per dimension, 0.2, 0.35, …, 1.25.
/// Returns the data and the true noise standard deviations.
pub fn factor_analysis(n: usize, seed: u64) -> (Matrix, Vec<f64>) {
    let (d, q) = (8, 2);
    let mut rng = Rng::seed_from_u64(seed);
    let w: Vec<f64> = (0..d * q).map(|_| normal(&mut rng)).collect();
    let sd: Vec<f64> = (0..d).map(|i| 0.2 + 0.15 * i as f64).collect();
    let mut values = Vec::with_capacity(n * d);
    for _ in 0..n {
        let x: Vec<f64> = (0..q).map(|_| normal(&mut rng)).collect();
        for i in 0..d {
            let clean: f64 = (0..q).map(|k| w[i * q + k] * x[k]).sum();
            values.push(clean + sd[i] * normal(&mut rng));
        }
    }
    (
        Matrix {
            rows: n,
            cols: d,
            values,
        },
        sd,
    )
}

/// Linear-regression data for ARD on the inputs: `n` rows of 6 standard-normal inputs, of which
/// only inputs 0, 1 and 4 matter (weights 2, −1, 0.5), and noise of standard deviation 0.3.
/// Returns the inputs, the targets (n × 1) and the true weights.
pub fn ard_regression(n: usize, seed: u64) -> (Matrix, Matrix, Vec<f64>) {
    let w = vec![2.0, -1.0, 0.0, 0.0, 0.5, 0.0];
    let c = w.len();
    let mut rng = Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..n * c).map(|_| normal(&mut rng)).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let clean: f64 = (0..c).map(|j| x[i * c + j] * w[j]).sum();
            clean + 0.3 * normal(&mut rng)
        })
        .collect();
    (
        Matrix {
            rows: n,
            cols: c,
            values: x,
        },
        Matrix {
            rows: n,
            cols: 1,
            values: y,
        },
        w,
    )
}

/// A noisy sinusoid, a 1-D manifold in 2-D (Winn §3.4.1, Fig. 3.5; the thesis gives neither N nor
/// the noise): x uniform on [0, 2π], t = (x, sin x) + N(0, noise² I).
pub fn sinusoid(n: usize, noise: f64, seed: u64) -> Matrix {
    let mut rng = Rng::seed_from_u64(seed);
    let mut values = Vec::with_capacity(2 * n);
    for _ in 0..n {
        let x = rng.random::<f64>() * std::f64::consts::TAU;
        values.push(x + noise * normal(&mut rng));
        values.push(x.sin() + noise * normal(&mut rng));
    }
    Matrix {
        rows: n,
        cols: 2,
        values,
    }
}

/// A noisy sphere, a 2-D manifold in 3-D (Winn §3.4.2; N and the noise not given): points uniform
/// on the unit sphere plus N(0, noise² I).
pub fn sphere(n: usize, noise: f64, seed: u64) -> Matrix {
    let mut rng = Rng::seed_from_u64(seed);
    let mut values = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let v: Vec<f64> = (0..3).map(|_| normal(&mut rng)).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
        for x in v {
            values.push(x / norm + noise * normal(&mut rng));
        }
    }
    Matrix {
        rows: n,
        cols: 3,
        values,
    }
}

/// Pearson correlation of two equally long vectors (0 when either is constant).
pub fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len()) as f64;
    let ma = a.iter().sum::<f64>() / n;
    let mb = b.iter().sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    if saa == 0.0 || sbb == 0.0 {
        0.0
    } else {
        sab / (saa * sbb).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_shaped() {
        let a = winn_ex31(500, 3);
        assert_eq!((a.rows, a.cols), (500, 10));
        assert_eq!(a, winn_ex31(500, 3));
        assert_ne!(a, winn_ex31(500, 4));
        // Sample standard deviations near 1 and 0.5 (500 draws: within 0.1).
        let sd = |j: usize| {
            let c = a.column(j);
            (c.iter().map(|x| x * x).sum::<f64>() / c.len() as f64).sqrt()
        };
        assert!((sd(0) - 1.0).abs() < 0.1 && (sd(9) - 0.5).abs() < 0.05);
        let toy = ica_toy(50, 2, 3, 1e-4, 1);
        assert_eq!((toy.t.rows, toy.t.cols, toy.sources.cols), (50, 3, 2));
        assert_eq!(toy.mixing.values.len(), 6);
        assert!((correlation(&[1.0, 2.0, 3.0], &[-2.0, -4.0, -6.0]) + 1.0).abs() < 1e-12);
    }
}
