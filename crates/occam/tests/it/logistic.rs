//! Logistic regression written as `y ~ Bernoulli(sigmoid_jj(dot(X, w)))` (the Jaakkola–Jordan
//! bound, `occam_core::dist::BernoulliLogit`): 30 points, 2 inputs and a bias, w ~ N(0, I).
//!
//! - Against an independent implementation of the same approximation — the closed-form JJ
//!   iteration of Bishop, PRML (10.156)–(10.163), with its bound (10.164) — to 1e-8: the engine
//!   computes exactly the JJ fixed point and bound.
//! - Against the exact posterior by 3-D quadrature: means within 10%, the bound below the exact
//!   log evidence. The JJ posterior is narrower than the exact one — each point adds curvature
//!   2λ(ξ) = tanh(ξ/2)/(2ξ) where the exact likelihood has σ′(η) ≤ 2λ(|η|) — so the standard
//!   deviations are asserted below the exact ones and their gap printed (10–27% here: JJ's, not
//!   the engine's, as the reference above has it too; the 10% on sds is out of JJ's reach).
//! - The ξ fixed point (J&J eq. (6)) directly: with ξ_n² = ⟨η_n²⟩ read from the fitted q, the
//!   bound (10.164) as a function of ξ equals the engine's and its central finite differences in
//!   ξ_n vanish at a few rows (and do not at half or twice ξ_n).

use occam::{DataSet, Model, Settings};
use occam_core::quad::GaussLegendre;
use occam_core::special::log_sigmoid;
use rand::{Rng as _, SeedableRng};

const MODEL: &str = "plates N, C from data X
data X[N] over C
w over C ~ MvGaussian(mean = 0, precision = 1)
y[N] ~ Bernoulli(sigmoid_jj(dot(X[N], w)))
observe y
";

/// 30 points: a bias column and two standard-normal inputs; labels drawn from weights
/// (0.5, 1.5, −1) with a fixed seed.
pub(crate) fn data() -> (Vec<[f64; 3]>, Vec<f64>) {
    let mut rng = occam_core::Rng::seed_from_u64(29);
    let mut normal = || {
        // Box–Muller, to keep the draw independent of rand_distr's version.
        let (u, v): (f64, f64) = (rng.random(), rng.random());
        (-2.0 * (1.0 - u).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let x: Vec<[f64; 3]> = (0..30).map(|_| [1.0, normal(), normal()]).collect();
    let mut rng = occam_core::Rng::seed_from_u64(30);
    let y = x
        .iter()
        .map(|r| {
            let eta = 0.5 * r[0] + 1.5 * r[1] - r[2];
            f64::from(rng.random::<f64>() < 1.0 / (1.0 + (-eta).exp()))
        })
        .collect();
    (x, y)
}

/// Log of prior × likelihood at w.
fn log_joint(x: &[[f64; 3]], y: &[f64], w: [f64; 3]) -> f64 {
    let prior: f64 =
        w.iter().map(|v| -0.5 * v * v).sum::<f64>() - 1.5 * (2.0 * std::f64::consts::PI).ln();
    prior
        + x.iter()
            .zip(y)
            .map(|(r, &t)| {
                let eta = r[0] * w[0] + r[1] * w[1] + r[2] * w[2];
                if t == 1.0 {
                    log_sigmoid(eta)
                } else {
                    log_sigmoid(-eta)
                }
            })
            .sum::<f64>()
}

/// Exact log evidence, posterior means and standard deviations of logistic regression with
/// w ~ N(0, I) (`quadrature3`).
pub(crate) fn quadrature(
    x: &[[f64; 3]],
    y: &[f64],
    centre: [f64; 3],
    half: [f64; 3],
) -> (f64, [f64; 3], [f64; 3]) {
    quadrature3(centre, half, |w| log_joint(x, y, w))
}

/// Log evidence ln ∫ exp(log_joint(w)) dw, means and standard deviations of the normalised
/// density by tensor Gauss–Legendre over the box `centre ± 9 half`, 4 panels of 16 points per
/// axis. `log_joint` is the log of prior × likelihood.
pub(crate) fn quadrature3(
    centre: [f64; 3],
    half: [f64; 3],
    log_joint: impl Fn([f64; 3]) -> f64,
) -> (f64, [f64; 3], [f64; 3]) {
    let rule = GaussLegendre::new(16);
    let panels = 4;
    let axis = |k: usize| -> Vec<(f64, f64)> {
        let (a, b) = (centre[k] - 9.0 * half[k], centre[k] + 9.0 * half[k]);
        let h = (b - a) / panels as f64;
        (0..panels)
            .flat_map(|p| {
                let lo = a + p as f64 * h;
                rule.nodes
                    .iter()
                    .zip(&rule.weights)
                    .map(move |(t, wt)| (lo + 0.5 * h * (t + 1.0), 0.5 * h * wt))
            })
            .collect()
    };
    let (a0, a1, a2) = (axis(0), axis(1), axis(2));
    let mut logs = Vec::new();
    for &(w0, q0) in &a0 {
        for &(w1, q1) in &a1 {
            for &(w2, q2) in &a2 {
                logs.push((log_joint([w0, w1, w2]) + (q0 * q1 * q2).ln(), [w0, w1, w2]));
            }
        }
    }
    let top = logs.iter().map(|l| l.0).fold(f64::NEG_INFINITY, f64::max);
    let (mut z, mut m, mut s) = (0.0, [0.0; 3], [0.0; 3]);
    for (l, w) in &logs {
        let p = (l - top).exp();
        z += p;
        for k in 0..3 {
            m[k] += p * w[k];
            s[k] += p * w[k] * w[k];
        }
    }
    let mean = m.map(|v| v / z);
    let sd = [0, 1, 2].map(|k| (s[k] / z - mean[k] * mean[k]).sqrt());
    (top + z.ln(), mean, sd)
}

/// S⁻¹ = I + 2Σλ(ξ_n)x_n x_nᵀ and m = S Σ(y_n − ½)x_n of Bishop, PRML (10.156)–(10.157) with
/// prior N(0, I): (m, S, ln|S⁻¹|, S⁻¹).
fn prml_q(x: &[[f64; 3]], y: &[f64], xi: &[f64]) -> ([f64; 3], Vec<f64>, f64, Vec<f64>) {
    let lambda = occam_core::dist::jj_lambda;
    let mut prec = vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let mut b = [0.0; 3];
    for (r, (&t, &z)) in x.iter().zip(y.iter().zip(xi)) {
        for i in 0..3 {
            b[i] += (t - 0.5) * r[i];
            for j in 0..3 {
                prec[3 * i + j] += 2.0 * lambda(z) * r[i] * r[j];
            }
        }
    }
    let (s, logdet_p) = occam_core::linalg::inverse_and_log_det(&prec, 3).unwrap();
    let m = [0, 1, 2].map(|i| (0..3).map(|j| s[3 * i + j] * b[j]).sum());
    (m, s, logdet_p, prec)
}

/// The bound (10.164) as a function of ξ alone (q at its optimum (10.156)–(10.157) for that ξ):
/// ½ ln|S| + ½ mᵀS⁻¹m + Σ[ln σ(ξ_n) − ξ_n/2 + λ(ξ_n)ξ_n²] (prior N(0, I): |S₀| = 1, m₀ = 0).
fn prml_bound(x: &[[f64; 3]], y: &[f64], xi: &[f64]) -> f64 {
    let lambda = occam_core::dist::jj_lambda;
    let (m, _, logdet_p, prec) = prml_q(x, y, xi);
    let quad: f64 = (0..3)
        .flat_map(|i| (0..3).map(move |j| (i, j)))
        .map(|(i, j)| m[i] * prec[3 * i + j] * m[j])
        .sum();
    let local: f64 = xi
        .iter()
        .map(|&z| log_sigmoid(z) - 0.5 * z + lambda(z) * z * z)
        .sum();
    -0.5 * logdet_p + 0.5 * quad + local
}

/// ξ_n² = x_nᵀ(S + mmᵀ)x_n = ⟨η_n²⟩ under q = N(m, S) (PRML (10.163)).
fn xi_of(x: &[[f64; 3]], m: &[f64], s: &[f64]) -> Vec<f64> {
    x.iter()
        .map(|r| {
            let mut q = 0.0;
            for i in 0..3 {
                for j in 0..3 {
                    q += r[i] * (s[3 * i + j] + m[i] * m[j]) * r[j];
                }
            }
            q.sqrt()
        })
        .collect()
}

/// Bishop, PRML (10.156)–(10.163) iterated to a fixed point from ξ = 1; returns m, S and the
/// bound (10.164).
fn prml_jj(x: &[[f64; 3]], y: &[f64]) -> ([f64; 3], Vec<f64>, f64) {
    let mut xi = vec![1.0; x.len()];
    for _ in 0..2000 {
        let (m, s, _, _) = prml_q(x, y, &xi);
        xi = xi_of(x, &m, &s);
    }
    let (m, s, _, _) = prml_q(x, y, &xi);
    (m, s, prml_bound(x, y, &xi))
}

/// `MODEL` fitted to the 30 points `x`, `y` with 400 sweeps and no stopping tolerance.
fn fitted(x: &[[f64; 3]], y: &[f64]) -> occam::Fitted {
    let mut d = DataSet::new();
    d.insert_array("X", 30, 3, x.iter().flatten().copied().collect(), None)
        .unwrap();
    d.insert_array("y", 30, 1, y.to_vec(), None).unwrap();
    Model::from_source("logistic", MODEL, &d)
        .unwrap()
        .fit(&Settings {
            tol: 0.0,
            max_iter: 400,
            ..Settings::default()
        })
        .unwrap()
}

#[test]
fn logistic_regression_is_the_jj_fixed_point_below_the_exact_posterior() {
    let (x, y) = data();
    let fit = fitted(&x, &y);
    let post = fit.posterior("w").unwrap();
    let vb_mean = post.param("mean").unwrap().values.clone();
    let cov = post.param("covariance").unwrap().values.clone();
    let vb_sd: Vec<f64> = (0..3).map(|k| cov[4 * k].sqrt()).collect();
    let bound = fit.bound();
    let (log_z, mean, sd) = quadrature(
        &x,
        &y,
        [vb_mean[0], vb_mean[1], vb_mean[2]],
        [vb_sd[0], vb_sd[1], vb_sd[2]],
    );
    eprintln!("quadrature: log Z {log_z:.6}, means {mean:.4?}, sds {sd:.4?}");
    eprintln!("VB (JJ):    bound {bound:.6}, means {vb_mean:.4?}, sds {vb_sd:.4?}");
    // The engine's fixed point and bound are the JJ ones.
    let (m_ref, s_ref, bound_ref) = prml_jj(&x, &y);
    eprintln!("PRML JJ:    bound {bound_ref:.6}, means {m_ref:.4?}");
    assert!(
        (bound - bound_ref).abs() < 1e-8,
        "bound {bound} vs PRML (10.164) {bound_ref}"
    );
    for k in 0..3 {
        assert!(
            (vb_mean[k] - m_ref[k]).abs() < 1e-8,
            "mean {k}: {} vs {}",
            vb_mean[k],
            m_ref[k]
        );
        for j in 0..3 {
            assert!(
                (cov[3 * k + j] - s_ref[3 * k + j]).abs() < 1e-8,
                "cov {k},{j}"
            );
        }
    }
    // The bound is a true lower bound on the evidence.
    assert!(bound < log_z, "bound {bound} ≥ log evidence {log_z}");
    for k in 0..3 {
        let scale = mean[k].abs().max(sd[k]);
        assert!(
            (vb_mean[k] - mean[k]).abs() <= 0.1 * scale,
            "w[{k}]: VB mean {} vs exact {}",
            vb_mean[k],
            mean[k]
        );
        assert!(
            vb_sd[k] < sd[k],
            "w[{k}]: VB sd {} not below exact {}",
            vb_sd[k],
            sd[k]
        );
    }
    // Every sweep raised the bound (or left it within round-off).
    let t = &fit.outcome().bound_trace;
    assert!(t.len() > 2);
    for w in t.windows(2) {
        assert!(
            w[1] >= w[0] - 1e-12 * w[0].abs(),
            "bound fell: {} → {}",
            w[0],
            w[1]
        );
    }
}

/// Binomial counts with a log-odds θ + 0.5, θ ~ N(0, 1), against 1-D quadrature of the exact
/// posterior: the mean within 10%, the bound below the exact log evidence.
#[test]
fn binomial_logit_matches_one_dimensional_quadrature() {
    const COUNTS: [f64; 8] = [7.0, 9.0, 6.0, 8.0, 10.0, 7.0, 5.0, 8.0];
    let src = "plate N = 8\ntheta ~ Gaussian(0, 1)\ny[N] ~ Binomial(10, sigmoid_jj(theta + 0.5))\nobserve y\n";
    let mut d = DataSet::new();
    d.insert_array("y", 8, 1, COUNTS.to_vec(), None).unwrap();
    let fit = Model::from_source("binomial", src, &d)
        .unwrap()
        .fit(&Settings {
            tol: 0.0,
            max_iter: 200,
            ..Settings::default()
        })
        .unwrap();
    let post = fit.posterior("theta").unwrap();
    let (m, v) = (
        post.param("mean").unwrap().values[0],
        post.param("variance").unwrap().values[0],
    );
    let log_joint = |t: f64| {
        -0.5 * t * t - 0.5 * (2.0 * std::f64::consts::PI).ln()
            + COUNTS
                .iter()
                .map(|&y| {
                    occam_core::special::ln_binomial(10.0, y)
                        + y * log_sigmoid(t + 0.5)
                        + (10.0 - y) * log_sigmoid(-t - 0.5)
                })
                .sum::<f64>()
    };
    let rule = GaussLegendre::new(20);
    let top = log_joint(m);
    let moment = |k: i32| rule.composite(-8.0, 8.0, 64, |t| t.powi(k) * (log_joint(t) - top).exp());
    let z = moment(0);
    let (mean, second) = (moment(1) / z, moment(2) / z);
    let (log_z, sd) = (top + z.ln(), (second - mean * mean).sqrt());
    eprintln!(
        "binomial: quadrature log Z {log_z:.6}, mean {mean:.4}, sd {sd:.4}; VB bound {:.6}, mean {m:.4}, sd {:.4}",
        fit.bound(),
        v.sqrt()
    );
    assert!(fit.bound() < log_z);
    assert!((m - mean).abs() <= 0.1 * mean.abs(), "mean {m} vs {mean}");
    assert!(v.sqrt() < sd);
}

/// The ξ fixed point (J&J eq. (6), ξ_n² = ⟨η_n²⟩) read from the engine's fit: with ξ taken from
/// the fitted q, the bound (10.164) as a function of ξ equals the engine's bound and is
/// stationary in each ξ_n (central finite differences at a few rows), while at half or twice
/// that ξ_n its slope is clearly nonzero and points back to it.
#[test]
fn the_fitted_xi_is_a_stationary_point_of_the_bound_by_finite_differences() {
    let (x, y) = data();
    let fit = fitted(&x, &y);
    let post = fit.posterior("w").unwrap();
    let m = post.param("mean").unwrap().values.clone();
    let s = post.param("covariance").unwrap().values.clone();
    let xi = xi_of(&x, &m, &s);
    let at = prml_bound(&x, &y, &xi);
    assert!(
        (at - fit.bound()).abs() < 1e-8,
        "(10.164) at the fitted ξ {at} vs the engine's bound {}",
        fit.bound()
    );
    let h = 1e-4;
    let slope = |n: usize, xn: f64| {
        let mut lo = xi.clone();
        let mut hi = xi.clone();
        lo[n] = xn - h;
        hi[n] = xn + h;
        (prml_bound(&x, &y, &hi) - prml_bound(&x, &y, &lo)) / (2.0 * h)
    };
    for n in [0, 7, 13, 22, 29] {
        let (fd, below, above) = (
            slope(n, xi[n]),
            slope(n, 0.5 * xi[n]),
            slope(n, 2.0 * xi[n]),
        );
        eprintln!(
            "row {n}: ξ {:.4}, ∂L/∂ξ {fd:.2e} (at ξ/2 {below:.3e}, at 2ξ {above:.3e})",
            xi[n]
        );
        assert!(
            fd.abs() < 1e-8,
            "row {n}: ∂L/∂ξ = {fd} at the fitted ξ {}",
            xi[n]
        );
        assert!(
            below > 1e-5 && above < -1e-5,
            "row {n}: {below} at ξ/2, {above} at 2ξ"
        );
    }
}
