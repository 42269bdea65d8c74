//! scikit-learn's `BayesianRidge` and `ARDRegression` (`sklearn/linear_model/_bayes.py`,
//! version 1.9), step for step, on a [`Design`]: the same initial values, update order, Gamma
//! hyper-priors, pruning, convergence test and score, so that a fit equals scikit-learn's to
//! rounding. In scikit-learn's names `alpha` is the noise precision (β in
//! [`super::evidence`](mod@super::evidence)) and `lambda` the prior precision of the weights
//! (α there).
//!
//! Both re-estimate MacKay's fixed point with Gamma(α₁, α₂) and Gamma(λ₁, λ₂) hyper-priors,
//! i.e. maximise the evidence times the hyper-priors (MAP-II):
//! λ ← (γ + 2λ₁)/(Σμ² + 2λ₂), α ← (N − γ + 2α₁)/(‖y − Xμ‖² + 2α₂), stopping when
//! Σ|μ − μ_old| < tol. Where scikit-learn works on X itself, this works on XᵀX (one pass over
//! the rows, see [`Design`]):
//!
//! * `BayesianRidge` diagonalises XᵀX = V diag(e) Vᵀ (scikit-learn: the SVD of X, e = s²), keeping
//!   the largest min(N, D) eigenvalues as scikit-learn keeps min(N, D) singular values;
//! * `ARDRegression` forms Σ = pinv(diag(λ) + α XᵀX) over the kept inputs by the eigenvalues
//!   with scipy's `pinvh` cut-off (|s| > D·ε·max|s|; faer's pseudo-inverse), where scikit-learn
//!   switches to the Woodbury identity when N < D (the same matrix in exact arithmetic).

use faer::{Mat, Side};

use super::design::Design;
use crate::error::{Error, Result};

/// The constructor arguments of both estimators that shape the fit.
#[derive(Debug, Clone)]
pub struct SkOptions {
    /// Largest number of iterations.
    pub max_iter: usize,
    /// Stop when Σ|μ − μ_old| < tol.
    pub tol: f64,
    /// Shape of the Gamma hyper-prior of the noise precision.
    pub alpha_1: f64,
    /// Rate of the Gamma hyper-prior of the noise precision.
    pub alpha_2: f64,
    /// Shape of the Gamma hyper-prior of the weights' precision.
    pub lambda_1: f64,
    /// Rate of the Gamma hyper-prior of the weights' precision.
    pub lambda_2: f64,
    /// Initial noise precision (`BayesianRidge`); `None` is 1/(Var(y) + ε).
    pub alpha_init: Option<f64>,
    /// Initial weight precision (`BayesianRidge`); `None` is 1.
    pub lambda_init: Option<f64>,
    /// Record the log marginal likelihood (times the hyper-priors) at each iteration.
    pub compute_score: bool,
    /// `ARDRegression`: prune inputs whose precision reaches this.
    pub threshold_lambda: f64,
}

impl Default for SkOptions {
    fn default() -> Self {
        SkOptions {
            max_iter: 300,
            tol: 1e-3,
            alpha_1: 1e-6,
            alpha_2: 1e-6,
            lambda_1: 1e-6,
            lambda_2: 1e-6,
            alpha_init: None,
            lambda_init: None,
            compute_score: false,
            threshold_lambda: 1e4,
        }
    }
}

/// A fitted estimator in scikit-learn's terms.
#[derive(Debug, Clone)]
pub struct SkFit {
    /// `coef_`.
    pub coef: Vec<f64>,
    /// `intercept_` (0 without centring).
    pub intercept: f64,
    /// `alpha_`, the noise precision.
    pub alpha: f64,
    /// `lambda_`: one value for `BayesianRidge`, one per input for `ARDRegression`.
    pub lambda: Vec<f64>,
    /// `sigma_`, row-major: D × D for `BayesianRidge`, kept × kept for `ARDRegression`.
    pub sigma: Vec<f64>,
    /// The side of `sigma`.
    pub sigma_dim: usize,
    /// `scores_` (empty unless `compute_score`).
    pub scores: Vec<f64>,
    /// `n_iter_`.
    pub n_iter: usize,
}

fn check(o: &SkOptions) -> Result<()> {
    let named = [
        ("alpha_1", o.alpha_1),
        ("alpha_2", o.alpha_2),
        ("lambda_1", o.lambda_1),
        ("lambda_2", o.lambda_2),
        ("tol", o.tol),
        ("threshold_lambda", o.threshold_lambda),
    ];
    for (name, v) in named {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(Error::Usage(format!(
                "{name} must be ≥ 0 and finite, got {v}"
            )));
        }
    }
    for (name, v) in [("alpha_init", o.alpha_init), ("lambda_init", o.lambda_init)] {
        if let Some(v) = v {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(Error::Usage(format!(
                    "{name} must be ≥ 0 and finite, got {v}"
                )));
            }
        }
    }
    if o.max_iter == 0 {
        return Err(Error::Usage("max_iter must be ≥ 1".into()));
    }
    Ok(())
}

fn intercept(design: &Design, coef: &[f64]) -> f64 {
    design.y_offset()
        - design
            .x_offset()
            .iter()
            .zip(coef)
            .map(|(a, b)| a * b)
            .sum::<f64>()
}

fn abs_change(old: &Option<Vec<f64>>, new: &[f64]) -> Option<f64> {
    old.as_ref()
        .map(|o| o.iter().zip(new).map(|(a, b)| (a - b).abs()).sum())
}

/// scikit-learn's `BayesianRidge.fit` (one prior precision λ for every weight).
pub fn bayesian_ridge(design: &Design, o: &SkOptions) -> Result<SkFit> {
    check(o)?;
    let (n, d) = (design.rows(), design.inputs());
    let nf = n as f64;
    let eig = design.gram().self_adjoint_eigen(Side::Lower).map_err(|e| {
        Error::Run(format!(
            "BayesianRidge: eigendecomposition of XᵀX failed: {e:?}"
        ))
    })?;
    let v = eig.U();
    // Ascending eigenvalues; the largest min(N, D) are X's squared singular values.
    let k = n.min(d);
    let e: Vec<f64> = (0..d)
        .map(|j| if j >= d - k { eig.S()[j].max(0.0) } else { 0.0 })
        .collect();
    // Vᵀ Xᵀy.
    let p: Vec<f64> = (0..d)
        .map(|j| v.col(j).iter().zip(design.xty()).map(|(a, b)| a * b).sum())
        .collect();
    let coef_at = |alpha: f64, lambda: f64| -> (Vec<f64>, f64) {
        let mut c = vec![0.0; d];
        for j in d - k..d {
            let s = p[j] / (e[j] + lambda / alpha);
            c.iter_mut()
                .zip(v.col(j).iter())
                .for_each(|(ci, vi)| *ci += vi * s);
        }
        let sse = design.sse(&c);
        (c, sse)
    };
    let score = |alpha: f64, lambda: f64, coef: &[f64], sse: f64| -> f64 {
        let logdet_sigma: f64 = -e.iter().map(|ej| (lambda + alpha * ej).ln()).sum::<f64>();
        let c2: f64 = coef.iter().map(|c| c * c).sum();
        o.lambda_1 * lambda.ln() - o.lambda_2 * lambda + o.alpha_1 * alpha.ln() - o.alpha_2 * alpha
            + 0.5
                * (d as f64 * lambda.ln() + nf * alpha.ln() - alpha * sse - lambda * c2
                    + logdet_sigma
                    - nf * (2.0 * std::f64::consts::PI).ln())
    };
    let mut alpha = o
        .alpha_init
        .unwrap_or(1.0 / (design.y_var() + f64::EPSILON));
    let mut lambda = o.lambda_init.unwrap_or(1.0);
    let mut scores = Vec::new();
    let mut old: Option<Vec<f64>> = None;
    let mut iter = 0;
    while iter < o.max_iter {
        let (coef, sse) = coef_at(alpha, lambda);
        if o.compute_score {
            scores.push(score(alpha, lambda, &coef, sse));
        }
        let gamma: f64 = e.iter().map(|ej| alpha * ej / (lambda + alpha * ej)).sum();
        let c2: f64 = coef.iter().map(|c| c * c).sum();
        lambda = (gamma + 2.0 * o.lambda_1) / (c2 + 2.0 * o.lambda_2);
        alpha = (nf - gamma + 2.0 * o.alpha_1) / (sse + 2.0 * o.alpha_2);
        if iter != 0 && abs_change(&old, &coef).is_some_and(|s| s < o.tol) {
            break;
        }
        old = Some(coef);
        iter += 1;
    }
    let n_iter = (iter + 1).min(o.max_iter);
    let (coef, sse) = coef_at(alpha, lambda);
    if o.compute_score {
        scores.push(score(alpha, lambda, &coef, sse));
    }
    // Σ = V diag(1/(α e + λ)) Vᵀ.
    let mut sigma = vec![0.0; d * d];
    for (j, ej) in e.iter().enumerate() {
        let w = 1.0 / (alpha * ej + lambda);
        let col = v.col(j);
        for r in 0..d {
            let a = col[r] * w;
            for c in 0..d {
                sigma[r * d + c] += a * col[c];
            }
        }
    }
    Ok(SkFit {
        intercept: intercept(design, &coef),
        coef,
        alpha,
        lambda: vec![lambda],
        sigma,
        sigma_dim: d,
        scores,
        n_iter,
    })
}

/// Σ = pinvh(diag(λ_keep) + α XᵀX_keep) and scikit-learn's `fast_logdet(Σ)` (−∞ when Σ is
/// singular, i.e. an eigenvalue was cut).
fn ard_sigma(
    design: &Design,
    alpha: f64,
    lambda: &[f64],
    keep: &[usize],
) -> Result<(Mat<f64>, f64)> {
    let g = design.gram();
    let m = Mat::from_fn(keep.len(), keep.len(), |r, c| {
        let v = alpha * g[(keep[r], keep[c])];
        if r == c {
            v + lambda[keep[r]]
        } else {
            v
        }
    });
    let eig = m
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::Run(format!("ARDRegression: eigendecomposition failed: {e:?}")))?;
    let s = eig.S();
    let kk = keep.len();
    let smax = (0..kk).map(|i| s[i].abs()).fold(0.0, f64::max);
    let cut = kk as f64 * f64::EPSILON * smax;
    let logdet = if (0..kk).all(|i| s[i] > cut) {
        -(0..kk).map(|i| s[i].ln()).sum::<f64>()
    } else {
        f64::NEG_INFINITY
    };
    Ok((eig.pseudoinverse(), logdet))
}

/// scikit-learn's `ARDRegression.fit` (one prior precision per input, pruned at
/// `threshold_lambda`).
pub fn ard_regression(design: &Design, o: &SkOptions) -> Result<SkFit> {
    check(o)?;
    let (n, d) = (design.rows(), design.inputs());
    let nf = n as f64;
    if n < 2 {
        return Err(Error::Usage(format!(
            "ARDRegression needs at least 2 samples, got {n}"
        )));
    }
    let xty = design.xty();
    let mut coef = vec![0.0; d];
    let mut alpha = 1.0 / (design.y_var() + f64::EPSILON);
    let mut lambda = vec![1.0; d];
    let mut keep: Vec<usize> = (0..d).collect();
    let mut scores = Vec::new();
    let mut old: Option<Vec<f64>> = None;
    let update_coef = |coef: &mut [f64], sigma: &Mat<f64>, alpha: f64, keep: &[usize]| {
        for (r, &i) in keep.iter().enumerate() {
            coef[i] = alpha
                * keep
                    .iter()
                    .enumerate()
                    .map(|(c, &j)| sigma[(r, c)] * xty[j])
                    .sum::<f64>();
        }
    };
    let mut iter = 0;
    while iter < o.max_iter {
        let (sigma, logdet) = ard_sigma(design, alpha, &lambda, &keep)?;
        update_coef(&mut coef, &sigma, alpha, &keep);
        let sse = design.sse(&coef);
        let mut gamma_sum = 0.0;
        for (r, &i) in keep.iter().enumerate() {
            let gamma = 1.0 - lambda[i] * sigma[(r, r)];
            gamma_sum += gamma;
            lambda[i] = (gamma + 2.0 * o.lambda_1) / (coef[i] * coef[i] + 2.0 * o.lambda_2);
        }
        alpha = (nf - gamma_sum + 2.0 * o.alpha_1) / (sse + 2.0 * o.alpha_2);
        keep = (0..d).filter(|&i| lambda[i] < o.threshold_lambda).collect();
        for (c, l) in coef.iter_mut().zip(&lambda) {
            if l.is_nan() || *l >= o.threshold_lambda {
                *c = 0.0;
            }
        }
        if o.compute_score {
            let mut s: f64 = lambda
                .iter()
                .map(|l| o.lambda_1 * l.ln() - o.lambda_2 * l)
                .sum();
            s += o.alpha_1 * alpha.ln() - o.alpha_2 * alpha;
            s += 0.5 * (logdet + nf * alpha.ln() + lambda.iter().map(|l| l.ln()).sum::<f64>());
            s -= 0.5
                * (alpha * sse
                    + lambda
                        .iter()
                        .zip(&coef)
                        .map(|(l, c)| l * c * c)
                        .sum::<f64>());
            scores.push(s);
        }
        if iter > 0 && abs_change(&old, &coef).is_some_and(|s| s < o.tol) {
            break;
        }
        old = Some(coef.clone());
        if keep.is_empty() {
            break;
        }
        iter += 1;
    }
    let n_iter = (iter + 1).min(o.max_iter);
    let (sigma, sigma_dim) = if keep.is_empty() {
        (Vec::new(), 0)
    } else {
        let (sigma, _) = ard_sigma(design, alpha, &lambda, &keep)?;
        update_coef(&mut coef, &sigma, alpha, &keep);
        let k = keep.len();
        ((0..k * k).map(|i| sigma[(i / k, i % k)]).collect(), k)
    };
    Ok(SkFit {
        intercept: intercept(design, &coef),
        coef,
        alpha,
        lambda,
        sigma,
        sigma_dim,
        scores,
        n_iter,
    })
}
