//! Principal axes of a data matrix (classical PCA by the covariance's eigendecomposition): the
//! preprocessing of `occam-nn`'s Tecator protocol and the starting point of the facade's PPCA,
//! mixture-of-PPCA, VQPCA, MBPCA and ICA fits. Not to be confused with the Bayesian PCA model
//! [`crate::models::Pca`], which is fitted by VMP.

use super::clean_vector_state;
use super::error::{check_finite, LinalgError};
use faer::{Mat, Side};
use serde::{Deserialize, Serialize};

/// Principal-component projection fitted to a training matrix (centred, not scaled).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrincipalAxes {
    /// Column means of the training matrix.
    pub mean: Vec<f64>,
    /// The leading k eigenvectors of the covariance, row-major k × d (row j = component j).
    pub components: Vec<f64>,
    /// Their eigenvalues (covariance ÷ n), decreasing.
    pub variances: Vec<f64>,
}

impl PrincipalAxes {
    /// Fits the first `k` principal components of a row-major n × d matrix. Each component's sign is
    /// fixed so its largest-magnitude loading is positive (eigenvectors are defined up to sign).
    pub fn fit(x: &[f64], d: usize, k: usize) -> Result<Self, LinalgError> {
        if d == 0 || !x.len().is_multiple_of(d) || k == 0 || k > d {
            return Err(LinalgError::Shape {
                what: "PCA: n × d matrix and 1 ≤ k ≤ d",
                expected: d,
                got: k,
            });
        }
        check_finite("PCA input", x)?;
        let n = x.len() / d;
        if n < 2 {
            return Err(LinalgError::TooFew {
                what: "PCA",
                need: 2,
                got: n,
            });
        }
        let mut mean = vec![0.0; d];
        for row in x.chunks_exact(d) {
            for (m, v) in mean.iter_mut().zip(row) {
                *m += v / n as f64;
            }
        }
        let xc = Mat::<f64>::from_fn(n, d, |i, j| x[i * d + j] - mean[j]);
        let cov = xc.transpose() * &xc * faer::Scale(1.0 / n as f64);
        let eig = cov.self_adjoint_eigen(Side::Lower);
        // faer's kernels leave the vector registers' upper halves dirty: clean them for the scalar
        // code that follows on this thread (the caller's too, on the error path).
        clean_vector_state();
        let eig = eig.map_err(|_| LinalgError::Singular { what: "PCA eigen" })?;
        let u = eig.U();
        let s = eig.S();
        let mut components = Vec::with_capacity(k * d);
        let mut variances = Vec::with_capacity(k);
        for c in 0..k {
            let col = d - 1 - c; // eigenvalues come in non-decreasing order
            variances.push(s[col]);
            let big = (0..d)
                .max_by(|&a, &b| u[(a, col)].abs().total_cmp(&u[(b, col)].abs()))
                .unwrap_or(0);
            let sign = if u[(big, col)] < 0.0 { -1.0 } else { 1.0 };
            components.extend((0..d).map(|j| sign * u[(j, col)]));
        }
        Ok(PrincipalAxes {
            mean,
            components,
            variances,
        })
    }

    /// Projects a row-major matrix with d columns onto the k components (n × k).
    pub fn transform(&self, x: &[f64]) -> Vec<f64> {
        let d = self.mean.len();
        let k = self.variances.len();
        let mut out = Vec::with_capacity(x.len() / d * k);
        for row in x.chunks_exact(d) {
            for c in self.components.chunks_exact(d) {
                out.push(
                    row.iter()
                        .zip(&self.mean)
                        .zip(c)
                        .map(|((v, m), w)| (v - m) * w)
                        .sum(),
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_orthonormal_and_capture_the_variance() {
        // Points on a tilted plane in 3-D plus a little noise in a known direction.
        let mut x = Vec::new();
        for i in 0..40 {
            let a = (i as f64 * 0.37).sin() * 3.0;
            let b = (i as f64 * 1.13).cos();
            let c = 0.01 * (i as f64 * 2.9).sin();
            x.extend([a + b, a - b, c]);
        }
        let p = PrincipalAxes::fit(&x, 3, 3).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let dot: f64 = (0..3)
                    .map(|k| p.components[i * 3 + k] * p.components[j * 3 + k])
                    .sum();
                assert!((dot - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
        // Scores have variance equal to the eigenvalues.
        let s = p.transform(&x);
        for c in 0..3 {
            let v = s.iter().skip(c).step_by(3).map(|a| a * a).sum::<f64>() / 40.0;
            assert!((v - p.variances[c]).abs() < 1e-10 * (1.0 + v));
        }
        assert!(p.variances[0] >= p.variances[1] && p.variances[1] >= p.variances[2]);
    }

    #[test]
    fn closed_form_two_by_two_and_refusals() {
        // Rows (±1, ±1)·(a, b) pairs: covariance diag(4, 1) in the rotated frame.
        let x = [2.0, 0.0, -2.0, 0.0, 0.0, 1.0, 0.0, -1.0];
        let p = PrincipalAxes::fit(&x, 2, 2).unwrap();
        assert!((p.variances[0] - 2.0).abs() < 1e-14 && (p.variances[1] - 0.5).abs() < 1e-14);
        assert!((p.components[0] - 1.0).abs() < 1e-14 && p.components[1].abs() < 1e-14);
        assert!(matches!(
            PrincipalAxes::fit(&x, 2, 3),
            Err(LinalgError::Shape { .. })
        ));
        assert!(matches!(
            PrincipalAxes::fit(&[1.0, 2.0], 2, 1),
            Err(LinalgError::TooFew { .. })
        ));
        assert_eq!(
            PrincipalAxes::fit(&[1.0, f64::NAN, 0.0, 1.0], 2, 1),
            Err(LinalgError::NonFinite {
                what: "PCA input",
                index: 1
            })
        );
    }
}
