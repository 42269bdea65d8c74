//! Importance-sampled nodes (Winn §4.4) on models small enough for 1-D quadrature: a Gaussian
//! mean with Student-t observations, a truncated-Gaussian prior and a two-component mixture
//! prior on a mean with Gaussian observations. With one latent variable, the optimal q is the
//! exact posterior and the bound at it is ln p(D); the sampled node's q and bound estimate them.
//!
//! Tolerances from the reported S and S_eff: the self-normalised estimate of a posterior
//! expectation E[g] has a standard error ≈ sd_post(g)/√S_eff, and ln Ẑ one of
//! ≈ √(1/S_eff − 1/S) (the relative variance of Ẑ is (S/S_eff − 1)/S to first order). Each check
//! allows 4 of those standard errors, plus 1e-9 for the quadrature.

use occam::{DataSet, Fitted, Model, Settings};
use occam_core::quad::GaussLegendre;
use occam_core::special::ln_gamma;
use rand::{Rng as _, SeedableRng};

fn settings(seed: u64) -> Settings {
    Settings {
        tol: 0.0,
        max_iter: 20,
        seed,
        ..Settings::default()
    }
}

pub(crate) fn fit(src: &str, y: &[f64], seed: u64) -> Fitted {
    let mut d = DataSet::new();
    d.insert_array("y", y.len(), 1, y.to_vec(), None).unwrap();
    Model::from_source("sampled", src, &d)
        .unwrap()
        .fit(&settings(seed))
        .unwrap()
}

/// ln ∫ exp(f) over [lo, hi] and the first four raw moments of the normalised exp(f): composite
/// 20-point Gauss–Legendre.
fn quadrature(lo: f64, hi: f64, panels: usize, f: impl Fn(f64) -> f64) -> (f64, [f64; 4]) {
    let rule = GaussLegendre::new(20);
    let h = (hi - lo) / panels as f64;
    let mut pts = Vec::new();
    for p in 0..panels {
        let c = lo + (p as f64 + 0.5) * h;
        for (x, w) in rule.nodes.iter().zip(&rule.weights) {
            pts.push((c + 0.5 * h * x, 0.5 * h * w));
        }
    }
    let vals: Vec<f64> = pts.iter().map(|&(x, _)| f(x)).collect();
    let top = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (mut z, mut m) = (0.0, [0.0; 4]);
    for (&(x, w), v) in pts.iter().zip(&vals) {
        let e = w * (v - top).exp();
        z += e;
        for (k, mk) in m.iter_mut().enumerate() {
            *mk += e * x.powi(k as i32 + 1);
        }
    }
    (top + z.ln(), m.map(|v| v / z))
}

pub(crate) fn ln_normal(x: f64, m: f64, p: f64) -> f64 {
    0.5 * (p.ln() - (2.0 * std::f64::consts::PI).ln() - p * (x - m) * (x - m))
}

fn ln_t(y: f64, mu: f64, s: f64, nu: f64) -> f64 {
    let r = (y - mu) / s;
    ln_gamma(0.5 * (nu + 1.0))
        - ln_gamma(0.5 * nu)
        - 0.5 * (nu * std::f64::consts::PI).ln()
        - s.ln()
        - 0.5 * (nu + 1.0) * (1.0 + r * r / nu).ln()
}

/// Checks the fit's mean, variance and bound against the quadrature, within 4 standard errors
/// from S_eff (module docs), or within 1e-9 when q was in closed form; returns (S, S_eff)
/// ((0, ∞) in closed form).
fn check(f: &Fitted, log_z: f64, m: [f64; 4], what: &str) -> (usize, f64) {
    let post = f.posterior("mu").unwrap();
    let mean = post.param("mean").unwrap().values[0];
    let var = post.param("variance").unwrap().values[0];
    let r = &f.outcome().sampled[0];
    // A q in closed form (a truncated or mixture prior with Gaussian children): no draws, no
    // Monte Carlo error, the bound's kind exact; only the quadrature's 1e-9 is allowed.
    let closed = r.samples.is_empty();
    let (s, s_eff) = if closed {
        assert_eq!(r.closed_form, 1, "{what}");
        (0, f64::INFINITY)
    } else {
        (r.samples[0], r.s_eff[0])
    };
    let (qm, qv) = (m[0], m[1] - m[0] * m[0]);
    // Central fourth moment, for the standard error of the variance.
    let mu4 = m[3] - 4.0 * m[2] * m[0] + 6.0 * m[1] * m[0] * m[0] - 3.0 * m[0].powi(4);
    let (se_mean, se_var) = ((qv / s_eff).sqrt(), ((mu4 - qv * qv) / s_eff).sqrt());
    let se_z = if closed {
        0.0
    } else {
        (1.0 / s_eff - 1.0 / s as f64).max(0.0).sqrt()
    };
    eprintln!(
        "{what}: S {s}, S_eff {s_eff:.0}; mean {mean:.6} vs {qm:.6} (±{se_mean:.1e}), variance {var:.6} vs {qv:.6} (±{se_var:.1e}), bound {:.6} vs ln p(D) {log_z:.6} (±{se_z:.1e})",
        f.bound()
    );
    assert!(
        (mean - qm).abs() < 4.0 * se_mean + 1e-9,
        "{what}: mean {mean} vs {qm}"
    );
    assert!(
        (var - qv).abs() < 4.0 * se_var + 1e-9,
        "{what}: variance {var} vs {qv}"
    );
    assert!(
        (f.bound() - log_z).abs() < 4.0 * se_z + 1e-9,
        "{what}: bound {} vs {log_z}",
        f.bound()
    );
    let kind = if closed {
        occam::quality::BoundQuality::Exact
    } else {
        occam::quality::BoundQuality::Approximate
    };
    assert_eq!(f.outcome().bound_quality, kind, "{what}");
    (s, s_eff)
}

fn t_data() -> Vec<f64> {
    // t_3 draws around 2 with scale 0.8 and two gross outliers.
    let mut rng = occam_core::Rng::seed_from_u64(5);
    let g = rand_distr::Gamma::new(1.5, 1.0 / 1.5).unwrap();
    let mut y: Vec<f64> = (0..14)
        .map(|_| {
            let z: f64 = rng.sample(rand_distr::StandardNormal);
            let l: f64 = rng.sample(g);
            2.0 + 0.8 * z / l.sqrt()
        })
        .collect();
    y.extend([9.0, -6.0]);
    y
}

const T_MODEL: &str = "plates N from data y\nmu ~ Gaussian(1, 0.1)\n\
                       y[N] ~ StudentT(nu = 3, scale = 0.8, mean = mu)\nobserve y\n";

#[test]
fn student_t_observations_match_quadrature() {
    let y = t_data();
    let f = fit(T_MODEL, &y, 1);
    let (log_z, m) = quadrature(-20.0, 20.0, 400, |mu| {
        ln_normal(mu, 1.0, 0.1) + y.iter().map(|&v| ln_t(v, mu, 0.8, 3.0)).sum::<f64>()
    });
    check(&f, log_z, m, "Student-t");
}

#[test]
fn truncated_prior_matches_quadrature() {
    // Data around 1 under a prior N(0, 1/0.5) truncated to [1.5, 6]: the posterior piles against
    // the lower end.
    let y = [0.7, 1.3, 0.9, 1.6, 1.1, 0.4, 1.8, 1.2];
    let src = "plates N from data y\nmu ~ TruncatedGaussian(0, 0.5, 1.5, 6)\ny[N] ~ Gaussian(mu, 2)\nobserve y\n";
    let f = fit(src, &y, 1);
    let s = 0.5f64.sqrt();
    let ln_mass = (occam_core::special::normal::norm_cdf(6.0 * s)
        - occam_core::special::normal::norm_cdf(1.5 * s))
    .ln();
    let (log_z, m) = quadrature(1.5, 6.0, 200, |mu| {
        ln_normal(mu, 0.0, 0.5) - ln_mass + y.iter().map(|&v| ln_normal(v, mu, 2.0)).sum::<f64>()
    });
    check(&f, log_z, m, "truncated prior");
}

#[test]
fn mixture_prior_matches_quadrature() {
    // Few, noisy points between the components: a bimodal posterior.
    let y = [0.4, -0.9, 1.5];
    let src = "plates N from data y\nmu ~ GaussianMixture2(0.3, -2, 4, 1.5, 1)\ny[N] ~ Gaussian(mu, 0.5)\nobserve y\n";
    let f = fit(src, &y, 1);
    let prior = |mu: f64| {
        let a = 0.3f64.ln() + ln_normal(mu, -2.0, 4.0);
        let b = 0.7f64.ln() + ln_normal(mu, 1.5, 1.0);
        a.max(b) + (-(a - b).abs()).exp().ln_1p()
    };
    let (log_z, m) = quadrature(-25.0, 25.0, 400, |mu| {
        prior(mu) + y.iter().map(|&v| ln_normal(v, mu, 0.5)).sum::<f64>()
    });
    check(&f, log_z, m, "mixture prior");
}

#[test]
fn same_seed_same_bits_and_another_seed_other_bits() {
    let y = t_data();
    let (a, b, c) = (
        fit(T_MODEL, &y, 3),
        fit(T_MODEL, &y, 3),
        fit(T_MODEL, &y, 4),
    );
    let mean = |f: &Fitted| f.posterior("mu").unwrap().param("mean").unwrap().values[0];
    assert_eq!(a.bound().to_bits(), b.bound().to_bits());
    assert_eq!(mean(&a).to_bits(), mean(&b).to_bits());
    assert_ne!(mean(&a).to_bits(), mean(&c).to_bits());
}

/// A hard case: a prior 100 times broader than the posterior of 16 Student-t points. Winn's
/// proposal (the prior, (4.16)) alone gives S_eff of a few percent of S; the adapted sampler
/// still reaches the target S_eff, and matches quadrature.
#[test]
fn a_far_proposal_is_adapted() {
    let y = t_data();
    let src = "plates N from data y\nmu ~ Gaussian(0, 1e-4)\n\
               y[N] ~ StudentT(nu = 3, scale = 0.8, mean = mu)\nobserve y\n";
    let f = fit(src, &y, 1);
    let (log_z, m) = quadrature(-40.0, 40.0, 800, |mu| {
        ln_normal(mu, 0.0, 1e-4) + y.iter().map(|&v| ln_t(v, mu, 0.8, 3.0)).sum::<f64>()
    });
    let (_, s_eff) = check(&f, log_z, m, "far proposal");
    assert!(s_eff >= 250.0, "S_eff {s_eff}");
    assert!(
        f.outcome().warnings.is_empty(),
        "{:?}",
        f.outcome().warnings
    );
}

/// Each element's draws are keyed by the seed, the node and the element: 40 sampled means fitted
/// on 1 and on 3 threads give the same bits.
#[test]
fn any_thread_count_gives_the_same_bits() {
    let mut rng = occam_core::Rng::seed_from_u64(9);
    let y: Vec<f64> = (0..200)
        .map(|i| (i / 5) as f64 * 0.1 + rng.random::<f64>() - 0.5)
        .collect();
    let src = "plate K = 40\nplate N = 5\nmu[K] ~ Gaussian(0, 0.1)\n\
               y[K, N] ~ StudentT(nu = 3, scale = 0.5, mean = mu[K])\nobserve y\n";
    let run = |threads: usize| {
        occam_core::threads::on_threads(threads, || {
            let mut d = DataSet::new();
            d.insert_array("y", 40, 5, y.clone(), None).unwrap();
            Model::from_source("sampled", src, &d)
                .unwrap()
                .fit(&settings(2))
                .unwrap()
        })
        .unwrap()
    };
    let (a, b) = (run(1), run(3));
    assert_eq!(a.bound().to_bits(), b.bound().to_bits());
    let means = |f: &Fitted| {
        f.posterior("mu")
            .unwrap()
            .param("mean")
            .unwrap()
            .values
            .clone()
    };
    let (ma, mb) = (means(&a), means(&b));
    assert_eq!(ma.len(), 40);
    assert!(ma.iter().zip(&mb).all(|(x, y)| x.to_bits() == y.to_bits()));
}

/// ln Z and the first four raw moments of the exact posterior of a two-component Gaussian
/// mixture prior w N(m₁, 1/γ₁) + (1 − w) N(m₂, 1/γ₂) times Gaussian observations y of precision
/// λ each: a two-component mixture whose component k is N((γₖmₖ + λΣy)/(γₖ + Nλ), 1/(γₖ + Nλ)),
/// weighted by its evidence.
pub(crate) fn mixture_posterior(
    w: f64,
    m: [f64; 2],
    g: [f64; 2],
    y: &[f64],
    lam: f64,
) -> (f64, [f64; 4]) {
    let (big, b) = (lam * y.len() as f64, lam * y.iter().sum::<f64>());
    let c: f64 = y.iter().map(|&v| ln_normal(v, 0.0, lam)).sum();
    let comp = |k: usize| {
        let p = g[k] + big;
        let ln_z = [w, 1.0 - w][k].ln() + c + 0.5 * (g[k] / p).ln() - 0.5 * g[k] * m[k] * m[k]
            + (g[k] * m[k] + b).powi(2) / (2.0 * p);
        (ln_z, (g[k] * m[k] + b) / p, 1.0 / p)
    };
    let (a, z) = (comp(0), comp(1));
    let top = a.0.max(z.0);
    let log_z = top + ((a.0 - top).exp() + (z.0 - top).exp()).ln();
    let mut mom = [0.0; 4];
    for (lz, mu, v) in [a, z] {
        let r = (lz - log_z).exp();
        mom[0] += r * mu;
        mom[1] += r * (mu * mu + v);
        mom[2] += r * (mu.powi(3) + 3.0 * mu * v);
        mom[3] += r * (mu.powi(4) + 6.0 * mu * mu * v + 3.0 * v * v);
    }
    (log_z, mom)
}

/// Spike and slab, 0.9 N(0, 1/1000) + 0.1 N(0, 1), with three observations of precision 1
/// (total λ = 3) near 1. With Gaussian children q is the prior tilted by their message, a
/// two-component mixture in closed form (`SampledPrior::tilted_moments`): the fit's mean,
/// variance and bound equal the closed-form posterior to 1e-10 and do not depend on the seed
/// (same bits for seeds 0–3), and nothing is sampled. (Sampled, the moment-matched envelope was
/// 3–8 standard errors off here; with the tilted proposal, within Monte Carlo error.)
#[test]
fn spike_and_slab_prior_matches_closed_form() {
    let y = [1.2, 0.7, 1.1];
    let src = "plates N from data y\nmu ~ GaussianMixture2(0.9, 0, 1000, 0, 1)\n\
               y[N] ~ Gaussian(mu, 1)\nobserve y\n";
    let (log_z, m) = mixture_posterior(0.9, [0.0, 0.0], [1000.0, 1.0], &y, 1.0);
    let (qm, qv) = (m[0], m[1] - m[0] * m[0]);
    let mut first = None;
    for seed in 0..4 {
        let f = fit(src, &y, seed);
        let post = f.posterior("mu").unwrap();
        let r = &f.outcome().sampled[0];
        assert!(r.samples.is_empty() && r.closed_form == 1, "{r:?}");
        let got = [
            post.param("mean").unwrap().values[0],
            post.param("variance").unwrap().values[0],
            f.bound(),
        ];
        for (what, g, exact) in [
            ("mean", got[0], qm),
            ("variance", got[1], qv),
            ("bound", got[2], log_z),
        ] {
            assert!(
                (g - exact).abs() < 1e-10 * exact.abs().max(1.0),
                "spike and slab, seed {seed}, {what}: {g} vs {exact}"
            );
        }
        let bits = got.map(f64::to_bits);
        assert_eq!(*first.get_or_insert(bits), bits, "seed {seed}");
    }
}

/// Re-estimation noise and the decrease check (driver `check_decrease`): a sampled node's draws
/// are keyed by seed, node, element and pass, never by sweep, so each sweep reuses the same
/// standard normals, but with a random precision parent the proposal moves every sweep and the
/// estimate can drop by noise alone (seed 0: by 3.0e-5 at iteration 3, an error under strict
/// before decreases within the Monte Carlo error were skipped). A strict run of many sweeps
/// passes and warns of nothing.
#[test]
fn a_sampled_node_under_a_random_precision_passes_strict() {
    let y = t_data();
    let src = "plates N from data y\ntau ~ Gamma(2, 2)\nmu ~ Gaussian(0, tau)\n\
               y[N] ~ StudentT(nu = 3, scale = 0.8, mean = mu)\nobserve y\n";
    let mut d = DataSet::new();
    d.insert_array("y", y.len(), 1, y.to_vec(), None).unwrap();
    for seed in 0..4 {
        let f = Model::from_source("sampled", src, &d)
            .unwrap()
            .fit(&Settings {
                max_iter: 200,
                strict: true,
                ..settings(seed)
            })
            .unwrap();
        assert!(
            f.outcome().warnings.is_empty(),
            "{:?}",
            f.outcome().warnings
        );
    }
}

/// The estimate is one fresh pass at the plan's S (module `estimate`), never a pass chosen by its
/// own S_eff, so over seeds it is unbiased to within its Monte Carlo error: 32 seeds of the
/// Student-t model under the broad prior N(0, 1/1e-4) (where the proposal is refitted and the old
/// "keep the best pass" rule selected), their average posterior mean within 3 standard errors
/// of the average (from the seeds' own spread) of quadrature's, and that spread within a factor
/// 1.5 of the reported sd/√S_eff (its own relative error with 32 seeds is about 13%).
#[test]
fn the_student_t_estimate_is_unbiased_over_seeds() {
    let y = t_data();
    let src = "plates N from data y\nmu ~ Gaussian(0, 1e-4)\n\
               y[N] ~ StudentT(nu = 3, scale = 0.8, mean = mu)\nobserve y\n";
    let (_, m) = quadrature(-40.0, 40.0, 800, |mu| {
        ln_normal(mu, 0.0, 1e-4) + y.iter().map(|&v| ln_t(v, mu, 0.8, 3.0)).sum::<f64>()
    });
    let qv = m[1] - m[0] * m[0];
    let n = 32;
    let (mut means, mut reported) = (Vec::new(), 0.0);
    for seed in 0..n {
        let f = fit(src, &y, 1000 + seed);
        means.push(f.posterior("mu").unwrap().param("mean").unwrap().values[0]);
        reported += (qv / f.outcome().sampled[0].s_eff[0]).sqrt() / n as f64;
    }
    let avg = means.iter().sum::<f64>() / n as f64;
    let spread = (means.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let se_avg = spread / (n as f64).sqrt();
    eprintln!(
        "Student-t over {n} seeds: average mean {avg:.6} vs {:.6} ({:+.2} SE of the average); spread {spread:.3e}, reported {reported:.3e}, ratio {:.3}",
        m[0],
        (avg - m[0]) / se_avg,
        spread / reported
    );
    assert!(
        (avg - m[0]).abs() < 3.0 * se_avg,
        "average {avg} vs {} (±{se_avg})",
        m[0]
    );
    assert!(
        spread / reported > 1.0 / 1.5 && spread / reported < 1.5,
        "spread {spread} vs reported {reported}"
    );
}
