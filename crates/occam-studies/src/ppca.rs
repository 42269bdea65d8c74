//! Maximum-likelihood probabilistic PCA in closed form, the baseline for Bayesian PCA (Winn §3.1,
//! after Tipping & Bishop): t = W x + μ + ε with x ~ N(0, I_q), ε ~ N(0, σ² I_d), so
//! t ~ N(μ, W Wᵀ + σ² I) (3.2). With S the sample covariance (÷ N) and its eigenvalues
//! λ_1 ≥ … ≥ λ_d, the maximum is σ² = mean of the d − q discarded eigenvalues (3.4) and
//! W = U_q (Λ_q − σ² I)^{1/2} (3.3), up to a rotation of the latent space.

use occam_core::linalg::Cholesky;
use occam_nn::data::Pca;

use occam::error::{Error, Result};
use occam::latent::synth::Matrix;

/// A PPCA model: mean, loading matrix and isotropic noise variance.
#[derive(Clone, Debug, PartialEq)]
pub struct Ppca {
    /// μ, length d.
    pub mean: Vec<f64>,
    /// W, row-major d × q.
    pub w: Vec<f64>,
    /// q, the latent dimension.
    pub q: usize,
    /// σ², the noise variance.
    pub noise_var: f64,
}

impl Ppca {
    /// The maximum-likelihood PPCA of the rows of `x` with `q` latent dimensions (1 ≤ q < d).
    pub fn fit(x: &Matrix, q: usize) -> Result<Ppca> {
        let d = x.cols;
        if q == 0 || q >= d {
            return Err(Error::Usage(format!(
                "PPCA: latent dimension q must be between 1 and d − 1 = {}, got {q}",
                d.saturating_sub(1)
            )));
        }
        let pca = Pca::fit(&x.values, d, d)
            .map_err(|e| Error::Run(format!("PPCA: eigendecomposition failed: {e}")))?;
        let discarded = &pca.variances[q..];
        let noise_var = discarded.iter().sum::<f64>() / discarded.len() as f64;
        if noise_var.is_nan() || noise_var <= 0.0 {
            return Err(Error::Run(format!(
                "PPCA: the data span at most {q} dimensions, so the noise variance is 0"
            )));
        }
        let mut w = vec![0.0; d * q];
        for j in 0..q {
            let scale = (pca.variances[j] - noise_var).max(0.0).sqrt();
            for i in 0..d {
                w[i * q + j] = pca.components[j * d + i] * scale;
            }
        }
        Ok(Ppca {
            mean: pca.mean,
            w,
            q,
            noise_var,
        })
    }

    /// The model covariance C = W Wᵀ + σ² I (row-major d × d).
    pub fn covariance(&self) -> Vec<f64> {
        let d = self.mean.len();
        let q = self.q;
        let mut c = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                c[i * d + j] = (0..q).map(|k| self.w[i * q + k] * self.w[j * q + k]).sum();
            }
            c[i * d + i] += self.noise_var;
        }
        c
    }

    /// log N(t | μ, C) of every row of `x`.
    pub fn log_density(&self, x: &Matrix) -> Result<Vec<f64>> {
        let d = self.mean.len();
        if x.cols != d {
            return Err(Error::Usage(format!(
                "PPCA: data have {} columns, the model {d}",
                x.cols
            )));
        }
        let chol = Cholesky::new(&self.covariance(), d)
            .ok_or_else(|| Error::Run("PPCA: covariance not positive definite".into()))?;
        let norm = -0.5 * (d as f64 * (2.0 * std::f64::consts::PI).ln() + chol.log_det());
        let mut r = vec![0.0; d];
        Ok((0..x.rows)
            .map(|i| {
                let t = x.row(i);
                let diff: Vec<f64> = t.iter().zip(&self.mean).map(|(a, b)| a - b).collect();
                r.copy_from_slice(&diff);
                chol.solve_in_place(&mut r);
                norm - 0.5 * diff.iter().zip(&r).map(|(a, b)| a * b).sum::<f64>()
            })
            .collect())
    }

    /// Σ_n log N(t_n | μ, C).
    pub fn log_likelihood(&self, x: &Matrix) -> Result<f64> {
        Ok(self.log_density(x)?.iter().sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use occam::latent::synth;

    #[test]
    fn closed_form_is_the_maximum() {
        let x = synth::winn_ex31(300, 11);
        let ml = Ppca::fit(&x, 3).unwrap();
        let l0 = ml.log_likelihood(&x).unwrap();
        // At the maximum tr(C⁻¹S) = d, so L = −N/2 (d log 2π + log|C| + d), with
        // log|C| = Σ_{j≤q} log λ_j + (d − q) log σ².
        let pca = Pca::fit(&x.values, 10, 10).unwrap();
        let logdet: f64 =
            pca.variances[..3].iter().map(|l| l.ln()).sum::<f64>() + 7.0 * ml.noise_var.ln();
        let closed = -150.0 * (10.0 * (2.0 * std::f64::consts::PI).ln() + logdet + 10.0);
        assert!(
            (l0 - closed).abs() < 1e-8 * closed.abs(),
            "{l0} vs {closed}"
        );
        // Any perturbation of σ², W or μ lowers the likelihood.
        for (k, h) in [(0, 1e-3), (1, -1e-3), (2, 1e-3), (3, -1e-3)] {
            let mut p = ml.clone();
            match k {
                0 | 1 => p.noise_var *= 1.0 + 10.0 * h,
                2 => p.w[4] += h * 50.0,
                _ => p.mean[2] += h * 50.0,
            }
            assert!(p.log_likelihood(&x).unwrap() < l0, "perturbation {k}");
        }
        // Ex. 3.1's data: the noise std is about 0.5.
        assert!((ml.noise_var.sqrt() - 0.5).abs() < 0.05, "{}", ml.noise_var);
    }

    #[test]
    fn bad_latent_dimension_is_an_error() {
        let x = synth::winn_ex31(20, 1);
        for q in [0, 10, 11] {
            let e = Ppca::fit(&x, q).unwrap_err().to_string();
            assert!(e.contains("latent dimension q"), "{e}");
        }
    }
}
