//! VQPCA (Kambhatla & Leen; Winn Algorithm 3.1), the non-probabilistic local-PCA baseline:
//! 1. k-means++ centres from the data (seeded) and each point assigned to the nearest;
//! 2. each cluster's q principal axes U_m about its centre μ_m;
//! 3. each point reassigned to the cluster that reconstructs it best,
//!    e_nm = ‖(t_n − μ_m) − U_m U_mᵀ (t_n − μ_m)‖², and the centres and axes recomputed;
//! 4. repeated until the assignments stop changing.
//!
//! Steps 2 and 3 each lower (or keep) the total reconstruction error Σ_n e_n,s_n: for fixed
//! assignments the centre and the leading principal axes minimise a cluster's error, and for
//! fixed clusters each point takes its smallest error — so the error never rises ([`fit`]).

use occam_nn::data::Pca;

use occam::error::{Error, Result};
use occam::latent::mbpca::kmeans;
use occam::latent::synth::Matrix;

/// A fitted VQPCA: per cluster a centre and q orthonormal axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Vqpca {
    /// Data dimension d.
    pub d: usize,
    /// Number of axes q per cluster.
    pub q: usize,
    /// Centres μ_m, K × d.
    pub centres: Vec<f64>,
    /// Axes U_m, K × q × d (row j of cluster m is its j-th axis).
    pub axes: Vec<f64>,
    /// The cluster of each training point.
    pub labels: Vec<usize>,
    /// The total reconstruction error after each assignment step (non-increasing).
    pub trace: Vec<f64>,
}

impl Vqpca {
    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.centres.len() / self.d
    }

    /// The reconstruction error of `t` by cluster `m`.
    pub fn error(&self, t: &[f64], m: usize) -> f64 {
        let (d, q) = (self.d, self.q);
        let e: Vec<f64> = t
            .iter()
            .zip(&self.centres[m * d..(m + 1) * d])
            .map(|(a, b)| a - b)
            .collect();
        let total: f64 = e.iter().map(|v| v * v).sum();
        let kept: f64 = (0..q)
            .map(|j| {
                let u = &self.axes[(m * q + j) * d..(m * q + j + 1) * d];
                let p: f64 = u.iter().zip(&e).map(|(a, b)| a * b).sum();
                p * p
            })
            .sum();
        (total - kept).max(0.0)
    }

    /// The best cluster of `t` and its reconstruction error.
    pub fn assign(&self, t: &[f64]) -> (usize, f64) {
        (0..self.k())
            .map(|m| (m, self.error(t, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((0, f64::INFINITY))
    }
}

/// Refits each cluster's centre and axes to its points (a cluster with fewer than two points
/// keeps its old ones).
fn refit(model: &mut Vqpca, t: &Matrix) {
    let (d, q) = (model.d, model.q);
    for m in 0..model.k() {
        let rows: Vec<f64> = (0..t.rows)
            .filter(|&i| model.labels[i] == m)
            .flat_map(|i| t.row(i).to_vec())
            .collect();
        if rows.len() < 2 * d {
            // Too few points for d principal axes: only the centre moves.
            if !rows.is_empty() {
                let n = (rows.len() / d) as f64;
                for j in 0..d {
                    model.centres[m * d + j] = rows.chunks_exact(d).map(|r| r[j]).sum::<f64>() / n;
                }
            }
            continue;
        }
        if let Ok(p) = Pca::fit(&rows, d, q) {
            model.centres[m * d..(m + 1) * d].copy_from_slice(&p.mean);
            model.axes[m * q * d..(m + 1) * q * d].copy_from_slice(&p.components);
        }
    }
}

/// Fits VQPCA with `k` clusters of `q` axes to the rows of `t` (seeded; at most `max_iter`
/// reassignments).
pub fn fit(t: &Matrix, k: usize, q: usize, max_iter: usize, seed: u64) -> Result<Vqpca> {
    let (n, d) = (t.rows, t.cols);
    if k == 0 || q == 0 || q >= d || n < 2 * k {
        return Err(Error::Usage(format!(
            "VQPCA: need 1 ≤ q < d and at least 2 points per cluster (k = {k}, q = {q}, data \
             {n} × {d})"
        )));
    }
    let (centres, labels) = kmeans(t, k, 0, seed);
    // Start every cluster's axes at the global ones (replaced by the cluster's own at step 2).
    let global = Pca::fit(&t.values, d, q).map_err(|e| Error::Run(format!("PCA: {e}")))?;
    let mut model = Vqpca {
        d,
        q,
        centres,
        axes: (0..k).flat_map(|_| global.components.clone()).collect(),
        labels,
        trace: Vec::new(),
    };
    refit(&mut model, t);
    for _ in 0..max_iter {
        let assigned: Vec<(usize, f64)> = (0..n).map(|i| model.assign(t.row(i))).collect();
        model.trace.push(assigned.iter().map(|a| a.1).sum());
        let labels: Vec<usize> = assigned.iter().map(|a| a.0).collect();
        if labels == model.labels {
            break;
        }
        model.labels = labels;
        refit(&mut model, t);
    }
    Ok(model)
}
