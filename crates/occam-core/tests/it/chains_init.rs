//! Random starts of chains (`Init::Random`): q starts at a path drawn from the chain's prior, is a
//! proper q with a finite bound (for a discrete chain exactly ln p(path, y)), depends only on the
//! seed, and — with known parameters, where one update of the chain is exact — the fit ends where
//! the prior start ends. Given moments are refused.

use occam_core::prelude::*;

const K: usize = 2;
const Y: [f64; 7] = [-1.1, -0.2, 0.9, 1.2, 0.1, -0.9, -1.3];
const P0: [f64; 2] = [0.6, 0.4];
const A: [f64; 4] = [0.8, 0.2, 0.3, 0.7];
const MU: [f64; 2] = [-1.0, 1.0];
const TAU: f64 = 2.0;

/// The HMM with known parameters and Gaussian emissions; `init` is the chain's start.
fn hmm(init: Option<Init>) -> (Vmp, NodeId) {
    let mut g = Graph::new();
    let k = g.plate("K", K);
    let t = g.plate("T", Y.len());
    let dir = MomentKind::Dirichlet { k: K };
    let p0 = g.constant("p0", dir, &[], &P0).unwrap();
    let a = g.constant("A", dir, &[k], &A).unwrap();
    let mu = g
        .constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &MU)
        .unwrap();
    let chain = MarkovChain {
        k: K,
        time: t,
        lengths: None,
    };
    let z = g.markov_chain("z", chain, &[], [p(p0), p(a)]).unwrap();
    let y = g
        .add_mixture("y", Gaussian, &[t], &[(z, k)], [p(mu), c(TAU)])
        .unwrap();
    g.observe(y, &Y).unwrap();
    if let Some(init) = init {
        g.initialize(z, init);
    }
    (g.compile().unwrap(), z)
}

/// ln p(path, y) with the known parameters.
fn log_joint(path: &[usize]) -> f64 {
    let normal =
        |y: f64, m: f64| 0.5 * (TAU / std::f64::consts::TAU).ln() - 0.5 * TAU * (y - m).powi(2);
    let mut l = P0[path[0]].ln();
    for t in 1..path.len() {
        l += A[path[t - 1] * K + path[t]].ln();
    }
    l + path
        .iter()
        .zip(Y)
        .map(|(&s, y)| normal(y, MU[s]))
        .sum::<f64>()
}

fn converge(vmp: &mut Vmp, seed: u64) -> f64 {
    let fit = vmp
        .run(&RunOptions {
            max_iter: 100,
            tol: 1e-13,
            seed,
            decrease_is_error: true,
            check_every_update: true,
            prune_components: false,
            ..Default::default()
        })
        .unwrap();
    assert!(fit.converged);
    vmp.bound()
}

#[test]
fn a_random_discrete_start_is_the_point_mass_on_a_drawn_path() {
    let (mut reference, _) = hmm(None);
    let exact = converge(&mut reference, 0);
    let mut paths = Vec::new();
    for seed in 0..8 {
        let (mut vmp, z) = hmm(Some(Init::Random));
        vmp.initialize(seed).unwrap();
        let u = vmp.moments(z).to_vec();
        let path: Vec<usize> = u
            .chunks(K)
            .map(|q| {
                assert!(
                    q.iter().all(|&p| p == 0.0 || p == 1.0),
                    "not one-hot: {q:?}"
                );
                q.iter().position(|&p| p == 1.0).unwrap()
            })
            .collect();
        // A proper q: its bound is ln p(path, y) (entropy 0), to round-off.
        let start = vmp.bound();
        assert!(
            (start - log_joint(&path)).abs() < 1e-9,
            "seed {seed}: start bound {start} vs ln p(path, y) {}",
            log_joint(&path)
        );
        // The same seed draws the same path.
        let (mut again, _) = hmm(Some(Init::Random));
        again.initialize(seed).unwrap();
        assert_eq!(again.moments(z), &u[..]);
        // With known parameters one chain update is exact: the fit ends at ln p(y).
        let end = converge(&mut vmp, seed);
        assert!((end - exact).abs() < 1e-10, "seed {seed}: {end} vs {exact}");
        assert!(end > start);
        paths.push(path);
    }
    paths.sort();
    paths.dedup();
    assert!(paths.len() > 1, "every seed drew the same path");
}

/// A 2-D linear dynamical system with known parameters, observed with noise; `init` is the chain's
/// start.
fn lds(init: Option<Init>) -> (Vmp, NodeId) {
    let steps = 6;
    let (s, c) = 0.4f64.sin_cos();
    let a = [0.95 * c, -0.95 * s, 0.95 * s, 0.95 * c];
    let y: Vec<f64> = (0..steps * 2).map(|i| (i as f64 * 0.7).sin()).collect();
    let mut g = Graph::new();
    let t = g.plate("T", steps);
    let chain = GaussianMarkovChain {
        d: 2,
        time: t,
        lengths: None,
    };
    let x = g
        .gaussian_markov_chain(
            "x",
            chain,
            &[],
            [
                cv(vec![0.5, -1.0]),
                cv(vec![2.0, 0.3, 0.3, 1.0]),
                cv(a.to_vec()),
                cv(vec![4.0, 2.0]),
            ],
        )
        .unwrap();
    let yn = g
        .add(
            "y",
            MvGaussian { d: 2 },
            &[t],
            [p(x), cv(vec![3.0, 0.0, 0.0, 3.0])],
        )
        .unwrap();
    g.observe(yn, &y).unwrap();
    if let Some(init) = init {
        g.initialize(x, init);
    }
    (g.compile().unwrap(), x)
}

/// Per step: means and variances of a Gaussian chain's moments [x, xxᵀ] (D = 2).
fn means_and_variances(u: &[f64]) -> Vec<([f64; 2], [f64; 2])> {
    u.chunks(6)
        .map(|r| ([r[0], r[1]], [r[2] - r[0] * r[0], r[5] - r[1] * r[1]]))
        .collect()
}

#[test]
fn a_random_gaussian_start_is_centred_on_a_draw_with_a_millionth_of_the_spread() {
    let (mut prior, x) = lds(None);
    prior.initialize(0).unwrap();
    let prior_moments = means_and_variances(prior.moments(x));
    let exact = converge(&mut prior, 0);
    let mut starts = Vec::new();
    for seed in 0..3 {
        let (mut vmp, x) = lds(Some(Init::Random));
        vmp.initialize(seed).unwrap();
        let got = means_and_variances(vmp.moments(x));
        for ((m, v), (pm, pv)) in got.iter().zip(&prior_moments) {
            for j in 0..2 {
                // q's spread is about 10⁻⁶ of the prior's (the variance ratio is at most 10⁻⁶, as
                // the pin adds 10⁶ times the mean prior precision to the posterior precision).
                assert!(
                    v[j] > 0.0 && v[j] < 2e-6 * pv[j],
                    "variance {} vs prior {}",
                    v[j],
                    pv[j]
                );
                // The draw lies within a plausible distance of the prior mean (8 sd).
                assert!((m[j] - pm[j]).abs() < 8.0 * pv[j].sqrt());
            }
        }
        let start = vmp.bound();
        assert!(start.is_finite());
        let end = converge(&mut vmp, seed);
        assert!((end - exact).abs() < 1e-9 * exact.abs(), "{end} vs {exact}");
        assert!(end > start);
        starts.push(got[0].0[0]);
    }
    assert!(starts[0] != starts[1] && starts[1] != starts[2]);
}

#[test]
fn a_chain_refuses_given_moments() {
    let mut g = Graph::new();
    let t = g.plate("T", 3);
    let chain = MarkovChain {
        k: 2,
        time: t,
        lengths: None,
    };
    let dir = MomentKind::Dirichlet { k: 2 };
    let p0 = g.constant("p0", dir, &[], &P0).unwrap();
    let k = g.plate("K", 2);
    let a = g.constant("A", dir, &[k], &A).unwrap();
    let z = g.markov_chain("z", chain, &[], [p(p0), p(a)]).unwrap();
    g.initialize(z, Init::Moments(vec![0.5; 6]));
    let err = g.compile().err().unwrap().to_string();
    assert!(err.contains("`z`") && err.contains("random path"), "{err}");
}
