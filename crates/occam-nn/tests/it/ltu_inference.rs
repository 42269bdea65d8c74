//! Inference of hidden states: the ICM field against brute-force energies and conditionals,
//! ICM against exact enumeration on small networks, the annealing schedule, and bad input.

use occam_nn::ltu::energy::{energy, exact_map, exact_marginals, log_joint, MAX_EXACT_HIDDEN};
use occam_nn::ltu::error::LtuError;
use occam_nn::ltu::icm::{
    field, infer, infer_pattern, rule_field, Anneal, InferenceOptions, UpdateRule,
};
use occam_nn::ltu::network::{Layer, LtuNetwork, States};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// A random network, inputs and random ±1 states for every unit.
fn random_case(seed: u64, sizes: &[usize], scale: f64) -> (LtuNetwork, States) {
    let mut r = rng(seed);
    let net = LtuNetwork::random(sizes, scale, &mut r).unwrap();
    let states = sizes
        .iter()
        .enumerate()
        .map(|(l, &n)| {
            (0..n)
                .map(|_| {
                    if l == 0 {
                        r.random_range(-1.0..1.0)
                    } else if r.random::<bool>() {
                        1.0
                    } else {
                        -1.0
                    }
                })
                .collect()
        })
        .collect();
    (net, states)
}

fn with_unit(states: &States, l: usize, j: usize, v: f64) -> States {
    let mut s = states.clone();
    s[l][j] = v;
    s
}

#[test]
fn zero_temperature_field_is_the_energy_difference() {
    for seed in 0..50 {
        let (net, s) = random_case(seed, &[3, 4, 3, 2], 2.0);
        for l in 1..3 {
            for j in 0..s[l].len() {
                let want = energy(&net, &with_unit(&s, l, j, -1.0))
                    - energy(&net, &with_unit(&s, l, j, 1.0));
                let got = field(&net, &s, l, j, 0.0).unwrap();
                assert!((got - want).abs() < 1e-12, "seed {seed} unit ({l},{j})");
            }
        }
    }
}

#[test]
fn positive_temperature_field_is_t_times_the_exact_log_odds() {
    for seed in 0..30 {
        let (net, s) = random_case(100 + seed, &[3, 4, 3, 2], 2.0);
        for t in [0.05, 0.5, 3.0, 200.0] {
            for l in 1..3 {
                for j in 0..s[l].len() {
                    let log_odds = log_joint(&net, &with_unit(&s, l, j, 1.0), t)
                        - log_joint(&net, &with_unit(&s, l, j, -1.0), t);
                    let got = field(&net, &s, l, j, t).unwrap() / t;
                    assert!(
                        (got - log_odds).abs() < 1e-9 * (1.0 + log_odds.abs()),
                        "seed {seed} T {t}: {got} vs {log_odds}"
                    );
                }
            }
        }
    }
}

#[test]
fn one_hidden_unit_posterior_mean_is_tanh_of_half_the_field_over_t() {
    // With one hidden unit the posterior is its conditional, so enumeration and the field agree.
    for seed in 0..20 {
        let (net, s) = random_case(200 + seed, &[3, 1, 2], 1.5);
        let t = 0.3;
        let m = exact_marginals(&net, &s[0], &s[2], t).unwrap();
        let want = (field(&net, &s, 1, 0, t).unwrap() / (2.0 * t)).tanh();
        assert!((m[1][0] - want).abs() < 1e-12, "seed {seed}");
    }
}

#[test]
fn exact_marginals_concentrate_on_the_exact_map_as_t_goes_to_zero() {
    let mut checked = 0;
    for seed in 0..40 {
        let (net, s) = random_case(300 + seed, &[2, 4, 1], 1.0);
        let map = exact_map(&net, &s[0], &s[2]).unwrap();
        // The energy gap to the second-best configuration, by our own enumeration.
        let mut energies: Vec<f64> = (0..16)
            .map(|code| {
                let mut c = s.clone();
                for (j, v) in c[1].iter_mut().enumerate() {
                    *v = if code >> j & 1 == 1 { 1.0 } else { -1.0 };
                }
                energy(&net, &c)
            })
            .collect();
        energies.sort_by(f64::total_cmp);
        assert_eq!(energies[0], map.min_energy);
        let t = 1e-3;
        if energies[1] - energies[0] < 0.05 {
            continue;
        }
        assert_eq!(map.n_minimisers, 1);
        checked += 1;
        let m = exact_marginals(&net, &s[0], &s[2], t).unwrap();
        for (a, b) in m[1].iter().zip(&map.states[1]) {
            assert!(
                (a - b).abs() < 1e-6,
                "seed {seed}: {:?} vs {:?}",
                m[1],
                map.states[1]
            );
        }
    }
    assert!(checked >= 25, "only {checked} nets had a clear minimiser");
}

#[test]
fn icm_reaches_a_local_minimum_never_below_the_exact_one() {
    let (mut matched, mut total) = (0, 0);
    for seed in 0..200u64 {
        let sizes: &[usize] = if seed % 2 == 0 {
            &[3, 6, 1]
        } else {
            &[3, 4, 3, 1]
        };
        let (net, s) = random_case(400 + seed, sizes, 1.0);
        let last = sizes.len() - 1;
        let mut r = rng(seed);
        let (inferred, stats) =
            infer_pattern(&net, &s[0], &s[last], &InferenceOptions::icm(100), &mut r).unwrap();
        assert!(stats.converged, "seed {seed}");
        // ICM starts from the forward pass (energy = the output term alone) and never goes up.
        let mut start = net.forward(&s[0]).unwrap();
        start[last].copy_from_slice(&s[last]);
        let e = energy(&net, &inferred);
        assert!(e <= energy(&net, &start) + 1e-12, "seed {seed}");
        // No single flip lowers the energy.
        for l in 1..last {
            for j in 0..sizes[l] {
                let flipped = with_unit(&inferred, l, j, -inferred[l][j]);
                assert!(energy(&net, &flipped) >= e - 1e-12, "seed {seed} ({l},{j})");
            }
        }
        let exact = exact_map(&net, &s[0], &s[last]).unwrap();
        assert!(exact.min_energy <= e + 1e-12, "seed {seed}");
        // Patterns whose forward pass already gives the target are trivial (energy 0 at once).
        if energy(&net, &start) > 0.0 {
            total += 1;
            matched += usize::from(e <= exact.min_energy + 1e-9);
        }
    }
    // A local method on a knapsack-like energy: on the non-trivial patterns it finds the global
    // minimum most of the time but not always (70 of 99 with these seeds).
    eprintln!("ICM matched {matched} of {total}");
    assert!(total >= 80, "only {total} non-trivial patterns");
    assert!(
        matched * 10 >= total * 6 && matched < total,
        "ICM matched {matched} of {total}"
    );
}

#[test]
fn annealed_icm_also_ends_at_a_local_minimum() {
    for seed in 0..30u64 {
        let (net, s) = random_case(700 + seed, &[3, 5, 1], 1.0);
        let mut r = rng(seed);
        let opts = InferenceOptions {
            rule: UpdateRule::Icm,
            anneal: Some(Anneal::thesis()),
            max_icm_passes: 70,
        };
        let (inferred, stats) = infer_pattern(&net, &s[0], &s[2], &opts, &mut r).unwrap();
        assert_eq!(stats.annealed_passes, 62);
        assert!(stats.converged);
        let e = energy(&net, &inferred);
        for j in 0..5 {
            assert!(energy(&net, &with_unit(&inferred, 1, j, -inferred[1][j])) >= e - 1e-12);
        }
        assert!(inferred[1].iter().all(|&v| v == 1.0 || v == -1.0));
    }
}

#[test]
fn consistent_patterns_have_zero_energy_and_keep_their_forward_pass() {
    for seed in 0..20u64 {
        let (net, s) = random_case(800 + seed, &[4, 5, 2], 1.0);
        let forward = net.forward(&s[0]).unwrap();
        let exact = exact_map(&net, &s[0], &forward[2]).unwrap();
        assert_eq!(exact.min_energy, 0.0);
        let mut r = rng(seed);
        let (inferred, _) =
            infer_pattern(&net, &s[0], &forward[2], &InferenceOptions::icm(10), &mut r).unwrap();
        assert_eq!(inferred, forward);
    }
}

#[test]
fn thesis_rule_matches_a_hand_computed_field() {
    // Input x = 1; hidden unit j: a_j = 0.5·1 + 0.1 = 0.6. Two output children clamped to +1 and
    // −1 with weights 2 and 0.2 from j and biases −1, 3.
    // Child 1: c = −1, w = 2: pivotal; φ = ½(sign 1 − sign(−3)) = 1; term ½·2·(1 − 1) = 0.
    // Child 2: c = 3, w = 0.2: not pivotal; φ = 0; term ½·0.2·(−1 − 0) = −0.1.
    // ICM: child 1: 2·1 − ½(|1| − |−3|) = 3; child 2: 0.2·(−1) − ½(3.2 − 2.8) = −0.4.
    let net = LtuNetwork::from_layers(vec![
        Layer::new(1, 1, vec![0.5, 0.1]).unwrap(),
        Layer::new(1, 2, vec![2.0, -1.0, 0.2, 3.0]).unwrap(),
    ])
    .unwrap();
    let s: States = vec![vec![1.0], vec![1.0], vec![1.0, -1.0]];
    let thesis = rule_field(UpdateRule::Thesis, &net, &s, 1, 0, 0.0).unwrap();
    assert!((thesis - (0.6 - 0.1)).abs() < 1e-12, "{thesis}");
    let icm = rule_field(UpdateRule::Icm, &net, &s, 1, 0, 0.0).unwrap();
    assert!((icm - (0.6 + 3.0 - 0.4)).abs() < 1e-12, "{icm}");
}

#[test]
fn thesis_annealing_schedule_has_62_passes() {
    let ts = Anneal::thesis().temperatures().unwrap();
    assert_eq!(ts.len(), 62);
    assert_eq!(ts[0], 1000.0);
    assert!(ts[61] >= 1e-3 && ts[61] * 0.8 < 1e-3);
    let bad = Anneal {
        t_start: 1.0,
        decay: 1.0,
        t_zero_below: 0.1,
    };
    assert!(matches!(
        bad.temperatures(),
        Err(LtuError::InvalidOption { .. })
    ));
}

#[test]
fn inference_is_deterministic_given_the_seed() {
    let (net, s) = random_case(900, &[3, 8, 1], 1.0);
    let run = |seed| {
        infer_pattern(
            &net,
            &s[0],
            &s[2],
            &InferenceOptions::thesis(),
            &mut rng(seed),
        )
        .unwrap()
    };
    assert_eq!(run(5), run(5));
}

#[test]
fn bad_input_is_an_error() {
    let (net, s) = random_case(1, &[3, 4, 1], 1.0);
    let o = InferenceOptions::icm(10);
    let e = infer_pattern(&net, &s[0], &[0.0], &o, &mut rng(0)).unwrap_err();
    assert!(matches!(e, LtuError::NotBipolar { .. }), "{e}");
    let e = infer_pattern(&net, &[1.0, 2.0], &s[2], &o, &mut rng(0)).unwrap_err();
    assert!(matches!(e, LtuError::Shape { .. }), "{e}");
    let e = infer_pattern(&net, &[1.0, f64::NAN, 0.0], &s[2], &o, &mut rng(0)).unwrap_err();
    assert!(matches!(e, LtuError::NonFinite { index: 1, .. }), "{e}");
    let mut short = s.clone();
    short.pop();
    assert!(infer(&net, &mut short, &o, &mut rng(0)).is_err());
    let big = LtuNetwork::random(&[2, MAX_EXACT_HIDDEN + 1, 1], 1.0, &mut rng(0)).unwrap();
    let e = exact_map(&big, &[0.0, 0.0], &[1.0]).unwrap_err();
    assert!(matches!(e, LtuError::TooManyHidden { .. }), "{e}");
    assert!(exact_marginals(&net, &s[0], &s[2], 0.0).is_err());
    for (l, j) in [(0, 0), (2, 0), (1, 4)] {
        let e = field(&net, &s, l, j, 0.0).unwrap_err();
        assert!(
            matches!(e, LtuError::InvalidOption { name: "unit", .. }),
            "{e}"
        );
    }
    assert!(field(&net, &s, 1, 0, -1.0).is_err());
    assert!(matches!(
        field(&net, &s[..2].to_vec(), 1, 0, 0.0),
        Err(LtuError::Shape { .. })
    ));
    assert!(Layer::new(2, 1, vec![1.0, 2.0]).is_err());
    let mismatch = vec![
        Layer::new(2, 3, vec![0.0; 9]).unwrap(),
        Layer::new(2, 1, vec![0.0; 3]).unwrap(),
    ];
    assert!(matches!(
        LtuNetwork::from_layers(mismatch),
        Err(LtuError::Shape { .. })
    ));
}

#[test]
fn annealing_finds_the_exact_minimum_more_often_than_plain_icm() {
    let annealed = InferenceOptions {
        rule: UpdateRule::Icm,
        anneal: Some(Anneal::thesis()),
        max_icm_passes: 70,
    };
    let (mut plain_hits, mut anneal_hits, mut total) = (0, 0, 0);
    for seed in 0..150u64 {
        let (net, s) = random_case(1000 + seed, &[3, 7, 1], 1.0);
        let mut start = net.forward(&s[0]).unwrap();
        start[2].copy_from_slice(&s[2]);
        if energy(&net, &start) == 0.0 {
            continue;
        }
        total += 1;
        let exact = exact_map(&net, &s[0], &s[2]).unwrap().min_energy;
        for (opts, hits) in [
            (InferenceOptions::icm(100), &mut plain_hits),
            (annealed, &mut anneal_hits),
        ] {
            let (st, _) = infer_pattern(&net, &s[0], &s[2], &opts, &mut rng(seed)).unwrap();
            *hits += usize::from(energy(&net, &st) <= exact + 1e-9);
        }
    }
    eprintln!("exact minimum: plain ICM {plain_hits}, annealed {anneal_hits} of {total}");
    // Measured with these seeds: plain ICM 62, annealed 77 of 84 non-trivial patterns.
    assert!(total >= 50);
    assert!(
        anneal_hits > plain_hits,
        "{anneal_hits} vs {plain_hits} of {total}"
    );
}
