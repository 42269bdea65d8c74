//! A Markov chain whose parameters are a mixture (`Graph::markov_chain_mixture`): per sequence a
//! regime r_s ~ Categorical(w) picks one of M transition matrices (and initial probabilities).
//! Checked against the plain chain (one regime, or an observed regime), against exact enumeration
//! of the mean-field objective on a tiny model, for a bound that never decreases, and on simulated
//! data with two regimes.

use occam_core::prelude::*;
use occam_core::Rng;
use rand::{Rng as _, SeedableRng};

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

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// ln N(y; mu, 1).
fn log_normal(y: f64, mu: f64) -> f64 {
    -0.5 * (2.0 * std::f64::consts::PI).ln() - 0.5 * (y - mu) * (y - mu)
}

const MU: [f64; 2] = [-1.0, 1.0];

/// Nodes of a two-state chain over S sequences with Gaussian emissions (means `MU`, precision 1).
struct Model {
    vmp: Vmp,
    z: NodeId,
    a: NodeId,
    regime: Option<NodeId>,
    y: NodeId,
}

/// `regimes`: None = the plain chain with `A[K]`; Some(m) = `A[M, K]` picked by a regime per
/// sequence (latent with uniform weights, or observed at `observed`).
fn model(y: &[f64], s: usize, regimes: Option<usize>, observed: Option<&[f64]>) -> Model {
    let mut g = Graph::new();
    let seqs = g.plate("S", s);
    let t = g.plate("T", y.len() / s);
    let k = g.plate("K", 2);
    let chain = MarkovChain {
        k: 2,
        time: t,
        lengths: None,
    };
    let dir = || Dirichlet {
        concentration: vec![1.0; 2],
    };
    let p0 = cv(vec![0.5, 0.5]);
    let (z, a, regime) = match regimes {
        None => {
            let a = g.add("A", dir(), &[k], []).unwrap();
            (
                g.markov_chain("z", chain, &[seqs], [p0, p(a)]).unwrap(),
                a,
                None,
            )
        }
        Some(m) => {
            let mp = g.plate("M", m);
            let r = g
                .add(
                    "r",
                    Categorical { k: m },
                    &[seqs],
                    [cv(vec![1.0 / m as f64; m])],
                )
                .unwrap();
            if let Some(v) = observed {
                g.observe(r, v).unwrap();
            }
            let a = g.add("A", dir(), &[mp, k], []).unwrap();
            let z = g
                .markov_chain_mixture("z", chain, &[seqs], &[(r, mp)], [p0, p(a)])
                .unwrap();
            (z, a, Some(r))
        }
    };
    let mu = g
        .constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &MU)
        .unwrap();
    let yn = g
        .add_mixture("y", Gaussian, &[seqs, t], &[(z, k)], [p(mu), c(1.0)])
        .unwrap();
    g.observe(yn, y).unwrap();
    Model {
        vmp: g.compile().unwrap(),
        z,
        a,
        regime,
        y: yn,
    }
}

const Y: [f64; 12] = [
    -1.2, -0.8, 0.9, 1.1, 1.3, -0.7, 0.4, -1.5, -0.9, 1.2, -0.2, 0.8,
];

#[test]
fn one_regime_is_the_plain_chain() {
    let mut plain = model(&Y, 2, None, None);
    let order = vec![plain.z, plain.a];
    let want = plain.vmp.run(&strict(8, order)).unwrap();
    let mut mixed = model(&Y, 2, Some(1), None);
    let order = vec![mixed.regime.unwrap(), mixed.z, mixed.a];
    let got = mixed.vmp.run(&strict(8, order)).unwrap();
    assert!(
        rel(got.bound, want.bound) < 1e-10,
        "{} vs {}",
        got.bound,
        want.bound
    );
    let (qa, qb) = (
        plain.vmp.mean(plain.z).unwrap(),
        mixed.vmp.mean(mixed.z).unwrap(),
    );
    assert!(qa.iter().zip(&qb).all(|(x, y)| (x - y).abs() < 1e-10));
}

#[test]
fn an_observed_regime_routes_to_its_matrix() {
    // Both sequences in regime 1: A_1 is the plain chain's A, A_0 stays at its prior (KL 0).
    let mut plain = model(&Y, 2, None, None);
    let order = vec![plain.z, plain.a];
    let want = plain.vmp.run(&strict(8, order)).unwrap();
    let mut mixed = model(&Y, 2, Some(2), Some(&[1.0, 1.0]));
    let order = vec![mixed.z, mixed.a];
    let got = mixed.vmp.run(&strict(8, order)).unwrap();
    // The observed regimes add their own ln p(r_s = 1) = ln ½ each.
    let want = want.bound + 2.0 * 0.5f64.ln();
    assert!(rel(got.bound, want) < 1e-10, "{} vs {want}", got.bound);
    let (pa, ma) = (plain.vmp.moments(plain.a), mixed.vmp.moments(mixed.a));
    assert!(pa.iter().zip(&ma[4..]).all(|(x, y)| (x - y).abs() < 1e-10));
    // A_0 read no sequence: still the uniform Dirichlet(1, 1)'s ⟨ln p⟩ = ψ(1) − ψ(2) = −1.
    assert!(ma[..4].iter().all(|v| (v + 1.0).abs() < 1e-12));
}

/// Every path of `t` steps over 2 states.
fn paths(t: usize) -> Vec<Vec<usize>> {
    (0..1usize << t)
        .map(|b| (0..t).map(|i| (b >> i) & 1).collect())
        .collect()
}

#[test]
fn mean_field_objective_by_enumeration() {
    // S = 1, T = 3, K = 2, M = 2: q(z) q(r) against the same objective computed by brute force.
    let y = [-1.1, 0.6, 0.9];
    let mut m = model(&y, 1, Some(2), None);
    let r = m.regime.unwrap();
    // A stays at its starting q (its prior): only r and z move, z last.
    m.vmp.initialize(3).unwrap();
    for _ in 0..6 {
        m.vmp.update(r).unwrap();
        m.vmp.update(m.z).unwrap();
    }
    let qr = m.vmp.moments(r).to_vec();
    let la = m.vmp.moments(m.a).to_vec(); // ⟨ln A_m,jk⟩ at [(m·2 + j)·2 + k]
    let lnp0 = 0.5f64.ln();
    // ln p(z | A_m) for each m, and ln p(y | z), per path.
    let log_prior = |z: &[usize], mm: usize| {
        lnp0 + (1..z.len())
            .map(|t| la[(mm * 2 + z[t - 1]) * 2 + z[t]])
            .sum::<f64>()
    };
    let log_lik =
        |z: &[usize]| -> f64 { z.iter().zip(&y).map(|(&j, &v)| log_normal(v, MU[j])).sum() };
    let all = paths(3);
    let f: Vec<f64> = all
        .iter()
        .map(|z| (0..2).map(|mm| qr[mm] * log_prior(z, mm)).sum::<f64>() + log_lik(z))
        .collect();
    let max = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lse = max + f.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
    let qz: Vec<f64> = f.iter().map(|v| (v - lse).exp()).collect();
    // The objective with q(z) optimal for q(r) (z was updated last): log Σ_z exp f + ⟨ln p(r)⟩ + H(r).
    let want = lse
        + (0..2)
            .map(|mm| qr[mm] * (0.5f64.ln() - qr[mm].ln()))
            .sum::<f64>();
    let terms = m.vmp.node_bounds();
    let got = terms[m.z.index()] + terms[m.y.index()] + terms[r.index()];
    assert!(rel(got, want) < 1e-10, "engine {got} vs enumeration {want}");
    // Marginals of the chain.
    let mean = m.vmp.mean(m.z).unwrap();
    for t in 0..3 {
        let p1: f64 = all
            .iter()
            .zip(&qz)
            .filter(|(z, _)| z[t] == 1)
            .map(|(_, q)| q)
            .sum();
        assert!((mean[t * 2 + 1] - p1).abs() < 1e-12, "step {t}");
    }
    // The message to r: its update gives q(r = m) ∝ w_m exp ⟨ln p(z | A_m)⟩.
    let e: Vec<f64> = (0..2)
        .map(|mm| all.iter().zip(&qz).map(|(z, q)| q * log_prior(z, mm)).sum())
        .collect();
    let norm = e[0].exp() + e[1].exp();
    m.vmp.update(r).unwrap();
    let new = m.vmp.moments(r);
    for mm in 0..2 {
        assert!((new[mm] - e[mm].exp() / norm).abs() < 1e-12, "q(r = {mm})");
    }
    // The message to A_m: q(r = m)·ξ (the pairwise counts under q(z)), with q(r) as z saw it.
    let before = m.vmp.natural(m.a).to_vec();
    m.vmp.update(m.a).unwrap();
    let after = m.vmp.natural(m.a);
    for (mm, w) in qr.iter().enumerate() {
        for j in 0..2 {
            for k in 0..2 {
                let xi: f64 = all
                    .iter()
                    .zip(&qz)
                    .map(|(z, q)| q * (1..3).filter(|&t| z[t - 1] == j && z[t] == k).count() as f64)
                    .sum();
                let at = (mm * 2 + j) * 2 + k;
                // A started at its prior (natural parameters α − 1 = 0), so the difference is the message.
                assert!(
                    (after[at] - before[at] - w * xi).abs() < 1e-12,
                    "A[{mm}][{j}][{k}]: {} vs {}",
                    after[at] - before[at],
                    w * xi
                );
            }
        }
    }
}

/// Sequences from two regimes: 0 = sticky states, 1 = alternating states; emissions N(±1, 1).
fn simulate(s: usize, t: usize, seed: u64) -> (Vec<f64>, Vec<usize>) {
    let mut rng = Rng::seed_from_u64(seed);
    let stay = [0.95, 0.1];
    let mut y = Vec::with_capacity(s * t);
    let mut truth = Vec::with_capacity(s);
    for _ in 0..s {
        let regime = usize::from(rng.random::<f64>() < 0.5);
        truth.push(regime);
        let mut state = usize::from(rng.random::<f64>() < 0.5);
        for step in 0..t {
            if step > 0 && rng.random::<f64>() >= stay[regime] {
                state = 1 - state;
            }
            // Box–Muller.
            let (u1, u2): (f64, f64) = (rng.random(), rng.random());
            let noise = (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            y.push(MU[state] + noise);
        }
    }
    (y, truth)
}

#[test]
fn two_regimes_are_told_apart_and_the_bound_never_decreases() {
    let (s, t) = (30, 60);
    let (y, truth) = simulate(s, t, 7);
    let mut m = model(&y, s, Some(2), None);
    let r = m.regime.unwrap();
    let fit = m.vmp.run(&strict(60, vec![m.z, m.a, r])).unwrap();
    assert!(fit.bound.is_finite());
    let q = m.vmp.moments(r);
    let assigned: Vec<usize> = (0..s).map(|i| usize::from(q[i * 2 + 1] > 0.5)).collect();
    // Labels are identified up to a swap.
    let same = assigned.iter().zip(&truth).filter(|(a, b)| a == b).count();
    let right = same.max(s - same);
    eprintln!("two regimes: {right}/{s} sequences assigned to their regime");
    assert_eq!(right, s);
}

#[test]
fn everything_latent_bound_never_decreases() {
    // Regime weights, per-regime initial probabilities p0[M] and transitions A[M, K], and the
    // emission means all latent; every update is checked.
    let (s, t) = (8, 25);
    let (y, _) = simulate(s, t, 11);
    let mut g = Graph::new();
    let (seqs, time) = (g.plate("S", s), g.plate("T", t));
    let (mp, k) = (g.plate("M", 2), g.plate("K", 2));
    let dir = || Dirichlet {
        concentration: vec![1.0; 2],
    };
    let w = g.add("w", dir(), &[], []).unwrap();
    let r = g.add("r", Categorical { k: 2 }, &[seqs], [p(w)]).unwrap();
    let p0 = g.add("p0", dir(), &[mp], []).unwrap();
    let a = g.add("A", dir(), &[mp, k], []).unwrap();
    let chain = MarkovChain {
        k: 2,
        time,
        lengths: None,
    };
    let z = g
        .markov_chain_mixture("z", chain, &[seqs], &[(r, mp)], [p(p0), p(a)])
        .unwrap();
    let mu = g.add("mu", Gaussian, &[k], [c(0.0), c(0.1)]).unwrap();
    let yn = g
        .add_mixture("y", Gaussian, &[seqs, time], &[(z, k)], [p(mu), c(1.0)])
        .unwrap();
    g.observe(yn, &y).unwrap();
    g.initialize(mu, Init::Moments(vec![-1.0, 1.01, 1.0, 1.01]));
    let mut vmp = g.compile().unwrap();
    let fit = vmp.run(&strict(40, vec![z, mu, a, p0, r, w])).unwrap();
    assert!(fit.bound.is_finite());
}

#[test]
fn a_regime_along_time_is_refused() {
    let mut g = Graph::new();
    let (seqs, time) = (g.plate("S", 2), g.plate("T", 4));
    let (mp, k) = (g.plate("M", 2), g.plate("K", 2));
    let r = g
        .add(
            "r",
            Categorical { k: 2 },
            &[seqs, time],
            [cv(vec![0.5, 0.5])],
        )
        .unwrap();
    let a = g
        .add(
            "A",
            Dirichlet {
                concentration: vec![1.0; 2],
            },
            &[mp, k],
            [],
        )
        .unwrap();
    let chain = MarkovChain {
        k: 2,
        time,
        lengths: None,
    };
    let err = g
        .markov_chain_mixture("z", chain, &[seqs], &[(r, mp)], [cv(vec![0.5, 0.5]), p(a)])
        .unwrap_err()
        .to_string();
    eprintln!("{err}");
    assert!(
        err.contains('z') && err.contains('r') && err.contains('T'),
        "{err}"
    );
}

/// The regime model built either with the chain's own mixture or with a `Gate` node selecting
/// A's rows per sequence (the generic indexed-expression path): the same q, the same bound.
fn regime_model(y: &[f64], s: usize, gate: bool) -> (Vmp, Vec<NodeId>) {
    let mut g = Graph::new();
    let seqs = g.plate("S", s);
    let t = g.plate("T", y.len() / s);
    let (mp, k) = (g.plate("M", 2), g.plate("K", 2));
    let dir = || Dirichlet {
        concentration: vec![1.0; 2],
    };
    let w = g.add("w", dir(), &[], []).unwrap();
    let r = g.add("r", Categorical { k: 2 }, &[seqs], [p(w)]).unwrap();
    let start: Vec<f64> = (0..s)
        .flat_map(|i| {
            let a = 0.2 + 0.6 * (i % 3) as f64 / 2.0;
            [a, 1.0 - a]
        })
        .collect();
    g.initialize(r, Init::Moments(start));
    let a = g.add("A", dir(), &[mp, k], []).unwrap();
    let chain = MarkovChain {
        k: 2,
        time: t,
        lengths: None,
    };
    let p0 = cv(vec![0.5, 0.5]);
    let z = if gate {
        let of = MomentKind::Dirichlet { k: 2 };
        let ar = g
            .deterministic(
                "A_r",
                Gate { k: 2, of },
                &[k, seqs],
                [p(r), ParentSpec::Stacked(a, mp)],
            )
            .unwrap();
        let ps = [p0, ParentSpec::Stacked(ar, k)];
        g.markov_chain("z", chain, &[seqs], ps).unwrap()
    } else {
        g.markov_chain_mixture("z", chain, &[seqs], &[(r, mp)], [p0, p(a)])
            .unwrap()
    };
    let mu = g
        .constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &MU)
        .unwrap();
    let yn = g
        .add_mixture("y", Gaussian, &[seqs, t], &[(z, k)], [p(mu), c(1.0)])
        .unwrap();
    g.observe(yn, y).unwrap();
    (g.compile().unwrap(), vec![z, a, r, w])
}

#[test]
fn the_chain_mixture_equals_a_gate_on_its_parameters() {
    let (y, _) = simulate(6, 15, 5);
    let (mut mixed, order) = regime_model(&y, 6, false);
    let (mut gated, order_g) = regime_model(&y, 6, true);
    for sweeps in [1, 2, 5, 12] {
        let a = mixed.run(&strict(sweeps, order.clone())).unwrap().bound;
        let b = gated.run(&strict(sweeps, order_g.clone())).unwrap().bound;
        assert!(rel(a, b) < 1e-10, "{sweeps} sweep(s): {a} vs gate {b}");
        let (qa, qb) = (mixed.moments(order[2]), gated.moments(order_g[2]));
        assert!(qa.iter().zip(qb).all(|(x, y)| (x - y).abs() < 1e-10));
    }
}
