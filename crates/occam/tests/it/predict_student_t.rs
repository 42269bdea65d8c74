//! The posterior predictive of Student-t values (`Fitted::predict`, `occam predict`): y = μ + s·t
//! with μ from q and t a standard t_ν, so its mean ⟨μ⟩ and variance Var_q(μ) + s²ν/(ν − 2) are
//! exact (infinite for ν ≤ 2, the mean undefined for ν ≤ 1), and its draws are Monte Carlo of that
//! predictive: their mean and variance within 3 standard errors of the exact ones.

use std::collections::BTreeMap;

use occam::{DataSet, Model, Settings};

const SRC: &str = "plates N from data y\nmu ~ Gaussian(0, 0.01)\n\
                   y[N] ~ StudentT(nu = NU, scale = 0.8, mean = mu)\nobserve y\n";

fn fit(nu: &str) -> occam::Fitted {
    let y = [1.2, 2.9, 2.1, 1.7, 8.0, 2.4, -4.0, 2.2, 1.9, 2.5];
    let mut d = DataSet::new();
    d.insert_array("y", y.len(), 1, y.to_vec(), None).unwrap();
    Model::from_source("t.occam", &SRC.replace("NU", nu), &d)
        .unwrap()
        .fit(&Settings {
            seed: 3,
            ..Settings::default()
        })
        .unwrap()
}

/// ⟨μ⟩ and Var_q(μ) of the fit.
fn q_of_mu(f: &occam::Fitted) -> (f64, f64) {
    let v = &f.compiled().vmp;
    let u = v.moments(v.node("mu").unwrap());
    (u[0], u[1] - u[0] * u[0])
}

fn predict(f: &occam::Fitted, draws: usize) -> occam::predict::Predictive {
    let sizes: BTreeMap<String, u64> = [("N".to_string(), 4)].into();
    let opts = occam::predict::PredictOptions {
        draws,
        seed: 5,
        ..Default::default()
    };
    let mut p = f.predict(&DataSet::new(), &sizes, &opts).unwrap();
    assert_eq!(p.len(), 1);
    p.remove(0)
}

#[test]
fn student_t_values_have_the_exact_predictive_moments_and_their_draws_agree() {
    let (nu, s2) = (6.0, 0.64);
    let f = fit("6");
    let (m, v) = q_of_mu(&f);
    let noise = s2 * nu / (nu - 2.0);
    let var = v + noise;
    let draws = 40_000;
    let p = predict(&f, draws);
    assert!(p.exact);
    assert_eq!(p.mean.len(), 4);
    for j in 0..4 {
        assert!(
            (p.mean[j] - m).abs() <= 1e-12 * m.abs(),
            "{} vs {m}",
            p.mean[j]
        );
        assert!(
            (p.sd[j] * p.sd[j] / var - 1.0).abs() < 1e-12,
            "{} vs {}",
            p.sd[j],
            var.sqrt()
        );
    }
    // The draws of the first new row (one per draw, independent; the rows of one draw share
    // its μ, so they are not): their mean and variance against the exact ones, 3 standard
    // errors. The fourth central moment of μ + s·t is 3v² + 6v σ_t² + μ₄(t), σ_t² = s²ν/(ν − 2)
    // and μ₄(t) = σ_t⁴ (3 + 6/(ν − 4)).
    assert_eq!(p.samples.len(), draws * 4);
    let first: Vec<f64> = p.samples.iter().step_by(4).copied().collect();
    let k = first.len() as f64;
    let mean = first.iter().sum::<f64>() / k;
    let second = first.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / k;
    let mu4 = 3.0 * v * v + 6.0 * v * noise + noise * noise * (3.0 + 6.0 / (nu - 4.0));
    let se_mean = (var / k).sqrt();
    let se_var = ((mu4 - var * var) / k).sqrt();
    assert!(
        (mean - m).abs() < 3.0 * se_mean,
        "draws' mean {mean} vs {m} (SE {se_mean})"
    );
    assert!(
        (second - var).abs() < 3.0 * se_var,
        "draws' variance {second} vs {var} (SE {se_var})"
    );
    eprintln!(
        "exact mean {m:.5} sd {:.5}; draws mean {mean:.5} ({:+.2} SE), variance {second:.5} vs \
         {var:.5} ({:+.2} SE)",
        var.sqrt(),
        (mean - m) / se_mean,
        (second - var) / se_var
    );
}

/// ν ≤ 2: the variance is infinite (sd ∞, not the draws' finite spread); ν ≤ 1 (Cauchy): the mean
/// is undefined too.
#[test]
fn heavy_tails_say_so() {
    let f = fit("2");
    let (m, _) = q_of_mu(&f);
    let p = predict(&f, 100);
    assert!(p.sd.iter().all(|s| s.is_infinite()), "{:?}", p.sd);
    assert!(p.mean.iter().all(|&x| (x - m).abs() <= 1e-12 * m.abs()));
    let p = predict(&fit("1"), 100);
    assert!(p.mean.iter().all(|x| x.is_nan()), "{:?}", p.mean);
    assert!(p.sd.iter().all(|s| s.is_infinite()));
}
