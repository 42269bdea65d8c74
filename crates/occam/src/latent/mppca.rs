//! Mixtures of probabilistic PCA by maximum likelihood (EM), the baseline Winn §3.4.4 compares the
//! mixture of Bayesian PCA against (after Tipping & Bishop 1999, whose updates these are).
//!
//! Component m: t ~ N(μ_m, C_m), C_m = W_m W_mᵀ + σ_m² I (Winn (3.2) per component), weight π_m.
//! With M_m = σ_m² I + W_mᵀW_m (q × q), Woodbury gives C_m⁻¹ = σ_m⁻²(I − W_m M_m⁻¹ W_mᵀ) and
//! ln|C_m| = (d − q) ln σ_m² + ln|M_m|, so no d × d matrix is inverted.
//!
//! One EM step: the E-step computes the responsibilities r_nm; the M-step sets π_m = Σ_n r_nm / N,
//! μ_m the responsibility-weighted mean, and with S_m the weighted scatter about the new μ_m
//! (never formed: only S_m W_m is needed), W_m ← S_m W_m (σ_m² I + M_m⁻¹ W_mᵀ S_m W_m)⁻¹ and
//! σ_m² ← tr(S_m − S_m W_m M_m⁻¹ W_m,newᵀ) / d. Each M-step is one EM step of a weighted PPCA
//! per component, so the likelihood never decreases (checked by [`fit`]).

use occam_core::linalg::Cholesky;
use occam_core::special::{log_sum_exp, LN_2PI};
use occam_nn::data::Pca;

use super::dense::{mul, mul_tn};
use super::mbpca::kmeans;
use super::synth::Matrix;
use crate::error::{Error, Result};

/// A mixture of PPCA.
#[derive(Clone, Debug, PartialEq)]
pub struct Mppca {
    /// Data dimension d.
    pub d: usize,
    /// Latent dimension q.
    pub q: usize,
    /// Number of components K.
    pub k: usize,
    /// Mixing weights π_m.
    pub pi: Vec<f64>,
    /// Means μ_m, K × d.
    pub mean: Vec<f64>,
    /// Loadings W_m, K × d × q (row-major per component).
    pub w: Vec<f64>,
    /// Noise variances σ_m², length K.
    pub noise_var: Vec<f64>,
}

/// Settings of an EM fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmOptions {
    /// Number of components K.
    pub k: usize,
    /// Latent dimension q (1 ≤ q < d).
    pub q: usize,
    /// The most EM steps.
    pub max_iter: usize,
    /// Stop when the log-likelihood rises by less than `tol` per data point.
    pub tol: f64,
    /// Seed of the k-means start.
    pub seed: u64,
    /// σ_m² is kept at least this fraction of the data's mean variance per dimension (a component
    /// on a flat patch would otherwise drive its likelihood to +∞); while the floor is not
    /// reached the steps are exact EM steps.
    pub noise_floor: f64,
}

impl EmOptions {
    /// `k` components of latent dimension `q`; 500 steps, tolerance 1e-8 per point, seed 0,
    /// noise floor 10⁻⁶.
    pub fn new(k: usize, q: usize) -> Self {
        EmOptions {
            k,
            q,
            max_iter: 500,
            tol: 1e-8,
            seed: 0,
            noise_floor: 1e-6,
        }
    }
}

fn chol(a: &[f64], q: usize) -> Result<Cholesky> {
    Cholesky::new(a, q)
        .ok_or_else(|| Error::Run("mixture of PPCA: σ²I + WᵀW is not positive definite".into()))
}

fn check(t: &Matrix, k: usize, q: usize) -> Result<()> {
    let (n, d) = (t.rows, t.cols);
    if k == 0 || q == 0 || q >= d || n < 2 * k {
        return Err(Error::Usage(format!(
            "mixture of PPCA: need 1 ≤ q < d and at least 2 points per component \
             (k = {k}, q = {q}, data {n} × {d})"
        )));
    }
    if let Some(i) = t.values.iter().position(|v| !v.is_finite()) {
        return Err(Error::Usage(format!(
            "mixture of PPCA: data row {}, column {} is not a finite number",
            i / d + 1,
            i % d + 1
        )));
    }
    Ok(())
}

/// The mean variance per dimension of the data (the scale of the noise floor).
fn mean_variance(t: &Matrix) -> f64 {
    let (n, d) = (t.rows as f64, t.cols);
    (0..d)
        .map(|j| {
            let c = t.column(j);
            let m = c.iter().sum::<f64>() / n;
            c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n
        })
        .sum::<f64>()
        / d as f64
}

impl Mppca {
    /// A seeded start: k-means clusters, each one's closed-form PPCA (the global one for a
    /// cluster with fewer than 2d points), weights from the cluster sizes.
    pub fn initialise(t: &Matrix, k: usize, q: usize, seed: u64) -> Result<Mppca> {
        check(t, k, q)?;
        let (n, d) = (t.rows, t.cols);
        let (centres, label) = kmeans(t, k, 10, seed);
        let global = Pca::fit(&t.values, d, d).map_err(|e| Error::Run(format!("PCA: {e}")))?;
        let floor = 1e-6 * mean_variance(t).max(f64::MIN_POSITIVE);
        let mut model = Mppca {
            d,
            q,
            k,
            pi: vec![0.0; k],
            mean: centres,
            w: vec![0.0; k * d * q],
            noise_var: vec![0.0; k],
        };
        for m in 0..k {
            let rows: Vec<f64> = (0..n)
                .filter(|&i| label[i] == m)
                .flat_map(|i| t.row(i).to_vec())
                .collect();
            model.pi[m] = (rows.len() / d).max(1) as f64;
            let pca = if rows.len() >= 2 * d {
                Pca::fit(&rows, d, d).unwrap_or_else(|_| global.clone())
            } else {
                global.clone()
            };
            let s2 = (pca.variances[q..].iter().sum::<f64>() / (d - q) as f64).max(floor);
            model.noise_var[m] = s2;
            for j in 0..q {
                let scale = (pca.variances[j] - s2).max(0.0).sqrt();
                for r in 0..d {
                    model.w[(m * d + r) * q + j] = pca.components[j * d + r] * scale;
                }
            }
        }
        let total: f64 = model.pi.iter().sum();
        model.pi.iter_mut().for_each(|p| *p /= total);
        Ok(model)
    }

    /// ln π_m + ln N(t_n | μ_m, C_m) for every row n and component m (N × K).
    pub fn joint_log_densities(&self, t: &Matrix) -> Result<Vec<f64>> {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        if t.cols != d {
            return Err(Error::Usage(format!(
                "mixture of PPCA: data have {} columns, the model {d}",
                t.cols
            )));
        }
        let mut out = vec![0.0; n * k];
        for m in 0..k {
            let wm = &self.w[m * d * q..(m + 1) * d * q];
            let s2 = self.noise_var[m];
            let mut mm = mul_tn(wm, wm, d, q, q);
            for i in 0..q {
                mm[i * q + i] += s2;
            }
            let c = chol(&mm, q)?;
            let logdet = (d - q) as f64 * s2.ln() + c.log_det();
            let mu = &self.mean[m * d..(m + 1) * d];
            let e: Vec<f64> = (0..n)
                .flat_map(|i| t.row(i).iter().zip(mu).map(|(a, b)| a - b))
                .collect();
            let p = mul(&e, wm, n, d, q);
            let mut v = vec![0.0; q];
            for i in 0..n {
                let pi = &p[i * q..(i + 1) * q];
                v.copy_from_slice(pi);
                c.solve_in_place(&mut v);
                let ee: f64 = e[i * d..(i + 1) * d].iter().map(|x| x * x).sum();
                let pmp: f64 = pi.iter().zip(&v).map(|(a, b)| a * b).sum();
                out[i * k + m] =
                    self.pi[m].ln() - 0.5 * (d as f64 * LN_2PI + logdet + (ee - pmp) / s2);
            }
        }
        Ok(out)
    }

    /// ln p(t_n) of every row under the mixture.
    pub fn log_density(&self, t: &Matrix) -> Result<Vec<f64>> {
        let joint = self.joint_log_densities(t)?;
        Ok(joint.chunks_exact(self.k).map(log_sum_exp).collect())
    }

    /// One EM step; returns the log-likelihood of the parameters *before* the step.
    pub fn em_step(&mut self, t: &Matrix, floor: f64) -> Result<f64> {
        let (n, d, q, k) = (t.rows, self.d, self.q, self.k);
        let mut r = self.joint_log_densities(t)?;
        let mut loglik = 0.0;
        for row in r.chunks_exact_mut(k) {
            let lse = log_sum_exp(row);
            loglik += lse;
            row.iter_mut().for_each(|v| *v = (*v - lse).exp());
        }
        for m in 0..k {
            let nm: f64 = (0..n).map(|i| r[i * k + m]).sum();
            self.pi[m] = nm / n as f64;
            if nm <= 1e-300 {
                continue;
            }
            let mut mu = vec![0.0; d];
            for i in 0..n {
                let ri = r[i * k + m];
                for (a, v) in mu.iter_mut().zip(t.row(i)) {
                    *a += ri * v;
                }
            }
            mu.iter_mut().for_each(|v| *v /= nm);
            // e_n = t_n − μ_m, g_n = r_nm e_n / N_m; S W = Σ_n g_n (e_nᵀ W).
            let wm = self.w[m * d * q..(m + 1) * d * q].to_vec();
            let mut e = vec![0.0; n * d];
            let mut g = vec![0.0; n * d];
            let mut trace_s = 0.0;
            for i in 0..n {
                let ri = r[i * k + m] / nm;
                for j in 0..d {
                    let v = t.row(i)[j] - mu[j];
                    e[i * d + j] = v;
                    g[i * d + j] = ri * v;
                    trace_s += ri * v * v;
                }
            }
            let p = mul(&e, &wm, n, d, q);
            let sw = mul_tn(&g, &p, n, d, q);
            let s2 = self.noise_var[m];
            let mut mm = mul_tn(&wm, &wm, d, q, q);
            for i in 0..q {
                mm[i * q + i] += s2;
            }
            let cm = chol(&mm, q)?;
            // A = σ² I + M⁻¹ Wᵀ S W; W_new = S W A⁻¹ (A is similar to an SPD matrix, so
            // solve through Aᵀ by normal LU-free means: W_newᵀ = A⁻ᵀ (S W)ᵀ).
            let wtsw = mul_tn(&wm, &sw, d, q, q);
            let mut minv_wtsw = wtsw.clone();
            for col in 0..q {
                let mut c: Vec<f64> = (0..q).map(|i| wtsw[i * q + col]).collect();
                cm.solve_in_place(&mut c);
                for i in 0..q {
                    minv_wtsw[i * q + col] = c[i];
                }
            }
            let mut a = minv_wtsw.clone();
            for i in 0..q {
                a[i * q + i] += s2;
            }
            let a_inv = occam_core::linalg::inverse_and_log_det(&a, q)
                .map(|(inv, _)| inv)
                .ok_or_else(|| {
                    Error::Run("mixture of PPCA: singular matrix in the W update".into())
                })?;
            let w_new = mul(&sw, &a_inv, d, q, q);
            // σ²_new = (tr S − tr(M⁻¹ W_newᵀ S W)) / d.
            let wn_sw = mul_tn(&w_new, &sw, d, q, q);
            let mut tr = 0.0;
            for col in 0..q {
                let mut c: Vec<f64> = (0..q).map(|i| wn_sw[i * q + col]).collect();
                cm.solve_in_place(&mut c);
                tr += c[col];
            }
            self.noise_var[m] = ((trace_s - tr) / d as f64).max(floor);
            self.w[m * d * q..(m + 1) * d * q].copy_from_slice(&w_new);
            self.mean[m * d..(m + 1) * d].copy_from_slice(&mu);
        }
        Ok(loglik)
    }
}

/// A fitted mixture of PPCA and the log-likelihood before each EM step (non-decreasing).
#[derive(Clone, Debug)]
pub struct EmFit {
    /// The model after the last step.
    pub model: Mppca,
    /// Log-likelihood before each step; the last entry is that of `model`.
    pub trace: Vec<f64>,
}

/// Fits a mixture of PPCA to the rows of `t` by EM from a seeded k-means start. A decrease of the
/// log-likelihood beyond rounding is an error (it would be a bug).
pub fn fit(t: &Matrix, o: &EmOptions) -> Result<EmFit> {
    let mut model = Mppca::initialise(t, o.k, o.q, o.seed)?;
    let floor = o.noise_floor * mean_variance(t).max(f64::MIN_POSITIVE);
    let mut trace: Vec<f64> = Vec::new();
    for _ in 0..o.max_iter {
        let l = model.em_step(t, floor)?;
        if !l.is_finite() {
            return Err(Error::Run(format!(
                "mixture of PPCA: the log-likelihood became {l} after {} steps",
                trace.len()
            )));
        }
        if let Some(&prev) = trace.last() {
            if l < prev - 1e-9 * prev.abs() {
                return Err(Error::Run(format!(
                    "mixture of PPCA: the log-likelihood decreased from {prev} to {l} at step {}",
                    trace.len()
                )));
            }
            let done = l - prev <= o.tol * t.rows as f64;
            trace.push(l);
            if done {
                break;
            }
        } else {
            trace.push(l);
        }
    }
    let last: f64 = model.log_density(t)?.iter().sum();
    trace.push(last);
    Ok(EmFit { model, trace })
}
