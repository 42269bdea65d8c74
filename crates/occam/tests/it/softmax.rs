//! Multinomial regression `c[N] ~ Categorical(softmax(w @ X[N]))` (Böhning's bound,
//! `occam_core::dist::CategoricalSoftmax`) against quadrature of the exact posterior: 30 points
//! with 2 standard-normal inputs (no bias), 3 classes, every class with its own weights
//! w[k] ~ N(0, I₂) (the model fixes no class at 0).
//!
//! The exact posterior is 6-D but only 4 directions carry data: softmax is unchanged when the
//! same vector is added to every class's weights, so with the orthonormal basis
//! u₀ = (1, 1, 1)/√3, u₁ = (1, −1, 0)/√2, u₂ = (1, 1, −2)/√6 of the class axis, w[·, d] = Σ_j u_j v_{jd},
//! the prior N(0, I₆) is N(0, I₆) in v and the likelihood reads only v₁, v₂: v₀ keeps its prior
//! N(0, I₂) exactly and the 4-D posterior of (v₁, v₂) is integrated by tensor Gauss–Legendre.
//! The means and sds of w follow: E w[k, d] = Σ_{j≥1} u_j[k] E v_{jd}, var w[k, d] = u₀[k]² +
//! Σ_{j,j'≥1} u_j[k] u_j'[k] cov(v_{jd}, v_{j'd}).
//!
//! Asserted: the bound below the exact log evidence, every sweep raising it, the means within
//! 10% of the exact ones (measured 5.3–8.7% off). The 10% on the sds is out of reach:
//! q's are 45–60% too small (see the test's comment); they are printed beside the exact ones,
//! with the sds of the contrasts w[k] − w[0], and asserted on that side.

use occam::{DataSet, Model, Settings};
use occam_core::quad::GaussLegendre;
use occam_core::special::log_sum_exp;
use rand::{Rng as _, SeedableRng};

const MODEL: &str = "plate K = 3
plates N, D from data X
data X[N] over D
w[K] over D ~ MvGaussian(mean = 0, precision = identity)
c[N] ~ Categorical(softmax(w @ X[N]))
observe c
";

/// The class axis' orthonormal basis u₀, u₁, u₂ (module docs), as `U[k][j] = u_j[k]`.
fn basis() -> [[f64; 3]; 3] {
    let (a, b, c) = (
        3f64.sqrt().recip(),
        2f64.sqrt().recip(),
        6f64.sqrt().recip(),
    );
    [[a, b, c], [a, -b, c], [a, 0.0, -2.0 * c]]
}

/// 30 points, 2 standard-normal inputs (Box–Muller); classes drawn from the softmax of the
/// weights [[1.5, −0.5], [−1, 1.5], [−0.5, −1]] with fixed seeds.
fn data() -> (Vec<[f64; 2]>, Vec<usize>) {
    const W: [[f64; 2]; 3] = [[1.5, -0.5], [-1.0, 1.5], [-0.5, -1.0]];
    let mut rng = occam_core::Rng::seed_from_u64(41);
    let mut normal = || {
        let (u, v): (f64, f64) = (rng.random(), rng.random());
        (-2.0 * (1.0 - u).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let x: Vec<[f64; 2]> = (0..30).map(|_| [normal(), normal()]).collect();
    let mut rng = occam_core::Rng::seed_from_u64(42);
    let c = x
        .iter()
        .map(|r| {
            let eta = W.map(|w| w[0] * r[0] + w[1] * r[1]);
            let lse = log_sum_exp(&eta);
            let u: f64 = rng.random();
            let mut acc = 0.0;
            (0..3)
                .find(|&k| {
                    acc += (eta[k] - lse).exp();
                    u < acc
                })
                .unwrap_or(2)
        })
        .collect();
    (x, c)
}

/// One number per class and input, `[k][d]`.
type PerClass = [[f64; 2]; 3];

/// The exact posterior's log evidence and the means and sds of w ([k][d]) by 4-D tensor
/// Gauss–Legendre over (v₁₀, v₁₁, v₂₀, v₂₁) on `centre ± 7 half` (5 panels of 8 points per
/// axis); v₀ integrates out exactly (module docs). Also the covariance of those four.
fn quadrature(
    x: &[[f64; 2]],
    c: &[usize],
    centre: [f64; 4],
    half: [f64; 4],
) -> (f64, PerClass, PerClass, [[f64; 4]; 4]) {
    let u = basis();
    // η_k(v) = Σ_d Σ_{j≥1} u_j[k] x_d v_{jd}: per row a 3 × 4 matrix over v = (v₁₀, v₁₁, v₂₀, v₂₁).
    let rows: Vec<[[f64; 4]; 3]> = x
        .iter()
        .map(|r| {
            std::array::from_fn(|k| {
                [
                    u[k][1] * r[0],
                    u[k][1] * r[1],
                    u[k][2] * r[0],
                    u[k][2] * r[1],
                ]
            })
        })
        .collect();
    let log_joint = |v: [f64; 4]| {
        let prior =
            v.iter().map(|t| -0.5 * t * t).sum::<f64>() - 2.0 * (2.0 * std::f64::consts::PI).ln();
        prior
            + rows
                .iter()
                .zip(c)
                .map(|(a, &y)| {
                    let eta: [f64; 3] =
                        std::array::from_fn(|k| (0..4).map(|i| a[k][i] * v[i]).sum());
                    eta[y] - log_sum_exp(&eta)
                })
                .sum::<f64>()
    };
    let rule = GaussLegendre::new(8);
    let axis = |i: usize| -> Vec<(f64, f64)> {
        let (lo, hi) = (centre[i] - 7.0 * half[i], centre[i] + 7.0 * half[i]);
        let h = (hi - lo) / 5.0;
        (0..5)
            .flat_map(|p| {
                let a = lo + p as f64 * h;
                rule.nodes
                    .iter()
                    .zip(&rule.weights)
                    .map(move |(t, wt)| (a + 0.5 * h * (t + 1.0), 0.5 * h * wt))
            })
            .collect()
    };
    let ax: Vec<Vec<(f64, f64)>> = (0..4).map(axis).collect();
    let top = log_joint(centre);
    let (mut z, mut m, mut s) = (0.0, [0.0; 4], [[0.0; 4]; 4]);
    for &(a, qa) in &ax[0] {
        for &(b, qb) in &ax[1] {
            for &(e, qe) in &ax[2] {
                for &(f, qf) in &ax[3] {
                    let v = [a, b, e, f];
                    let p = qa * qb * qe * qf * (log_joint(v) - top).exp();
                    z += p;
                    for i in 0..4 {
                        m[i] += p * v[i];
                        for j in 0..4 {
                            s[i][j] += p * v[i] * v[j];
                        }
                    }
                }
            }
        }
    }
    let mv = m.map(|t| t / z);
    let cov = |i: usize, j: usize| s[i][j] / z - mv[i] * mv[j];
    // v index of (j ≥ 1, d): 2(j − 1) + d.
    let idx = |j: usize, d: usize| 2 * (j - 1) + d;
    let mean = std::array::from_fn(|k| {
        std::array::from_fn(|d| (1..3).map(|j| u[k][j] * mv[idx(j, d)]).sum())
    });
    let sd = std::array::from_fn(|k| {
        std::array::from_fn(|d| {
            let mut var = u[k][0] * u[k][0];
            for j in 1..3 {
                for jj in 1..3 {
                    var += u[k][j] * u[k][jj] * cov(idx(j, d), idx(jj, d));
                }
            }
            f64::sqrt(var)
        })
    });
    let cov_v = std::array::from_fn(|i| std::array::from_fn(|j| cov(i, j)));
    (top + z.ln(), mean, sd, cov_v)
}

#[test]
fn multinomial_regression_bound_is_below_quadrature_and_means_match() {
    let (x, c) = data();
    let mut d = DataSet::new();
    d.insert_array("X", 30, 2, x.iter().flatten().copied().collect(), None)
        .unwrap();
    d.insert_array("c", 30, 1, c.iter().map(|&k| k as f64).collect(), None)
        .unwrap();
    let fit = Model::from_source("softmax", MODEL, &d)
        .unwrap()
        .fit(&Settings {
            tol: 0.0,
            max_iter: 300,
            ..Settings::default()
        })
        .unwrap();
    let t = &fit.outcome().bound_trace;
    assert!(t.len() > 2);
    assert!(t.windows(2).all(|w| w[1] >= w[0] - 1e-12 * w[0].abs()));
    let post = fit.posterior("w").unwrap();
    let mean = post.param("mean").unwrap();
    assert_eq!(mean.shape, vec![3, 2]);
    let cov = &post.param("covariance").unwrap().values;
    let vb_mean: [[f64; 2]; 3] =
        std::array::from_fn(|k| std::array::from_fn(|d| mean.values[2 * k + d]));
    let vb_sd: [[f64; 2]; 3] =
        std::array::from_fn(|k| std::array::from_fn(|d| cov[4 * k + 3 * d].sqrt()));
    // The box: q's means and sds rotated into v (q is independent across classes, so
    // var v_{jd} = Σ_k u_j[k]² var w[k, d]), half = 1.5 of those sds: the box ± 7 half is ± 10.5
    // of q's sds (± 7 exact sds if q's are too small by a third), each panel 4.2 of q's sds.
    let u = basis();
    let centre: [f64; 4] = std::array::from_fn(|i| {
        let (j, d) = (1 + i / 2, i % 2);
        (0..3).map(|k| u[k][j] * vb_mean[k][d]).sum()
    });
    let half: [f64; 4] = std::array::from_fn(|i| {
        let (j, d) = (1 + i / 2, i % 2);
        1.5 * (0..3)
            .map(|k| u[k][j] * u[k][j] * vb_sd[k][d] * vb_sd[k][d])
            .sum::<f64>()
            .sqrt()
    });
    let (log_z, exact_mean, exact_sd, cov_v) = quadrature(&x, &c, centre, half);
    eprintln!(
        "softmax: counts {:?}",
        (0..3)
            .map(|k| c.iter().filter(|&&y| y == k).count())
            .collect::<Vec<_>>()
    );
    eprintln!("softmax: quadrature log Z {log_z:.6}, means {exact_mean:.4?}, sds {exact_sd:.4?}");
    eprintln!(
        "softmax: Böhning bound {:.6}, means {vb_mean:.4?}, sds {vb_sd:.4?}",
        fit.bound()
    );
    assert!(fit.bound() < log_z, "bound {} ≥ log Z {log_z}", fit.bound());
    for k in 0..3 {
        for d in 0..2 {
            let (vb, exact) = (vb_mean[k][d], exact_mean[k][d]);
            eprintln!(
                "w[{k}, {d}]: mean {:+.1}%, sd {:+.1}%",
                100.0 * (vb / exact - 1.0),
                100.0 * (vb_sd[k][d] / exact_sd[k][d] - 1.0)
            );
            assert!(
                (vb - exact).abs() <= 0.1 * exact.abs(),
                "w[{k}, {d}] mean: {vb} vs {exact}"
            );
            // Measured 45–60% too small, far outside the 10%: q is independent across
            // classes and each point adds Böhning's curvature A_kk = 1/3 to every class alone,
            // so even the direction w[0] + w[1] + w[2] that no data informs (exact variance 1,
            // a third of each marginal's) is narrowed. Asserted on that side.
            assert!(
                vb_sd[k][d] < exact_sd[k][d],
                "w[{k}, {d}] sd: {} not below exact {}",
                vb_sd[k][d],
                exact_sd[k][d]
            );
        }
    }
    // The identified contrasts w[k] − w[0]: exact sd from the v covariance (coefficients
    // u_j[k] − u_j[0]), q's from its independent classes.
    for k in 1..3 {
        for d in 0..2 {
            let coef = |j: usize| u[k][j] - u[0][j];
            let var: f64 = (1..3)
                .flat_map(|j| (1..3).map(move |jj| (j, jj)))
                .map(|(j, jj)| coef(j) * coef(jj) * cov_v[2 * (j - 1) + d][2 * (jj - 1) + d])
                .sum();
            let vb = (vb_sd[k][d].powi(2) + vb_sd[0][d].powi(2)).sqrt();
            eprintln!(
                "w[{k}, {d}] − w[0, {d}]: sd {vb:.4} against exact {:.4} ({:+.1}%)",
                var.sqrt(),
                100.0 * (vb / var.sqrt() - 1.0)
            );
        }
    }
}
