use super::*;
use crate::bnn::prior::PriorKind;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

fn toy(n: usize, arch: Architecture, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let x: Vec<f64> = (0..n * arch.inputs)
        .map(|_| rng.random_range(-1.5..1.5))
        .collect();
    let t: Vec<f64> = x
        .chunks_exact(arch.inputs)
        .map(|r| (2.0 * r[0]).sin() + 0.1 * rng.random_range(-1.0..1.0))
        .collect();
    (x, t)
}

fn random_theta(lay: Layout, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut th = vec![0.0; lay.len()];
    for m in 0..lay.m {
        for i in 0..lay.k {
            th[lay.mean(m) + i] = rng.random_range(-1.0..1.0);
            th[lay.log_var(m) + i] = rng.random_range(-3.0..-0.5);
            if lay.m > 1 {
                th[lay.r_mean(m) + i] = th[lay.mean(m) + i] + rng.random_range(-0.3..0.3);
                th[lay.r_log_var(m) + i] = rng.random_range(-1.0..0.5);
            }
        }
    }
    th
}

#[test]
fn expected_error_matches_monte_carlo() {
    let arch = Architecture::new(2, 3).unwrap();
    let (x, t) = toy(15, arch, 1);
    let p = Problem {
        arch,
        x: &x,
        t: &t,
        form: G2Form::Exact,
    };
    let lay = Layout {
        m: 1,
        k: arch.n_weights(),
    };
    let th = random_theta(lay, 2);
    let exact = p.expected_error(&th, lay, 0, None);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let (mut sum, mut sum2, n_mc) = (0.0, 0.0, 40_000);
    let mut w = vec![0.0; lay.k];
    for _ in 0..n_mc {
        for (i, wi) in w.iter_mut().enumerate() {
            let z: f64 = StandardNormal.sample(&mut rng);
            *wi = th[i] + (0.5 * th[lay.k + i]).exp() * z;
        }
        let e: f64 = (0..p.n())
            .map(|n| 0.5 * (arch.forward(&w, &x[2 * n..2 * n + 2]) - t[n]).powi(2))
            .sum();
        sum += e;
        sum2 += e * e;
    }
    let mean = sum / n_mc as f64;
    let se = ((sum2 / n_mc as f64 - mean * mean) / n_mc as f64).sqrt();
    assert!(
        (exact - mean).abs() < 4.0 * se,
        "exact {exact} vs MC {mean} ± {se}"
    );
    // The c = 1.24 form differs from the exact one only through ⟨g²⟩ (|Δ| ≤ 0.006 per unit).
    let approx = Problem {
        form: G2Form::Approx,
        ..p
    }
    .expected_error(&th, lay, 0, None);
    assert!((approx - exact).abs() < 0.006 * 15.0 * 3.0);
}

#[test]
fn weight_objective_gradient_matches_finite_differences() {
    let arch = Architecture::new(2, 3).unwrap();
    let (x, t) = toy(12, arch, 4);
    for form in [G2Form::Approx, G2Form::Exact] {
        for m in [1usize, 3] {
            let p = Problem {
                arch,
                x: &x,
                t: &t,
                form,
            };
            let lay = Layout {
                m,
                k: arch.n_weights(),
            };
            let th = random_theta(lay, 5 + m as u64);
            let q: Vec<f64> = vec![1.0 / m as f64; m];
            let prec: Vec<f64> = (0..lay.k).map(|k| 0.5 + 0.1 * k as f64).collect();
            let mut g = vec![0.0; lay.len()];
            weight_objective(&p, &th, lay, &q, &prec, 7.0, Some(&mut g));
            for i in 0..lay.len() {
                let h = 1e-5;
                let mut a = th.clone();
                let mut b = th.clone();
                a[i] += h;
                b[i] -= h;
                let fa = weight_objective(&p, &a, lay, &q, &prec, 7.0, None).0;
                let fb = weight_objective(&p, &b, lay, &q, &prec, 7.0, None).0;
                let fd = (fa - fb) / (2.0 * h);
                assert!(
                    (fd - g[i]).abs() < 1e-6 * (1.0 + fd.abs()),
                    "{form:?} M={m} θ[{i}]: {} vs {fd}",
                    g[i]
                );
            }
        }
    }
}

#[test]
fn hyper_updates_never_decrease_the_bound() {
    let arch = Architecture::new(2, 3).unwrap();
    let (x, t) = toy(20, arch, 8);
    let p = Problem {
        arch,
        x: &x,
        t: &t,
        form: G2Form::Exact,
    };
    for kind in [
        PriorKind::Single,
        PriorKind::Grouped,
        PriorKind::Ard,
        PriorKind::Nrd,
    ] {
        for m in [1usize, 2] {
            let lay = Layout {
                m,
                k: arch.n_weights(),
            };
            let th = random_theta(lay, 9);
            let q = vec![1.0 / m as f64; m];
            let prior = Prior::new(kind, &arch, Gamma { a: 3e-4, b: 1e-3 });
            let noise = Gamma { a: 0.02, b: 1e-4 };
            let mut hyper = Hyper {
                alpha: prior.init_posterior(0.3),
                beta: Gamma { a: 10.0, b: 0.05 },
            };
            let mut last = bound(&p, &th, lay, &q, &prior, &hyper, &noise).total;
            for _ in 0..4 {
                update_hyper(&p, &th, lay, &q, &prior, &mut hyper, &noise);
                let now = bound(&p, &th, lay, &q, &prior, &hyper, &noise).total;
                assert!(
                    now >= last - 1e-9 * last.abs(),
                    "{kind:?} M={m}: {now} < {last}"
                );
                last = now;
            }
        }
    }
}

#[test]
fn weight_objective_is_the_theta_dependent_part_of_the_bound() {
    let arch = Architecture::new(2, 2).unwrap();
    let (x, t) = toy(10, arch, 10);
    let p = Problem {
        arch,
        x: &x,
        t: &t,
        form: G2Form::Approx,
    };
    let lay = Layout {
        m: 2,
        k: arch.n_weights(),
    };
    let q = [0.5, 0.5];
    let prior = Prior::new(PriorKind::Grouped, &arch, Gamma { a: 1.0, b: 1.0 });
    let noise = Gamma { a: 1.0, b: 1.0 };
    let hyper = Hyper {
        alpha: prior.init_posterior(0.7),
        beta: Gamma { a: 5.0, b: 1.0 },
    };
    let prec = prior.weight_precisions(&hyper.alpha);
    let diff = |th: &[f64]| {
        bound(&p, th, lay, &q, &prior, &hyper, &noise).total
            - weight_objective(&p, th, lay, &q, &prec, hyper.beta.mean(), None).0
    };
    let a = diff(&random_theta(lay, 1));
    let b = diff(&random_theta(lay, 2));
    assert!((a - b).abs() < 1e-10, "{a} vs {b}");
}
