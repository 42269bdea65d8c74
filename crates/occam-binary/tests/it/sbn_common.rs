//! Shared helpers for the SBN integration tests (included with `mod sbn_common;`).
#![allow(dead_code)]

use occam_binary::sbn::{Evidence, Sbn};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Random DAG SBN over `n` units (parents only among lower indices, edge probability `p_edge`),
/// weights and biases U(−span, span), and a random evidence pattern with `n_vis` observed units
/// drawn from the highest indices.
pub fn random_sbn(seed: u64, n: usize, n_vis: usize, p_edge: f64, span: f64) -> (Sbn, Evidence) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut bias = Vec::new();
    let mut parents = Vec::new();
    for i in 0..n {
        bias.push(span * (2.0 * rng.random::<f64>() - 1.0));
        let mut l = Vec::new();
        for j in 0..i {
            if rng.random::<f64>() < p_edge {
                l.push((j, span * (2.0 * rng.random::<f64>() - 1.0)));
            }
        }
        parents.push(l);
    }
    let sbn = Sbn::new(bias, parents).unwrap();
    let pairs: Vec<(usize, bool)> = (n - n_vis..n).map(|u| (u, rng.random::<bool>())).collect();
    let ev = Evidence::from_pairs(n, &pairs).unwrap();
    (sbn, ev)
}

/// Central finite-difference check: |analytic − numeric| ≤ tol·(1 + |numeric|) for every entry.
pub fn check_fd(
    name: &str,
    analytic: &[f64],
    x0: &[f64],
    h: f64,
    tol: f64,
    mut f: impl FnMut(&[f64]) -> f64,
) {
    assert_eq!(analytic.len(), x0.len(), "{name}: length");
    let mut x = x0.to_vec();
    for i in 0..x0.len() {
        x[i] = x0[i] + h;
        let fp = f(&x);
        x[i] = x0[i] - h;
        let fm = f(&x);
        x[i] = x0[i];
        let num = (fp - fm) / (2.0 * h);
        assert!(
            (analytic[i] - num).abs() <= tol * (1.0 + num.abs()),
            "{name}[{i}]: analytic {} vs numeric {}",
            analytic[i],
            num
        );
    }
}
