//! The pieces of importance sampling's per-draw work (module `importance`): ln p(D | θ) from the
//! prepared per-component terms equal, bit for bit, to the row-by-row sum of `ln_f`; the
//! symmetric proposal's matrix M[a][j] = ln q_a(θ_j) from the prepared factors (module
//! `qdensity`) equal, bit for bit, to the factors' own densities; and the log-permanent (in plain
//! arithmetic, and in logarithms where that underflows) against the sum over every permutation.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::density::{log_lik, log_sum_exp, row_in_component, Theta};
use super::flat::{recognise, Flat, Prior};
use super::permanent::{log_permanent, log_permanent_in_logs};
use super::proposal::{prior_draw, Proposal, Q};
use crate::{DataSet, Model};

fn flat(text: &str, name: &str, cols: usize, v: Vec<f64>) -> Flat {
    let mut d = DataSet::new();
    d.insert_array(name, v.len() / cols, cols, v, None).unwrap();
    let m = Model::from_source("m.occam", text, &d).unwrap();
    recognise(m.loaded()).unwrap()
}

/// Recognised models with every kind of observation and prior the proposal handles.
fn models() -> Vec<Flat> {
    vec![
        flat(
            "plate K = 3\nplates N, D from data x\npi ~ Dirichlet(0.5) over K\n\
             mu[K, D] ~ Gaussian(0, 0.01)\ng[K, D] ~ Gamma(0.5, 0.5)\nz[N] ~ Categorical(pi)\n\
             x[N, D] ~ Gaussian(mu[z], g[z])\n",
            "x",
            2,
            vec![
                -2.1, 0.3, -1.8, 0.1, 2.2, -0.4, 1.9, -0.2, 0.1, 3.0, -0.3, 2.7,
            ],
        ),
        flat(
            "plate K = 2\nplates N, D from data b\npi ~ Dirichlet(1) over K\n\
             p[K, D] ~ Beta(1, 2)\nz[N] ~ Categorical(pi)\nb[N, D] ~ Bernoulli(p[z])\n",
            "b",
            3,
            vec![1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0],
        ),
        flat(
            "plate K = 2\nplate N from data c\npi ~ Dirichlet(1) over K\nr[K] ~ Gamma(2, 1)\n\
             z[N] ~ Categorical(pi)\nc[N] ~ Poisson(r[z])\n",
            "c",
            1,
            vec![0.0, 3.0, 1.0, 7.0, 9.0, 2.0],
        ),
        flat(
            "plate K = 2\nplate C = 3\nplate N from data y\npi ~ Dirichlet(1) over K\n\
             e[K] ~ Dirichlet(1.5) over C\nz[N] ~ Categorical(pi)\ny[N] ~ Categorical(e[z])\n",
            "y",
            1,
            vec![0.0, 2.0, 2.0, 1.0, 0.0, 2.0],
        ),
        flat(
            "plate N from data x\ntau ~ Gamma(2, 2)\nmu ~ Gaussian(0, 0.5 * tau)\n\
             x[N] ~ Gaussian(mu, tau)\n",
            "x",
            1,
            vec![1.3, 0.2, 2.1, 0.9],
        ),
    ]
}

/// ln p(D | θ) as the module computed it before the prepared terms: the row-by-row sum of
/// `row_in_component` (the densities `ln_f` of every value).
fn log_lik_by_rows(flat: &Flat, theta: &Theta) -> f64 {
    let ln_w: Vec<f64> = match flat.weights {
        Some(w) => theta[w].iter().map(|p| p.ln()).collect(),
        None => vec![0.0],
    };
    let mut total = 0.0;
    let mut per = vec![0.0; flat.k];
    for i in 0..flat.n {
        for (k, slot) in per.iter_mut().enumerate() {
            *slot = ln_w[k] + row_in_component(flat, theta, i, k);
        }
        total += log_sum_exp(&per);
    }
    total
}

#[test]
fn log_lik_is_the_row_by_row_sum_bit_for_bit() {
    let mut rng = StdRng::seed_from_u64(11);
    for f in models() {
        for _ in 0..200 {
            let theta = prior_draw(&f, &mut rng);
            let (a, b) = (log_lik(&f, &theta), log_lik_by_rows(&f, &theta));
            assert!(
                a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan(),
                "{a} vs {b}"
            );
        }
    }
}

/// Factors q of every element of every parameter, different per element.
fn factors(flat: &Flat) -> Vec<Vec<Q>> {
    (0..flat.params.len())
        .map(|i| {
            (0..flat.elements(i))
                .map(|e| {
                    let x = e as f64;
                    match flat.params[i].prior {
                        Prior::Gaussian { .. } | Prior::NormalGamma { .. } => {
                            Q::Gaussian(0.7 * x - 1.0, 0.3 + 0.2 * x)
                        }
                        Prior::Gamma { .. } => Q::Gamma(1.5 + x, 0.8 + 0.1 * x),
                        Prior::Beta { .. } => Q::Beta(1.2 + x, 2.5 - 0.1 * x),
                        Prior::Dirichlet { width, .. } => {
                            Q::Dirichlet((0..width).map(|j| 0.6 + x + 0.4 * j as f64).collect())
                        }
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_relabelling_matrix_is_each_factors_density_bit_for_bit() {
    let mut rng = StdRng::seed_from_u64(5);
    for f in models().into_iter().filter(|f| f.has_states()) {
        let qs = factors(&f);
        let q = Proposal::from_factors(&f, qs.clone(), 0.1);
        for _ in 0..200 {
            let theta = q.sample(&f, &mut rng);
            let (fixed, m) = q.relabel_matrix(&f, &theta);
            // The matrix as the factors' own densities give it, parameter by parameter.
            let k = f.k;
            let mut want = vec![0.0; k * k];
            let mut want_fixed = 0.0;
            for (i, p) in f.params.iter().enumerate() {
                let w = p.width();
                let elem = |e: usize| &theta[i][e * w..(e + 1) * w];
                if Some(i) == f.weights {
                    let Q::Dirichlet(al) = &qs[i][0] else {
                        panic!("weights' q is a Dirichlet");
                    };
                    want_fixed += Q::Dirichlet(al.clone()).ln_pdf(&vec![1.0; k]);
                    for a in 0..k {
                        for j in 0..k {
                            want[a * k + j] += (al[a] - 1.0) * theta[i][j].ln();
                        }
                    }
                } else if p.by_k {
                    for a in 0..k {
                        for j in 0..k {
                            for d in 0..p.cols {
                                want[a * k + j] +=
                                    qs[i][a * p.cols + d].ln_pdf(elem(j * p.cols + d));
                            }
                        }
                    }
                } else {
                    want_fixed += (0..qs[i].len())
                        .map(|e| qs[i][e].ln_pdf(elem(e)))
                        .sum::<f64>();
                }
            }
            assert_eq!(fixed.to_bits(), want_fixed.to_bits());
            for (a, b) in m.iter().zip(&want) {
                assert!(
                    a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan(),
                    "{a} vs {b}"
                );
            }
        }
    }
}

/// ln Σ_σ exp Σ_a m[a][σ(a)] over every permutation, one by one.
fn log_permanent_by_permutations(m: &[f64], k: usize) -> f64 {
    fn walk(m: &[f64], k: usize, row: usize, used: &mut Vec<bool>, acc: f64, out: &mut Vec<f64>) {
        if row == k {
            out.push(acc);
            return;
        }
        for j in 0..k {
            if !used[j] {
                used[j] = true;
                walk(m, k, row + 1, used, acc + m[row * k + j], out);
                used[j] = false;
            }
        }
    }
    let mut terms = Vec::new();
    walk(m, k, 0, &mut vec![false; k], 0.0, &mut terms);
    log_sum_exp(&terms)
}

#[test]
fn log_permanent_is_the_sum_over_permutations() {
    let mut rng = StdRng::seed_from_u64(3);
    for k in 1..=7 {
        for case in 0..40 {
            // Entries of a few nats; then spreads of hundreds of nats (every permutation but a
            // few negligible); then every entry near −1000 (plain arithmetic would underflow).
            let (spread, shift) = match case % 4 {
                0 | 1 => (3.0, 0.0),
                2 => (400.0, 0.0),
                _ => (5.0, -1000.0),
            };
            let m: Vec<f64> = (0..k * k)
                .map(|_| shift + spread * (rng.random::<f64>() - 0.5))
                .collect();
            let want = log_permanent_by_permutations(&m, k);
            for (how, got) in [
                ("plain", log_permanent(&m, k)),
                ("in logs", log_permanent_in_logs(&m, k)),
            ] {
                assert!(
                    (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "k = {k} case {case} {how}: {got} vs {want}"
                );
            }
        }
    }
    // Both rows best in the same column, the other entries e^−800 below: the scaled sum
    // underflows to 0 and is recomputed in logarithms, 2 e^−800.
    let m = [0.0, -800.0, 0.0, -800.0];
    let got = log_permanent(&m, 2);
    assert!((got - (2f64.ln() - 800.0)).abs() < 1e-12, "{got}");
    // A row that no column can take: the permanent is 0.
    let m = [0.0, 1.0, f64::NEG_INFINITY, f64::NEG_INFINITY];
    assert_eq!(log_permanent(&m, 2), f64::NEG_INFINITY);
}
