//! Poisson regression with the log link under broad priors, w ~ N(0, 10 I) and N(0, 100 I), on the
//! data of `examples/poisson_regression` (100 rows, X = (1, x1, x2)). From the prior the first
//! non-conjugate step's target precision Λ₀ + Σ_n e^{x_n·m + x_nᵀΣx_n/2} x_n x_nᵀ spans hundreds of
//! orders of magnitude (e^{50|x|²} at Σ = 100 I) and is not positive definite in floating point;
//! the engine then takes the step from the point mass at the mean and shortens it along the
//! mean–precision path (`engine::noncj`). Asserted, against references computed here:
//! - the fit converges in a few sweeps and its bound never decreases;
//! - q is the stationary point of the ELBO: Σ⁻¹ = Λ₀ + Σ_n ⟨e^{η_n}⟩ x_n x_nᵀ and
//!   Λ₀m = Σ_n (y_n − ⟨e^{η_n}⟩) x_n, with ⟨e^{η_n}⟩ = e^{x_n·m + x_nᵀΣx_n/2}, to 1e-6;
//! - its means are within 0.01 of the GLM maximum-likelihood estimate (Newton's method below)
//!   and its sds within 0.5% of the GLM standard errors (the inverse Fisher information at the
//!   MLE), as the example's README claims;
//! - its covariance is not collapsed: ln det Σ within 0.02 of ln det of the inverse Fisher
//!   information (a q collapsed towards a point has ln det Σ → −∞).

use occam::{DataSet, Fitted, Model, Settings};

const MODEL: &str = "plates N, D from data X
data X[N] over D
w over D ~ MvGaussian(mean = 0, precision = identity * PREC)
y[N] ~ Poisson(exp(dot(X[N], w)))
observe y
";

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The example's rows (X with its constant column, y).
fn data() -> (Vec<[f64; 3]>, Vec<f64>) {
    let read = |name: &str| -> Vec<Vec<f64>> {
        let path = root().join(format!("examples/poisson_regression/{name}.csv"));
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(|v| v.trim().parse().unwrap()).collect())
            .collect()
    };
    let x = read("X").iter().map(|r| [r[0], r[1], r[2]]).collect();
    let y = read("y").iter().map(|r| r[0]).collect();
    (x, y)
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p * q).sum()
}

/// The inverse of a symmetric positive-definite 3 × 3 matrix (cofactors) and its determinant.
fn inverse(a: &[[f64; 3]; 3]) -> ([[f64; 3]; 3], f64) {
    let c = |r: usize, s: usize| {
        let (r1, r2, s1, s2) = ((r + 1) % 3, (r + 2) % 3, (s + 1) % 3, (s + 2) % 3);
        a[r1][s1] * a[r2][s2] - a[r1][s2] * a[r2][s1]
    };
    let det = (0..3).map(|s| a[0][s] * c(0, s)).sum::<f64>();
    let mut inv = [[0.0; 3]; 3];
    for (r, row) in inv.iter_mut().enumerate() {
        for (s, v) in row.iter_mut().enumerate() {
            *v = c(s, r) / det;
        }
    }
    (inv, det)
}

/// Σ_n weight_n x_n x_nᵀ.
fn gram(x: &[[f64; 3]], weight: impl Fn(usize) -> f64) -> [[f64; 3]; 3] {
    let mut g = [[0.0; 3]; 3];
    for (n, r) in x.iter().enumerate() {
        let w = weight(n);
        for a in 0..3 {
            for b in 0..3 {
                g[a][b] += w * r[a] * r[b];
            }
        }
    }
    g
}

/// The GLM maximum-likelihood estimate by Newton's method from 0, and the inverse of the Fisher
/// information X' diag(e^{Xŵ}) X at it (the standard errors' covariance).
fn glm(x: &[[f64; 3]], y: &[f64]) -> ([f64; 3], [[f64; 3]; 3]) {
    let mut w = [0.0; 3];
    for _ in 0..100 {
        let rate: Vec<f64> = x.iter().map(|r| dot(r, &w).exp()).collect();
        let (inv, _) = inverse(&gram(x, |n| rate[n]));
        let mut grad = [0.0; 3];
        for (n, r) in x.iter().enumerate() {
            for k in 0..3 {
                grad[k] += (y[n] - rate[n]) * r[k];
            }
        }
        let step: Vec<f64> = (0..3).map(|k| dot(&inv[k], &grad)).collect();
        (0..3).for_each(|k| w[k] += step[k]);
        if step.iter().all(|s| s.abs() < 1e-14) {
            break;
        }
    }
    let (cov, _) = inverse(&gram(x, |n| dot(&x[n], &w).exp()));
    (w, cov)
}

fn fit(x: &[[f64; 3]], y: &[f64], prec: f64) -> Fitted {
    let mut d = DataSet::new();
    d.insert_array("X", x.len(), 3, x.iter().flatten().copied().collect(), None)
        .unwrap();
    d.insert_array("y", y.len(), 1, y.to_vec(), None).unwrap();
    let src = MODEL.replace("PREC", &prec.to_string());
    let settings = Settings {
        tol: 1e-12,
        max_iter: 100,
        ..Settings::default()
    };
    Model::from_source("poisson", &src, &d)
        .unwrap()
        .fit(&settings)
        .unwrap()
}

fn check(prec: f64) {
    let (x, y) = data();
    let fit = fit(&x, &y, prec);
    let out = fit.outcome();
    let post = fit.posterior("w").unwrap();
    let m: Vec<f64> = post.param("mean").unwrap().values.clone();
    let cov: Vec<f64> = post.param("covariance").unwrap().values.clone();
    let (m, s) = (
        [m[0], m[1], m[2]],
        [
            [cov[0], cov[1], cov[2]],
            [cov[3], cov[4], cov[5]],
            [cov[6], cov[7], cov[8]],
        ],
    );
    eprintln!(
        "prior N(0, {} I): {} sweeps, bound {:.6}, mean {m:.4?}, cov {s:?}",
        1.0 / prec,
        out.iterations,
        fit.bound()
    );
    assert!(out.converged, "no convergence in {} sweeps", out.iterations);
    assert!(out.iterations <= 20, "{} sweeps", out.iterations);
    for t in out.bound_trace.windows(2) {
        assert!(t[1] >= t[0] - 1e-12 * t[0].abs(), "bound fell: {t:?}");
    }

    // Stationarity of the ELBO in (m, Σ).
    let e: Vec<f64> = x
        .iter()
        .map(|r| {
            let v: f64 = (0..3).map(|a| r[a] * dot(&s[a], r)).sum();
            (dot(r, &m) + 0.5 * v).exp()
        })
        .collect();
    let mut target = gram(&x, |n| e[n]);
    (0..3).for_each(|k| target[k][k] += prec);
    let (s_inv, _) = inverse(&s);
    let scale = target.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
    for a in 0..3 {
        for b in 0..3 {
            assert!(
                (s_inv[a][b] - target[a][b]).abs() <= 1e-6 * scale,
                "Σ⁻¹[{a}][{b}] {} vs Λ₀ + Σ e xxᵀ {}",
                s_inv[a][b],
                target[a][b]
            );
        }
        let grad: f64 = (0..x.len()).map(|n| (y[n] - e[n]) * x[n][a]).sum();
        assert!(
            (prec * m[a] - grad).abs() <= 1e-6 * scale,
            "Λ₀m[{a}] {} vs Σ (y − e) x {}",
            prec * m[a],
            grad
        );
    }

    // The GLM: MLE and standard errors.
    let (mle, fisher_inv) = glm(&x, &y);
    for k in 0..3 {
        let (sd, se) = (s[k][k].sqrt(), fisher_inv[k][k].sqrt());
        eprintln!(
            "  w{k}: mean {:.4} vs MLE {:.4}, sd {sd:.4} vs se {se:.4}",
            m[k], mle[k]
        );
        assert!(
            (m[k] - mle[k]).abs() <= 0.01,
            "mean {} vs MLE {}",
            m[k],
            mle[k]
        );
        assert!((sd / se - 1.0).abs() <= 0.005, "sd {sd} vs se {se}");
    }
    let (_, det_s) = inverse(&s);
    let (_, det_f) = inverse(&fisher_inv);
    let gap = det_s.ln() - det_f.ln();
    eprintln!("  ln det Σ − ln det F⁻¹ = {gap:.4}");
    assert!(gap.abs() <= 0.02, "ln det Σ − ln det F⁻¹ = {gap}");
}

#[test]
fn poisson_regression_under_a_prior_of_variance_10_converges_to_the_glm() {
    check(0.1);
}

#[test]
fn poisson_regression_under_a_prior_of_variance_100_converges_to_the_glm() {
    check(0.01);
}
