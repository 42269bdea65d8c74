//! Bayesian linear regression by evidence maximisation (`occam::regression`) on Sahani's worked
//! ARD case (d = 4, T = 30, w = (1, 0, −2, 0), noise sd 0.3; `examples/ml2_ard/`), against VB
//! ARD on the same data (`examples/ard_regression/regression.occam`, Gamma(10⁻³, 10⁻³) priors on
//! every precision).

use occam::regression::{evidence, maximise, Design, Ml2Options, Prior};
use occam::{DataSet, Model, Settings};

fn example(path: &str) -> String {
    format!("{}/../../examples/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// The rows of a CSV file with a header, row-major.
fn csv(path: &str) -> (Vec<f64>, usize, usize) {
    let text = std::fs::read_to_string(example(path)).unwrap();
    let mut lines = text.lines();
    let cols = lines.next().unwrap().split(',').count();
    let values: Vec<f64> = lines
        .flat_map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap()))
        .collect();
    (values.clone(), values.len() / cols, cols)
}

fn digest_case() -> (Vec<f64>, Vec<f64>, Design) {
    let (x, n, d) = csv("ml2_ard/X.csv");
    let (y, _, _) = csv("ml2_ard/y.csv");
    assert_eq!((n, d, y.len()), (30, 4, 30));
    let des = Design::new(&x, n, d, &y, false).unwrap();
    (x, y, des)
}

#[test]
fn ard_prunes_the_irrelevant_inputs_of_the_worked_case() {
    let (_, _, des) = digest_case();
    let fit = maximise(&des, &Ml2Options::default()).unwrap();
    println!(
        "ML-II ARD: μ = {:?}, σ² = {:.5}, α = {:?}, ln p(y|α,β) = {:.4} after {} updates",
        fit.at.mean,
        1.0 / fit.beta,
        fit.alpha,
        fit.at.log_evidence,
        fit.iterations
    );
    assert!(fit.converged);
    // Inputs 2 and 4 are irrelevant: their α diverge (pruned at 1e12) and their weights are 0.
    assert!(fit.pruned(1) && fit.pruned(3), "α = {:?}", fit.alpha);
    assert!(!fit.pruned(0) && !fit.pruned(2));
    assert_eq!((fit.at.mean[1], fit.at.mean[3]), (0.0, 0.0));
    // Sahani's worked case, reported to three decimals: μ = (0.973, 0, −2.007, 0), σ² = 0.094.
    assert!(
        (fit.at.mean[0] - 0.973).abs() < 5e-4,
        "μ₁ = {}",
        fit.at.mean[0]
    );
    assert!(
        (fit.at.mean[2] + 2.007).abs() < 5e-4,
        "μ₃ = {}",
        fit.at.mean[2]
    );
    assert!(
        (1.0 / fit.beta - 0.094).abs() < 5e-4,
        "σ² = {}",
        1.0 / fit.beta
    );
    // The fixed point is a stationary point of the exact evidence (its gradient is checked
    // against finite differences in the evidence module).
    for i in [0, 2] {
        assert!(
            fit.at.grad_log_alpha[i].abs() < 1e-8,
            "{:?}",
            fit.at.grad_log_alpha
        );
    }
    assert!(
        fit.at.grad_log_beta.abs() < 1e-8,
        "{}",
        fit.at.grad_log_beta
    );
    // One shared α is a restriction of ARD: its maximum evidence cannot be higher.
    let shared = maximise(
        &des,
        &Ml2Options {
            prior: Prior::Shared,
            ..Ml2Options::default()
        },
    )
    .unwrap();
    println!(
        "ML-II shared α: μ = {:?}, α = {:.4}, σ² = {:.5}, ln p = {:.4}",
        shared.at.mean,
        shared.alpha[0],
        1.0 / shared.beta,
        shared.at.log_evidence
    );
    assert!(shared.converged);
    assert!(shared.at.grad_log_alpha_shared().abs() < 1e-8);
    assert!(shared.at.log_evidence < fit.at.log_evidence);
    // Pruning is the limit α → ∞: a large finite α gives nearly the pruned model's evidence.
    let mut big = fit.alpha.clone();
    big[1] = 1e9;
    big[3] = 1e9;
    let near = evidence(&des, &big, fit.beta).unwrap().log_evidence;
    assert!((near - fit.at.log_evidence).abs() < 1e-6, "{near}");
}

#[test]
fn vb_ard_on_the_same_data_agrees_and_its_bound_lies_below_the_ml2_evidence() {
    let (x, y, des) = digest_case();
    let ml2 = maximise(&des, &Ml2Options::default()).unwrap();
    let mut data = DataSet::new();
    data.insert_array("X", 30, 4, x, None).unwrap();
    data.insert_array("y", 30, 1, y, None).unwrap();
    let model = Model::from_file(example("ard_regression/regression.occam"), &data).unwrap();
    let f = model
        .fit(&Settings {
            tol: 1e-13,
            max_iter: 20_000,
            ..Settings::default()
        })
        .unwrap();
    assert!(f.outcome().converged);
    let get = |v: &str, p: &str| f.posterior(v).unwrap().param(p).unwrap().values.clone();
    let (w, alpha, tau) = (
        get("w", "mean"),
        get("alpha", "mean"),
        get("tau", "mean")[0],
    );
    println!(
        "VB ARD: E[w] = {w:?}, E[α] = {alpha:?}, 1/E[τ] = {:.5}, bound = {:.4} ({} sweeps)",
        1.0 / tau,
        f.bound(),
        f.outcome().iterations
    );
    // The relevant weights agree with ML-II's to 0.01. The irrelevant ones are shrunk
    // (E[α] beyond 100 × the relevant ones', |E[w]| below 0.05) but not switched off: with
    // Gamma(a₀, b₀) priors, E[α_i] = (a₀ + ½)/(b₀ + ½E[w_i²]) stays finite while E[w_i] ≠ 0,
    // where ML-II's α_i = γ_i/μ_i² diverges.
    for i in [0, 2] {
        assert!((w[i] - ml2.at.mean[i]).abs() < 0.01, "w[{i}] = {}", w[i]);
    }
    for i in [1, 3] {
        assert!(w[i].abs() < 0.05 && w[i] != 0.0, "{w:?}");
        let relevant = alpha[0].max(alpha[2]);
        assert!(
            alpha[i].is_finite() && alpha[i] > 100.0 * relevant,
            "{alpha:?}"
        );
    }
    // ln p(y) = ∫ p(y|α,β) p(α,β) ≤ max p(y|α,β): the VB bound on the integrated model lies
    // below the ML-II evidence.
    assert!(
        f.bound() < ml2.at.log_evidence,
        "{} vs {}",
        f.bound(),
        ml2.at.log_evidence
    );
}

/// scikit-learn's algorithms without hyper-priors (α₁ = α₂ = λ₁ = λ₂ = 0) are MacKay's fixed
/// point: `bayesian_ridge` ends where `maximise` with one shared α does, and `ard_regression`
/// with the same pruning threshold where ARD does (scikit-learn's `lambda` is α here, its
/// `alpha` is β).
#[test]
fn scikit_learn_without_hyper_priors_is_the_ml2_fixed_point() {
    use occam::regression::{ard_regression, bayesian_ridge, SkOptions};
    let (_, _, des) = digest_case();
    let flat = SkOptions {
        max_iter: 100_000,
        tol: 1e-13,
        alpha_1: 0.0,
        alpha_2: 0.0,
        lambda_1: 0.0,
        lambda_2: 0.0,
        threshold_lambda: 1e12,
        ..SkOptions::default()
    };
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
    let shared = maximise(
        &des,
        &Ml2Options {
            prior: Prior::Shared,
            ..Ml2Options::default()
        },
    )
    .unwrap();
    let ridge = bayesian_ridge(&des, &flat).unwrap();
    for (a, b) in ridge.coef.iter().zip(&shared.at.mean) {
        assert!(
            (a - b).abs() < 1e-9,
            "{:?} vs {:?}",
            ridge.coef,
            shared.at.mean
        );
    }
    assert!(rel(ridge.lambda[0], shared.alpha[0]) < 1e-8);
    assert!(rel(ridge.alpha, shared.beta) < 1e-8);
    let ard = maximise(&des, &Ml2Options::default()).unwrap();
    let sk = ard_regression(&des, &flat).unwrap();
    for i in 0..4 {
        assert!((sk.coef[i] - ard.at.mean[i]).abs() < 1e-6, "{:?}", sk.coef);
        assert_eq!(sk.lambda[i] >= 1e12, ard.pruned(i), "{:?}", sk.lambda);
    }
    assert!(rel(sk.alpha, ard.beta) < 1e-6);
}
