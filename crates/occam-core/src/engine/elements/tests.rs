use crate::models::GaussianMixture;
use crate::prelude::*;

/// The GMM (Dirichlet weights, Gaussian means and Wishart precisions with fixed hyperparameters)
/// on a small data set, fitted for a few sweeps: the bound trace and the final moments of every
/// node.
fn gmm_fit(fixed: bool) -> (Vec<f64>, Vec<Vec<f64>>, Vec<bool>) {
    let (n, d, k) = (120, 2, 4);
    let y: Vec<f64> = (0..n * d)
        .map(|i| ((i * 7919) % 1000) as f64 / 100.0 - 5.0 + if i % 6 < 2 { 8.0 } else { 0.0 })
        .collect();
    let mut g = Graph::new();
    let m = GaussianMixture::new(k).add(&mut g, &y, d).unwrap();
    let mut vmp = g.compile().unwrap();
    let has: Vec<bool> = vmp.nodes.iter().map(|n| n.fixed_prior.is_some()).collect();
    if !fixed {
        vmp.nodes.iter_mut().for_each(|n| n.fixed_prior = None);
    }
    let mut bounds = Vec::new();
    for _ in 0..6 {
        let fit = vmp
            .run(&RunOptions {
                max_iter: 1,
                tol: 0.0,
                seed: 3,
                order: Some(vec![m.mu, m.lambda, m.z, m.alpha]),
                ..Default::default()
            })
            .unwrap();
        bounds.push(fit.bound);
    }
    let moments = [m.alpha, m.z, m.mu, m.lambda]
        .iter()
        .map(|&id| vmp.moments(id).to_vec())
        .collect();
    (bounds, moments, has)
}

/// The priors fixed when compiling (the Dirichlet's, the means' and the Wisharts', whose parents
/// are constants; not z's, whose parent is α) change no bit of the fit: the same bounds and
/// moments as when every prior is formed from its parents at each use.
#[test]
fn fixed_priors_change_no_bits() {
    let (b1, m1, has) = gmm_fit(true);
    let (b0, m0, _) = gmm_fit(false);
    // alpha, z, mu, Lambda, y in the order added.
    assert_eq!(has, [true, false, true, true, false]);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&b1), bits(&b0));
    for (a, b) in m1.iter().zip(&m0) {
        assert_eq!(bits(a), bits(b));
    }
    // The fit moved (the comparison is not of untouched states).
    assert!(b1[5] > b1[0]);
}

/// One chunk runs on the calling thread (no hand-off to the pool, which a test thread is not part
/// of); several run as pool tasks, their results in chunk order.
#[test]
fn one_chunk_stays_on_the_calling_thread() {
    assert_eq!(
        super::map_chunks(1, |_| rayon::current_thread_index()),
        [None]
    );
    assert_eq!(super::map_chunks(4, |ch| ch * 2), [0, 2, 4, 6]);
    assert!(super::map_chunks(0, |ch| ch).is_empty());
}

/// The component priors kept in the cache (formed by the fused index update, read by the bound)
/// are those of the current parents: after each update of a few sweeps, the bound equals the one
/// formed with every cached product dropped (to what round-off can move either: the statistics
/// are then summed in another order), while a stale Θ after an update of the means would move it
/// by far more.
#[test]
fn cached_component_priors_follow_their_parents() {
    let (n, d, k) = (150, 2, 3);
    let y: Vec<f64> = (0..n * d)
        .map(|i| ((i * 7919) % 1000) as f64 / 200.0 + if i % 6 < 2 { 9.0 } else { 0.0 })
        .collect();
    let mut g = Graph::new();
    let m = GaussianMixture::new(k).add(&mut g, &y, d).unwrap();
    let mut vmp = g.compile().unwrap();
    vmp.run(&RunOptions {
        max_iter: 1,
        tol: 0.0,
        order: Some(vec![m.mu, m.lambda, m.z, m.alpha]),
        ..Default::default()
    })
    .unwrap();
    let mut moved = 0.0_f64;
    for _ in 0..3 {
        for id in [m.mu, m.lambda, m.z, m.alpha] {
            let before = vmp.bound();
            vmp.update(id).unwrap();
            let cached = vmp.bound();
            vmp.changed_all();
            let fresh = vmp.bound();
            // What round-off can move each of the two (`Vmp::bound_roundoff`).
            let roundoff = vmp.bound_roundoff();
            assert!(
                (cached - fresh).abs() <= 2.0 * roundoff,
                "after updating {id:?}: {cached} cached, {fresh} fresh, round-off {roundoff}"
            );
            moved = moved.max((cached - before).abs());
        }
    }
    assert!(moved > 1e-3, "the updates moved the bound ({moved})");
}

/// A latent mixture's element priors formed from each component's prior once
/// (`mixture_element_priors`, the update's table) are `prior_of`'s, bit for bit: soft weights,
/// a zero weight (skipped by both) and a one-hot row, with distinct components.
#[test]
fn mixture_element_priors_are_prior_of_bit_for_bit() {
    use super::super::factorised::mixture_element_priors;
    use super::super::{DistVisitor, ExpFamily, Node};
    let (n, k) = (4, 3);
    let mut g = Graph::new();
    let np = g.plate("N", n);
    let kp = g.plate("K", k);
    let z = g
        .add("z", Categorical { k }, &[np], [cv(vec![0.2, 0.3, 0.5])])
        .unwrap();
    let mu = g.add("mu", Gaussian, &[kp], [c(0.0), c(0.5)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 2.0 }, &[kp], [c(1.0)]).unwrap();
    let s = g
        .add_mixture("s", Gaussian, &[np], &[(z, kp)], [p(mu), p(tau)])
        .unwrap();
    let y = g.add("y", Gaussian, &[np], [p(s), c(1.0)]).unwrap();
    g.observe(y, &[0.1, -2.0, 3.0, 0.5]).unwrap();
    let weights = [0.2, 0.3, 0.5, 0.0, 0.4, 0.6, 1.0, 0.0, 0.0, 0.7, 0.1, 0.2];
    g.initialize(z, Init::Moments(weights.to_vec()));
    g.initialize(mu, Init::Moments(vec![-1.5, 2.5, 0.25, 0.3125, 3.0, 9.5]));
    g.initialize(tau, Init::Natural(vec![-1.0, 1.0, -2.0, 3.0, -0.5, 0.5]));
    let mut vmp = g.compile().unwrap();
    vmp.initialize(5).unwrap();

    struct Both<'a>(&'a [Node], &'a Node);
    type Priors = (Option<(Vec<f64>, Vec<f64>)>, Vec<f64>, Vec<f64>);
    impl DistVisitor for Both<'_> {
        type Output = Priors;
        fn visit<D: ExpFamily>(self, d: &D) -> Priors {
            let (nodes, node) = (self.0, self.1);
            let table = mixture_element_priors(d, nodes, node);
            let mut phi = vec![0.0; node.n * node.len];
            let mut a = vec![0.0; node.n];
            let (mut tmp, mut buf) = (vec![0.0; node.len], Vec::new());
            for (e, pe) in phi.chunks_exact_mut(node.len).enumerate() {
                a[e] = super::prior_of(d, nodes, node, e, pe, &mut tmp, &mut buf);
            }
            (table, phi, a)
        }
    }
    let node = &vmp.nodes[s.0];
    assert!(node.config_only && node.groups.is_none());
    let (table, phi, a) = node.dist().unwrap().visit(Both(&vmp.nodes, node));
    let (tphi, ta) = table.expect("a one-selector mixture gets the table");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&tphi), bits(&phi));
    assert_eq!(bits(&ta), bits(&a));
    // The elements' priors differ (the check is not of one repeated row).
    assert!(phi[0] != phi[2] && phi[2] != phi[4] && a[1] != a[2]);
    // A node that is not such a mixture gets none (its update computes as before).
    let tau_node = &vmp.nodes[tau.0];
    assert!(tau_node
        .dist()
        .unwrap()
        .visit(Both(&vmp.nodes, tau_node))
        .0
        .is_none());
}
