//! Forward–backward and Viterbi against enumeration of every path of a small chain.

use super::forward_backward::{entropy, forward_backward, viterbi};
use rand::{Rng as _, SeedableRng};

/// Every path's unnormalised log-weight, by enumeration.
fn paths(k: usize, steps: usize, lp0: &[f64], la: &[f64], eta: &[f64]) -> Vec<(Vec<usize>, f64)> {
    let mut out = Vec::new();
    for code in 0..k.pow(steps as u32) {
        let z: Vec<usize> = (0..steps).map(|t| (code / k.pow(t as u32)) % k).collect();
        let mut w = lp0[z[0]] + eta[z[0]];
        for t in 1..steps {
            w += la[z[t - 1] * k + z[t]] + eta[t * k + z[t]];
        }
        out.push((z, w));
    }
    out
}

#[test]
fn forward_backward_equals_enumeration() {
    let mut rng = crate::Rng::seed_from_u64(7);
    for (k, steps) in [(1, 3), (2, 1), (3, 5), (4, 4), (5, 3)] {
        // Unnormalised expected log-parameters (as ⟨ln p⟩ of a Dirichlet are), with large offsets
        // to exercise the scaling.
        let lp0: Vec<f64> = (0..k).map(|_| rng.random_range(-3.0..0.0)).collect();
        let la: Vec<f64> = (0..k * k).map(|_| rng.random_range(-40.0..-30.0)).collect();
        let eta: Vec<f64> = (0..k * steps)
            .map(|_| rng.random_range(-900.0..-880.0))
            .collect();
        let all = paths(k, steps, &lp0, &la, &eta);
        let max = all.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let log_z = max + all.iter().map(|p| (p.1 - max).exp()).sum::<f64>().ln();
        let (mut gamma, mut xi) = (vec![0.0; k * steps], vec![0.0; k * k]);
        let (mut want_g, mut want_xi, mut want_h) = (vec![0.0; k * steps], vec![0.0; k * k], 0.0);
        for (z, w) in &all {
            let q = (w - log_z).exp();
            want_h -= q * (w - log_z);
            for t in 0..steps {
                want_g[t * k + z[t]] += q;
                if t > 0 {
                    want_xi[z[t - 1] * k + z[t]] += q;
                }
            }
        }
        let got = forward_backward(k, &lp0, &la, &eta, &mut gamma, &mut xi).unwrap();
        assert!(
            (got - log_z).abs() <= 1e-12 * log_z.abs(),
            "{got} vs {log_z}"
        );
        for (g, w) in gamma.iter().zip(&want_g).chain(xi.iter().zip(&want_xi)) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
        let h = entropy(got, &lp0, &la, &eta, &gamma, &xi);
        assert!((h - want_h).abs() < 1e-9, "entropy {h} vs {want_h}");
        let mut path = vec![0; steps];
        viterbi(k, &lp0, &la, &eta, &mut path);
        let best = all.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert_eq!(path, best.0);
    }
}

#[test]
fn impossible_chain_is_reported_not_nan() {
    let (k, steps) = (2, 3);
    let lp0 = [0.0, f64::NEG_INFINITY];
    // From state 0 only state 1 is reachable, but step 1's messages forbid state 1.
    let la = [f64::NEG_INFINITY, 0.0, 0.0, 0.0];
    let eta = [0.0, 0.0, 0.0, f64::NEG_INFINITY, 0.0, 0.0];
    let (mut gamma, mut xi) = (vec![0.0; k * steps], vec![0.0; k * k]);
    assert!(forward_backward(k, &lp0, &la, &eta, &mut gamma, &mut xi).is_none());
}
