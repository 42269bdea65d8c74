//! Model-order search for a mixture of Bayesian PCA, driven by the bound (Winn §3.3 names the
//! moves, after Ueda et al.'s SMEM and Ghahramani & Beal, without details; these are ours):
//!
//! * **delete** every component whose expected number of points Σ_n r_nm has collapsed below
//!   `min_count`, then re-converge;
//! * **split** a component, the worst-fitting first (lowest mean ℓ_nm per point it owns): a copy
//!   is added, the two means moved ±½ standard deviation along the principal axis of the points
//!   the component owns, each given half its weight; then re-converge.
//!
//! A change is kept only when the converged bound rises. When no split of the `tries` worst
//! components raises it, a fresh seeded start with one more component is tried (a split can
//! lead into a worse local optimum than a new start, as on the sphere at K = 2); the search
//! ends when that fails too, or at `max_k` components.

use super::{initialise, Mbpca, Priors};
use crate::error::Result;
use crate::latent::ard;
use crate::latent::synth::Matrix;

/// Settings of the search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOptions {
    /// Components to start from.
    pub start_k: usize,
    /// The largest number of components tried.
    pub max_k: usize,
    /// Latent dimension q of every component (at most d − 1).
    pub q: usize,
    /// Components (worst first) whose split is tried before the search gives up.
    pub tries: usize,
    /// A component whose expected count falls below this is deleted.
    pub min_count: f64,
    /// Sweeps per convergence.
    pub max_iter: usize,
    /// Relative bound tolerance of a convergence.
    pub tol: f64,
    /// Seed of the starting point.
    pub seed: u64,
    /// The priors.
    pub priors: Priors,
}

impl SearchOptions {
    /// Defaults for `q` latent dimensions: start from one component, at most 30.
    pub fn new(q: usize) -> Self {
        SearchOptions {
            start_k: 1,
            max_k: 30,
            q,
            tries: 3,
            min_count: 1.0,
            max_iter: 500,
            tol: 1e-7,
            seed: 0,
            priors: Priors::default(),
        }
    }
}

/// One move of the search.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Step {
    /// `start`, `delete`, `split` or `restart`.
    pub action: String,
    /// The component split or deleted (index before the move), if any.
    pub component: Option<usize>,
    /// Components after the move.
    pub k: usize,
    /// Converged bound after the move.
    pub bound: f64,
    /// Whether the move was kept.
    pub kept: bool,
}

/// The result of a search.
#[derive(Clone, Debug)]
pub struct Searched {
    /// The best model found.
    pub model: Mbpca,
    /// Its bound.
    pub bound: f64,
    /// Every move tried, in order.
    pub steps: Vec<Step>,
}

impl Searched {
    /// The shared effective dimension: relevances 1/⟨α_i⟩ above a quarter of the largest.
    pub fn effective_dimension(&self) -> usize {
        ard::effective_dimension(&self.model.relevance())
    }

    /// The effective dimension of each component, from its own column variances.
    pub fn component_dimensions(&self) -> Vec<usize> {
        (0..self.model.k)
            .map(|m| ard::effective_dimension(&self.model.component_relevance(m)))
            .collect()
    }

    /// The number of components holding at least `min` expected points.
    pub fn effective_components(&self, min: f64) -> usize {
        self.model.counts().iter().filter(|&&c| c >= min).count()
    }
}

fn converge(model: &mut Mbpca, t: &Matrix, o: &SearchOptions) -> Result<f64> {
    let trace = model.run(t, o.max_iter, o.tol)?;
    Ok(trace.last().copied().unwrap_or(f64::NEG_INFINITY))
}

/// The mean over the points a component owns of ℓ_nm − ⟨ln π_m⟩ at the current q (lower: worse
/// fit), with ℓ_nm = ⟨ln p(t_n | x_n, m)⟩ + ⟨ln p(x_n)⟩ + H[q(x_n | m)] the log of the
/// unnormalised q(s_n = m) of (3.29)–(3.30) (without ⟨ln π_m⟩), the expected squared residual
/// of (3.27) written out; components without points get +∞ (nothing to split).
fn fit_quality(model: &Mbpca, t: &Matrix) -> Vec<f64> {
    let (d, q, k) = (model.d, model.q, model.k);
    let tau = model.tau_shape / model.tau_rate;
    let ln_tau = occam_core::special::gamma_mean_ln(model.tau_shape, model.tau_rate);
    (0..k)
        .map(|m| {
            let wm = &model.w[m * d * q..(m + 1) * d * q];
            let mu = &model.mu[m * d..(m + 1) * d];
            let sx = &model.x_cov[m * q * q..(m + 1) * q * q];
            // ⟨W_mᵀW_m⟩ = ⟨W_m⟩ᵀ⟨W_m⟩ + d Σ_w^(m).
            let mut wtw = vec![0.0; q * q];
            for a in 0..q {
                for b in 0..q {
                    let ww: f64 = (0..d).map(|r| wm[r * q + a] * wm[r * q + b]).sum();
                    wtw[a * q + b] = ww + d as f64 * model.w_cov[m * q * q + a * q + b];
                }
            }
            let logdet = occam_core::linalg::Cholesky::new(sx, q).map_or(0.0, |c| c.log_det());
            let (mut s, mut c) = (0.0, 0.0);
            for n in 0..t.rows {
                let r = model.r[n * k + m];
                if r <= 1e-12 {
                    continue;
                }
                let (tn, xm) = (t.row(n), &model.x[(n * k + m) * q..(n * k + m + 1) * q]);
                let mut res: f64 = tn.iter().zip(mu).map(|(a, b)| (a - b) * (a - b)).sum();
                res += d as f64 * model.mu_var[m];
                for a in 0..q {
                    for b in 0..q {
                        res += wtw[a * q + b] * (sx[b * q + a] + xm[a] * xm[b]);
                    }
                }
                for (j, (tj, mj)) in tn.iter().zip(mu).enumerate() {
                    let wx: f64 = (0..q).map(|a| wm[j * q + a] * xm[a]).sum();
                    res -= 2.0 * (tj - mj) * wx;
                }
                let xx: f64 = (0..q).map(|a| xm[a] * xm[a] + sx[a * q + a]).sum();
                let ell = 0.5 * d as f64 * (ln_tau - occam_core::special::LN_2PI)
                    - 0.5 * tau * res
                    - 0.5 * xx
                    + 0.5 * q as f64
                    + 0.5 * logdet;
                s += r * ell;
                c += r;
            }
            if c > 1e-9 {
                s / c
            } else {
                f64::INFINITY
            }
        })
        .collect()
}

/// Model `model` with component m split in two along the principal axis of its points.
fn split(model: &Mbpca, t: &Matrix, m: usize) -> Mbpca {
    let (d, q, k) = (model.d, model.q, model.k);
    let centre = &model.mu[m * d..(m + 1) * d];
    // Weighted scatter of the component's points about its mean, then its leading eigenvector
    // by power iteration (d is small).
    let mut c = vec![0.0; d * d];
    let mut total = 0.0;
    for n in 0..t.rows {
        let r = model.r[n * k + m];
        total += r;
        let row = t.row(n);
        for i in 0..d {
            for j in 0..d {
                c[i * d + j] += r * (row[i] - centre[i]) * (row[j] - centre[j]);
            }
        }
    }
    c.iter_mut().for_each(|v| *v /= total.max(1e-12));
    let mut v: Vec<f64> = (0..d).map(|i| 1.0 + 0.1 * i as f64).collect();
    let mut lambda = 0.0;
    for _ in 0..100 {
        let next: Vec<f64> = (0..d)
            .map(|i| (0..d).map(|j| c[i * d + j] * v[j]).sum())
            .collect();
        lambda = next.iter().map(|x| x * x).sum::<f64>().sqrt();
        if lambda <= 0.0 {
            break;
        }
        v = next.iter().map(|x| x / lambda).collect();
    }
    let step: Vec<f64> = v.iter().map(|x| 0.5 * lambda.sqrt() * x).collect();
    let n = t.rows;
    let mut out = model.clone();
    out.k = k + 1;
    out.u.push(model.u[m] / 2.0);
    out.u[m] = model.u[m] / 2.0;
    for j in 0..d {
        out.mu[m * d + j] = centre[j] - step[j];
    }
    out.mu.extend((0..d).map(|j| centre[j] + step[j]));
    out.mu_var.push(model.mu_var[m]);
    out.w
        .extend_from_slice(&model.w[m * d * q..(m + 1) * d * q]);
    out.w_cov
        .extend_from_slice(&model.w_cov[m * q * q..(m + 1) * q * q]);
    out.x_cov
        .extend_from_slice(&model.x_cov[m * q * q..(m + 1) * q * q]);
    out.x = Vec::with_capacity(n * (k + 1) * q);
    out.r = Vec::with_capacity(n * (k + 1));
    for i in 0..n {
        out.x
            .extend_from_slice(&model.x[i * k * q..(i + 1) * k * q]);
        out.x
            .extend_from_slice(&model.x[(i * k + m) * q..(i * k + m + 1) * q]);
        out.r.extend_from_slice(&model.r[i * k..(i + 1) * k]);
        out.r.push(0.0);
    }
    out
}

/// Searches the number of components of a mixture of Bayesian PCA on data `t`.
pub fn search(t: &Matrix, o: &SearchOptions) -> Result<Searched> {
    let mut model = initialise(t, o.start_k, o.q, o.priors, o.seed)?;
    let mut bound = converge(&mut model, t, o)?;
    let mut steps = vec![Step {
        action: "start".into(),
        component: None,
        k: model.k,
        bound,
        kept: true,
    }];
    loop {
        // Delete collapsed components (all at once, highest index first).
        let counts = model.counts();
        let collapsed: Vec<usize> = (0..model.k).filter(|&m| counts[m] < o.min_count).collect();
        if !collapsed.is_empty() && collapsed.len() < model.k {
            let mut cand = model.clone();
            for &m in collapsed.iter().rev() {
                cand.remove(m);
            }
            let b = converge(&mut cand, t, o)?;
            let kept = b > bound;
            steps.push(Step {
                action: "delete".into(),
                component: collapsed.first().copied(),
                k: cand.k,
                bound: b,
                kept,
            });
            if kept {
                model = cand;
                bound = b;
                continue;
            }
        }
        if model.k >= o.max_k {
            break;
        }
        let quality = fit_quality(&model, t);
        let mut order: Vec<usize> = (0..model.k).filter(|&m| quality[m].is_finite()).collect();
        order.sort_by(|&a, &b| quality[a].total_cmp(&quality[b]));
        let mut improved = false;
        for &m in order.iter().take(o.tries) {
            let mut cand = split(&model, t, m);
            let b = converge(&mut cand, t, o)?;
            let kept = b > bound + 1e-9 * bound.abs();
            steps.push(Step {
                action: "split".into(),
                component: Some(m),
                k: cand.k,
                bound: b,
                kept,
            });
            if kept {
                model = cand;
                bound = b;
                improved = true;
                break;
            }
        }
        if !improved {
            // No split helps: a fresh seeded start with one more component (k-means centres and
            // local principal axes) is the last move tried, kept only if its bound is higher.
            let mut cand = initialise(t, model.k + 1, o.q, o.priors, o.seed + model.k as u64)?;
            let b = converge(&mut cand, t, o)?;
            let kept = b > bound + 1e-9 * bound.abs();
            steps.push(Step {
                action: "restart".into(),
                component: None,
                k: cand.k,
                bound: b,
                kept,
            });
            if !kept {
                break;
            }
            model = cand;
            bound = b;
        }
    }
    Ok(Searched {
        model,
        bound,
        steps,
    })
}
