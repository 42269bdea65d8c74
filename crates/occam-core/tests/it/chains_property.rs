//! Property test of models with Markov-chain q-blocks: random ragged HMMs with Gaussian or
//! Categorical emissions and Dirichlet (or known) parameters; no update decreases the bound.

use occam_core::prelude::*;
use occam_core::Rng;
use rand::{Rng as _, SeedableRng};

/// A random HMM: K states, ragged sequences, Dirichlet (or known) p0 and A, Gaussian emissions with
/// unknown means and precision or Categorical emissions with a Dirichlet table; random data.
fn random_hmm(seed: u64) -> Vmp {
    let mut rng = Rng::seed_from_u64(seed);
    let kk = rng.random_range(2..5);
    let seqs = rng.random_range(1..4);
    let steps = rng.random_range(1..30);
    let lengths: Vec<usize> = (0..seqs).map(|_| rng.random_range(0..=steps)).collect();
    let mut g = Graph::new();
    let s = g.plate("S", seqs);
    let t = g.plate("T", steps);
    let k = g.plate("K", kk);
    let alpha = |rng: &mut Rng| {
        (0..kk)
            .map(|_| rng.random_range(0.5..3.0))
            .collect::<Vec<_>>()
    };
    let p0 = if rng.random::<bool>() {
        let a = alpha(&mut rng);
        p(g.add("p0", Dirichlet { concentration: a }, &[], [])
            .unwrap())
    } else {
        cv(vec![1.0 / kk as f64; kk])
    };
    let a = alpha(&mut rng);
    let a = g
        .add("A", Dirichlet { concentration: a }, &[k], [])
        .unwrap();
    let chain = MarkovChain {
        k: kk,
        time: t,
        lengths: Some(lengths.clone()),
    };
    let z = g.markov_chain("z", chain, &[s], [p0, p(a)]).unwrap();
    let mask: Vec<bool> = (0..seqs * steps)
        .map(|e| e % steps < lengths[e / steps])
        .collect();
    if rng.random::<bool>() {
        let mu = g.add("mu", Gaussian, &[k], [c(0.0), c(0.1)]).unwrap();
        let tau = g.add("tau", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap();
        let y = g
            .add_mixture("y", Gaussian, &[s, t], &[(z, k)], [p(mu), p(tau)])
            .unwrap();
        let data: Vec<f64> = (0..seqs * steps)
            .map(|_| rng.random_range(-4.0..4.0))
            .collect();
        g.observe_masked(y, &data, Some(&mask)).unwrap();
        g.initialize(mu, Init::Random);
    } else {
        let m = rng.random_range(2..5);
        let b = g
            .add(
                "B",
                Dirichlet {
                    concentration: vec![1.0; m],
                },
                &[k],
                [],
            )
            .unwrap();
        let y = g
            .add_mixture("y", Categorical { k: m }, &[s, t], &[(z, k)], [p(b)])
            .unwrap();
        let data: Vec<f64> = (0..seqs * steps)
            .map(|_| rng.random_range(0..m) as f64)
            .collect();
        g.observe_masked(y, &data, Some(&mask)).unwrap();
        g.initialize(b, Init::Random);
    }
    g.compile().unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Winn §1.8.4: no update decreases the bound (checked after every update, a decrease fails the
    /// run), and the cached bound is the bound recomputed from the nodes' arrays.
    #[test]
    fn chain_models_never_decrease_the_bound(seed in proptest::prelude::any::<u64>()) {
        let mut vmp = random_hmm(seed);
        let opts = RunOptions {
            max_iter: 30,
            tol: 0.0,
            decrease_is_error: true,
            check_every_update: true,
            seed,
            ..Default::default()
        };
        let fit = vmp.run(&opts).unwrap();
        proptest::prop_assert!(fit.bound.is_finite());
        let (fresh, cached) = (vmp.fresh_bound(), vmp.bound());
        proptest::prop_assert!((fresh - cached).abs() <= 1e-10 * cached.abs().max(1.0));
    }
}

#[test]
fn prior_draws_respect_lengths_and_states() {
    for seed in 0..20 {
        let mut vmp = random_hmm(seed);
        let z = vmp.node("z").unwrap();
        let lengths = vmp.chain_lengths(z).unwrap().to_vec();
        let steps = vmp.plates().iter().find(|p| p.0 == "T").unwrap().1;
        let k = match vmp.kind(z) {
            MomentKind::Categorical { k } => k,
            other => panic!("{other}"),
        };
        let draws = vmp.sample_prior(seed).unwrap();
        let states = &draws[z.index()];
        for (s, &len) in lengths.iter().enumerate() {
            for t in 0..steps {
                let v = states[s * steps + t];
                assert!(v >= 0.0 && v < k as f64 && v.fract() == 0.0);
                if t >= len {
                    assert_eq!(v, 0.0);
                }
            }
        }
    }
}
