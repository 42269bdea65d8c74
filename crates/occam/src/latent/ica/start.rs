//! The seeded start of a Bayesian ICA fit (Lawrence starts W by PCA, §6.5.5).

use occam_core::Rng;
use occam_nn::data::Pca;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

use super::{Priors, MAX_COMPONENTS, MAX_RESPONSIBILITIES};
use crate::error::{Error, Result};
use crate::latent::dense::mul;
use crate::latent::synth::Matrix;

/// Where every factor of q starts: q(z_ni) uniform, q(W) and q(μ) point masses, the Gammas and
/// Dirichlets as below (q(x_n) is the first update of a sweep, so it needs no start).
#[derive(Clone, Debug, PartialEq)]
pub struct Start {
    /// Model sources I.
    pub i: usize,
    /// Components per source, M.
    pub m: usize,
    /// Dirichlet parameters of q(π_i), I × M.
    pub pi_u: Vec<f64>,
    /// Shapes of q(g_ik), I × M.
    pub g_shape: Vec<f64>,
    /// Rates of q(g_ik), I × M.
    pub g_rate: Vec<f64>,
    /// ⟨W⟩, P × I.
    pub w: Vec<f64>,
    /// ⟨μ⟩, length P.
    pub mu: Vec<f64>,
    /// Shapes of q(α_i).
    pub alpha_shape: Vec<f64>,
    /// Rates of q(α_i).
    pub alpha_rate: Vec<f64>,
    /// Shape of q(β).
    pub beta_shape: f64,
    /// Rate of q(β).
    pub beta_rate: f64,
}

impl Start {
    /// A seeded start on data `t` with `sources` model sources of `components` components each
    /// (Lawrence starts W by PCA): W = the leading principal axes scaled to their standard
    /// deviations, the signal subspace's turned by a random rotation drawn from `seed` (PCA
    /// alone leaves the sources mixed; restarts try different turns); unit-variance sources
    /// whose components start at variances spread around 1; noise variance from the discarded
    /// principal variances (or 1 % of the smallest kept one).
    pub fn new(
        t: &Matrix,
        sources: usize,
        components: usize,
        priors: Priors,
        seed: u64,
    ) -> Result<Start> {
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
        let alpha_rate = (0..i)
            .map(|j| {
                let s: f64 = (0..p).map(|row| w[row * i + j].powi(2)).sum();
                priors.alpha.1 + 0.5 * s.max(1e-12)
            })
            .collect();
        Ok(Start {
            i,
            m,
            pi_u: vec![priors.u0 + n as f64 / m as f64; i * m],
            g_shape,
            g_rate,
            w,
            mu: pca.mean.clone(),
            alpha_shape: vec![priors.alpha.0 + 0.5 * p as f64; i],
            alpha_rate,
            beta_shape,
            beta_rate: beta_shape * noise,
        })
    }
}
