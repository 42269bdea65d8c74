//! The row arithmetic of the Gaussian q-block against its plain full-matrix form: forming each
//! symmetric pair once (Λ_n from the messages, ⟨x xᵀ⟩ from m and Σ) must give the same bits.

use super::*;
use rand::Rng as _;

/// m_n, Σ_n, the members' marginals and the entropy gap of one row.
type Solved = (Vec<f64>, Vec<f64>, Vec<f64>, f64);

/// `solve` as first written: every entry of Λ_n formed from its own pair of messages.
fn solve_full(eta: &[f64], prior: &[f64], d: usize) -> Option<Solved> {
    let mut lambda = vec![0.0; d * d];
    let mut m = vec![0.0; d];
    for i in 0..d {
        for j in 0..d {
            lambda[i * d + j] = -(eta[d + i * d + j] + eta[d + j * d + i]);
        }
        lambda[i * d + i] -= 2.0 * prior[2 * i + 1];
        m[i] = eta[i] + prior[2 * i];
    }
    let mut l = vec![0.0; d * d];
    if !cholesky_into(&lambda, 1.0, d, &mut l) {
        return None;
    }
    let (mut cov, mut work) = (vec![0.0; d * d], vec![0.0; d * d]);
    chol_inverse_into(&l, d, &mut cov, &mut work);
    chol_solve_in_place(&l, d, &mut m);
    let mut g = -0.5 * chol_log_det(&l, d);
    let mut marginal = vec![0.0; 3 * d];
    for i in 0..d {
        let v = cov[i * d + i];
        g -= 0.5 * v.ln();
        marginal[3 * i] = m[i] / v;
        marginal[3 * i + 1] = -0.5 / v;
        marginal[3 * i + 2] = 0.5 * (m[i] * m[i] / v + v.ln() + LN_2PI);
    }
    Some((m, cov, marginal, g))
}

/// Messages [η, H] with H negative definite but not symmetric (its two triangles differ, as a
/// sum of child messages may), and member priors [φ₁, φ₂ < 0].
fn row(rng: &mut crate::Rng, d: usize) -> (Vec<f64>, Vec<f64>) {
    let a: Vec<f64> = (0..d * d).map(|_| rng.random::<f64>() - 0.5).collect();
    let mut eta: Vec<f64> = (0..d).map(|_| 3.0 * rng.random::<f64>() - 1.5).collect();
    for i in 0..d {
        for j in 0..d {
            let aat: f64 = (0..d).map(|k| a[i * d + k] * a[j * d + k]).sum();
            let skew = 0.1 * (rng.random::<f64>() - 0.5);
            eta.push(-0.5 * aat - if i == j { 0.3 } else { 0.0 } + skew);
        }
    }
    let prior = (0..d)
        .flat_map(|_| [rng.random::<f64>() - 0.5, -0.5 - rng.random::<f64>()])
        .collect();
    (eta, prior)
}

#[test]
fn solve_gives_the_bits_of_the_full_formation() {
    let mut rng = crate::Rng::seed_from_u64(27);
    for d in 1..=6 {
        for _ in 0..50 {
            let (eta, prior) = row(&mut rng, d);
            let (m0, cov0, marginal0, g0) = solve_full(&eta, &prior, d).expect("positive definite");
            let mut work = vec![f64::NAN; 3 * d * d];
            let (mut m, mut cov, mut marginal, mut g) =
                (vec![0.0; d], vec![0.0; d * d], vec![0.0; 3 * d], 0.0);
            assert!(solve(
                &eta,
                &prior,
                &mut work,
                &mut m,
                &mut cov,
                &mut marginal,
                &mut g
            ));
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&m), bits(&m0), "m, d = {d}");
            assert_eq!(bits(&cov), bits(&cov0), "Σ, d = {d}");
            assert_eq!(bits(&marginal), bits(&marginal0), "marginals, d = {d}");
            assert_eq!(g.to_bits(), g0.to_bits(), "gap, d = {d}");
        }
    }
}

#[test]
fn joint_moments_give_the_bits_of_the_full_loop() {
    let mut rng = crate::Rng::seed_from_u64(28);
    for d in 1..=6 {
        for _ in 0..50 {
            let (eta, prior) = row(&mut rng, d);
            let (m, cov, _, _) = solve_full(&eta, &prior, d).expect("positive definite");
            let mut full = vec![0.0; d + d * d];
            full[..d].copy_from_slice(&m);
            for i in 0..d {
                for j in 0..d {
                    full[d + i * d + j] = m[i] * m[j] + cov[i * d + j];
                }
            }
            let mut u = vec![f64::NAN; d + d * d];
            joint_moments(&m, &cov, &mut u);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&u), bits(&full), "d = {d}");
        }
    }
}
