//! The mixture node's messages (Winn (2.53)) are gradients of its bound term: to each component
//! parent, ∂L_x/∂⟨u_θ⟩; to the index, ∂L_x/∂Q(z). Checked by finite differences through the public
//! API: a message is read off as φ(updated) − φ(prior) of the receiving node.

use occam_core::prelude::*;

const X: [f64; 3] = [0.3, -1.2, 2.0];
const K: usize = 2;

/// Builds y[N] ~ mixture over K of Gaussian(mu[K], tau[K]) with z[N] ~ Categorical(0.4, 0.6), with
/// the given moments for mu, tau and z; returns the graph's Vmp and ids (mu, tau, z, y).
fn model(mu: &[f64], tau: &[f64], z: &[f64]) -> (Vmp, [NodeId; 4]) {
    let mut g = Graph::new();
    let n = g.plate("N", X.len());
    let k = g.plate("K", K);
    let m = g.add("mu", Gaussian, &[k], [c(0.5), c(0.2)]).unwrap();
    let t = g.add("tau", Gamma { shape: 2.0 }, &[k], [c(1.5)]).unwrap();
    let zz = g
        .add("z", Categorical { k: K }, &[n], [cv(vec![0.4, 0.6])])
        .unwrap();
    let y = g
        .add_mixture("y", Gaussian, &[n], &[(zz, k)], [p(m), p(t)])
        .unwrap();
    g.observe(y, &X).unwrap();
    g.initialize(m, Init::Moments(mu.to_vec()));
    g.initialize(t, Init::Moments(tau.to_vec()));
    g.initialize(zz, Init::Moments(z.to_vec()));
    let mut vmp = g.compile().unwrap();
    vmp.initialize(0).unwrap();
    (vmp, [m, t, zz, y])
}

#[test]
fn mixture_messages_are_gradients_of_the_bound_term() {
    let mu = vec![0.1, 0.1 * 0.1 + 0.5, -0.7, 0.49 + 0.3];
    let tau = vec![1.3, 0.1, 0.6, -0.8];
    let z = vec![0.2, 0.8, 0.55, 0.45, 0.9, 0.1];
    let term = |mu: &[f64], tau: &[f64], z: &[f64]| {
        let (vmp, ids) = model(mu, tau, z);
        vmp.node_bounds()[ids[3].index()]
    };
    // Messages: update a node, subtract its prior natural parameters.
    let message = |which: usize| -> Vec<f64> {
        let (mut vmp, ids) = model(&mu, &tau, &z);
        // The prior's φ: a Gaussian or Gamma started from given moments keeps it until its
        // first update; a Categorical's start is the q with those moments (φ = ln u), so the
        // index's prior φ is written out: ⟨ln p⟩ = ln(0.4, 0.6) per element.
        let prior = if which == 2 {
            [0.4f64.ln(), 0.6f64.ln()].repeat(X.len())
        } else {
            vmp.natural(ids[which]).to_vec()
        };
        vmp.update(ids[which]).unwrap();
        vmp.natural(ids[which])
            .iter()
            .zip(&prior)
            .map(|(a, b)| a - b)
            .collect()
    };
    let h = 1e-6;
    for (which, base) in [(0, &mu), (1, &tau), (2, &z)] {
        let msg = message(which);
        for i in 0..base.len() {
            let mut plus = [mu.clone(), tau.clone(), z.clone()];
            let mut minus = plus.clone();
            plus[which][i] += h;
            minus[which][i] -= h;
            let fd = (term(&plus[0], &plus[1], &plus[2]) - term(&minus[0], &minus[1], &minus[2]))
                / (2.0 * h);
            // (f(x) = 0 for the Gaussian, so the index message is the full gradient.)
            let want = (msg[i], fd);
            assert!(
                (want.0 - want.1).abs() < 1e-6 * (1.0 + want.1.abs()),
                "node {which} entry {i}: message {} vs FD {}",
                want.0,
                want.1
            );
        }
    }
}
