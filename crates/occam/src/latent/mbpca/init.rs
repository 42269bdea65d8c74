//! A seeded starting point for a mixture of Bayesian PCA: k-means++ centres refined by a few
//! Lloyd steps, then each cluster's principal axes as its W_m (Winn's VQPCA-style start,
//! Algorithm 3.1 steps 1–2), the mean discarded variance as the noise, and q(α) from those W_m.

use occam_core::Rng;
use occam_nn::data::Pca;
use rand::{Rng as _, SeedableRng};

use super::{Mbpca, Priors};
use crate::error::{Error, Result};
use crate::latent::synth::Matrix;

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// k-means++ centres (seeded) improved by `steps` Lloyd iterations; returns the centres (k × d)
/// and each point's cluster.
pub fn kmeans(t: &Matrix, k: usize, steps: usize, seed: u64) -> (Vec<f64>, Vec<usize>) {
    let (n, d) = (t.rows, t.cols);
    let mut rng = Rng::seed_from_u64(seed);
    let mut centres: Vec<f64> = t.row(rng.random_range(0..n)).to_vec();
    let mut near: Vec<f64> = (0..n).map(|i| dist2(t.row(i), &centres[..d])).collect();
    while centres.len() < k * d {
        let total: f64 = near.iter().sum();
        let mut pick = rng.random::<f64>() * total;
        let mut chosen = n - 1;
        for (i, w) in near.iter().enumerate() {
            if pick < *w {
                chosen = i;
                break;
            }
            pick -= w;
        }
        let c = t.row(chosen).to_vec();
        for (i, v) in near.iter_mut().enumerate() {
            *v = v.min(dist2(t.row(i), &c));
        }
        centres.extend(c);
    }
    let mut label = vec![0; n];
    for _ in 0..=steps {
        for (i, l) in label.iter_mut().enumerate() {
            *l = (0..k)
                .min_by(|&a, &b| {
                    dist2(t.row(i), &centres[a * d..(a + 1) * d])
                        .total_cmp(&dist2(t.row(i), &centres[b * d..(b + 1) * d]))
                })
                .unwrap_or(0);
        }
        let mut sum = vec![0.0; k * d];
        let mut count = vec![0usize; k];
        for (i, &l) in label.iter().enumerate() {
            count[l] += 1;
            for j in 0..d {
                sum[l * d + j] += t.row(i)[j];
            }
        }
        for m in 0..k {
            if count[m] > 0 {
                for j in 0..d {
                    centres[m * d + j] = sum[m * d + j] / count[m] as f64;
                }
            }
        }
    }
    (centres, label)
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
    let (centres, label) = kmeans(t, k, 10, seed);
    let global = Pca::fit(&t.values, d, d).map_err(|e| Error::Run(format!("PCA: {e}")))?;
    let mut w = vec![0.0; k * d * q];
    let mut noise = 0.0;
    for m in 0..k {
        let rows: Vec<f64> = (0..n)
            .filter(|&i| label[i] == m)
            .flat_map(|i| t.row(i).to_vec())
            .collect();
        let pca = if rows.len() >= 2 * d {
            Pca::fit(&rows, d, d).unwrap_or_else(|_| global.clone())
        } else {
            global.clone()
        };
        let discarded = pca.variances[q..].iter().sum::<f64>() / (d - q) as f64;
        noise += discarded.max(1e-6 * pca.variances[0]) / k as f64;
        for j in 0..q {
            let scale = (pca.variances[j] - discarded)
                .max(1e-3 * pca.variances[0])
                .sqrt();
            for r in 0..d {
                w[(m * d + r) * q + j] = pca.components[j * d + r] * scale;
            }
        }
    }
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
