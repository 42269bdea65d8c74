//! Ancestral sampling draws each node given its parents' draws (mixtures select by the drawn index).

use occam_core::prelude::*;

#[test]
fn ancestral_draws_follow_the_model() {
    let mut g = Graph::new();
    let n = g.plate("N", 4000);
    let k = g.plate("K", 2);
    let mu = g.add("mu", Gaussian, &[k], [c(0.0), c(0.01)]).unwrap();
    let pi = g
        .add(
            "pi",
            Dirichlet {
                concentration: vec![50.0, 50.0],
            },
            &[],
            [],
        )
        .unwrap();
    let z = g.add("z", Categorical { k: 2 }, &[n], [p(pi)]).unwrap();
    let x = g
        .add_mixture("x", Gaussian, &[n], &[(z, k)], [p(mu), c(4.0)])
        .unwrap();
    let mut vmp = g.compile().unwrap();
    let draws = vmp.sample_prior(9).unwrap();
    let (mus, zs, xs) = (&draws[mu.index()], &draws[z.index()], &draws[x.index()]);
    assert_eq!(xs.len(), 4000);
    for (comp, mu_c) in mus.iter().enumerate() {
        let sel: Vec<f64> = xs
            .iter()
            .zip(zs)
            .filter(|(_, &zi)| zi == comp as f64)
            .map(|(x, _)| *x)
            .collect();
        assert!(
            sel.len() > 1500,
            "component {comp} drawn {} times",
            sel.len()
        );
        let mean = sel.iter().sum::<f64>() / sel.len() as f64;
        let se = 0.5 / (sel.len() as f64).sqrt();
        assert!(
            (mean - mu_c).abs() < 5.0 * se,
            "component {comp}: mean {mean}, mu {}",
            mu_c
        );
    }
    // Same seed, same draws.
    assert_eq!(vmp.sample_prior(9).unwrap(), draws);
}
