//! A seeded start for a mixture of linear-Gaussian models (a mixture of Bayesian PCA, Winn §3.3):
//! k-means++ centres refined by a few Lloyd steps, then each cluster's principal axes as its
//! loading matrix W_m (Winn's VQPCA-style start, Algorithm 3.1 steps 1–2) and the mean discarded
//! variance as the noise. Used by `occam::latent::mbpca` (the search's starts) and by the engine's
//! gated q-block when it starts from the data (`engine/gated_linear/start.rs`), so that
//! `occam latent mbpca` and `occam fit` of the same model written in the language start alike.
//!
//! This is plain k-means++ seeding (one candidate per seed) and a fixed number of Lloyd steps,
//! not [`super::kmeans`]'s greedy seeding run to convergence: the mixture-of-PCA search was
//! measured with it, and its starts are kept bit for bit.

use crate::linalg::{LinalgError, PrincipalAxes};
use crate::Rng;
use rand::{Rng as _, SeedableRng};

/// Lloyd steps after the seeding in [`local_pca`].
pub const LOCAL_PCA_STEPS: usize = 10;

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// k-means++ centres (seeded by `seed`) of the `n` rows of `t` (row-major, `d` values each)
/// improved by `steps` Lloyd iterations; returns the centres (k × d) and each row's cluster (ties
/// to the lower label; an emptied cluster keeps its centre).
pub fn kmeans_steps(
    t: &[f64],
    n: usize,
    d: usize,
    k: usize,
    steps: usize,
    seed: u64,
) -> (Vec<f64>, Vec<usize>) {
    assert_eq!(t.len(), n * d, "kmeans_steps: data length");
    let row = |i: usize| &t[i * d..(i + 1) * d];
    let mut rng = Rng::seed_from_u64(seed);
    let mut centres: Vec<f64> = row(rng.random_range(0..n)).to_vec();
    let mut near: Vec<f64> = (0..n).map(|i| dist2(row(i), &centres[..d])).collect();
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
        let c = row(chosen).to_vec();
        for (i, v) in near.iter_mut().enumerate() {
            *v = v.min(dist2(row(i), &c));
        }
        centres.extend(c);
    }
    let mut label = vec![0; n];
    for _ in 0..=steps {
        for (i, l) in label.iter_mut().enumerate() {
            *l = (0..k)
                .min_by(|&a, &b| {
                    dist2(row(i), &centres[a * d..(a + 1) * d])
                        .total_cmp(&dist2(row(i), &centres[b * d..(b + 1) * d]))
                })
                .unwrap_or(0);
        }
        let mut sum = vec![0.0; k * d];
        let mut count = vec![0usize; k];
        for (i, &l) in label.iter().enumerate() {
            count[l] += 1;
            for j in 0..d {
                sum[l * d + j] += row(i)[j];
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

/// The start of [`local_pca`]: clusters, their centres and principal axes, and the noise.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalPca {
    /// Cluster centres, k × d (the offsets μ_m).
    pub centres: Vec<f64>,
    /// Each row's cluster.
    pub labels: Vec<usize>,
    /// W_m, k × d × q: row (m, r) holds the q loadings of data dimension r, column j the j-th
    /// principal axis of cluster m scaled by √(λ_j − σ²) (the PPCA maximum-likelihood W,
    /// Tipping & Bishop), floored at √(10⁻³ λ_1).
    pub w: Vec<f64>,
    /// The noise variance σ²: each cluster's mean discarded eigenvalue (floored at 10⁻⁶ λ_1),
    /// averaged over the clusters.
    pub noise: f64,
}

/// k-means ([`kmeans_steps`], [`LOCAL_PCA_STEPS`] Lloyd steps, seeded by `seed`) of the `n` rows
/// of `t` into `k` clusters, then each cluster's q leading principal axes (the whole data's when
/// a cluster has fewer than 2 rows: `rows` below holds a cluster's values, 2d of them for 2 rows;
/// a cluster of 2 to d rows gives a rank-deficient fit whose discarded variance falls to the
/// floor of 10⁻⁶ λ₁ — kept as the MBPCA search has always done, so its results stay bit for bit).
/// Needs 1 ≤ q < d and n ≥ 2 (the caller checks the sizes).
pub fn local_pca(
    t: &[f64],
    n: usize,
    d: usize,
    k: usize,
    q: usize,
    seed: u64,
) -> Result<LocalPca, LinalgError> {
    let (centres, labels) = kmeans_steps(t, n, d, k, LOCAL_PCA_STEPS, seed);
    let global = PrincipalAxes::fit(t, d, d)?;
    let mut w = vec![0.0; k * d * q];
    let mut noise = 0.0;
    for m in 0..k {
        let rows: Vec<f64> = (0..n)
            .filter(|&i| labels[i] == m)
            .flat_map(|i| t[i * d..(i + 1) * d].to_vec())
            .collect();
        let pca = if rows.len() >= 2 * d {
            PrincipalAxes::fit(&rows, d, d).unwrap_or_else(|_| global.clone())
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
    Ok(LocalPca {
        centres,
        labels,
        w,
        noise,
    })
}
