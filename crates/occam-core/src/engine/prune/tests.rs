//! Pruning leaves a q: after a deletion or a relabelling of a mixture index's components, and
//! after a pruning stage, the index's kept or formed φ is the one its moments u come from
//! (u_e = softmax(φ_e) per latent row, Winn (2.19)), its bound term equals one formed from u
//! alone, Σ_e Σ_k u_ek (⟨ln π_k⟩ − ln u_ek) (Winn (2.34)–(2.36): ⟨ln p(z | π)⟩ + H[q(z)]), and the
//! bound equals the bound formed without cached products. Checked on every path that keeps φ for
//! the index: the fused update with some labels observed (element by element), the fused update
//! with a prior per group (whole blocks, priors added per row), and the generic update (the fused
//! path switched off).

use super::super::fused::tests::unfused;
use super::super::{NodeId, Vmp};
use crate::prelude::*;

/// How the index is updated.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    /// The fused update, two labels observed (elements 0 and 1, components 0 and 1).
    Observed,
    /// The fused update, weights per group: z[G, M] ~ Categorical(alpha[G]).
    TwoPriors,
    /// The element-by-element update (the fused path switched off).
    Generic,
}

const PATHS: [Path; 3] = [Path::Observed, Path::TwoPriors, Path::Generic];

/// The mixture every test here fits: `groups` × `per` points, alternately near −3 and 3 (x
/// observed), and K = 4 Gaussian components whose index z[G, M] has Dirichlet (or, with
/// `sticks`, stick-breaking) weights, one set per group with `per_group`. Returns the graph
/// before z is observed or anything is started, and z, the means and the weights' node.
fn mixture(
    groups: usize,
    per: usize,
    per_group: bool,
    sticks: bool,
) -> (Graph, NodeId, NodeId, NodeId) {
    let (n, k) = (groups * per, 4);
    let mut g = Graph::new();
    let gp = g.plate("G", groups);
    let mp = g.plate("M", per);
    let kp = g.plate("K", k);
    let prior_plates: &[PlateId] = if per_group { &[gp] } else { &[] };
    let alpha = if sticks {
        g.add("alpha", StickBreaking { k }, prior_plates, [c(1.0)])
    } else {
        g.add(
            "alpha",
            Dirichlet {
                concentration: vec![1.0; k],
            },
            prior_plates,
            [],
        )
    }
    .unwrap();
    let z = g
        .add("z", Categorical { k }, &[gp, mp], [p(alpha)])
        .unwrap();
    let mu = g.add("mu", Gaussian, &[kp], [c(0.0), c(0.05)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 2.0 }, &[kp], [c(1.0)]).unwrap();
    let x = g
        .add_mixture("x", Gaussian, &[gp, mp], &[(z, kp)], [p(mu), p(tau)])
        .unwrap();
    let noise = |i: usize| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5;
    let xs: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { -3.0 } else { 3.0 } + noise(i))
        .collect();
    g.observe(x, &xs).unwrap();
    (g, z, mu, alpha)
}

/// Two groups of 30 points, alternately near −3 and 3, fitted by a mixture of K = 4 Gaussians
/// whose index z[G, M] has Dirichlet (or, with `sticks`, stick-breaking) weights, started so that
/// two components are surplus. Returns the compiled model, z and its weights' node.
fn model(path: Path, sticks: bool) -> (Vmp, NodeId, NodeId) {
    model_from(path, sticks, false)
}

/// [`model`], with `sorted`: the stick-breaking start holds the clusters in the first two
/// components instead of the last two.
fn model_from(path: Path, sticks: bool, sorted: bool) -> (Vmp, NodeId, NodeId) {
    let (groups, per) = (2, 30);
    let n = groups * per;
    let (mut g, z, mu, alpha) = mixture(groups, per, path == Path::TwoPriors, sticks);
    if path == Path::Observed {
        let labels: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
        let seen: Vec<bool> = (0..n).map(|i| i < 2).collect();
        g.observe_masked(z, &labels, Some(&seen)).unwrap();
    }
    // Observed labels: a random start, the clusters split by position. Otherwise each cluster
    // shared equally by two components with equal means (a saddle the sweeps keep exactly, so
    // that pruning has a component to delete), or, with sticks, held by the last two components
    // (a relabelling's case).
    let (rows, means): ([[f64; 4]; 2], [f64; 4]) = if sticks && sorted {
        (
            [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]],
            [-3.0, 3.0, 0.0, 0.0],
        )
    } else if sticks {
        (
            [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]],
            [0.0, 0.0, -3.0, 3.0],
        )
    } else {
        (
            [[0.5, 0.0, 0.5, 0.0], [0.0, 0.5, 0.0, 0.5]],
            [-3.0, 3.0, -3.0, 3.0],
        )
    };
    if path == Path::Observed {
        g.initialize(z, Init::Random);
        g.initialize(mu, split_start());
    } else {
        g.initialize(z, Init::Moments((0..n).flat_map(|i| rows[i % 2]).collect()));
        g.initialize(
            mu,
            Init::Moments(means.iter().flat_map(|m| [*m, m * m + 0.01]).collect()),
        );
    }
    let mut vmp = g.compile().unwrap();
    if path == Path::Generic {
        unfused(&mut vmp);
    } else {
        assert!(vmp.is_fused(z.index()), "{path:?}: z should be fused");
    }
    (vmp, z, alpha)
}

/// A start of the component means that splits each cluster in two (a local optimum the sweeps
/// keep, so that pruning has components to delete): −3.5 and −2.5, 2.5 and 3.5.
fn split_start() -> Init {
    let means = [-3.5, 2.5, -2.5, 3.5];
    Init::Moments(means.iter().flat_map(|m| [*m, m * m + 0.01]).collect())
}

/// Whether z's state is a q (module docs): φ against u per row, z's bound term against the one
/// formed from u and the weights' ⟨ln π⟩, the bound against the bound without caches; the first
/// disagreement, tagged, if not.
fn is_q(vmp: &Vmp, z: NodeId, alpha: NodeId, tag: &str) -> Result<(), String> {
    let node = &vmp.nodes[z.index()];
    let k = node.len;
    let per = node.n / 2;
    let ln_pi = vmp.moments(alpha);
    let phi = vmp.natural(z);
    if phi.len() != node.n * k {
        return Err(format!("{tag}: φ of {} values", phi.len()));
    }
    let mut want = 0.0;
    for e in 0..node.n {
        let u = &node.q.u[e * k..(e + 1) * k];
        let lp = if ln_pi.len() == k {
            ln_pi
        } else {
            &ln_pi[(e / per) * k..(e / per + 1) * k]
        };
        want += u.iter().zip(lp).map(|(q, l)| q * l).sum::<f64>();
        if node.is_observed(e) {
            continue;
        }
        want -= u
            .iter()
            .filter(|&&q| q > 0.0)
            .map(|q| q * q.ln())
            .sum::<f64>();
        // softmax(φ_e), with −∞ entries as 0.
        let row = &phi[e * k..(e + 1) * k];
        let top = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = row.iter().map(|p| (p - top).exp()).sum();
        for (j, (p, q)) in row.iter().zip(u).enumerate() {
            let s = (p - top).exp() / total;
            if (s - q).abs() > 1e-12 {
                return Err(format!(
                    "{tag}: element {e}, component {j}: softmax(φ) {s}, u {q}"
                ));
            }
        }
    }
    let got = vmp.node_bounds()[z.index()];
    if (got - want).abs() > 1e-10 * (1.0 + want.abs()) {
        return Err(format!("{tag}: z's bound term {got}, from u {want}"));
    }
    let (bound, fresh) = (vmp.bound(), vmp.fresh_bound());
    if (bound - fresh).abs() > 1e-12 * (1.0 + fresh.abs()) {
        return Err(format!(
            "{tag}: bound {bound}, without cached products {fresh}"
        ));
    }
    Ok(())
}

/// Panics with every failure of `checks`, one a line.
fn all_ok(checks: Vec<Result<(), String>>) {
    let failed: Vec<String> = checks.into_iter().filter_map(Result::err).collect();
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
}

/// `vmp` started from seed 3 and swept `sweeps` times.
fn swept(vmp: &mut Vmp, sweeps: usize) {
    vmp.initialize(3).unwrap();
    for _ in 0..sweeps {
        for id in vmp.default_order() {
            vmp.update(id).unwrap();
        }
    }
}

/// A deletion edits u only: the state right after it (what the trial's first sweep and a settling
/// round read) is a q on every path, and stays one through the next sweep.
#[test]
fn a_deleted_component_leaves_a_q() {
    let mut checks = Vec::new();
    for path in PATHS {
        let (mut vmp, z, alpha) = model(path, false);
        swept(&mut vmp, 3);
        checks.push(is_q(&vmp, z, alpha, &format!("{path:?} before")));
        // The component of least responsibility among the latent rows, as pruning tries first.
        let node = &vmp.nodes[z.index()];
        let k = node.len;
        let totals: Vec<f64> = (0..k)
            .map(|j| (0..node.n).map(|e| node.q.u[e * k + j]).sum())
            .collect();
        let j = (2..k)
            .min_by(|&a, &b| totals[a].total_cmp(&totals[b]))
            .unwrap();
        vmp.delete_component(z.index(), j, k);
        checks.push(is_q(
            &vmp,
            z,
            alpha,
            &format!("{path:?} after deleting {j}"),
        ));
        swept_on(&mut vmp);
        checks.push(is_q(&vmp, z, alpha, &format!("{path:?} a sweep later")));
    }
    all_ok(checks);
}

/// One more sweep.
fn swept_on(vmp: &mut Vmp) {
    for id in vmp.default_order() {
        vmp.update(id).unwrap();
    }
}

/// A relabelling by size (under stick-breaking weights) permutes u only: the state right after it
/// is a q, on the paths that relabel (labels observed name their components: no relabelling).
#[test]
fn a_relabelling_leaves_a_q() {
    let mut checks = Vec::new();
    for path in [Path::TwoPriors, Path::Generic] {
        let (mut vmp, z, alpha) = model(path, true);
        swept(&mut vmp, 3);
        // Components 0 and 1 emptied into 2 and 3 so that the order is increasing.
        let node = &mut vmp.nodes[z.index()];
        let k = node.len;
        for row in node.q.u.chunks_exact_mut(k) {
            let (a, b) = (row[0] + row[2], row[1] + row[3]);
            row.copy_from_slice(&[0.0, 0.0, a, b]);
        }
        vmp.nodes[z.index()].lazy = Default::default();
        vmp.changed(z.index());
        swept_on(&mut vmp);
        checks.push(is_q(&vmp, z, alpha, &format!("{path:?} before")));
        let order = vmp.default_order();
        assert!(
            vmp.reorder_by_size(z.index(), k, &order).unwrap(),
            "{path:?}: a relabelling"
        );
        checks.push(is_q(&vmp, z, alpha, &format!("{path:?} after relabelling")));
        swept_on(&mut vmp);
        checks.push(is_q(&vmp, z, alpha, &format!("{path:?} a sweep later")));
    }
    all_ok(checks);
}

/// Each component's total responsibility under index `z`.
fn totals(vmp: &Vmp, z: NodeId) -> Vec<f64> {
    let node = &vmp.nodes[z.index()];
    let k = node.len;
    (0..k)
        .map(|j| (0..node.n).map(|e| node.q.u[e * k + j]).sum())
        .collect()
}

/// A relabelling by size carries the components with their labels. The schedule updates z before
/// the means, so a relabelling of z's responsibilities alone was undone by the trial's first sweep
/// (z read the old components and put every row back) and the relabelling trial could never be
/// accepted. Now the relabelled state keeps the two clusters in components 0 and 1 through 200
/// sweeps, converges to the optimum of a start already in that order, and under stick-breaking
/// weights that is a higher bound than the state it came from: the empty sticks before the used
/// ones cost bound (about ln(α / N_after) per empty stick and group).
#[test]
fn a_relabelling_survives_the_sweeps_and_raises_the_bound() {
    for path in [Path::TwoPriors, Path::Generic] {
        let (mut vmp, z, _) = model(path, true);
        swept(&mut vmp, 3);
        let order = vmp.default_order();
        let k = vmp.nodes[z.index()].len;
        let converge = |vmp: &mut Vmp| {
            for _ in 0..200 {
                swept_on(vmp);
            }
            vmp.bound()
        };
        let mut saved = Vec::new();
        vmp.snapshot_into(&mut saved);
        let plain = converge(&mut vmp);
        let before = totals(&vmp, z);
        assert!(
            before[2] > 29.0 && before[3] > 29.0,
            "{path:?}: the clusters should stay in components 2 and 3 without a relabelling: {before:?}"
        );
        vmp.restore_swap(&mut saved);
        assert!(
            vmp.reorder_by_size(z.index(), k, &order).unwrap(),
            "{path:?}: a relabelling"
        );
        let relabelled = converge(&mut vmp);
        let after = totals(&vmp, z);
        assert!(
            after[0] > 29.0 && after[1] > 29.0 && after[2] + after[3] < 1e-6,
            "{path:?}: the clusters should be in components 0 and 1 after the relabelling: {after:?}"
        );
        // The relabelled state reaches the optimum of a start with the clusters already in the
        // first two components, and that optimum is above the unsorted one (by 8.19 nats with a
        // set of weights per group, 4.79 with one).
        let (mut fresh, _, _) = model_from(path, true, true);
        swept(&mut fresh, 3);
        let sorted = converge(&mut fresh);
        assert!(
            (relabelled - sorted).abs() <= 1e-9 * sorted.abs(),
            "{path:?}: relabelled bound {relabelled}, sorted start's {sorted}"
        );
        let gain = if path == Path::TwoPriors { 8.19 } else { 4.79 };
        assert!(
            (relabelled - plain - gain).abs() < 0.005,
            "{path:?}: relabelled bound {relabelled}, not relabelled {plain}: gain {}, expected {gain}",
            relabelled - plain
        );
    }
}

/// A pruning stage that deletes surplus components: the bound it reports is the bound of the
/// state it leaves, formed from scratch, and that state is a q, on every path.
#[test]
fn the_bound_after_pruning_is_the_from_scratch_bound_of_a_q() {
    let mut checks = Vec::new();
    for path in PATHS {
        let (mut vmp, z, alpha) = model(path, false);
        let fit = vmp
            .run(&RunOptions {
                max_iter: 300,
                tol: 1e-10,
                seed: 2,
                decrease_is_error: true,
                prune_components: true,
                ..Default::default()
            })
            .unwrap();
        assert!(fit.pruned_components >= 1, "{path:?}: {fit:?}");
        let used = vmp.components_in_use();
        assert_eq!(
            used.iter().map(|c| c.1).sum::<usize>(),
            2,
            "{path:?}: {used:?}"
        );
        assert!(
            (fit.bound - vmp.bound()).abs() <= 1e-12 * fit.bound.abs(),
            "{path:?}: reported {}, state's {}",
            fit.bound,
            vmp.bound()
        );
        checks.push(is_q(&vmp, z, alpha, &format!("{path:?}")));
    }
    all_ok(checks);
}

/// Observed labels are data: pruning never deletes a component an observed label names (it would
/// rewrite the label as a spread over the other components), and the labels' moments stay their
/// one-hot values. Element 2 (a point near −3) is observed in component 3, which no latent point
/// needs.
#[test]
fn pruning_keeps_the_components_observed_labels_name() {
    let (groups, per, k) = (2, 30, 4);
    let n = groups * per;
    let labels: Vec<f64> = (0..n)
        .map(|i| if i == 2 { 3.0 } else { (i % 2) as f64 })
        .collect();
    for generic in [false, true] {
        let (mut vmp, z, alpha) = labelled(&labels, per);
        if generic {
            unfused(&mut vmp);
        }
        let fit = vmp
            .run(&RunOptions {
                max_iter: 300,
                tol: 1e-10,
                seed: 2,
                decrease_is_error: true,
                prune_components: true,
                ..Default::default()
            })
            .unwrap();
        let u = vmp.moments(z);
        for (e, label) in labels.iter().enumerate().take(3) {
            let one_hot: Vec<f64> = (0..k)
                .map(|j| if j as f64 == *label { 1.0 } else { 0.0 })
                .collect();
            assert_eq!(
                &u[e * k..(e + 1) * k],
                &one_hot[..],
                "generic {generic}: element {e}, {fit:?}"
            );
        }
        is_q(&vmp, z, alpha, &format!("labels, generic {generic}")).unwrap();
    }
}

/// The model of [`model`] (Dirichlet weights) with the first three of `labels` observed.
fn labelled(labels: &[f64], per: usize) -> (Vmp, NodeId, NodeId) {
    let n = labels.len();
    let (mut g, z, mu, alpha) = mixture(n / per, per, false, false);
    let seen: Vec<bool> = (0..n).map(|i| i < 3).collect();
    g.observe_masked(z, labels, Some(&seen)).unwrap();
    g.initialize(z, Init::Random);
    g.initialize(mu, split_start());
    (g.compile().unwrap(), z, alpha)
}

/// A deletion edits latent elements only: an observed label keeps its one-hot moments even when
/// it names the deleted component.
#[test]
fn a_deletion_leaves_observed_labels_alone() {
    let labels: Vec<f64> = (0..60)
        .map(|i| if i == 2 { 3.0 } else { (i % 2) as f64 })
        .collect();
    let (mut vmp, z, alpha) = labelled(&labels, 30);
    swept(&mut vmp, 3);
    vmp.delete_component(z.index(), 3, 4);
    let u = &vmp.nodes[z.index()].q.u;
    assert_eq!(&u[8..12], &[0.0, 0.0, 0.0, 1.0]);
    is_q(&vmp, z, alpha, "after deleting 3").unwrap();
}
