//! A seeded starting point for a mixture of Bayesian PCA: k-means++ centres refined by a few
//! Lloyd steps, then each cluster's principal axes as its W_m (Winn's VQPCA-style start,
//! Algorithm 3.1 steps 1–2), the mean discarded variance as the noise, and q(α) from those W_m.

use occam_core::kmeans::{kmeans_steps, local_pca};

use super::{Mbpca, Priors};
use crate::error::{Error, Result};
use crate::latent::synth::Matrix;

/// k-means++ centres (seeded) improved by `steps` Lloyd iterations; returns the centres (k × d)
/// and each point's cluster ([`occam_core::kmeans::kmeans_steps`]).
pub fn kmeans(t: &Matrix, k: usize, steps: usize, seed: u64) -> (Vec<f64>, Vec<usize>) {
    kmeans_steps(&t.values, t.rows, t.cols, k, steps, seed)
}

/// A starting q for `k` components with `q` latent dimensions (1 ≤ q < d) on data `t`, seeded.
pub fn initialise(t: &Matrix, k: usize, q: usize, priors: Priors, seed: u64) -> Result<Mbpca> {
    let (n, d) = (t.rows, t.cols);
    if k == 0 || q == 0 || q >= d || n < 2 * k {
        return Err(Error::Usage(format!(
            "mixture of Bayesian PCA: need 1 ≤ q < d and at least 2 points per component \
             (k = {k}, q = {q}, data {n} × {d})"
        )));
    }
    if let Some(i) = t.values.iter().position(|v| !v.is_finite()) {
        return Err(Error::Usage(format!(
            "mixture of Bayesian PCA: data row {}, column {} is not a finite number",
            i / d + 1,
            i % d + 1
        )));
    }
    // k-means and each cluster's principal axes (`occam_core::kmeans::local_pca`, also the
    // start of the gated q-block in `occam fit`).
    let start =
        local_pca(&t.values, n, d, k, q, seed).map_err(|e| Error::Run(format!("PCA: {e}")))?;
    let (centres, label, w, noise) = (start.centres, start.labels, start.w, start.noise);
    let mut r = vec![0.0; n * k];
    for (i, &l) in label.iter().enumerate() {
        r[i * k + l] = 1.0;
    }
    let mut x_cov = vec![0.0; k * q * q];
    for m in 0..k {
        for i in 0..q {
            x_cov[m * q * q + i * q + i] = 1.0;
        }
    }
    let mut model = Mbpca {
        d,
        q,
        k,
        priors,
        u: vec![priors.u0; k],
        mu: centres,
        mu_var: vec![0.0; k],
        w,
        w_cov: vec![0.0; k * q * q],
        alpha_shape: vec![1.0; q],
        alpha_rate: vec![1.0; q],
        tau_shape: priors.a_tau + 0.5 * (n * d) as f64,
        tau_rate: 0.0,
        x: vec![0.0; n * k * q],
        x_cov,
        r,
    };
    model.tau_rate = model.tau_shape * noise;
    start_alpha(&mut model);
    model.u = model.counts().iter().map(|c| priors.u0 + c).collect();
    Ok(model)
}

/// q(α_i) = Γ(a_α + K d/2, b_α + ½ Σ_m ‖w_mi‖²) of the starting W (a point mass): (3.26) with α
/// shared by every component.
fn start_alpha(m: &mut Mbpca) {
    let (d, q, k) = (m.d, m.q, m.k);
    for i in 0..q {
        let mut s = 0.0;
        for c in 0..k {
            s += (0..d)
                .map(|r| m.w[(c * d + r) * q + i].powi(2))
                .sum::<f64>();
        }
        m.alpha_shape[i] = m.priors.a_alpha + 0.5 * (k * d) as f64;
        m.alpha_rate[i] = m.priors.b_alpha + 0.5 * s;
    }
}
