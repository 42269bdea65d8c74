//! `IndexRule::reads_as` against the maps themselves: whenever it answers yes, the rule reads the
//! same parent element as Σ digit·stride at every extended element.

use super::*;
use rand::{Rng as _, SeedableRng};

/// Σ digit·stride of extended element `e` over `axes` (outermost first, last fastest).
fn read(axes: &[(usize, usize)], e: usize) -> usize {
    let (mut rem, mut out) = (e, 0);
    for &(size, stride) in axes.iter().rev() {
        out += (rem % size) * stride;
        rem /= size;
    }
    out
}

#[test]
fn reads_as_only_when_every_element_agrees() {
    let mut rng = crate::Rng::seed_from_u64(27);
    let (mut yes, mut no) = (0, 0);
    for _ in 0..4000 {
        let draw = |rng: &mut crate::Rng, n: usize| -> Vec<(usize, usize)> {
            (0..n)
                .map(|_| {
                    let size = [1, 2, 3, 4][rng.random_range(0..4)];
                    (size, [0, 1, 2, 3, 4, 6, 12][rng.random_range(0..7)])
                })
                .collect()
        };
        let n_axes = rng.random_range(0..4);
        let raw = draw(&mut rng, n_axes);
        let len = raw.iter().map(|&(s, _)| s).product::<usize>();
        let rule = IndexRule::Strided(Strided::normalised(&raw, len));
        assert!(rule.reads_as(&raw), "{raw:?} reads as itself");
        // Other axes over the same number of elements (sizes permuted, strides redrawn).
        let mut other = draw(&mut rng, n_axes);
        for (o, r) in other.iter_mut().zip(&raw) {
            if rng.random_bool(0.5) {
                o.1 = r.1;
            }
            o.0 = r.0;
        }
        if rng.random_bool(0.3) {
            other.reverse();
        }
        let same = (0..len).all(|e| rule.at(e) == read(&other, e));
        if rule.reads_as(&other) {
            assert!(same, "{raw:?} said to read as {other:?}");
            yes += 1;
        } else {
            no += 1;
        }
        let constant = (0..len).all(|e| read(&other, e) == 0);
        assert_eq!(IndexRule::Broadcast.reads_as(&other), constant, "{other:?}");
    }
    // Both answers were exercised.
    assert!(yes > 500 && no > 500, "yes {yes}, no {no}");
}
