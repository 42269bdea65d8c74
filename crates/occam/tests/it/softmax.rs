//! `c ~ Categorical(softmax(theta))` (Böhning's bound, `occam_core::dist::CategoricalSoftmax`)
//! against 3-D quadrature of the exact posterior: 12 draws with counts (6, 4, 2) of 3
//! categories, theta ~ N(0, I). The bound is below the exact log evidence; the means and
//! standard deviations are printed beside the exact ones and the means asserted within 10%.

use occam::{DataSet, Model, Settings};
use occam_core::quad::GaussLegendre;
use occam_core::special::log_sum_exp;

const COUNTS: [f64; 3] = [6.0, 4.0, 2.0];

fn log_joint(t: [f64; 3]) -> f64 {
    let lse = log_sum_exp(&t);
    t.iter().map(|v| -0.5 * v * v).sum::<f64>() - 1.5 * (2.0 * std::f64::consts::PI).ln()
        + COUNTS
            .iter()
            .zip(&t)
            .map(|(n, v)| n * (v - lse))
            .sum::<f64>()
}

#[test]
fn categorical_softmax_bound_is_below_quadrature_and_means_match() {
    let values: Vec<f64> = COUNTS
        .iter()
        .enumerate()
        .flat_map(|(k, &n)| std::iter::repeat_n(k as f64, n as usize))
        .collect();
    let mut d = DataSet::new();
    d.insert_array("c", 12, 1, values, None).unwrap();
    let src = "plate K = 3\nplates N from data c\ntheta over K ~ MvGaussian(mean = 0, precision = 1)\nc[N] ~ Categorical(softmax(theta))\nobserve c\n";
    let fit = Model::from_source("softmax", src, &d)
        .unwrap()
        .fit(&Settings {
            tol: 0.0,
            max_iter: 300,
            ..Settings::default()
        })
        .unwrap();
    let t = &fit.outcome().bound_trace;
    assert!(t.windows(2).all(|w| w[1] >= w[0] - 1e-12 * w[0].abs()));
    let post = fit.posterior("theta").unwrap();
    let vb_mean = post.param("mean").unwrap().values.clone();
    let cov = post.param("covariance").unwrap().values.clone();
    let vb_sd: Vec<f64> = (0..3).map(|k| cov[4 * k].sqrt()).collect();
    // Tensor Gauss–Legendre over [−7, 7]³ (the prior alone puts < 1e-11 outside).
    let rule = GaussLegendre::new(16);
    let axis: Vec<(f64, f64)> = (0..8)
        .flat_map(|p| {
            let lo = -7.0 + 14.0 * p as f64 / 8.0;
            let h = 14.0 / 8.0;
            rule.nodes
                .iter()
                .zip(&rule.weights)
                .map(move |(x, w)| (lo + 0.5 * h * (x + 1.0), 0.5 * h * w))
        })
        .collect();
    let top = log_joint([vb_mean[0], vb_mean[1], vb_mean[2]]);
    let (mut z, mut m, mut s) = (0.0, [0.0; 3], [0.0; 3]);
    for &(a, qa) in &axis {
        for &(b, qb) in &axis {
            for &(c, qc) in &axis {
                let p = qa * qb * qc * (log_joint([a, b, c]) - top).exp();
                z += p;
                for (k, v) in [a, b, c].into_iter().enumerate() {
                    m[k] += p * v;
                    s[k] += p * v * v;
                }
            }
        }
    }
    let mean = m.map(|v| v / z);
    let sd = [0, 1, 2].map(|k| (s[k] / z - mean[k] * mean[k]).sqrt());
    let log_z = top + z.ln();
    eprintln!("softmax: quadrature log Z {log_z:.6}, means {mean:.4?}, sds {sd:.4?}");
    eprintln!(
        "softmax: Böhning bound {:.6}, means {vb_mean:.4?}, sds {vb_sd:.4?}",
        fit.bound()
    );
    assert!(fit.bound() < log_z, "bound {} ≥ log Z {log_z}", fit.bound());
    for k in 0..3 {
        let scale = mean[k].abs().max(sd[k]);
        assert!(
            (vb_mean[k] - mean[k]).abs() <= 0.1 * scale,
            "theta[{k}]: {} vs {}",
            vb_mean[k],
            mean[k]
        );
    }
}
