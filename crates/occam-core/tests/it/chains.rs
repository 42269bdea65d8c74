//! Markov-chain q-blocks: exact inference when the parameters are known (forward algorithm,
//! forward–backward), BayesPy's HMM examples (fixtures in `tests/fixtures`, see its README), ragged
//! sequences, structured q against the unrolled mean-field model, and a bound that never decreases.

use occam_core::prelude::*;
use occam_core::Rng;
use rand::{Rng as _, SeedableRng};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let all: Value =
        serde_json::from_str(include_str!("../fixtures/bayespy_examples.json")).unwrap();
    all[name].clone()
}

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(floats).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap()],
        _ => panic!("not numeric: {v}"),
    }
}

fn strict(n: usize, order: Vec<NodeId>) -> RunOptions {
    RunOptions {
        max_iter: n,
        tol: 0.0,
        order: Some(order),
        decrease_is_error: true,
        check_every_update: true,
        ..Default::default()
    }
}

/// An HMM with known p0, A and emission log-likelihoods `ll[t][k]`: ln p(y) by the forward
/// algorithm in log space (written independently of the engine: no scaling, log-sum-exp per step),
/// and the smoothed marginals by forward–backward in log space.
fn exact_hmm(p0: &[f64], a: &[f64], ll: &[Vec<f64>]) -> (f64, Vec<Vec<f64>>) {
    let k = p0.len();
    let lse = |v: &[f64]| {
        let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
    };
    let mut alpha = vec![(0..k).map(|j| p0[j].ln() + ll[0][j]).collect::<Vec<f64>>()];
    for t in 1..ll.len() {
        let prev = &alpha[t - 1];
        let next = (0..k)
            .map(|j| {
                let terms: Vec<f64> = (0..k).map(|i| prev[i] + a[i * k + j].ln()).collect();
                lse(&terms) + ll[t][j]
            })
            .collect();
        alpha.push(next);
    }
    let log_z = lse(alpha.last().unwrap());
    let mut beta = vec![vec![0.0; k]; ll.len()];
    for t in (0..ll.len() - 1).rev() {
        for i in 0..k {
            let terms: Vec<f64> = (0..k)
                .map(|j| a[i * k + j].ln() + ll[t + 1][j] + beta[t + 1][j])
                .collect();
            beta[t][i] = lse(&terms);
        }
    }
    let marg = (0..ll.len())
        .map(|t| {
            (0..k)
                .map(|j| (alpha[t][j] + beta[t][j] - log_z).exp())
                .collect()
        })
        .collect();
    (log_z, marg)
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn hmm_known_is_exact_and_matches_bayespy() {
    let f = fixture("hmm_known");
    let y = floats(&f["y"]);
    let (p0, a) = (vec![0.6, 0.4], vec![0.7, 0.3, 0.4, 0.6]);
    let emit = vec![0.1, 0.4, 0.5, 0.6, 0.3, 0.1];
    let mut g = Graph::new();
    let t = g.plate("T", y.len());
    let k = g.plate("K", 2);
    let chain = MarkovChain {
        k: 2,
        time: t,
        lengths: None,
    };
    let z = g
        .markov_chain("z", chain, &[], [cv(p0.clone()), cv(a.clone())])
        .unwrap();
    let table = g
        .constant("P", MomentKind::Dirichlet { k: 3 }, &[k], &emit)
        .unwrap();
    let yn = g
        .add_mixture("y", Categorical { k: 3 }, &[t], &[(z, k)], [p(table)])
        .unwrap();
    g.observe(yn, &y).unwrap();
    let mut vmp = g.compile().unwrap();
    let fit = vmp.run(&strict(1, vec![z])).unwrap();
    let ll: Vec<Vec<f64>> = y
        .iter()
        .map(|&v| (0..2).map(|j| emit[j * 3 + v as usize].ln()).collect())
        .collect();
    let (log_z, marg) = exact_hmm(&p0, &a, &ll);
    let want = f["L_after_1_update"].as_f64().unwrap();
    eprintln!(
        "hmm_known: bound {:.10} forward {log_z:.10} BayesPy {want:.10}",
        fit.bound
    );
    assert!(
        rel(fit.bound, log_z) < 1e-9,
        "{} vs forward {log_z}",
        fit.bound
    );
    assert!(
        rel(fit.bound, want) < 1e-9,
        "{} vs BayesPy {want}",
        fit.bound
    );
    assert!((fit.bound - -109.5882880).abs() < 1e-7);
    let q = vmp.mean(z).unwrap();
    for (tt, row) in marg.iter().enumerate() {
        for j in 0..2 {
            assert!((q[tt * 2 + j] - row[j]).abs() < 1e-9, "step {tt}");
        }
    }
    for (tt, row) in floats(&f["posterior_marginals_first5"])
        .chunks(2)
        .enumerate()
    {
        assert!((q[tt * 2] - row[0]).abs() < 1e-9 && (q[tt * 2 + 1] - row[1]).abs() < 1e-9);
    }
    // A second update changes nothing (Case I: one forward–backward pass is optimal).
    let again = vmp.run(&strict(2, vec![z])).unwrap();
    assert!(rel(again.bound, log_z) < 1e-12);
    // Viterbi: a path, and the most probable one is at least as probable as the true one.
    let path = &vmp.viterbi(z).unwrap()[0];
    assert_eq!(path.len(), y.len());
}

/// The `hmm_unknown` model: Dirichlet a0 and rows of A, 2-D emissions with known means and
/// precision 0.25 (as scalar Gaussians per dimension, the same density).
fn hmm_unknown() -> (Vmp, NodeId, NodeId, NodeId) {
    let f = fixture("hmm_unknown");
    let y = floats(&f["y"]);
    let steps = y.len() / 2;
    let mut g = Graph::new();
    let t = g.plate("T", steps);
    let k = g.plate("K", 3);
    let d = g.plate("D", 2);
    let a0 = g
        .add(
            "a0",
            Dirichlet {
                concentration: vec![1e-3; 3],
            },
            &[],
            [],
        )
        .unwrap();
    let a = g
        .add(
            "A",
            Dirichlet {
                concentration: vec![1e-3; 3],
            },
            &[k],
            [],
        )
        .unwrap();
    let chain = MarkovChain {
        k: 3,
        time: t,
        lengths: None,
    };
    let z = g.markov_chain("Z", chain, &[], [p(a0), p(a)]).unwrap();
    let mu = g
        .constant(
            "mu",
            MomentKind::Gaussian { d: 1 },
            &[k, d],
            &[0.0, 0.0, 3.0, 4.0, 6.0, 0.0],
        )
        .unwrap();
    let yn = g
        .add_mixture("Y", Gaussian, &[t, d], &[(z, k)], [p(mu), c(0.25)])
        .unwrap();
    g.observe(yn, &y).unwrap();
    (g.compile().unwrap(), z, a, a0)
}

#[test]
fn hmm_unknown_matches_bayespy_trace() {
    let f = fixture("hmm_unknown");
    let want = floats(&f["L_trace"]);
    let (mut vmp, z, a, a0) = hmm_unknown();
    let fit = vmp.run(&strict(want.len(), vec![z, a, a0])).unwrap();
    let worst = fit
        .bound_trace
        .iter()
        .zip(&want)
        .map(|(g, w)| rel(*g, *w))
        .fold(0.0, f64::max);
    eprintln!(
        "hmm_unknown: trace {:?}, worst relative difference {worst:e}",
        fit.bound_trace
    );
    for (i, (g, w)) in fit.bound_trace.iter().zip(&want).enumerate() {
        assert!(
            rel(*g, *w) < 1e-8,
            "iteration {}: {g} vs BayesPy {w}",
            i + 1
        );
    }
    assert!(vmp.fresh_bound() == vmp.bound() || rel(vmp.fresh_bound(), vmp.bound()) < 1e-12);
}

/// Scalar Gaussian emissions with known means and precision: sequences of the given lengths in
/// one model (plate S, ragged), returns the bound after one chain update.
fn ragged_bound(lengths: &[usize], y: &[Vec<f64>]) -> f64 {
    let steps = *lengths.iter().max().unwrap();
    let mut g = Graph::new();
    let s = g.plate("S", lengths.len());
    let t = g.plate("T", steps);
    let k = g.plate("K", 3);
    let chain = MarkovChain {
        k: 3,
        time: t,
        lengths: Some(lengths.to_vec()),
    };
    let p0 = cv(vec![0.5, 0.3, 0.2]);
    let a = cv(vec![0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.3, 0.3, 0.4]);
    let z = g.markov_chain("z", chain, &[s], [p0, a]).unwrap();
    let mu = g
        .constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &[-2.0, 0.0, 2.5])
        .unwrap();
    let yn = g
        .add_mixture("y", Gaussian, &[s, t], &[(z, k)], [p(mu), c(1.5)])
        .unwrap();
    let mut values = vec![0.0; lengths.len() * steps];
    let mut mask = vec![false; lengths.len() * steps];
    for (i, seq) in y.iter().enumerate() {
        for (tt, v) in seq.iter().enumerate() {
            values[i * steps + tt] = *v;
            mask[i * steps + tt] = true;
        }
    }
    g.observe_masked(yn, &values, Some(&mask)).unwrap();
    let mut vmp = g.compile().unwrap();
    vmp.run(&strict(1, vec![z])).unwrap().bound
}

#[test]
fn ragged_sequences_add_up() {
    let mut rng = Rng::seed_from_u64(3);
    let lengths = [5, 17, 1];
    let y: Vec<Vec<f64>> = lengths
        .iter()
        .map(|&l| (0..l).map(|_| rng.random_range(-3.0..3.0)).collect())
        .collect();
    let together = ragged_bound(&lengths, &y);
    let separate: f64 = (0..3)
        .map(|i| ragged_bound(&lengths[i..i + 1], &y[i..i + 1]))
        .sum();
    assert!(rel(together, separate) < 1e-12, "{together} vs {separate}");
    // And each equals the forward algorithm.
    let (p0, a) = (
        [0.5, 0.3, 0.2],
        [0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.3, 0.3, 0.4],
    );
    let exact: f64 = y
        .iter()
        .map(|seq| {
            let ll: Vec<Vec<f64>> = seq
                .iter()
                .map(|v| {
                    [-2.0, 0.0, 2.5]
                        .iter()
                        .map(|m| {
                            0.5 * (1.5f64 / std::f64::consts::TAU).ln() - 0.75 * (v - m) * (v - m)
                        })
                        .collect()
                })
                .collect();
            exact_hmm(&p0, &a, &ll).0
        })
        .sum();
    assert!(rel(together, exact) < 1e-9, "{together} vs forward {exact}");
}

#[test]
fn a_step_beyond_the_end_must_be_missing() {
    let mut g = Graph::new();
    let s = g.plate("S", 2);
    let t = g.plate("T", 3);
    let k = g.plate("K", 2);
    let chain = MarkovChain {
        k: 2,
        time: t,
        lengths: Some(vec![3, 2]),
    };
    let z = g
        .markov_chain("z", chain, &[s], [cv(vec![0.5, 0.5]), cv(vec![0.5; 4])])
        .unwrap();
    let mu = g
        .constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &[0.0, 1.0])
        .unwrap();
    let y = g
        .add_mixture("y", Gaussian, &[s, t], &[(z, k)], [p(mu), c(1.0)])
        .unwrap();
    g.observe(y, &[0.0; 6]).unwrap();
    let err = g.compile().err().expect("an error").to_string();
    assert!(
        err.contains("`y`") && err.contains("element 5") && err.contains("length 2"),
        "{err}"
    );
}

#[test]
fn chain_arguments_are_checked() {
    let mut g = Graph::new();
    let t = g.plate("T", 3);
    let k3 = g.plate("K3", 3);
    let chain = |lengths| MarkovChain {
        k: 2,
        time: t,
        lengths,
    };
    let a = g
        .add(
            "A",
            Dirichlet {
                concentration: vec![1.0; 2],
            },
            &[k3],
            [],
        )
        .unwrap();
    let e = g
        .markov_chain("z", chain(None), &[], [cv(vec![0.5, 0.5]), p(a)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`z`") && e.contains("transition"), "{e}");
    let e = g
        .markov_chain(
            "z",
            chain(Some(vec![4])),
            &[],
            [cv(vec![0.5, 0.5]), cv(vec![0.5; 4])],
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("length 4"), "{e}");
    let e = g
        .markov_chain(
            "z",
            chain(None),
            &[],
            [cv(vec![0.5, 0.6]), cv(vec![0.5; 4])],
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("initial"), "{e}");
}

/// Data from a 2-state HMM with well separated Gaussian emissions.
fn simulated(steps: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::seed_from_u64(seed);
    let mut state = 0;
    (0..steps)
        .map(|_| {
            if rng.random::<f64>() < 0.15 {
                state = 1 - state;
            }
            [-1.0, 1.0][state] + rng.random_range(-1.5..1.5)
        })
        .collect()
}

/// Dirichlet(1, 1) priors on a 2-state chain's initial probabilities `p0` and the rows of its
/// transition matrix `A` (one per state in plate `k`).
fn uniform_dirichlets(g: &mut Graph, k: PlateId) -> (NodeId, NodeId) {
    let uniform = || Dirichlet {
        concentration: vec![1.0; 2],
    };
    let p0 = g.add("p0", uniform(), &[], []).unwrap();
    let a = g.add("A", uniform(), &[k], []).unwrap();
    (p0, a)
}

/// Structured (chain) or unrolled mean-field (one Categorical per step) HMM with Dirichlet p0 and
/// A and known emissions; the converged bound.
fn hmm_bound(y: &[f64], structured: bool) -> f64 {
    let mut g = Graph::new();
    let k = g.plate("K", 2);
    let (p0, a) = uniform_dirichlets(&mut g, k);
    let mu = g
        .constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &[-1.0, 1.0])
        .unwrap();
    if structured {
        let t = g.plate("T", y.len());
        let chain = MarkovChain {
            k: 2,
            time: t,
            lengths: None,
        };
        let z = g.markov_chain("z", chain, &[], [p(p0), p(a)]).unwrap();
        let yn = g
            .add_mixture("y", Gaussian, &[t], &[(z, k)], [p(mu), c(1.0)])
            .unwrap();
        g.observe(yn, y).unwrap();
    } else {
        let mut prev = g.add("z0", Categorical { k: 2 }, &[], [p(p0)]).unwrap();
        for (tt, v) in y.iter().enumerate() {
            if tt > 0 {
                let z = g
                    .add_mixture(
                        &format!("z{tt}"),
                        Categorical { k: 2 },
                        &[],
                        &[(prev, k)],
                        [p(a)],
                    )
                    .unwrap();
                prev = z;
            }
            let yn = g
                .add_mixture(
                    &format!("y{tt}"),
                    Gaussian,
                    &[],
                    &[(prev, k)],
                    [p(mu), c(1.0)],
                )
                .unwrap();
            g.observe(yn, &[*v]).unwrap();
        }
        for tt in 0..y.len() {
            let z = g.node(&format!("z{tt}")).unwrap();
            g.initialize(z, Init::Prior);
        }
    }
    let mut vmp = g.compile().unwrap();
    let opts = RunOptions {
        max_iter: 500,
        tol: 1e-10,
        decrease_is_error: true,
        check_every_update: true,
        ..Default::default()
    };
    vmp.run(&opts).unwrap().bound
}

#[test]
fn structured_bound_is_at_least_the_mean_field_bound() {
    for seed in 0..3 {
        let y = simulated(40, seed);
        let (s, m) = (hmm_bound(&y, true), hmm_bound(&y, false));
        eprintln!("seed {seed}: structured {s:.6}, mean-field {m:.6}");
        assert!(s >= m, "seed {seed}: structured {s} < mean-field {m}");
    }
}

#[test]
fn unknown_everything_bound_never_decreases() {
    // Unknown means and precision as well: every update (chain, Dirichlets, Gaussians, Gamma)
    // raises the bound; the cached bound is the fresh one.
    let y = simulated(120, 9);
    let mut g = Graph::new();
    let s = g.plate("S", 2);
    let t = g.plate("T", 60);
    let k = g.plate("K", 2);
    let (p0, a) = uniform_dirichlets(&mut g, k);
    let chain = MarkovChain {
        k: 2,
        time: t,
        lengths: Some(vec![60, 45]),
    };
    let z = g.markov_chain("z", chain, &[s], [p(p0), p(a)]).unwrap();
    let mu = g.add("mu", Gaussian, &[k], [c(0.0), c(0.1)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 1.0 }, &[], [c(1.0)]).unwrap();
    let yn = g
        .add_mixture("y", Gaussian, &[s, t], &[(z, k)], [p(mu), p(tau)])
        .unwrap();
    let mask: Vec<bool> = (0..120).map(|i| i < 60 || i - 60 < 45).collect();
    g.observe_masked(yn, &y, Some(&mask)).unwrap();
    g.initialize(mu, Init::Random);
    let mut vmp = g.compile().unwrap();
    let opts = RunOptions {
        max_iter: 200,
        tol: 1e-10,
        decrease_is_error: true,
        check_every_update: true,
        seed: 5,
        ..Default::default()
    };
    let fit = vmp.run(&opts).unwrap();
    assert!(fit
        .bound_trace
        .windows(2)
        .all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
    assert!(rel(vmp.fresh_bound(), vmp.bound()) < 1e-12);
    let mut means = vmp.mean(mu).unwrap();
    means.sort_by(f64::total_cmp);
    assert!(
        (means[0] + 1.0).abs() < 0.3 && (means[1] - 1.0).abs() < 0.3,
        "{means:?}"
    );
    // Steps beyond the second sequence's end have no q.
    let q = vmp.mean(z).unwrap();
    assert!(q[(60 + 45) * 2..].iter().all(|&v| v == 0.0));
    assert_eq!(vmp.viterbi(z).unwrap()[1].len(), 45);
}
