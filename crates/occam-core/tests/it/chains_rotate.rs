//! The engine's half of the rotation of a linear dynamical system: x_t → R x_t of a Gaussian
//! chain's q (`Vmp::transform_gaussian_chain`) gives exactly the posterior of the model whose
//! parameters are transformed with it, and `Vmp::mix_gaussian_rows` (a_i' = T Σ_k Q_ik a_k, kept
//! as marginals) permutes rows exactly and agrees with the per-element transform when Q = I.

use occam_core::linalg::inverse_and_log_det;
use occam_core::prelude::*;
use occam_core::Rng;
use rand::{Rng as _, SeedableRng};

const D: usize = 2;
const STEPS: usize = 7;

fn mul(a: &[f64], b: &[f64], n: usize, k: usize, m: usize) -> Vec<f64> {
    occam_core::linalg::mat_mul(a, b, n, k, m)
}

fn transpose(a: &[f64]) -> Vec<f64> {
    (0..D * D).map(|k| a[(k % D) * D + k / D]).collect()
}

/// Known parameters of an LDS observed directly, y_t ~ N(x_t, P⁻¹): (m0, Λ0, A, τ, P, y).
struct Lds {
    m0: Vec<f64>,
    lam0: Vec<f64>,
    a: Vec<f64>,
    tau: Vec<f64>,
    prec: Vec<f64>,
    y: Vec<f64>,
}

impl Lds {
    /// The chain's engine after its exact update.
    fn fit(&self) -> (Vmp, NodeId) {
        let mut g = Graph::new();
        let t = g.plate("T", STEPS);
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
                    cv(self.m0.clone()),
                    cv(self.lam0.clone()),
                    cv(self.a.clone()),
                    cv(self.tau.clone()),
                ],
            )
            .unwrap();
        let y = g
            .add(
                "y",
                MvGaussian { d: D },
                &[t],
                [p(x), cv(self.prec.clone())],
            )
            .unwrap();
        g.observe(y, &self.y).unwrap();
        let mut vmp = g.compile().unwrap();
        vmp.update(x).unwrap();
        (vmp, x)
    }

    /// The same model in the coordinates x' = R x: m0' = R m0, Λ0' = R⁻ᵀΛ0R⁻¹, A' = R A R⁻¹,
    /// y' = R y with P' = R⁻ᵀPR⁻¹, and the noise τ' (R's noise covariance R diag(τ)⁻¹ Rᵀ must
    /// be diagonal: given).
    fn transformed(&self, r: &[f64], tau: Vec<f64>) -> Lds {
        let (r_inv, _) = inverse_and_log_det(r, D).unwrap();
        let r_inv_t = transpose(&r_inv);
        let sandwich = |m: &[f64]| mul(&mul(&r_inv_t, m, D, D, D), &r_inv, D, D, D);
        Lds {
            m0: mul(r, &self.m0, D, D, 1),
            lam0: sandwich(&self.lam0),
            a: mul(&mul(r, &self.a, D, D, D), &r_inv, D, D, D),
            tau,
            prec: sandwich(&self.prec),
            y: self
                .y
                .chunks_exact(D)
                .flat_map(|y| mul(r, y, D, D, 1))
                .collect(),
        }
    }
}

fn example() -> Lds {
    let mut rng = Rng::seed_from_u64(4);
    Lds {
        m0: vec![0.5, -1.0],
        lam0: vec![2.0, 0.3, 0.3, 1.0],
        a: vec![0.9, -0.3, 0.25, 0.8],
        tau: vec![3.0, 3.0],
        prec: vec![1.5, 0.2, 0.2, 0.7],
        y: (0..STEPS * D)
            .map(|_| rng.random_range(-2.0..2.0))
            .collect(),
    }
}

fn assert_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() < 1e-10 * (1.0 + y.abs()),
            "{what}[{k}]: {x} vs {y}"
        );
    }
}

#[test]
fn a_transformed_chain_is_the_posterior_of_the_transformed_model() {
    let lds = example();
    let (c, s) = (0.3f64.cos(), 0.3f64.sin());
    // An orthogonal R (isotropic noise stays isotropic) and a diagonal one (diagonal noise stays
    // diagonal, τ_i/s_i², and ln|det R| ≠ 0).
    let cases = [
        (vec![c, -s, s, c], lds.tau.clone()),
        (vec![2.0, 0.0, 0.0, 0.5], vec![3.0 / 4.0, 3.0 / 0.25]),
    ];
    for (r, tau) in cases {
        let (mut vmp, x) = lds.fit();
        let sums = vmp.gaussian_chain_sums(x).unwrap();
        assert_eq!(sums.steps, STEPS);
        vmp.transform_gaussian_chain(x, &r).unwrap();
        let (direct, x2) = lds.transformed(&r, tau).fit();
        assert_close(vmp.moments(x), direct.moments(x2), "moments");
        let (a, b) = (
            vmp.gaussian_chain_sums(x).unwrap(),
            direct.gaussian_chain_sums(x2).unwrap(),
        );
        assert_close(&a.prev, &b.prev, "S₋");
        assert_close(&a.cur, &b.cur, "S₊");
        assert_close(&a.cross, &b.cross, "C");
        assert_close(&a.initial_second, &b.initial_second, "Σ⟨x_0x_0ᵀ⟩");
        // x_0's prior against the first means: ⟨Λ0'⟩⟨m0'⟩⟨x_0'⟩ᵀ = R⁻ᵀ (Λ0 m0 ⟨x_0⟩ᵀ) Rᵀ.
        let (r_inv, _) = inverse_and_log_det(&r, D).unwrap();
        let expect = mul(
            &mul(&transpose(&r_inv), &sums.initial_first, D, D, D),
            &transpose(&r),
            D,
            D,
            D,
        );
        assert_close(&b.initial_first, &expect, "initial_first");
    }
}

#[test]
fn chains_with_inputs_are_refused_by_name() {
    let mut g = Graph::new();
    let t = g.plate("T", 3);
    let chain = GaussianMarkovChain {
        d: 1,
        time: t,
        lengths: None,
    };
    let x = g
        .gaussian_markov_chain_with_inputs(
            "x",
            chain,
            &[],
            1,
            &[0.0, 1.0, 2.0],
            [
                cv(vec![0.0]),
                cv(vec![1.0]),
                cv(vec![0.5]),
                cv(vec![1.0]),
                cv(vec![1.0]),
            ],
        )
        .unwrap();
    let mut vmp = g.compile().unwrap();
    vmp.update(x).unwrap();
    let e = vmp
        .transform_gaussian_chain(x, &[2.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`x` has inputs"), "{e}");
    assert!(vmp.gaussian_chain_sums(x).is_err());
}

/// A GaussianARD node of `n` latent rows over a plate, each updated once from observed children.
fn rows(n: usize) -> (Vmp, NodeId) {
    let mut g = Graph::new();
    let r = g.plate("R", n);
    let k = g.plate("K", 3);
    let w = g
        .add("w", GaussianArd { d: D }, &[r], [c(0.0), c(1.0)])
        .unwrap();
    let mut rng = Rng::seed_from_u64(8);
    let y = g
        .add(
            "y",
            MvGaussian { d: D },
            &[r, k],
            [p(w), cv(vec![2.0, 0.4, 0.4, 1.0])],
        )
        .unwrap();
    let values: Vec<f64> = (0..n * 3 * D)
        .map(|_| rng.random_range(-2.0..2.0))
        .collect();
    g.observe(y, &values).unwrap();
    let mut vmp = g.compile().unwrap();
    vmp.update(w).unwrap();
    (vmp, w)
}

#[test]
fn mixing_rows_by_a_permutation_permutes_them_and_by_the_identity_transforms_each() {
    let row = D + D * D;
    let (mut vmp, w) = rows(3);
    let before = vmp.moments(w).to_vec();
    // Q a cyclic permutation, T = I: row i' = row (i + 1) mod 3, exactly.
    let q = [0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0];
    vmp.mix_gaussian_rows(w, &q, &[1.0, 0.0, 0.0, 1.0]).unwrap();
    let after = vmp.moments(w).to_vec();
    for i in 0..3 {
        let j = (i + 1) % 3;
        assert_close(
            &after[i * row..(i + 1) * row],
            &before[j * row..(j + 1) * row],
            "permuted row",
        );
    }
    // Q = I: the per-element transform x → T x.
    let t = [1.3, -0.4, 0.2, 0.8];
    let (mut other, w2) = rows(3);
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    vmp.mix_gaussian_rows(w, &eye, &t).unwrap();
    other
        .mix_gaussian_rows(w2, &q, &[1.0, 0.0, 0.0, 1.0])
        .unwrap();
    other.transform_gaussian(w2, &t).unwrap();
    assert_close(vmp.moments(w), other.moments(w2), "moments");
    assert_close(vmp.natural(w), other.natural(w2), "natural parameters");
    assert!((vmp.bound() - other.bound()).abs() < 1e-10 * other.bound().abs());
    // A Q of the wrong size is refused by name.
    let e = vmp
        .mix_gaussian_rows(w, &[1.0], &t)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`w`"), "{e}");
}
