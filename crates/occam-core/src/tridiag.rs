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
#[derive(Clone, Debug, Default)]
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

/// out = A B (d×d, row-major); the inner loop runs along rows of B (vectorisable).
fn mat_mul(a: &[f64], b: &[f64], d: usize, out: &mut [f64]) {
    out.iter_mut().for_each(|v| *v = 0.0);
    for i in 0..d {
        let row = &mut out[i * d..(i + 1) * d];
        for k in 0..d {
            let aik = a[i * d + k];
            row.iter_mut()
                .zip(&b[k * d..(k + 1) * d])
                .for_each(|(o, bv)| *o += aik * bv);
        }
    }
}

/// out = A Bᵀ (d×d, row-major): entry (i, j) is row i of A dotted with row j of B.
fn mat_mul_bt(a: &[f64], b: &[f64], d: usize, out: &mut [f64]) {
    for i in 0..d {
        for j in 0..d {
            out[i * d + j] = dot(&a[i * d..(i + 1) * d], &b[j * d..(j + 1) * d]);
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// y = A x (A d×d).
fn mat_vec(a: &[f64], x: &[f64], y: &mut [f64]) {
    for (i, yi) in y.iter_mut().enumerate() {
        *yi = dot(&a[i * x.len()..(i + 1) * x.len()], x);
    }
}

/// Whether block `t` of `blocks` (each `dd` long) equals block t − 1 bit for bit.
fn repeats(blocks: &[f64], t: usize, dd: usize) -> bool {
    let (a, b) = (&blocks[(t - 1) * dd..t * dd], &blocks[t * dd..(t + 1) * dd]);
    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Smooths the chain with precision blocks `diag` (T × D × D, each symmetric), `sub` ((T−1) × D × D,
/// block t−1 holds J_{t,t−1}) and linear term `h` (T × D). If J is not positive definite, the
/// error is the first step whose Schur complement is not.
pub fn smooth(d: usize, diag: &[f64], sub: &[f64], h: &[f64]) -> Result<Smoothed, usize> {
    let mut out = Smoothed::default();
    smooth_into(d, diag, sub, h, &mut out, &mut Vec::new())?;
    Ok(out)
}

/// [`smooth`] into the arrays of `out`, with `work` as scratch: a caller that keeps both across
/// calls (one sweep after another) allocates nothing. Every entry of `out` is written.
pub fn smooth_into(
    d: usize,
    diag: &[f64],
    sub: &[f64],
    h: &[f64],
    out: &mut Smoothed,
    work: &mut Vec<f64>,
) -> Result<(), usize> {
    let steps = h.len() / d;
    let dd = d * d;
    // Forward (the information filter): S_t = J_t − L_t S_{t−1}⁻¹ L_tᵀ, ĥ_t = h_t − L_t S_{t−1}⁻¹ ĥ_{t−1}.
    // Kept: S_t⁻¹ and W_t = S_{t−1}⁻¹ L_tᵀ (O(T·D²) memory), used again backward.
    work.clear();
    work.resize(steps * dd + steps.saturating_sub(1) * dd + steps * d, 0.0);
    let (sinv, rest) = work.split_at_mut(steps * dd);
    let (w, hh) = rest.split_at_mut(steps.saturating_sub(1) * dd);
    hh.copy_from_slice(h);
    let mut log_det = 0.0;
    let (mut s, mut tmp, mut v) = (vec![0.0; dd], vec![0.0; dd], vec![0.0; d]);
    let mut last_log_det = 0.0;
    for t in 0..steps {
        // A step whose inputs (J_t, L_t, S_{t−1}⁻¹) equal the previous step's, bit for bit, has the
        // same S_t, W_t and ln|S_t| (the same operations on the same values): copied, not
        // recomputed. Time-invariant models reach this steady state of the filter within a few
        // dozen steps; the result is identical either way.
        if t >= 2 && repeats(diag, t, dd) && repeats(sub, t - 1, dd) && repeats(sinv, t - 1, dd) {
            w.copy_within((t - 2) * dd..(t - 1) * dd, (t - 1) * dd);
            sinv.copy_within((t - 1) * dd..t * dd, t * dd);
            log_det += last_log_det;
            let (done, cur) = hh.split_at_mut(t * d);
            mat_vec(&sinv[(t - 1) * dd..t * dd], &done[(t - 1) * d..], &mut v);
            let l = &sub[(t - 1) * dd..t * dd];
            for i in 0..d {
                cur[i] -= dot(&l[i * d..(i + 1) * d], &v);
            }
            continue;
        }
        s.copy_from_slice(&diag[t * dd..(t + 1) * dd]);
        if t > 0 {
            let l = &sub[(t - 1) * dd..t * dd];
            let p = &sinv[(t - 1) * dd..t * dd];
            let wt = &mut w[(t - 1) * dd..t * dd];
            mat_mul_bt(p, l, d, wt);
            mat_mul(l, wt, d, &mut tmp);
            // S = J_t − L W, symmetrised against round-off before factorising.
            for i in 0..d {
                for j in 0..=i {
                    let m = 0.5 * (tmp[i * d + j] + tmp[j * d + i]);
                    s[i * d + j] -= m;
                    if j != i {
                        s[j * d + i] -= m;
                    }
                }
            }
            mat_vec(p, &hh[(t - 1) * d..t * d], &mut v);
            for i in 0..d {
                hh[t * d + i] -= dot(&l[i * d..(i + 1) * d], &v);
            }
        }
        let c = Cholesky::new(&s, d).ok_or(t)?;
        last_log_det = c.log_det();
        log_det += last_log_det;
        c.inverse_into(&mut sinv[t * dd..(t + 1) * dd]);
    }
    // Backward (the RTS smoother in information form), with G_t = −W_{t+1}:
    // μ_t = S_t⁻¹ĥ_t − W μ_{t+1}; Cov(x_{t+1}, x_t) = C = −Σ_{t+1} Wᵀ; Σ_t = S_t⁻¹ − W C.
    let (mean, cov, cross) = (&mut out.mean, &mut out.cov, &mut out.cross);
    mean.resize(steps * d, 0.0);
    cov.resize(steps * dd, 0.0);
    cross.resize(steps.saturating_sub(1) * dd, 0.0);
    let mut quad = 0.0;
    for t in (0..steps).rev() {
        let st = &sinv[t * dd..(t + 1) * dd];
        mat_vec(st, &hh[t * d..(t + 1) * d], &mut v);
        // ĥ_tᵀ S_t⁻¹ ĥ_t summed over t is hᵀJ⁻¹h (the Schur complements diagonalise J).
        quad += dot(&v, &hh[t * d..(t + 1) * d]);
        let (done, rest) = mean.split_at_mut((t + 1) * d);
        let mt = &mut done[t * d..];
        mt.copy_from_slice(&v);
        if t + 1 == steps {
            cov[t * dd..].copy_from_slice(st);
            continue;
        }
        let wt = &w[t * dd..(t + 1) * dd];
        mat_vec(wt, &rest[..d], &mut v);
        mt.iter_mut().zip(&v).for_each(|(m, x)| *m -= x);
        // The backward steady state, as forward: Σ_t and Cov(x_{t+1}, x_t) are functions of
        // (S_t⁻¹, W_t, Σ_{t+1}).
        if t + 2 < steps
            && repeats(sinv, t + 1, dd)
            && repeats(w, t + 1, dd)
            && repeats(cov, t + 2, dd)
        {
            cov.copy_within((t + 1) * dd..(t + 2) * dd, t * dd);
            cross.copy_within((t + 1) * dd..(t + 2) * dd, t * dd);
            continue;
        }
        let (cur, next) = cov.split_at_mut((t + 1) * dd);
        let c = &mut cross[t * dd..(t + 1) * dd];
        mat_mul_bt(&next[..dd], wt, d, c);
        c.iter_mut().for_each(|x| *x = -*x);
        mat_mul(wt, c, d, &mut tmp);
        let ct = &mut cur[t * dd..];
        for i in 0..d {
            for j in 0..d {
                ct[i * d + j] = st[i * d + j] - 0.5 * (tmp[i * d + j] + tmp[j * d + i]);
            }
        }
    }
    let n = (steps * d) as f64;
    let log_z = 0.5 * quad - 0.5 * log_det + 0.5 * n * crate::special::LN_2PI;
    out.log_z = log_z;
    out.log_det = log_det;
    Ok(())
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
            let log_z =
                0.5 * quad - 0.5 * dense.log_det() + 0.5 * n as f64 * crate::special::LN_2PI;
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

    /// A time-invariant chain (the same blocks at every step but the first) long enough for the
    /// filter and smoother to reach their steady states, where steps are copied: still the dense
    /// joint Gaussian's moments.
    #[test]
    fn steady_state_steps_equal_the_dense_joint_gaussian() {
        let (d, steps) = (1, 300);
        let (dd, n) = (d * d, d * steps);
        let block = [2.5];
        let off = [-0.9];
        let mut diag: Vec<f64> = (0..steps).flat_map(|_| block).collect();
        diag[0] = 1.2;
        let sub: Vec<f64> = (1..steps).flat_map(|_| off).collect();
        let h: Vec<f64> = (0..n).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
        let mut j = vec![0.0; n * n];
        for t in 0..steps {
            for ij in 0..dd {
                let (r, c) = (t * d + ij / d, t * d + ij % d);
                j[r * n + c] = diag[t * dd + ij];
                if t > 0 {
                    let v = sub[(t - 1) * dd + ij];
                    j[r * n + c - d] = v;
                    j[(c - d) * n + r] = v;
                }
            }
        }
        let got = smooth(d, &diag, &sub, &h).unwrap();
        let dense = Cholesky::new(&j, n).unwrap();
        let mut inv = vec![0.0; n * n];
        dense.inverse_into(&mut inv);
        let mut mu = h.clone();
        dense.solve_in_place(&mut mu);
        assert!((got.log_det - dense.log_det()).abs() < 1e-9);
        for (a, b) in got.mean.iter().zip(&mu) {
            assert!((a - b).abs() < 1e-10, "mean {a} vs {b}");
        }
        for t in 0..steps {
            for ij in 0..dd {
                let want = inv[(t * d + ij / d) * n + t * d + ij % d];
                assert!((got.cov[t * dd + ij] - want).abs() < 1e-10, "step {t}");
                if t > 0 {
                    let want = inv[(t * d + ij / d) * n + (t - 1) * d + ij % d];
                    assert!((got.cross[(t - 1) * dd + ij] - want).abs() < 1e-10);
                }
            }
        }
        // The steady state was reached (the copies ran): the middle steps' covariances are equal
        // bit for bit.
        assert_eq!(got.cov[150 * dd..151 * dd], got.cov[151 * dd..152 * dd]);
    }

    #[test]
    fn a_precision_that_is_not_positive_definite_names_the_step() {
        let diag = [1.0, 1.0, 1.0];
        let sub = [2.0, 0.5];
        assert_eq!(smooth(1, &diag, &sub, &[0.0; 3]).unwrap_err(), 1);
    }
}
