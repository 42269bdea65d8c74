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
