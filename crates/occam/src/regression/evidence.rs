//! The exact evidence of Bayesian linear regression and its gradient in the log
//! hyper-parameters (Sahani, "Bayesian model comparison", slides "Bayesian linear regression:
//! evidence and gradients" and "ARD").
//!
//! Model: y = Xw + ε, ε ~ N(0, β⁻¹I), w_i ~ N(0, α_i⁻¹) (C⁻¹ = A = diag(α)). The posterior of w
//! is Gaussian, Σ = (A + βXᵀX)⁻¹, μ = βΣXᵀy, and the evidence is
//!
//! ln p(y | α, β) = ln N(y; 0, β⁻¹I + XA⁻¹Xᵀ)
//!               = ½ [Σ ln α_i + N ln β − β‖y − Xμ‖² − μᵀAμ − ln|A + βXᵀX| − N ln 2π],
//!
//! computed from the D × D Cholesky factor of A + βXᵀX (faer), never the N × N covariance.
//! Because the posterior is Gaussian, the Laplace approximation of this evidence is exact.
//!
//! Gradients (the slide's ∂/∂θ ½Tr[(C − Σ − μμᵀ) ∂C⁻¹/∂θ] with θ = ln α_i, and its ∂/∂σ² with
//! the prefactor corrected to 1/(2σ²), written for ln β = −ln σ²):
//!
//! ∂ ln p / ∂ ln α_i = ½ (1 − α_i Σ_ii − α_i μ_i²) = ½ (γ_i − α_i μ_i²),
//! ∂ ln p / ∂ ln β  = ½ (N − Σ_i γ_i − β‖y − Xμ‖²),
//!
//! with γ_i = 1 − α_i Σ_ii the well-determined share of input i (β Tr(ΣXᵀX) = Σ γ_i). An input
//! with α_i = ∞ is pruned: w_i = 0 exactly and the evidence is that of the model without it.

use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::{Mat, Side};

use super::design::Design;
use crate::error::{Error, Result};

/// The posterior of w and the evidence at given hyper-parameters.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// ln p(y | α, β), in nats.
    pub log_evidence: f64,
    /// The posterior mean μ (0 for pruned inputs).
    pub mean: Vec<f64>,
    /// The posterior covariance Σ, D × D (zero rows and columns for pruned inputs).
    pub cov: Mat<f64>,
    /// γ_i = 1 − α_i Σ_ii (0 for pruned inputs).
    pub gamma: Vec<f64>,
    /// ‖y − Xμ‖².
    pub sse: f64,
    /// ∂ ln p / ∂ ln α_i (0 for pruned inputs).
    pub grad_log_alpha: Vec<f64>,
    /// ∂ ln p / ∂ ln β.
    pub grad_log_beta: f64,
}

impl Evidence {
    /// ∂ ln p / ∂ ln α when every input shares one α (the sum over the inputs).
    pub fn grad_log_alpha_shared(&self) -> f64 {
        self.grad_log_alpha.iter().sum()
    }

    /// Σ_i γ_i, the number of well-determined parameters.
    pub fn gamma_sum(&self) -> f64 {
        self.gamma.iter().sum()
    }
}

/// The evidence and posterior at prior precisions `alpha` (one per input; `f64::INFINITY` prunes
/// the input) and noise precision `beta`.
pub fn evidence(design: &Design, alpha: &[f64], beta: f64) -> Result<Evidence> {
    let d = design.inputs();
    if alpha.len() != d {
        return Err(Error::Usage(format!(
            "{} prior precisions for {d} inputs",
            alpha.len()
        )));
    }
    if let Some(a) = alpha.iter().find(|a| a.is_nan() || **a <= 0.0) {
        return Err(Error::Usage(format!(
            "prior precisions must be positive, got {a}"
        )));
    }
    if !(beta > 0.0 && beta.is_finite()) {
        return Err(Error::Usage(format!(
            "the noise precision must be positive and finite, got {beta}"
        )));
    }
    let n = design.rows() as f64;
    let active: Vec<usize> = (0..d).filter(|&i| alpha[i].is_finite()).collect();
    let k = active.len();
    let g = design.gram();
    let xty = design.xty();
    let mut mean = vec![0.0; d];
    let mut cov = Mat::<f64>::zeros(d, d);
    let mut log_det = 0.0;
    if k > 0 {
        // A + βXᵀX restricted to the active inputs.
        let p = Mat::from_fn(k, k, |r, c| {
            let v = beta * g[(active[r], active[c])];
            if r == c {
                v + alpha[active[r]]
            } else {
                v
            }
        });
        let llt = p.llt(Side::Lower).map_err(|_| {
            Error::Run(format!(
                "A + βXᵀX is not positive definite at β = {beta:e} (the hyper-parameters \
                 have left the range where the evidence can be computed)"
            ))
        })?;
        let l = llt.L();
        log_det = 2.0 * (0..k).map(|i| l[(i, i)].ln()).sum::<f64>();
        let mut b = Mat::from_fn(k, 1, |r, _| beta * xty[active[r]]);
        llt.solve_in_place(b.as_mut());
        let s = llt.inverse();
        for (r, &i) in active.iter().enumerate() {
            mean[i] = b[(r, 0)];
            for (c, &j) in active.iter().enumerate() {
                cov[(i, j)] = s[(r, c)];
            }
        }
    }
    let sse = design.sse(&mean);
    let mut gamma = vec![0.0; d];
    let mut grad = vec![0.0; d];
    let mut prior_terms = 0.0;
    for &i in &active {
        gamma[i] = 1.0 - alpha[i] * cov[(i, i)];
        grad[i] = 0.5 * (gamma[i] - alpha[i] * mean[i] * mean[i]);
        prior_terms += alpha[i].ln() - alpha[i] * mean[i] * mean[i];
    }
    let gamma_sum: f64 = gamma.iter().sum();
    let log_evidence = 0.5
        * (prior_terms + n * beta.ln()
            - beta * sse
            - log_det
            - n * (2.0 * std::f64::consts::PI).ln());
    Ok(Evidence {
        log_evidence,
        mean,
        cov,
        gamma,
        sse,
        grad_log_alpha: grad,
        grad_log_beta: 0.5 * (n - gamma_sum - beta * sse),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_distr::StandardNormal;

    fn draw(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let x: Vec<f64> = (0..n * d).map(|_| rng.sample(StandardNormal)).collect();
        let y: Vec<f64> = x
            .chunks(d)
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(i, v)| v * (i as f64 - 1.0))
                    .sum::<f64>()
                    + 0.5 * rng.sample::<f64, _>(StandardNormal)
            })
            .collect();
        (x, y)
    }

    /// ln N(y; 0, β⁻¹I + X A⁻¹ Xᵀ) from the N × N covariance (the definition).
    fn direct(x: &[f64], y: &[f64], d: usize, alpha: &[f64], beta: f64) -> f64 {
        let n = y.len();
        let c = Mat::from_fn(n, n, |r, s| {
            let k: f64 = (0..d)
                .filter(|&i| alpha[i].is_finite())
                .map(|i| x[r * d + i] * x[s * d + i] / alpha[i])
                .sum();
            k + if r == s { 1.0 / beta } else { 0.0 }
        });
        let llt = c.llt(Side::Lower).unwrap();
        let l = llt.L();
        let log_det = 2.0 * (0..n).map(|i| l[(i, i)].ln()).sum::<f64>();
        let mut b = Mat::from_fn(n, 1, |i, _| y[i]);
        llt.solve_in_place(b.as_mut());
        let quad: f64 = (0..n).map(|i| y[i] * b[(i, 0)]).sum();
        -0.5 * (quad + log_det + n as f64 * (2.0 * std::f64::consts::PI).ln())
    }

    #[test]
    fn closed_form_equals_the_gaussian_marginal() {
        let (x, y) = draw(12, 4, 3);
        let des = Design::new(&x, 12, 4, &y, false).unwrap();
        for (alpha, beta) in [
            (vec![1.0, 2.0, 0.5, 3.0], 4.0),
            (vec![1e-3, 10.0, 0.1, 1e2], 0.3),
            (vec![1.0, f64::INFINITY, 0.5, f64::INFINITY], 2.0),
        ] {
            let e = evidence(&des, &alpha, beta).unwrap();
            let want = direct(&x, &y, 4, &alpha, beta);
            assert!(
                (e.log_evidence - want).abs() < 1e-10,
                "{} vs {want}",
                e.log_evidence
            );
        }
    }

    #[test]
    fn gradients_match_finite_differences() {
        let (x, y) = draw(15, 3, 5);
        let des = Design::new(&x, 15, 3, &y, false).unwrap();
        let la = [0.3f64, -1.0, 2.0];
        let lb = 0.7f64;
        let f = |la: &[f64], lb: f64| {
            let a: Vec<f64> = la.iter().map(|v| v.exp()).collect();
            evidence(&des, &a, lb.exp()).unwrap().log_evidence
        };
        let a: Vec<f64> = la.iter().map(|v| v.exp()).collect();
        let e = evidence(&des, &a, lb.exp()).unwrap();
        let h = 1e-5;
        for i in 0..3 {
            let (mut up, mut dn) = (la, la);
            up[i] += h;
            dn[i] -= h;
            let fd = (f(&up, lb) - f(&dn, lb)) / (2.0 * h);
            assert!(
                (e.grad_log_alpha[i] - fd).abs() < 1e-7,
                "α_{i}: {} vs {fd}",
                e.grad_log_alpha[i]
            );
        }
        let fd = (f(&la, lb + h) - f(&la, lb - h)) / (2.0 * h);
        assert!(
            (e.grad_log_beta - fd).abs() < 1e-7,
            "β: {} vs {fd}",
            e.grad_log_beta
        );
        // One shared α: the derivative along ln α₁ = ln α₂ = ln α₃.
        let shared = |s: f64| f(&[s, s, s], lb);
        let s = 0.4f64;
        let e = evidence(&des, &[s.exp(); 3], lb.exp()).unwrap();
        let fd = (shared(s + h) - shared(s - h)) / (2.0 * h);
        assert!((e.grad_log_alpha_shared() - fd).abs() < 1e-7);
        // σ² = 1/β: the slide's ∂/∂σ² with the 1/(2σ²) prefactor is −β² ∂/∂β = −β ∂/∂ln β.
        let sigma2 = 1.0 / lb.exp();
        let slide = (1.0 / (2.0 * sigma2)) * (-15.0 + e.gamma_sum() + e.sse / sigma2);
        assert!((slide + lb.exp() * e.grad_log_beta).abs() < 1e-10);
    }

    #[test]
    fn bad_hyper_parameters_are_refused() {
        let (x, y) = draw(5, 2, 1);
        let des = Design::new(&x, 5, 2, &y, false).unwrap();
        assert!(evidence(&des, &[1.0], 1.0).is_err());
        assert!(evidence(&des, &[1.0, -1.0], 1.0).is_err());
        assert!(evidence(&des, &[1.0, 1.0], f64::NAN).is_err());
    }
}
