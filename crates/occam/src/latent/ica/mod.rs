//! Bayesian ICA (Lawrence §6.5.1–6.5.6, (6.1)–(6.29) as corrected) with **q(x_n) joint over the
//! sources**, by hand-derived variational updates.
//!
//! Model: t_n = W x_n + μ + ε, ε ~ N(0, β⁻¹ I_P) (6.2, whose printed exp(+…) is a sign slip);
//! each source x_ni has a mixture-of-Gaussians prior Σ_k π_ik N(0, g_ik⁻¹) (6.1, 6.4, zero means,
//! Winn §4.8's variant), written with indicators z_ni ~ Discrete(π_i), π_i ~ Dirichlet(u₀),
//! g_ik ~ Γ(a_g, b_g); ARD on W's columns, w_pi ~ N(0, α_i⁻¹) with α_i ~ Γ(a_α, b_α) (6.9–6.10);
//! μ_p ~ N(0, τ⁻¹) (6.11); β ~ Γ(a_β, b_β).
//!
//! q = Π_n q(x_n) Π_{n,i} q(z_ni) Π_i q(π_i) Π_{i,k} q(g_ik) q(W) q(μ) q(α) q(β). Lawrence keeps
//! q(x_n) a mixture over all component combinations (App. D), whose entropy has no closed form,
//! so his bound cannot be computed; here the indicators get their own factors, which keeps
//! q(x_n) a full-covariance Gaussian (the sources are updated jointly, so strongly coupled
//! sources do not crawl by coordinate ascent as in a fully factorised q) and the bound exact.
//! Updates (each the exact maximiser of the bound over its factor):
//!
//! * q(x_n) = N(m_n, Σ_n): Σ_n = (diag_i Σ_k ρ_nik⟨g_ik⟩ + ⟨β⟩⟨WᵀW⟩)⁻¹,
//!   m_n = Σ_n ⟨β⟩⟨W⟩ᵀ(t_n − ⟨μ⟩) (App. D's D_m and f_m with the component fixed to its
//!   expectation);
//! * q(z_ni = k) = ρ_nik ∝ exp(⟨ln π_ik⟩ + ½⟨ln g_ik⟩ − ½⟨g_ik⟩⟨x_ni²⟩);
//! * q(g_ik) = Γ(a_g + ½ Σ_n ρ_nik, b_g + ½ Σ_n ρ_nik ⟨x_ni²⟩); q(π_i) = Dir(u₀ + Σ_n ρ_ni·);
//! * q(μ) = N(m_μ, Σ_μ I), Σ_μ = (τ + N⟨β⟩)⁻¹, m_μ = Σ_μ⟨β⟩ Σ_n (t_n − ⟨W⟩m_n) (6.23–6.24);
//! * q(w_p) = N(m_w^(p), Σ_w), Σ_w = (diag⟨α⟩ + ⟨β⟩ Σ_n ⟨x_n x_nᵀ⟩)⁻¹,
//!   m_w^(p) = Σ_w ⟨β⟩ Σ_n m_n (t_np − ⟨μ_p⟩) — the printed (6.21) drops the ⟨β⟩;
//! * q(α_i) = Γ(a_α + P/2, b_α + ½ Σ_p ⟨w_pi²⟩);
//! * q(β) = Γ(a_β + NP/2, b_β + ½ Σ_n E‖t_n − W x_n − μ‖²), the expectation written out as
//!   ‖t_n − ⟨μ⟩‖² + P Σ_μ + tr(⟨WᵀW⟩⟨x_n x_nᵀ⟩) − 2 (t_n − ⟨μ⟩)ᵀ⟨W⟩m_n (the printed (6.28)
//!   merges two of these terms).

mod bound;
#[cfg(test)]
mod tests;

use occam_core::linalg::{transpose, Cholesky};
use occam_core::special::{digamma, log_sum_exp};
use occam_core::Rng;
use occam_nn::data::Pca;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

use super::dense::{mul, mul_tn};
use super::synth::Matrix;
use crate::error::{Error, Result};

/// The hyper-parameters (every Gamma 10⁻³, 10⁻³; τ = 10⁻³; a flat Dirichlet).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Priors {
    /// Shape and rate of the ARD precisions' prior.
    pub alpha: (f64, f64),
    /// Shape and rate of the noise precision's prior.
    pub beta: (f64, f64),
    /// Shape and rate of the source components' precisions' prior.
    pub g: (f64, f64),
    /// Precision τ of the prior of each μ_p.
    pub tau: f64,
    /// Dirichlet concentration u₀ of each component weight.
    pub u0: f64,
}

impl Default for Priors {
    fn default() -> Self {
        Priors {
            alpha: (1e-3, 1e-3),
            beta: (1e-3, 1e-3),
            g: (1e-3, 1e-3),
            tau: 1e-3,
            u0: 1.0,
        }
    }
}

/// The variational posterior of a Bayesian ICA model.
#[derive(Clone, Debug)]
pub struct Ica {
    /// Sensors P.
    pub p: usize,
    /// Model sources I.
    pub i: usize,
    /// Components per source's mixture, M.
    pub m: usize,
    /// The priors.
    pub priors: Priors,
    /// Means m_n of q(x_n), N × I.
    pub x: Vec<f64>,
    /// Covariances Σ_n of q(x_n), N × I × I.
    pub x_cov: Vec<f64>,
    /// ρ_nik = q(z_ni = k), N × I × M.
    pub rho: Vec<f64>,
    /// Dirichlet parameters of q(π_i), I × M.
    pub pi_u: Vec<f64>,
    /// Shapes of q(g_ik), I × M.
    pub g_shape: Vec<f64>,
    /// Rates of q(g_ik), I × M.
    pub g_rate: Vec<f64>,
    /// Means of the rows of q(W), P × I.
    pub w: Vec<f64>,
    /// Covariance Σ_w shared by the rows of W, I × I.
    pub w_cov: Vec<f64>,
    /// Mean of q(μ), length P.
    pub mu: Vec<f64>,
    /// Variance Σ_μ of each coordinate of q(μ).
    pub mu_var: f64,
    /// Shapes of q(α_i).
    pub alpha_shape: Vec<f64>,
    /// Rates of q(α_i).
    pub alpha_rate: Vec<f64>,
    /// Shape of q(β).
    pub beta_shape: f64,
    /// Rate of q(β).
    pub beta_rate: f64,
}

fn chol(a: &[f64], d: usize, what: &str) -> Result<Cholesky> {
    Cholesky::new(a, d).ok_or_else(|| {
        Error::Run(format!(
            "Bayesian ICA: the precision matrix of {what} is not positive definite"
        ))
    })
}

/// The most mixture components per source (each source's posterior over its components is a
/// responsibility per data point; Lawrence uses 2 to 5).
pub const MAX_COMPONENTS: usize = 64;
/// The most seeded starts of [`fit`] (each is a whole fit).
pub const MAX_RESTARTS: usize = 10_000;
/// The most sweeps per start.
pub const MAX_SWEEPS: usize = 100_000_000;
/// The most responsibilities a fit may hold (data points × sources × components), 2 GiB of numbers.
pub const MAX_RESPONSIBILITIES: usize = 1 << 28;

/// Checks `components`, `restarts` and `max_iter` against their caps (what `occam latent ica`
/// checks at parse time; the messages name the flags).
pub fn check_settings(components: usize, restarts: usize, max_iter: usize) -> Result<()> {
    for (flag, v, lo, hi) in [
        ("--components", components, 1, MAX_COMPONENTS),
        ("--restarts", restarts, 1, MAX_RESTARTS),
        ("--max-iter", max_iter, 1, MAX_SWEEPS),
    ] {
        if !(lo..=hi).contains(&v) {
            return Err(Error::Usage(format!(
                "{flag} must be between {lo} and {hi}, got {v}"
            )));
        }
    }
    Ok(())
}

impl Ica {
    /// A seeded start on data `t` with `sources` model sources of `components` components each
    /// (Lawrence starts W by PCA): W = the leading principal axes scaled to their standard
    /// deviations, the signal subspace's turned by a random rotation drawn from `seed` (PCA
    /// alone leaves the sources mixed; restarts try different turns); unit-variance sources
    /// whose components start at variances spread around 1; noise variance from the discarded
    /// principal variances (or 1 % of the smallest kept one).
    pub fn initialise(
        t: &Matrix,
        sources: usize,
        components: usize,
        priors: Priors,
        seed: u64,
    ) -> Result<Ica> {
        let (n, p) = (t.rows, t.cols);
        if sources == 0 || sources > p || components == 0 || n < 2 {
            return Err(Error::Usage(format!(
                "Bayesian ICA: need 1 ≤ sources ≤ sensors, at least one component and two data \
                 points (sources = {sources}, components = {components}, data {n} × {p})"
            )));
        }
        if components > MAX_COMPONENTS {
            return Err(Error::Usage(format!(
                "Bayesian ICA: components must be at most {MAX_COMPONENTS}, got {components}"
            )));
        }
        if n.checked_mul(sources)
            .and_then(|v| v.checked_mul(components))
            .is_none_or(|v| v > MAX_RESPONSIBILITIES)
        {
            return Err(Error::Usage(format!(
                "Bayesian ICA: {n} data points × {sources} sources × {components} components is \
                 more than the limit of {MAX_RESPONSIBILITIES} responsibilities (fewer sources or components)"
            )));
        }
        if let Some(k) = t.values.iter().position(|v| !v.is_finite()) {
            return Err(Error::Usage(format!(
                "Bayesian ICA: data row {}, column {} is not a finite number",
                k / p + 1,
                k % p + 1
            )));
        }
        let i = sources;
        let pca = Pca::fit(&t.values, p, p).map_err(|e| Error::Run(format!("PCA: {e}")))?;
        let noise = if i < p {
            pca.variances[i..].iter().sum::<f64>() / (p - i) as f64
        } else {
            0.01 * pca.variances[i - 1]
        }
        .max(1e-9 * pca.variances[0]);
        // A random rotation R (Gram–Schmidt of a Gaussian matrix) of the leading `sig` columns,
        // those whose principal variance is above 10⁻³ of the largest (the signal subspace);
        // W = U Λ^½ R. The other columns start as the small discarded directions, for ARD to
        // switch off.
        let sig = pca.variances[..i]
            .iter()
            .filter(|&&v| v > 1e-3 * pca.variances[0])
            .count()
            .max(1);
        let mut rng = Rng::seed_from_u64(seed);
        let mut r = vec![0.0; i * i];
        for a in 0..i {
            r[a * i + a] = 1.0;
        }
        for a in 0..sig {
            for c in 0..sig {
                r[a * i + c] = StandardNormal.sample(&mut rng);
            }
        }
        for a in 0..sig {
            for b in 0..a {
                let dot: f64 = (0..sig).map(|c| r[a * i + c] * r[b * i + c]).sum();
                for c in 0..sig {
                    r[a * i + c] -= dot * r[b * i + c];
                }
            }
            let norm = (0..sig).map(|c| r[a * i + c].powi(2)).sum::<f64>().sqrt();
            (0..sig).for_each(|c| r[a * i + c] /= norm);
        }
        let mut u = vec![0.0; p * i];
        for j in 0..i {
            let sd = (pca.variances[j] - noise)
                .max(1e-6 * pca.variances[0])
                .sqrt();
            for row in 0..p {
                u[row * i + j] = pca.components[j * p + row] * sd;
            }
        }
        let w = mul(&u, &r, p, i, i);
        let m = components;
        let (g_shape, g_rate): (Vec<f64>, Vec<f64>) = (0..i * m)
            .map(|c| {
                // Component variances 0.2 … 5 (log-spaced), shape 1 + N/(2M).
                let spread = if m > 1 {
                    (c % m) as f64 / (m - 1) as f64
                } else {
                    0.5
                };
                let var = (0.2f64.ln() + spread * 25f64.ln()).exp();
                let shape = priors.g.0 + 0.5 * n as f64 / m as f64;
                (shape, shape * var)
            })
            .unzip();
        let beta_shape = priors.beta.0 + 0.5 * (n * p) as f64;
        let mut ica = Ica {
            p,
            i,
            m,
            priors,
            x: vec![0.0; n * i],
            x_cov: vec![0.0; n * i * i],
            rho: vec![1.0 / m as f64; n * i * m],
            pi_u: vec![priors.u0 + n as f64 / m as f64; i * m],
            g_shape,
            g_rate,
            w,
            w_cov: vec![0.0; i * i],
            mu: pca.mean.clone(),
            mu_var: 0.0,
            alpha_shape: vec![priors.alpha.0 + 0.5 * p as f64; i],
            alpha_rate: vec![0.0; i],
            beta_shape,
            beta_rate: beta_shape * noise,
        };
        for j in 0..i {
            let s: f64 = (0..p).map(|row| ica.w[row * i + j].powi(2)).sum();
            ica.alpha_rate[j] = priors.alpha.1 + 0.5 * s.max(1e-12);
        }
        Ok(ica)
    }

    fn beta(&self) -> f64 {
        self.beta_shape / self.beta_rate
    }

    /// ⟨WᵀW⟩ = ⟨W⟩ᵀ⟨W⟩ + P Σ_w (I × I).
    fn wtw(&self) -> Vec<f64> {
        let mut a = mul_tn(&self.w, &self.w, self.p, self.i, self.i);
        a.iter_mut()
            .zip(&self.w_cov)
            .for_each(|(v, c)| *v += self.p as f64 * c);
        a
    }

    /// ⟨g_ik⟩ and ⟨ln g_ik⟩, I × M each.
    fn g_moments(&self) -> (Vec<f64>, Vec<f64>) {
        let g = self
            .g_shape
            .iter()
            .zip(&self.g_rate)
            .map(|(a, b)| a / b)
            .collect();
        let ln_g = self
            .g_shape
            .iter()
            .zip(&self.g_rate)
            .map(|(a, b)| digamma(*a) - b.ln())
            .collect();
        (g, ln_g)
    }

    /// q(x_n) for every n.
    pub fn update_x(&mut self, t: &Matrix) -> Result<()> {
        let (n, p, i, m) = (t.rows, self.p, self.i, self.m);
        let beta = self.beta();
        let bwtw: Vec<f64> = self.wtw().iter().map(|v| beta * v).collect();
        let (g, _) = self.g_moments();
        let centred: Vec<f64> = t
            .values
            .chunks_exact(p)
            .flat_map(|row| row.iter().zip(&self.mu).map(|(a, b)| a - b))
            .collect();
        // b_n = ⟨β⟩⟨W⟩ᵀ(t_n − ⟨μ⟩), all n at once.
        let b = mul(&centred, &self.w, n, p, i);
        let mut a = vec![0.0; i * i];
        for k in 0..n {
            a.copy_from_slice(&bwtw);
            for s in 0..i {
                let lam: f64 = (0..m)
                    .map(|c| self.rho[(k * i + s) * m + c] * g[s * m + c])
                    .sum();
                a[s * i + s] += lam;
            }
            let c = chol(&a, i, "q(x_n)")?;
            c.inverse_into(&mut self.x_cov[k * i * i..(k + 1) * i * i]);
            let x = &mut self.x[k * i..(k + 1) * i];
            for (v, bv) in x.iter_mut().zip(&b[k * i..(k + 1) * i]) {
                *v = beta * bv;
            }
            c.solve_in_place(x);
        }
        Ok(())
    }

    /// ⟨x_ni²⟩ = m_ni² + (Σ_n)_ii, N × I.
    fn x_sq(&self) -> Vec<f64> {
        let i = self.i;
        (0..self.x.len())
            .map(|c| {
                let (k, s) = (c / i, c % i);
                self.x[c].powi(2) + self.x_cov[k * i * i + s * i + s]
            })
            .collect()
    }

    /// q(z_ni) for every n and i.
    pub fn update_z(&mut self) {
        let (i, m) = (self.i, self.m);
        let (g, ln_g) = self.g_moments();
        let ln_pi = self.ln_pi();
        let xsq = self.x_sq();
        let mut l = vec![0.0; m];
        for (c, rho) in self.rho.chunks_exact_mut(m).enumerate() {
            let s = c % i;
            for k in 0..m {
                l[k] = ln_pi[s * m + k] + 0.5 * ln_g[s * m + k] - 0.5 * g[s * m + k] * xsq[c];
            }
            let lse = log_sum_exp(&l);
            for (r, v) in rho.iter_mut().zip(&l) {
                *r = (v - lse).exp();
            }
        }
    }

    /// ⟨ln π_ik⟩, I × M.
    fn ln_pi(&self) -> Vec<f64> {
        let m = self.m;
        self.pi_u
            .chunks_exact(m)
            .flat_map(|u| {
                let total = digamma(u.iter().sum());
                u.iter().map(move |v| digamma(*v) - total)
            })
            .collect()
    }

    /// q(g_ik) and q(π_i).
    pub fn update_sources_prior(&mut self) {
        let (i, m) = (self.i, self.m);
        let xsq = self.x_sq();
        let mut count = vec![0.0; i * m];
        let mut sq = vec![0.0; i * m];
        for (c, rho) in self.rho.chunks_exact(m).enumerate() {
            let s = c % i;
            for k in 0..m {
                count[s * m + k] += rho[k];
                sq[s * m + k] += rho[k] * xsq[c];
            }
        }
        for c in 0..i * m {
            self.g_shape[c] = self.priors.g.0 + 0.5 * count[c];
            self.g_rate[c] = self.priors.g.1 + 0.5 * sq[c];
            self.pi_u[c] = self.priors.u0 + count[c];
        }
    }

    /// q(μ) (6.23–6.24).
    pub fn update_mu(&mut self, t: &Matrix) {
        let (n, p, i) = (t.rows, self.p, self.i);
        let beta = self.beta();
        self.mu_var = 1.0 / (self.priors.tau + n as f64 * beta);
        let wx = mul(&self.x, &transpose(&self.w, p, i), n, i, p);
        for j in 0..p {
            let s: f64 = (0..n).map(|k| t.values[k * p + j] - wx[k * p + j]).sum();
            self.mu[j] = self.mu_var * beta * s;
        }
    }

    /// q(W) (6.19–6.21 corrected).
    pub fn update_w(&mut self, t: &Matrix) -> Result<()> {
        let (n, p, i) = (t.rows, self.p, self.i);
        let beta = self.beta();
        let mut a = mul_tn(&self.x, &self.x, n, i, i);
        for k in 0..n {
            a.iter_mut()
                .zip(&self.x_cov[k * i * i..(k + 1) * i * i])
                .for_each(|(v, c)| *v += c);
        }
        a.iter_mut().for_each(|v| *v *= beta);
        for s in 0..i {
            a[s * i + s] += self.alpha_shape[s] / self.alpha_rate[s];
        }
        let c = chol(&a, i, "q(W)")?;
        c.inverse_into(&mut self.w_cov);
        let centred: Vec<f64> = t
            .values
            .chunks_exact(p)
            .flat_map(|row| row.iter().zip(&self.mu).map(|(a, b)| a - b))
            .collect();
        // Row p of ⟨W⟩ = Σ_w ⟨β⟩ Σ_n m_n (t_np − ⟨μ_p⟩): ⟨W⟩ = ⟨β⟩ (Tcᵀ X) Σ_w.
        let tx = mul_tn(&centred, &self.x, n, p, i);
        let w = mul(&tx, &self.w_cov, p, i, i);
        self.w = w.iter().map(|v| beta * v).collect();
        Ok(())
    }

    /// q(α_i).
    pub fn update_alpha(&mut self) {
        let (p, i) = (self.p, self.i);
        for s in 0..i {
            let w2: f64 = (0..p).map(|r| self.w[r * i + s].powi(2)).sum::<f64>()
                + p as f64 * self.w_cov[s * i + s];
            self.alpha_shape[s] = self.priors.alpha.0 + 0.5 * p as f64;
            self.alpha_rate[s] = self.priors.alpha.1 + 0.5 * w2;
        }
    }

    /// Σ_n E‖t_n − W x_n − μ‖² under q.
    fn residual(&self, t: &Matrix) -> f64 {
        let (n, p, i) = (t.rows, self.p, self.i);
        let wtw = self.wtw();
        let mut s = p as f64 * self.mu_var * n as f64;
        let centred: Vec<f64> = t
            .values
            .chunks_exact(p)
            .flat_map(|row| row.iter().zip(&self.mu).map(|(a, b)| a - b))
            .collect();
        s += centred.iter().map(|v| v * v).sum::<f64>();
        let b = mul(&centred, &self.w, n, p, i);
        let xw = mul(&self.x, &wtw, n, i, i);
        for k in 0..n {
            let x = &self.x[k * i..(k + 1) * i];
            let cov = &self.x_cov[k * i * i..(k + 1) * i * i];
            s += (0..i * i).map(|c| wtw[c] * cov[c]).sum::<f64>();
            s += (0..i)
                .map(|c| x[c] * (xw[k * i + c] - 2.0 * b[k * i + c]))
                .sum::<f64>();
        }
        s
    }

    /// q(β).
    pub fn update_beta(&mut self, t: &Matrix) {
        self.beta_shape = self.priors.beta.0 + 0.5 * (t.rows * self.p) as f64;
        self.beta_rate = self.priors.beta.1 + 0.5 * self.residual(t);
    }

    /// One sweep (x, z, the sources' priors, μ, W, α, β); returns the bound after it.
    pub fn sweep(&mut self, t: &Matrix) -> Result<f64> {
        self.update_x(t)?;
        self.update_z();
        self.update_sources_prior();
        self.update_mu(t);
        self.update_w(t)?;
        self.update_alpha();
        self.update_beta(t);
        Ok(self.bound(t))
    }

    /// Sweeps until the bound changes by less than `tol` per data value or `max_iter` sweeps;
    /// returns the bound after each. A decrease beyond rounding is an error (it would be a bug).
    pub fn run(&mut self, t: &Matrix, max_iter: usize, tol: f64) -> Result<Vec<f64>> {
        if t.cols != self.p || t.rows * self.i != self.x.len() {
            return Err(Error::Usage(format!(
                "Bayesian ICA: the model was set up for {} × {} data, got {} × {}",
                self.x.len() / self.i.max(1),
                self.p,
                t.rows,
                t.cols
            )));
        }
        let mut trace: Vec<f64> = Vec::new();
        let values = (t.rows * t.cols) as f64;
        for _ in 0..max_iter {
            let b = self.sweep(t)?;
            if !b.is_finite() {
                return Err(Error::Run(format!(
                    "Bayesian ICA: the bound became {b} after {} sweeps",
                    trace.len() + 1
                )));
            }
            if let Some(&prev) = trace.last() {
                if b < prev - 1e-9 * prev.abs().max(1.0) {
                    return Err(Error::Run(format!(
                        "Bayesian ICA: the bound decreased from {prev} to {b} at sweep {}",
                        trace.len() + 1
                    )));
                }
                trace.push(b);
                if (b - prev).abs() <= tol * values {
                    break;
                }
            } else {
                trace.push(b);
            }
        }
        Ok(trace)
    }

    /// The relevance 1/⟨α_i⟩ of each source.
    pub fn relevance(&self) -> Vec<f64> {
        self.alpha_rate
            .iter()
            .zip(&self.alpha_shape)
            .map(|(b, a)| b / a)
            .collect()
    }

    /// ⟨α_i⟩ of each source.
    pub fn alpha(&self) -> Vec<f64> {
        self.alpha_shape
            .iter()
            .zip(&self.alpha_rate)
            .map(|(a, b)| a / b)
            .collect()
    }

    /// The posterior means of source `s` over the data points.
    pub fn source(&self, s: usize) -> Vec<f64> {
        self.x.iter().skip(s).step_by(self.i).copied().collect()
    }
}

/// The best of `restarts` seeded fits (seeds `seed`, `seed + 1`, …) by converged bound.
pub fn fit(
    t: &Matrix,
    sources: usize,
    components: usize,
    (restarts, max_iter, tol): (usize, usize, f64),
    seed: u64,
) -> Result<(Ica, Vec<f64>)> {
    if restarts > MAX_RESTARTS {
        return Err(Error::Usage(format!(
            "Bayesian ICA: restarts must be at most {MAX_RESTARTS}, got {restarts}"
        )));
    }
    let mut best: Option<(Ica, Vec<f64>)> = None;
    for r in 0..restarts.max(1) as u64 {
        let mut m = Ica::initialise(
            t,
            sources,
            components,
            Priors::default(),
            seed.wrapping_add(r),
        )?;
        let trace = m.run(t, max_iter, tol)?;
        let b = trace.last().copied().unwrap_or(f64::NEG_INFINITY);
        if best
            .as_ref()
            .is_none_or(|(_, tr)| tr.last().is_none_or(|&x| b > x))
        {
            best = Some((m, trace));
        }
    }
    best.ok_or_else(|| Error::Run("Bayesian ICA: no fit".into()))
}
