//! Gaussian Markov chains (linear dynamical systems): with every parameter known the chain's q is
//! the exact posterior and the bound the exact ln p(y) (both checked against a dense joint Gaussian,
//! with missing observations); with unknown dynamics the bound never decreases and a known
//! rotation is recovered. With observed inputs (x_t = A x_{t−1} + B u_t + noise) the same dense
//! check holds, B's message is checked term by term, and A, B and the noise are learnt with a
//! bound that never decreases.

use occam_core::linalg::Cholesky;
use occam_core::prelude::*;
use occam_core::Rng;
use rand::{Rng as _, SeedableRng};
use rand_distr::StandardNormal;

const D: usize = 2;

fn rotation(theta: f64, scale: f64) -> [f64; 4] {
    let (s, c) = theta.sin_cos();
    [scale * c, -scale * s, scale * s, scale * c]
}

/// Dense prior of x_0…x_{T−1}: means and the (T·D)² covariance, from x_0 ~ N(m, P0), x_t = A x_{t−1}
/// + N(0, diag(1/τ)).
fn dense_prior(
    a: &[f64],
    tau: &[f64],
    m: &[f64],
    p0: &[f64],
    steps: usize,
) -> (Vec<f64>, Vec<f64>) {
    let n = steps * D;
    let mut mean = vec![0.0; n];
    let mut cov = vec![0.0; n * n];
    mean[..D].copy_from_slice(m);
    for i in 0..D {
        for j in 0..D {
            cov[i * n + j] = p0[i * D + j];
        }
    }
    for t in 1..steps {
        for i in 0..D {
            mean[t * D + i] = (0..D).map(|k| a[i * D + k] * mean[(t - 1) * D + k]).sum();
        }
        // Cov(x_t, x_s) = A Cov(x_{t−1}, x_s) for s < t; Cov(x_t, x_t) = A Cov(x_{t−1}, x_t)ᵀ... built
        // row block by row block: rows of x_t = A · rows of x_{t−1}.
        for s in 0..t {
            for i in 0..D {
                for j in 0..D {
                    let v: f64 = (0..D)
                        .map(|k| a[i * D + k] * cov[((t - 1) * D + k) * n + s * D + j])
                        .sum();
                    cov[(t * D + i) * n + s * D + j] = v;
                    cov[(s * D + j) * n + t * D + i] = v;
                }
            }
        }
        for i in 0..D {
            for j in 0..D {
                let v: f64 = (0..D)
                    .map(|k| a[i * D + k] * cov[((t - 1) * D + k) * n + t * D + j])
                    .sum::<f64>()
                    + if i == j { 1.0 / tau[i] } else { 0.0 };
                cov[(t * D + i) * n + t * D + j] = v;
            }
        }
    }
    (mean, cov)
}

#[test]
fn known_parameters_give_the_exact_posterior_and_evidence() {
    let steps = 6;
    let a = rotation(0.4, 0.95);
    let tau = [4.0, 2.0];
    let (m, lam0) = ([0.5, -1.0], [2.0, 0.3, 0.3, 1.0]);
    let r = 3.0; // observation precision (per coordinate)
    let mut rng = Rng::seed_from_u64(1);
    let y: Vec<f64> = (0..steps * D)
        .map(|_| rng.random_range(-2.0..2.0))
        .collect();
    // Step 2 is missing entirely.
    let observed: Vec<bool> = (0..steps).map(|t| t != 2).collect();

    let mut g = Graph::new();
    let t = g.plate("T", steps);
    let rows = g.plate("R", D);
    let chain = GaussianMarkovChain {
        d: D,
        time: t,
        lengths: None,
    };
    let x = g
        .gaussian_markov_chain(
            "x",
            chain,
            &[],
            [
                cv(m.to_vec()),
                cv(lam0.to_vec()),
                cv(a.to_vec()),
                cv(tau.to_vec()),
            ],
        )
        .unwrap();
    let _ = rows;
    let yn = g
        .add(
            "y",
            MvGaussian { d: D },
            &[t],
            [p(x), cv(vec![r, 0.0, 0.0, r])],
        )
        .unwrap();
    g.observe_masked(yn, &y, Some(&observed)).unwrap();
    let mut vmp = g.compile().unwrap();
    let fit = vmp
        .run(&RunOptions {
            max_iter: 1,
            tol: 0.0,
            order: Some(vec![x]),
            ..Default::default()
        })
        .unwrap();

    // Dense: y_obs ~ N(S μ, S Σ Sᵀ + I/r), posterior by conditioning.
    let mut p0 = vec![0.0; 4];
    Cholesky::new(&lam0, D).unwrap().inverse_into(&mut p0);
    let (mu, sigma) = dense_prior(&a, &tau, &m, &p0, steps);
    let n = steps * D;
    let idx: Vec<usize> = (0..n).filter(|&i| observed[i / D]).collect();
    let no = idx.len();
    let mut sy = vec![0.0; no * no];
    for (r_, &i) in idx.iter().enumerate() {
        for (c_, &j) in idx.iter().enumerate() {
            sy[r_ * no + c_] = sigma[i * n + j] + if i == j { 1.0 / r } else { 0.0 };
        }
    }
    let chol = Cholesky::new(&sy, no).unwrap();
    let mut resid: Vec<f64> = idx.iter().map(|&i| y[i] - mu[i]).collect();
    let r0 = resid.clone();
    chol.solve_in_place(&mut resid);
    let quad: f64 = resid.iter().zip(&r0).map(|(a, b)| a * b).sum();
    let log_py =
        -0.5 * quad - 0.5 * chol.log_det() - 0.5 * no as f64 * (2.0 * std::f64::consts::PI).ln();
    eprintln!(
        "LDS known parameters: bound {:.12}, dense ln p(y) {log_py:.12}",
        fit.bound
    );
    assert!(
        (fit.bound - log_py).abs() < 1e-9 * log_py.abs(),
        "{} vs {log_py}",
        fit.bound
    );
    // Posterior means and covariances: μ + Σ Sᵀ Σ_y⁻¹ (y − Sμ), Σ − Σ Sᵀ Σ_y⁻¹ S Σ.
    let u = vmp.moments(x);
    let row = D + D * D;
    for i in 0..n {
        let post_mean = mu[i]
            + idx
                .iter()
                .zip(&resid)
                .map(|(&j, w)| sigma[i * n + j] * w)
                .sum::<f64>();
        let (tt, ii) = (i / D, i % D);
        assert!((u[tt * row + ii] - post_mean).abs() < 1e-9, "mean {i}");
        for jj in 0..D {
            let j = tt * D + jj;
            let mut col: Vec<f64> = idx.iter().map(|&k| sigma[k * n + j]).collect();
            chol.solve_in_place(&mut col);
            let cov = sigma[i * n + j]
                - idx
                    .iter()
                    .zip(&col)
                    .map(|(&k, w)| sigma[i * n + k] * w)
                    .sum::<f64>();
            let pm_j = mu[j]
                + idx
                    .iter()
                    .zip(&resid)
                    .map(|(&k, w)| sigma[j * n + k] * w)
                    .sum::<f64>();
            let second = u[tt * row + D + ii * D + jj];
            assert!(
                (second - (cov + post_mean * pm_j)).abs() < 1e-9,
                "second moment {i},{jj}"
            );
        }
    }
    // Ancestral draws from the prior: every state finite, the node's moments those of the draw.
    let draws = vmp.sample_prior(3).unwrap();
    let xs = &draws[x.index()];
    assert_eq!(xs.len(), steps * D);
    assert!(xs.iter().all(|v| v.is_finite()));
    assert_eq!(vmp.moments(x)[..D], xs[..D]);
}

/// Simulates x_t = A x_{t−1} + noise (precision `tau`), y_t = x_t + noise (precision `r`).
fn simulate(a: &[f64], tau: f64, r: f64, steps: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::seed_from_u64(seed);
    let mut x = [1.0, 0.0];
    let mut y = Vec::with_capacity(steps * D);
    for _ in 0..steps {
        for v in x {
            let e: f64 = rng.sample(StandardNormal);
            y.push(v + e / r.sqrt());
        }
        let next = [a[0] * x[0] + a[1] * x[1], a[2] * x[0] + a[3] * x[1]];
        for i in 0..D {
            let e: f64 = rng.sample(StandardNormal);
            x[i] = next[i] + e / tau.sqrt();
        }
    }
    y
}

#[test]
fn unknown_dynamics_recover_a_rotation() {
    let a_true = rotation(0.3, 0.99);
    let y = simulate(&a_true, 100.0, 100.0, 400, 2);
    let mut g = Graph::new();
    let t = g.plate("T", 400);
    let rows = g.plate("R", D);
    let a = g
        .add(
            "A",
            MvGaussian { d: D },
            &[rows],
            [cv(vec![0.0; D]), cv(vec![1e-2, 0.0, 0.0, 1e-2])],
        )
        .unwrap();
    let tau = g
        .add("tau", Gamma { shape: 1e-3 }, &[rows], [c(1e-3)])
        .unwrap();
    let chain = GaussianMarkovChain {
        d: D,
        time: t,
        lengths: None,
    };
    let x = g
        .gaussian_markov_chain(
            "x",
            chain,
            &[],
            [cv(vec![0.0; D]), cv(vec![1.0, 0.0, 0.0, 1.0]), p(a), p(tau)],
        )
        .unwrap();
    let yn = g
        .add(
            "y",
            MvGaussian { d: D },
            &[t],
            [p(x), cv(vec![100.0, 0.0, 0.0, 100.0])],
        )
        .unwrap();
    g.observe(yn, &y).unwrap();
    let mut vmp = g.compile().unwrap();
    let fit = vmp
        .run(&RunOptions {
            max_iter: 500,
            tol: 1e-10,
            order: Some(vec![x, a, tau]),
            decrease_is_error: true,
            check_every_update: true,
            ..Default::default()
        })
        .unwrap();
    let a_hat = vmp.mean(a).unwrap();
    let err = a_hat
        .iter()
        .zip(&a_true)
        .map(|(h, t)| (h - t).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "LDS rotation: A = {a_hat:?} (true {a_true:?}), max error {err:.4}, {} iterations, bound {:.3}",
        fit.iterations, fit.bound
    );
    assert!(err < 0.05, "max |Â − A| = {err}");
    assert!((vmp.fresh_bound() - vmp.bound()).abs() < 1e-9 * vmp.bound().abs());
}

/// Known parameters, sequences of the given lengths in one model (plate S, ragged, 2-D
/// observations with the steps beyond each end missing): the bound after one chain update.
fn ragged_lds_bound(lengths: &[usize], y: &[Vec<f64>]) -> f64 {
    let steps = *lengths.iter().max().unwrap();
    let mut g = Graph::new();
    let s = g.plate("S", lengths.len());
    let t = g.plate("T", steps);
    let chain = GaussianMarkovChain {
        d: D,
        time: t,
        lengths: Some(lengths.to_vec()),
    };
    let parents = [
        cv(vec![0.2, -0.1]),
        cv(vec![1.5, 0.2, 0.2, 0.8]),
        cv(rotation(0.5, 0.9).to_vec()),
        cv(vec![3.0, 5.0]),
    ];
    let x = g.gaussian_markov_chain("x", chain, &[s], parents).unwrap();
    let yn = g
        .add(
            "y",
            MvGaussian { d: D },
            &[s, t],
            [p(x), cv(vec![2.0, 0.0, 0.0, 2.0])],
        )
        .unwrap();
    let mut values = vec![0.0; lengths.len() * steps * D];
    let mut mask = vec![false; lengths.len() * steps];
    for (i, seq) in y.iter().enumerate() {
        for (tt, v) in seq.chunks(D).enumerate() {
            values[(i * steps + tt) * D..(i * steps + tt + 1) * D].copy_from_slice(v);
            mask[i * steps + tt] = true;
        }
    }
    g.observe_masked(yn, &values, Some(&mask)).unwrap();
    let mut vmp = g.compile().unwrap();
    let opts = RunOptions {
        max_iter: 1,
        tol: 0.0,
        order: Some(vec![x]),
        ..Default::default()
    };
    vmp.run(&opts).unwrap().bound
}

#[test]
fn ragged_lds_sequences_add_up() {
    let mut rng = Rng::seed_from_u64(4);
    let lengths = [5, 17, 1];
    let y: Vec<Vec<f64>> = lengths
        .iter()
        .map(|&l| (0..l * D).map(|_| rng.random_range(-2.0..2.0)).collect())
        .collect();
    let together = ragged_lds_bound(&lengths, &y);
    let separate: f64 = (0..3)
        .map(|i| ragged_lds_bound(&lengths[i..i + 1], &y[i..i + 1]))
        .sum();
    assert!(
        (together - separate).abs() < 1e-10 * separate.abs(),
        "{together} vs {separate}"
    );
}

/// Inputs (controls): x_t = A x_{t−1} + B u_t + noise. With every parameter known the bound is
/// the exact ln p(y) and q the exact posterior (dense joint Gaussian: the prior means gain B u_t,
/// the covariance is unchanged).
fn lds_with_inputs(b: Option<Vec<f64>>, u: &[f64], y: &[f64], steps: usize) -> (Vmp, NodeId) {
    let a = rotation(0.4, 0.95);
    let mut g = Graph::new();
    let t = g.plate("T", steps);
    let rows = g.plate("R", D);
    let chain = GaussianMarkovChain {
        d: D,
        time: t,
        lengths: None,
    };
    let b = match b {
        Some(v) => cv(v),
        None => {
            let bn = g
                .add(
                    "B",
                    MvGaussian { d: P },
                    &[rows],
                    [cv(vec![0.0; P]), cv(vec![1.0, 0.0, 0.0, 1.0])],
                )
                .unwrap();
            ParentSpec::Stacked(bn, rows)
        }
    };
    let parents = [
        cv(vec![0.5, -1.0]),
        cv(vec![2.0, 0.3, 0.3, 1.0]),
        cv(a.to_vec()),
        cv(vec![4.0, 2.0]),
        b,
    ];
    let x = g
        .gaussian_markov_chain_with_inputs("x", chain, &[], P, u, parents)
        .unwrap();
    let yn = g
        .add(
            "y",
            MvGaussian { d: D },
            &[t],
            [p(x), cv(vec![3.0, 0.0, 0.0, 3.0])],
        )
        .unwrap();
    g.observe(yn, y).unwrap();
    (g.compile().unwrap(), x)
}

const P: usize = 2;
const B: [f64; 4] = [1.0, -0.5, 0.3, 0.8];

fn inputs_data(steps: usize) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::seed_from_u64(4);
    let u: Vec<f64> = (0..steps * P)
        .map(|_| rng.random_range(-1.5..1.5))
        .collect();
    let y: Vec<f64> = (0..steps * D)
        .map(|_| rng.random_range(-2.0..2.0))
        .collect();
    (u, y)
}

#[test]
fn known_inputs_give_the_exact_posterior_and_evidence() {
    let steps = 6;
    let (u, y) = inputs_data(steps);
    let (mut vmp, x) = lds_with_inputs(Some(B.to_vec()), &u, &y, steps);
    let fit = vmp
        .run(&RunOptions {
            max_iter: 1,
            tol: 0.0,
            order: Some(vec![x]),
            ..Default::default()
        })
        .unwrap();
    let (a, tau, m, lam0, r) = (
        rotation(0.4, 0.95),
        [4.0, 2.0],
        [0.5, -1.0],
        [2.0, 0.3, 0.3, 1.0],
        3.0,
    );
    let mut p0 = vec![0.0; 4];
    Cholesky::new(&lam0, D).unwrap().inverse_into(&mut p0);
    let (_, sigma) = dense_prior(&a, &tau, &m, &p0, steps);
    // Prior means with the inputs: μ_0 = m, μ_t = A μ_{t−1} + B u_t.
    let n = steps * D;
    let mut mu = vec![0.0; n];
    mu[..D].copy_from_slice(&m);
    for t in 1..steps {
        for i in 0..D {
            mu[t * D + i] = (0..D)
                .map(|k| a[i * D + k] * mu[(t - 1) * D + k])
                .sum::<f64>()
                + (0..P).map(|k| B[i * P + k] * u[t * P + k]).sum::<f64>();
        }
    }
    let mut sy = sigma.clone();
    (0..n).for_each(|i| sy[i * n + i] += 1.0 / r);
    let chol = Cholesky::new(&sy, n).unwrap();
    let mut resid: Vec<f64> = (0..n).map(|i| y[i] - mu[i]).collect();
    let r0 = resid.clone();
    chol.solve_in_place(&mut resid);
    let quad: f64 = resid.iter().zip(&r0).map(|(a, b)| a * b).sum();
    let log_py =
        -0.5 * quad - 0.5 * chol.log_det() - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
    eprintln!(
        "LDS with inputs: bound {:.12}, dense ln p(y) {log_py:.12}",
        fit.bound
    );
    assert!(
        (fit.bound - log_py).abs() < 1e-9 * log_py.abs(),
        "{} vs {log_py}",
        fit.bound
    );
    let q = vmp.moments(x);
    let row = D + D * D;
    for i in 0..n {
        let post: f64 = mu[i] + (0..n).map(|j| sigma[i * n + j] * resid[j]).sum::<f64>();
        assert!((q[(i / D) * row + i % D] - post).abs() < 1e-9, "mean {i}");
    }
}

#[test]
fn the_message_to_b_is_the_inputs_against_the_smoothed_residuals() {
    let steps = 7;
    let (u, y) = inputs_data(steps);
    let (mut vmp, x) = lds_with_inputs(None, &u, &y, steps);
    let b = vmp.node("B").unwrap();
    vmp.initialize(1).unwrap();
    vmp.update(x).unwrap();
    vmp.update(b).unwrap();
    let after = vmp.natural(b);
    // Prior natural parameters of each row: [0, −½ col(I)]; the message is
    // [τ_i Σ_t u_t (⟨x_t,i⟩ − a_iᵀ⟨x_{t−1}⟩), −½ τ_i Σ_t u_t u_tᵀ] (t ≥ 1).
    let (a, tau) = (rotation(0.4, 0.95), [4.0, 2.0]);
    let q = vmp.moments(x);
    let row = D + D * D;
    let mean = |t: usize, i: usize| q[t * row + i];
    let len = P + P * P;
    for i in 0..D {
        for k in 0..P {
            let want: f64 = (1..steps)
                .map(|t| {
                    let pred: f64 = (0..D).map(|j| a[i * D + j] * mean(t - 1, j)).sum();
                    tau[i] * u[t * P + k] * (mean(t, i) - pred)
                })
                .sum();
            assert!(
                (after[i * len + k] - want).abs() < 1e-10,
                "row {i} input {k}"
            );
        }
        for kl in 0..P * P {
            let uu: f64 = (1..steps)
                .map(|t| u[t * P + kl / P] * u[t * P + kl % P])
                .sum();
            let prior = if kl / P == kl % P { -0.5 } else { 0.0 };
            let want = prior - 0.5 * tau[i] * uu;
            assert!(
                (after[i * len + P + kl] - want).abs() < 1e-10,
                "row {i} second {kl}"
            );
        }
    }
    // B, A-free: the bound never decreases with x and B updated in turn.
    let fit = vmp
        .run(&RunOptions {
            max_iter: 30,
            tol: 0.0,
            order: Some(vec![x, b]),
            decrease_is_error: true,
            check_every_update: true,
            ..Default::default()
        })
        .unwrap();
    assert!(fit.bound.is_finite());
}

#[test]
fn unknown_dynamics_control_and_noise_never_decrease_the_bound() {
    let steps = 30;
    let (u, _) = inputs_data(steps);
    // Data from the known system: y = x + small noise.
    let (a, mut rng) = (rotation(0.3, 0.9), Rng::seed_from_u64(9));
    let mut x = vec![0.5, -0.5];
    let mut y = Vec::new();
    for t in 0..steps {
        if t > 0 {
            let prev = x.clone();
            for i in 0..D {
                let noise: f64 = rng.sample(StandardNormal);
                x[i] = (0..D).map(|k| a[i * D + k] * prev[k]).sum::<f64>()
                    + (0..P).map(|k| B[i * P + k] * u[t * P + k]).sum::<f64>()
                    + 0.1 * noise;
            }
        }
        for v in &x {
            let noise: f64 = rng.sample(StandardNormal);
            y.push(v + 0.1 * noise);
        }
    }
    let mut g = Graph::new();
    let t = g.plate("T", steps);
    let rows = g.plate("R", D);
    let gauss = |g: &mut Graph, name: &str, d: usize| {
        let mut eye = vec![0.0; d * d];
        (0..d).for_each(|i| eye[i * d + i] = 1.0);
        g.add(name, MvGaussian { d }, &[rows], [cv(vec![0.0; d]), cv(eye)])
            .unwrap()
    };
    let an = gauss(&mut g, "A", D);
    let bn = gauss(&mut g, "B", P);
    let tau = g
        .add("tau", Gamma { shape: 1e-2 }, &[rows], [c(1e-2)])
        .unwrap();
    let chain = GaussianMarkovChain {
        d: D,
        time: t,
        lengths: None,
    };
    let parents = [
        cv(vec![0.0; D]),
        cv(vec![1.0, 0.0, 0.0, 1.0]),
        ParentSpec::Stacked(an, rows),
        ParentSpec::Stacked(tau, rows),
        ParentSpec::Stacked(bn, rows),
    ];
    let xn = g
        .gaussian_markov_chain_with_inputs("x", chain, &[], P, &u, parents)
        .unwrap();
    let yn = g
        .add(
            "y",
            MvGaussian { d: D },
            &[t],
            [p(xn), cv(vec![100.0, 0.0, 0.0, 100.0])],
        )
        .unwrap();
    g.observe(yn, &y).unwrap();
    let mut vmp = g.compile().unwrap();
    let fit = vmp
        .run(&RunOptions {
            max_iter: 200,
            tol: 0.0,
            order: Some(vec![xn, an, bn, tau]),
            decrease_is_error: true,
            check_every_update: true,
            ..Default::default()
        })
        .unwrap();
    assert!(fit.bound.is_finite());
    // The control matrix is recovered (the state is observed almost directly).
    let bm = vmp.mean(bn).unwrap();
    let err = bm
        .iter()
        .zip(&B)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    eprintln!("LDS with inputs: max |B̂ − B| = {err:.3} ({bm:?})");
    assert!(err < 0.15, "{bm:?}");
}
