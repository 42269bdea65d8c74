//! The structural check from the index rules' strides (`by_strides`) against the element-by-element
//! check it stands in for.

use super::super::qblock::tests::models;
use super::*;

/// On the contract's mixture of Bayesian PCA, the strides show every plate read element by element
/// in the order N, K, D, and each look-up of the element-by-element check agrees.
#[test]
fn strides_show_the_block_layout() {
    let vmp = models::gated().compile().expect("compiles");
    let nodes = &vmp.nodes;
    let y = (0..nodes.len())
        .find(|&i| nodes[i].gated == Some(GatedRole::Data))
        .expect("a gated block");
    let l = Layout::of(nodes, y);
    assert!(by_strides(nodes, &l));
    let (n, k, d) = (l.n, l.k, l.d);
    let ((fw, fx), (mm, mf)) = (slots(&nodes[l.f], l.x), slots(&nodes[l.mean], l.f));
    let (f, mean) = (&nodes[l.f], &nodes[l.mean]);
    for e in 0..n * k * d {
        let (i, c, j) = (e / (k * d), (e / d) % k, e % d);
        assert_eq!(f.parents[fx].at(e), i * k + c);
        assert_eq!(f.parents[fw].at(e), c * d + j);
        assert_eq!(mean.parents[mf].at(e), e);
        assert_eq!(mean.parents[mm].at(e), c * d + j);
        assert_eq!(nodes[y].parents[0].at((i * d + j) * k + c), e);
        assert_eq!(nodes[y].selectors[0].at(i * d + j), i);
    }
    // The same layout read with W's plates swapped is not what the strides show.
    let mut swapped = nodes.clone();
    let rule = swapped[l.mean].parents[mf].rule.clone();
    std::sync::Arc::make_mut(&mut swapped[l.f].model).parents[fw].rule = rule;
    assert!(!by_strides(&swapped, &l));
}

/// W of the contract's mixture of Bayesian PCA (α shared by every row) is a member of the block,
/// per element after its start and with one covariance per component from its first update on;
/// that update gives every row the q of Winn (2.19) element by element from the block's messages
/// to W (`Vmp::update_factorised`, the path W took before): the same φ, u and bound to round-off.
#[test]
fn grouped_w_equals_the_per_element_update() {
    let fitted = || {
        let mut vmp = models::gated().compile().expect("compiles");
        vmp.initialize(5).expect("starts");
        let w = vmp.node("W").expect("W");
        assert!(!vmp.gated_grouped_w(w.0), "W per element after its start");
        for _ in 0..2 {
            for id in vmp.default_order() {
                vmp.update(id).expect("sweeps");
            }
        }
        assert!(vmp.gated_grouped_w(w.0), "W grouped once updated");
        (vmp, w)
    };
    let (mut grouped, w) = fitted();
    let (mut per_element, _) = fitted();
    grouped.update(w).expect("grouped update");
    // The per-element path reads W per element: its arrays expanded from the grouped form.
    let (u, phi) = (
        per_element.moments(w).to_vec(),
        per_element.natural(w).to_vec(),
    );
    let node = &mut per_element.nodes[w.0];
    (node.q.u, node.q.phi) = (u, phi);
    node.lazy = Default::default();
    per_element
        .update_factorised(w.0)
        .expect("per-element update");
    assert!(grouped.gated_grouped_w(w.0));
    assert!(!per_element.gated_grouped_w(w.0));
    let close = |a: &[f64], b: &[f64], what: &str| {
        assert_eq!(a.len(), b.len(), "{what}");
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
                "{what}[{i}]: grouped {x}, per element {y}"
            );
        }
    };
    close(grouped.moments(w), per_element.moments(w), "u");
    close(grouped.natural(w), per_element.natural(w), "φ");
    let (a, b) = (grouped.bound(), per_element.bound());
    assert!(
        (a - b).abs() <= 1e-12 * b.abs(),
        "bound: grouped {a}, per element {b}"
    );
    // A sweep from either state ends at the same q.
    for vmp in [&mut grouped, &mut per_element] {
        for id in vmp.default_order() {
            vmp.update(id).expect("sweeps");
        }
    }
    let (a, b) = (grouped.bound(), per_element.bound());
    assert!(
        (a - b).abs() <= 1e-12 * b.abs(),
        "after a sweep: {a} against {b}"
    );
}

/// Predictive draws expand a grouped W to per-element moments *and* natural parameters
/// (`Vmp::unshare`): a second draw on the same engine reads W's φ per element (it once found the
/// grouped, shorter φ there and indexed past its end), and its draws equal the first's.
#[test]
fn predictive_draws_twice_read_a_grouped_w_per_element() {
    let mut vmp = models::gated().compile().expect("compiles");
    vmp.initialize(5).expect("starts");
    for _ in 0..2 {
        for id in vmp.default_order() {
            vmp.update(id).expect("sweeps");
        }
    }
    let w = vmp.node("W").expect("W");
    assert!(vmp.gated_grouped_w(w.0), "W grouped once updated");
    let phi_dense = vmp.natural(w).to_vec();
    let ancestral = vec![false; vmp.nodes.len()];
    let first = vmp
        .sample_predictive(9, 3, &[w], &ancestral)
        .expect("draws");
    assert!(!vmp.gated_grouped_w(w.0), "W per element after the draws");
    assert_eq!(vmp.natural(w), &phi_dense[..], "φ expanded, not drawn over");
    let second = vmp
        .sample_predictive(9, 3, &[w], &ancestral)
        .expect("draws again");
    assert_eq!(first, second);
    let node = &vmp.nodes[w.0];
    // len = q + q² per element, q values drawn per element and draw.
    let q = ((4.0 * node.len as f64 + 1.0).sqrt() as usize - 1) / 2;
    assert_eq!(first[0].len(), 3 * node.n * q);
    assert!(first[0].iter().all(|x| x.is_finite()));
}
