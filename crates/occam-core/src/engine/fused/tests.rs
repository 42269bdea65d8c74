use crate::network::Source;
use crate::prelude::*;
use std::sync::Arc;

/// z[G, M] with weights per group G (three element groups), some labels observed, and three
/// mixture children: a Gaussian with missing entries, a Poisson, and w[G, M, D] with means
/// nu[K, D] (runs of D elements per z element). `complete`: no missing entry, no observed
/// label and one weight vector for every element (the whole-block path, `fast_block`).
fn model(complete: bool) -> (Vmp, NodeId) {
    let (groups, per, k) = (3, 40, 4);
    let n = groups * per;
    let noise = |i: usize, salt: usize| ((i * 7919 + salt * 104_729) % 1000) as f64 / 1000.0;
    let mut g = Graph::new();
    let gp = g.plate("G", groups);
    let mp = g.plate("M", per);
    let kp = g.plate("K", k);
    let dp = g.plate("D", 2);
    let alpha_plates: &[PlateId] = if complete { &[] } else { &[gp] };
    let alpha = g
        .add(
            "alpha",
            Dirichlet {
                concentration: vec![1.5, 1.0, 2.0, 0.5],
            },
            alpha_plates,
            [],
        )
        .unwrap();
    let z = g
        .add("z", Categorical { k }, &[gp, mp], [p(alpha)])
        .unwrap();
    let mu = g.add("mu", Gaussian, &[kp], [c(0.0), c(0.01)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 1.0 }, &[kp], [c(1.0)]).unwrap();
    let rate = g
        .add("rate", Gamma { shape: 2.0 }, &[kp], [c(0.5)])
        .unwrap();
    let x = g
        .add_mixture("x", Gaussian, &[gp, mp], &[(z, kp)], [p(mu), p(tau)])
        .unwrap();
    let y = g
        .add_mixture("y", Poisson, &[gp, mp], &[(z, kp)], [p(rate)])
        .unwrap();
    let nu = g.add("nu", Gaussian, &[kp, dp], [c(0.0), c(0.1)]).unwrap();
    let w = g
        .add_mixture("w", Gaussian, &[gp, mp, dp], &[(z, kp)], [p(nu), c(2.0)])
        .unwrap();
    let truth: Vec<usize> = (0..n).map(|i| (noise(i, 1) * k as f64) as usize).collect();
    let xs: Vec<f64> = (0..n)
        .map(|i| 4.0 * truth[i] as f64 + noise(i, 2) - 0.5)
        .collect();
    let ys: Vec<f64> = (0..n)
        .map(|i| (truth[i] as f64 * 3.0 + 4.0 * noise(i, 3)).floor())
        .collect();
    let x_seen: Vec<bool> = (0..n).map(|i| complete || i % 7 != 3).collect();
    let labels: Vec<f64> = truth.iter().map(|&t| t as f64).collect();
    let label_seen: Vec<bool> = (0..n).map(|i| i % 11 == 5).collect();
    g.observe_masked(x, &xs, Some(&x_seen)).unwrap();
    g.observe(y, &ys).unwrap();
    let ws: Vec<f64> = (0..2 * n)
        .map(|i| (truth[i / 2] as f64 - 1.5) * (1.0 + (i % 2) as f64) + noise(i, 4))
        .collect();
    g.observe(w, &ws).unwrap();
    if !complete {
        g.observe_masked(z, &labels, Some(&label_seen)).unwrap();
    }
    (g.compile().unwrap(), z)
}

/// The fused index update, with matrix products over runs, gives the element-by-element
/// update's q(z), bound terms and every later update, sweep after sweep (to rounding: sums are
/// added in another order), with missing entries and observed labels and without.
#[test]
fn fused_update_equals_the_generic_update() {
    for complete in [false, true] {
        fused_equals_generic(complete);
    }
}

fn fused_equals_generic(complete: bool) {
    let (mut fused, z) = model(complete);
    let (mut generic, _) = model(complete);
    assert!(fused.is_fused(z.index()), "z should take the fused path");
    let w = fused.node("w").unwrap().index();
    assert!(fused.nodes[w].config_only && fused.nodes[w].period == 2);
    unfused(&mut generic);
    // Whole blocks with one prior (every element latent, the tiled path or the row-major one)
    // keep no φ for z.
    track_generic(&mut fused, &mut generic, 15, "", |fused, _| {
        assert_eq!(fused.nodes[z.index()].natural_on_request(), complete);
    });
}

/// `vmp` with every fused path switched off: indices updated element by element and mixture
/// children read per element, the reference the fused update is tested against.
pub(crate) fn unfused(vmp: &mut Vmp) {
    vmp.unfuse();
    for node in vmp.nodes.iter_mut() {
        node.config_only = false;
        node.period = 1;
    }
}

/// `fused` and its [`unfused`] twin `generic`, both initialised with seed 7, updated side by side
/// for `sweeps` sweeps: every node's bound term agrees after each update, and after each sweep
/// (once `check` has run) every node's moments and its φ through `natural` — where the tiled path
/// keeps no φ and q(z_e = k) is 0, the formed φ is −∞ and the generic one is below A − 700 —
/// all to 1e-10 relative; then the cached bound is the fresh one. `tag` starts every message.
pub(crate) fn track_generic(
    fused: &mut Vmp,
    generic: &mut Vmp,
    sweeps: usize,
    tag: &str,
    check: impl Fn(&Vmp, usize),
) {
    fused.initialize(7).unwrap();
    generic.initialize(7).unwrap();
    let order = fused.default_order();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * (1.0 + b.abs());
    for sweep in 0..sweeps {
        for &id in &order {
            fused.update(id).unwrap();
            generic.update(id).unwrap();
            for (name, (a, b)) in fused
                .names()
                .iter()
                .zip(fused.node_bounds().into_iter().zip(generic.node_bounds()))
            {
                assert!(
                    close(a, b),
                    "{tag}sweep {sweep}, bound term of {name}: {a} vs {b}"
                );
            }
        }
        check(fused, sweep);
        for node in 0..fused.nodes.len() {
            let (a, b) = (&fused.nodes[node], &generic.nodes[node]);
            for (u, v) in a.q.u.iter().zip(&b.q.u) {
                assert!(close(*u, *v), "{tag}sweep {sweep}, {}: {u} vs {v}", a.name);
            }
            let (pa, pb) = (fused.natural(NodeId(node)), generic.natural(NodeId(node)));
            assert_eq!(
                (a.q.u.len(), pa.len()),
                (b.q.u.len(), pb.len()),
                "{}",
                a.name
            );
            for (i, (p, q)) in pa.iter().zip(pb).enumerate() {
                if *p == f64::NEG_INFINITY && a.natural_on_request() {
                    let below = *q - b.q.a[i / b.len] <= -700.0;
                    assert!(
                        b.q.u[i] == 0.0 && below,
                        "{tag}sweep {sweep}, {}: {p} vs {q}",
                        a.name
                    );
                } else {
                    assert!(close(*p, *q), "{tag}sweep {sweep}, {}: {p} vs {q}", a.name);
                }
            }
        }
    }
    assert!(close(fused.bound(), fused.fresh_bound()));
}

/// An index whose φ is not kept (whole blocks with one prior) and is then updated element by element (the
/// fused path switched off) forms φ from q first and goes on as the generic update does: every
/// moment and bound term after each sweep, and φ kept again.
#[test]
fn an_index_without_phi_is_updated_element_by_element_as_before() {
    let (mut fused, z) = model(true);
    let (mut generic, _) = model(true);
    generic.unfuse();
    fused.initialize(7).unwrap();
    generic.initialize(7).unwrap();
    let order = fused.default_order();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * (1.0 + b.abs());
    for sweep in 0..6 {
        if sweep == 3 {
            fused.unfuse();
        }
        for &id in &order {
            fused.update(id).unwrap();
            generic.update(id).unwrap();
        }
        let on_request = fused.nodes[z.index()].natural_on_request();
        assert_eq!(on_request, sweep < 3);
        for (a, b) in fused.node_bounds().into_iter().zip(generic.node_bounds()) {
            assert!(close(a, b), "sweep {sweep}: {a} vs {b}");
        }
        for (a, b) in fused.nodes.iter().zip(&generic.nodes) {
            for (u, v) in a.q.u.iter().zip(&b.q.u) {
                assert!(close(*u, *v), "sweep {sweep}, {}: {u} vs {v}", a.name);
            }
        }
    }
    let (a, b) = (&fused.nodes[z.index()], &generic.nodes[z.index()]);
    for (p, q) in a.q.phi.iter().zip(&b.q.phi) {
        assert!(close(*p, *q), "{p} vs {q}");
    }
    assert_eq!(a.q.phi.len(), b.q.phi.len());
    assert!(close(fused.bound(), fused.fresh_bound()));
}

/// y[N] ~ mixture of Gaussian(mu[K], tau[K]) over z[N] ~ Categorical(p) with the constant
/// weights p (one per component; a 0 is set in the compiled constant's ⟨ln p⟩ = −∞, since a
/// constant given through the graph must be positive), from deterministic starts; 40 sweeps z,
/// mu, tau. Returns the bound and q(z).
fn constant_weights_fit(weights: &[f64], generic: bool) -> (f64, Vec<f64>) {
    let (n, k) = (300, weights.len());
    let given: Vec<f64> = weights.iter().map(|&w| w.max(1e-3)).collect();
    let total: f64 = given.iter().sum();
    let given: Vec<f64> = given.iter().map(|w| w / total).collect();
    let mut g = Graph::new();
    let np = g.plate("N", n);
    let kp = g.plate("K", k);
    let z = g
        .add("z", Categorical { k }, &[np], [cv(given.clone())])
        .unwrap();
    let mu = g.add("mu", Gaussian, &[kp], [c(0.0), c(0.01)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 1.0 }, &[kp], [c(1.0)]).unwrap();
    let y = g
        .add_mixture("y", Gaussian, &[np], &[(z, kp)], [p(mu), p(tau)])
        .unwrap();
    let ys: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { -3.0 } else { 3.0 } + ((i * 7919) % 1000) as f64 / 1000.0 - 0.5)
        .collect();
    g.observe(y, &ys).unwrap();
    let means = [-3.0, 3.0, 0.5];
    let mu0: Vec<f64> = means[..k].iter().flat_map(|m| [*m, m * m + 1.0]).collect();
    g.initialize(mu, Init::Moments(mu0));
    g.initialize(tau, Init::Moments([1.0, -0.5].repeat(k)));
    let mut vmp = g.compile().unwrap();
    if weights.contains(&0.0) {
        let ln_p: Vec<f64> = weights.iter().map(|w| w.ln()).collect();
        Arc::make_mut(&mut vmp.nodes[z.index()].model).parents[0].source = Source::Const(ln_p);
        // The prior fixed when compiling, formed anew from the new constant.
        vmp.nodes[z.index()].fixed_prior = super::super::fixed_prior(&vmp.nodes[z.index()]);
    }
    vmp.changed_all();
    assert!(vmp.is_fused(z.index()));
    if generic {
        vmp.unfuse();
    }
    let fit = vmp
        .run(&RunOptions {
            max_iter: 40,
            tol: -1.0,
            order: Some(vec![z, mu, tau]),
            ..Default::default()
        })
        .unwrap();
    (fit.bound, vmp.moments(z).to_vec())
}

/// A constant weight prior that gives a component probability 0 (φ = ln 0 = −∞ for it, and
/// q(z = it) = 0) leaves a finite bound equal to that of the mixture without the component:
/// 0 · (−∞) counts as 0 in the index's own and prior terms, on the fused and generic paths.
#[test]
fn a_component_of_probability_zero_contributes_nothing() {
    let (two, _) = constant_weights_fit(&[0.5, 0.5], false);
    assert!(two.is_finite());
    for generic in [false, true] {
        let (three, q) = constant_weights_fit(&[0.5, 0.5, 0.0], generic);
        assert!(q.chunks(3).all(|r| r[2] == 0.0));
        assert!(
            (three - two).abs() <= 1e-9 * two.abs(),
            "generic {generic}: {three} vs {two}"
        );
    }
}

/// A non-finite message stops the fused update with the node and element named.
#[test]
fn fused_update_reports_the_broken_element() {
    let (mut vmp, z) = model(true);
    vmp.initialize(3).unwrap();
    let x = vmp.node("x").unwrap();
    vmp.nodes[x.index()].q.u[2 * 21] = f64::NAN;
    vmp.changed(x.index());
    match vmp.update(z) {
        Err(RunError::Numerical { node, element, .. }) => {
            assert_eq!((node.as_str(), element), ("z", 21));
        }
        other => panic!("expected a numerical error, got {other:?}"),
    }
}
