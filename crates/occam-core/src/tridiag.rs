//! Exact posterior of a Gaussian Markov chain x_0, …, x_{T−1} (each a D-vector) from its natural
//! parameters: the kernel of a linear-dynamical-system q-block.
//!
//! Under VMP the expected log of a linear-Gaussian transition x_t ~ N(A x_{t−1}, Q⁻¹) is
//! −½ [x_tᵀ⟨Q⟩x_t − 2 x_tᵀ⟨QA⟩x_{t−1} + x_{t−1}ᵀ⟨AᵀQA⟩x_{t−1}] + const, and ⟨AᵀQA⟩ ≠ ⟨A⟩ᵀ⟨Q⟩⟨A⟩
//! when A and Q are random, so the usual Kalman filter (which takes A and Q as points) does not
//! apply as is. The chain's q is instead the Gaussian with a block-tridiagonal precision J
//! (diagonal blocks J_t, sub-diagonal blocks L_t = J_{t,t−1}) and linear term h: q(x) ∝
//! exp(hᵀx − ½ xᵀJx). It is found by block Cholesky elimination forward in time (the information
//! filter) and substitution backward (the RTS smoother in information form): O(T·D³) time, O(T·D²)
//! memory, symmetric updates only through Cholesky factors.

use crate::linalg::Cholesky;

/// Smoothed moments of a Gaussian chain.
#[derive(Clone, Debug)]
pub struct Smoothed {
    /// ⟨x_t⟩, T × D.
    pub mean: Vec<f64>,
    /// Cov(x_t), T × D × D.
    pub cov: Vec<f64>,
    /// Cov(x_t, x_{t−1}) for t = 1…T−1 (row index over x_t), (T−1) × D × D.
    pub cross: Vec<f64>,
    /// ln ∫ exp(hᵀx − ½ xᵀJx) dx = ½ hᵀJ⁻¹h − ½ ln|J| + (T·D/2) ln 2π.
    pub log_z: f64,
    /// ln|J|.
    pub log_det: f64,
}

fn mat_mul(a: &[f64], b: &[f64], d: usize, out: &mut [f64]) {
    for i in 0..d {
        for j in 0..d {
            out[i * d + j] = (0..d).map(|k| a[i * d + k] * b[k * d + j]).sum();
        }
    }
}

fn transpose(a: &[f64], d: usize) -> Vec<f64> {
    (0..d * d).map(|ij| a[(ij % d) * d + ij / d]).collect()
}

/// Smooths the chain with precision blocks `diag` (T × D × D, each symmetric), `sub` ((T−1) × D × D,
/// block t−1 holds J_{t,t−1}) and linear term `h` (T × D). If J is not positive definite, the
/// error is the first step whose Schur complement is not.
pub fn smooth(d: usize, diag: &[f64], sub: &[f64], h: &[f64]) -> Result<Smoothed, usize> {
    let steps = h.len() / d;
    let dd = d * d;
    // Forward: S_t = J_t − L_t S_{t−1}⁻¹ L_tᵀ, ĥ_t = h_t − L_t S_{t−1}⁻¹ ĥ_{t−1}.
    let mut chol: Vec<Cholesky> = Vec::with_capacity(steps);
    let mut hh = h.to_vec();
    let mut log_det = 0.0;
    let mut sinv_lt = vec![0.0; dd];
    let mut tmp = vec![0.0; dd];
    for t in 0..steps {
        let mut s = diag[t * dd..(t + 1) * dd].to_vec();
        if t > 0 {
            let l = &sub[(t - 1) * dd..t * dd];
            // S_{t−1}⁻¹ L_tᵀ, one column at a time.
            // The columns of Lᵀ are the rows of L.
            let mut cols = l.to_vec();
            for col in cols.chunks_exact_mut(d) {
                chol[t - 1].solve_in_place(col);
            }
            sinv_lt.copy_from_slice(&transpose(&cols, d));
            mat_mul(l, &sinv_lt, d, &mut tmp);
            s.iter_mut().zip(&tmp).for_each(|(v, w)| *v -= w);
            // Symmetrise against round-off before factorising.
            for i in 0..d {
                for j in 0..i {
                    let m = 0.5 * (s[i * d + j] + s[j * d + i]);
                    s[i * d + j] = m;
                    s[j * d + i] = m;
                }
            }
            let mut prev = hh[(t - 1) * d..t * d].to_vec();
            chol[t - 1].solve_in_place(&mut prev);
            for i in 0..d {
                hh[t * d + i] -= (0..d).map(|k| l[i * d + k] * prev[k]).sum::<f64>();
            }
        }
        let c = Cholesky::new(&s, d).ok_or(t)?;
        log_det += c.log_det();
        chol.push(c);
    }
    // Backward: μ_t = S_t⁻¹(ĥ_t − L_{t+1}ᵀ μ_{t+1}); Σ_t = S_t⁻¹ + G_t Σ_{t+1} G_tᵀ with
    // G_t = −S_t⁻¹ L_{t+1}ᵀ, and Cov(x_{t+1}, x_t) = Σ_{t+1} G_tᵀ.
    let mut mean = vec![0.0; steps * d];
    let mut cov = vec![0.0; steps * dd];
    let mut cross = vec![0.0; steps.saturating_sub(1) * dd];
    let mut quad = 0.0;
    for t in (0..steps).rev() {
        let mut rhs = hh[t * d..(t + 1) * d].to_vec();
        let mut sinv = vec![0.0; dd];
        chol[t].inverse_into(&mut sinv);
        if t + 1 < steps {
            let l = &sub[t * dd..(t + 1) * dd];
            let next = &mean[(t + 1) * d..(t + 2) * d];
            for i in 0..d {
                rhs[i] -= (0..d).map(|k| l[k * d + i] * next[k]).sum::<f64>();
            }
            // G = −S⁻¹ Lᵀ.
            let lt = transpose(l, d);
            let mut g = vec![0.0; dd];
            mat_mul(&sinv, &lt, d, &mut g);
            g.iter_mut().for_each(|v| *v = -*v);
            let sig_next = cov[(t + 1) * dd..(t + 2) * dd].to_vec();
            let gt = transpose(&g, d);
            let mut c = vec![0.0; dd];
            mat_mul(&sig_next, &gt, d, &mut c);
            cross[t * dd..(t + 1) * dd].copy_from_slice(&c);
            let mut gsg = vec![0.0; dd];
            mat_mul(&g, &c, d, &mut gsg);
            for (v, (a, b)) in cov[t * dd..(t + 1) * dd]
                .iter_mut()
                .zip(sinv.iter().zip(&gsg))
            {
                *v = a + b;
            }
        } else {
            cov[t * dd..(t + 1) * dd].copy_from_slice(&sinv);
        }
        // ĥ_tᵀ S_t⁻¹ ĥ_t summed over t is hᵀJ⁻¹h (the Schur complements diagonalise J).
        let mut w = hh[t * d..(t + 1) * d].to_vec();
        chol[t].solve_in_place(&mut w);
        quad += (0..d).map(|i| w[i] * hh[t * d + i]).sum::<f64>();
        chol[t].solve_in_place(&mut rhs);
        mean[t * d..(t + 1) * d].copy_from_slice(&rhs);
    }
    let n = (steps * d) as f64;
    let log_z = 0.5 * quad - 0.5 * log_det + 0.5 * n * crate::special::LN_2PI;
    Ok(Smoothed {
        mean,
        cov,
        cross,
        log_z,
        log_det,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng as _, SeedableRng};

    /// The same quantities from the dense (T·D)² precision: J⁻¹ by Cholesky, μ = J⁻¹h.
    #[test]
    fn equals_the_dense_joint_gaussian() {
        let mut rng = crate::Rng::seed_from_u64(11);
        for (d, steps) in [(1, 1), (1, 5), (2, 4), (3, 6)] {
            let dd = d * d;
            let n = d * steps;
            // J = Bᵀ B + I with B block-bidiagonal: SPD and block-tridiagonal.
            let mut b = vec![0.0; n * n];
            for t in 0..steps {
                for i in 0..d {
                    for j in 0..d {
                        b[(t * d + i) * n + t * d + j] = rng.random_range(-1.0..1.0);
                        if t > 0 {
                            b[(t * d + i) * n + (t - 1) * d + j] = rng.random_range(-1.0..1.0);
                        }
                    }
                }
            }
            let mut j = vec![0.0; n * n];
            for r in 0..n {
                for c in 0..n {
                    j[r * n + c] = (0..n).map(|k| b[k * n + r] * b[k * n + c]).sum::<f64>()
                        + if r == c { 1.0 } else { 0.0 };
                }
            }
            let h: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
            let block = |t: usize, s: usize| -> Vec<f64> {
                (0..dd)
                    .map(|ij| j[(t * d + ij / d) * n + s * d + ij % d])
                    .collect()
            };
            let diag: Vec<f64> = (0..steps).flat_map(|t| block(t, t)).collect();
            let sub: Vec<f64> = (1..steps).flat_map(|t| block(t, t - 1)).collect();
            let got = smooth(d, &diag, &sub, &h).unwrap();
            let dense = Cholesky::new(&j, n).unwrap();
            let mut inv = vec![0.0; n * n];
            dense.inverse_into(&mut inv);
            let mut mu = h.clone();
            dense.solve_in_place(&mut mu);
            let quad: f64 = mu.iter().zip(&h).map(|(a, b)| a * b).sum();
            let log_z = 0.5 * quad - 0.5 * dense.log_det()
                + 0.5 * n as f64 * crate::special::LN_2PI;
            assert!((got.log_z - log_z).abs() < 1e-10 * log_z.abs().max(1.0));
            for (a, b) in got.mean.iter().zip(&mu) {
                assert!((a - b).abs() < 1e-10, "mean {a} vs {b}");
            }
            for t in 0..steps {
                for ij in 0..dd {
                    let want = inv[(t * d + ij / d) * n + t * d + ij % d];
                    assert!((got.cov[t * dd + ij] - want).abs() < 1e-10);
                    if t > 0 {
                        let want = inv[(t * d + ij / d) * n + (t - 1) * d + ij % d];
                        assert!((got.cross[(t - 1) * dd + ij] - want).abs() < 1e-10);
                    }
                }
            }
        }
    }

    #[test]
    fn a_precision_that_is_not_positive_definite_names_the_step() {
        let diag = [1.0, 1.0, 1.0];
        let sub = [2.0, 0.5];
        assert_eq!(smooth(1, &diag, &sub, &[0.0; 3]).unwrap_err(), 1);
    }
}
