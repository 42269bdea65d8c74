//! Index rules: which parent element an extended child element reads, computed from plate strides
//! instead of stored per element. An extended element runs over the child's plates, then its
//! selector plates, then the stacked index (row-major, last fastest); the parent element it reads
//! is Σ digit × stride over those axes (stride 0 along a plate the parent is not in). A model with
//! plates of 10⁶ elements and 10 components then compiles without a 10⁷-entry map per edge.
//!
//! Besides `at`, the rule answers the questions the compiler asks of a whole map (is it the
//! identity, periodic, injective, made of runs) from its axes, in time independent of the plate
//! sizes; `tests` checks every answer against the explicit map it replaces.

use super::Axis;

/// Which parent element each extended child element reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum IndexRule {
    /// Every element reads the parent's element 0: a parent without plates, read unstacked.
    Broadcast,
    /// Mixed-radix strides (see [`Strided`]).
    Strided(Strided),
}

/// Extended element e, written in the mixed radix of `axes` (outermost first, last fastest), reads
/// parent element Σ digit·stride. The axes are normalised: axes of size 1 and leading axes of
/// stride 0 (which never change the result) are dropped, and an axis whose stride is the next
/// inner axis's stride times its size is merged with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Strided {
    /// (size, parent stride) of each kept axis, outermost first.
    axes: Vec<(usize, usize)>,
    /// The axes as given (before normalising), to combine rules over the same extended plates.
    raw: Vec<(usize, usize)>,
    /// Number of extended elements (the product of all axis sizes, dropped ones included).
    len: usize,
}

impl IndexRule {
    /// The rule for a child over `child` axes (extended by its selector plates) reading a parent
    /// over `parent` axes, gathering along `stack` if given. Every parent axis must be a child axis
    /// or the stacked axis (the caller checks). A stacked plate that is also a child plate is
    /// gathered whole for every child element (the child's own coordinate there does not select
    /// the parent's): `A[L] over L` with a precision `alpha[L]` stacked along the event plate has
    /// one precision per column, shared by the rows.
    pub(crate) fn strided(child: &[Axis], parent: &[Axis], stack: Option<Axis>) -> IndexRule {
        let stride_of = |id: usize| {
            parent.iter().position(|a| a.id == id).map_or(0, |p| {
                parent[p + 1..].iter().map(|a| a.size).product::<usize>()
            })
        };
        let stacked = stack.map(|a| a.id);
        let mut raw: Vec<(usize, usize)> = child
            .iter()
            .map(|a| {
                let stride = if Some(a.id) == stacked {
                    0
                } else {
                    stride_of(a.id)
                };
                (a.size, stride)
            })
            .collect();
        if let Some(a) = stack {
            raw.push((a.size, stride_of(a.id)));
        }
        let len = raw.iter().map(|&(s, _)| s).product::<usize>();
        IndexRule::Strided(Strided::normalised(&raw, len))
    }

    /// The parent element read by extended element `ext`.
    #[inline]
    pub(crate) fn at(&self, ext: usize) -> usize {
        match self {
            IndexRule::Broadcast => 0,
            IndexRule::Strided(s) => s.at(ext),
        }
    }

    /// Whether this rule reads Σ digit·stride over the (size, stride) `axes` (outermost first, last
    /// fastest) at every one of their Π size extended elements, decided from the normalised
    /// strides in O(axes). `false` can also mean the same map in a form that normalising does not
    /// make equal: a caller that must know then checks element by element.
    pub(crate) fn reads_as(&self, axes: &[(usize, usize)]) -> bool {
        let len = axes.iter().map(|&(s, _)| s).product::<usize>();
        let want = Strided::normalised(axes, len);
        match self {
            IndexRule::Broadcast => want.axes.is_empty(),
            IndexRule::Strided(s) => s.len == len && s.axes == want.axes,
        }
    }

    /// Whether this is the broadcast rule (a parent without plates read unstacked).
    pub(crate) fn is_broadcast(&self) -> bool {
        matches!(self, IndexRule::Broadcast)
    }

    /// Whether `at(k) == k` for every k < n.
    pub(crate) fn is_identity(&self, n: usize) -> bool {
        self.strided_identity(1, n)
    }

    /// Whether `at(r·step) == r` for every r < count (e.g. run r of `step` elements reads
    /// selector element r).
    pub(crate) fn strided_identity(&self, step: usize, count: usize) -> bool {
        match self {
            _ if count <= 1 => true,
            IndexRule::Broadcast => false,
            IndexRule::Strided(s) => s.strided_identity(step, count),
        }
    }

    /// Whether `at(e) == at(e % block)` for every extended element e (`block` divides their
    /// number): the elements read repeat with period `block`. The broadcast rule is periodic.
    pub(crate) fn periodic(&self, block: usize) -> bool {
        match self {
            IndexRule::Broadcast => true,
            IndexRule::Strided(s) => s.periodic(block),
        }
    }

    /// Whether no two extended elements read the same parent element (false for broadcast).
    pub(crate) fn injective(&self) -> bool {
        match self {
            IndexRule::Broadcast => false,
            IndexRule::Strided(s) => s.injective(),
        }
    }

    /// The rule reading `scale · self.at(e) + other.at(e)` (e.g. the cell of a pair of parent
    /// elements in a `scale`-column grid), if both are over the same extended plates or one is the
    /// broadcast rule.
    pub(crate) fn combine(&self, scale: usize, other: &IndexRule) -> Option<IndexRule> {
        let scaled = |s: &Strided| {
            let raw: Vec<(usize, usize)> = s.raw.iter().map(|&(n, t)| (n, t * scale)).collect();
            Strided::normalised(&raw, s.len)
        };
        Some(match (self, other) {
            (IndexRule::Broadcast, _) => other.clone(),
            (IndexRule::Strided(a), IndexRule::Broadcast) => IndexRule::Strided(scaled(a)),
            (IndexRule::Strided(a), IndexRule::Strided(b)) => {
                let same =
                    a.raw.len() == b.raw.len() && a.raw.iter().zip(&b.raw).all(|(x, y)| x.0 == y.0);
                if !same {
                    return None;
                }
                let raw: Vec<(usize, usize)> = a
                    .raw
                    .iter()
                    .zip(&b.raw)
                    .map(|(&(n, t), &(_, u))| (n, t * scale + u))
                    .collect();
                IndexRule::Strided(Strided::normalised(&raw, a.len))
            }
        })
    }

    /// If the element this rule reads is a function of the one `key` reads (over the same `len`
    /// extended elements), that function: entry r is what is read where `key` reads r, for every
    /// r < `keys` (`u32::MAX` where `key` reads no r). From the strides when both rules are over
    /// the same extended plates; element by element otherwise.
    pub(crate) fn function_of(&self, key: &IndexRule, keys: usize, len: usize) -> Option<Vec<u32>> {
        if let (IndexRule::Strided(v), IndexRule::Strided(k)) = (self, key) {
            if let Some(of) = v.function_of(k, keys) {
                return of;
            }
        }
        let mut of = vec![u32::MAX; keys];
        for e in 0..len {
            let (r, t) = (key.at(e), self.at(e) as u32);
            if of[r] == u32::MAX {
                of[r] = t;
            } else if of[r] != t {
                return None;
            }
        }
        Some(of)
    }

    /// The length of the first run of extended elements reading element `at(0)`; every later run of
    /// that length also reads one element (a rule is constant on such runs).
    pub(crate) fn first_run(&self) -> Option<usize> {
        match self {
            IndexRule::Broadcast => None,
            IndexRule::Strided(s) => Some(s.first_run()),
        }
    }
}

impl Strided {
    fn normalised(raw: &[(usize, usize)], len: usize) -> Strided {
        let mut axes: Vec<(usize, usize)> = Vec::with_capacity(raw.len());
        if len > 0 {
            // From the innermost axis outwards, merging each into the previous kept one when it
            // continues it.
            for &(size, stride) in raw.iter().rev().filter(|&&(s, _)| s > 1) {
                match axes.last_mut() {
                    Some(inner) if stride == inner.1 * inner.0 => inner.0 *= size,
                    _ => axes.push((size, stride)),
                }
            }
            while axes.last().is_some_and(|&(_, t)| t == 0) {
                axes.pop();
            }
            axes.reverse();
        }
        Strided {
            axes,
            raw: raw.to_vec(),
            len,
        }
    }

    #[inline]
    fn at(&self, ext: usize) -> usize {
        debug_assert!(ext < self.len, "extended element {ext} of {}", self.len);
        match self.axes.as_slice() {
            [] => 0,
            &[(size, stride)] => (ext % size) * stride,
            axes => {
                let (mut rem, mut out) = (ext, 0);
                for &(size, stride) in axes.iter().rev() {
                    out += (rem % size) * stride;
                    rem /= size;
                }
                out
            }
        }
    }

    /// Place value (product of the sizes of the axes inside it) of each kept axis.
    fn places(&self) -> Vec<usize> {
        let mut v = vec![1; self.axes.len()];
        for i in (0..self.axes.len().saturating_sub(1)).rev() {
            v[i] = v[i + 1] * self.axes[i + 1].0;
        }
        v
    }

    /// The kept axis that `block` splits as place value × m with m dividing its size (m = its
    /// size: the boundary above it), innermost first; `None` if it splits none.
    fn split(&self, block: usize) -> Option<usize> {
        let places = self.places();
        (0..self.axes.len()).rev().find(|&i| {
            let (s, v) = (self.axes[i].0, places[i]);
            block.is_multiple_of(v) && (block / v) <= s && s.is_multiple_of(block / v)
        })
    }

    fn strided_identity(&self, step: usize, count: usize) -> bool {
        if count.saturating_sub(1).saturating_mul(step) >= self.len {
            return (0..count).all(|r| r * step < self.len && self.at(r * step) == r);
        }
        // Run r starts at r·step: with step the place value of axis i (all inner digits zero),
        // r's digits are on axis i and outwards; an outer axis continuing axis i would have been
        // merged into it, so the rule reads r exactly when axis i has stride 1 and holds r.
        match self.places().iter().position(|&v| v == step) {
            Some(i) => self.axes[i].1 == 1 && count <= self.axes[i].0,
            None => (0..count).all(|r| self.at(r * step) == r),
        }
    }

    fn periodic(&self, block: usize) -> bool {
        debug_assert!(block > 0 && self.len.is_multiple_of(block));
        let kept: usize = self.axes.iter().map(|&(s, _)| s).product();
        if block.is_multiple_of(kept) {
            // The block holds every kept axis whole.
            return true;
        }
        match self.split(block) {
            // Axis i is cut by the block (or ends at it): it (if cut) and every outer axis must
            // not move the parent element.
            Some(i) => {
                let whole = block == self.places()[i] * self.axes[i].0;
                self.axes[..i].iter().all(|&(_, t)| t == 0) && (whole || self.axes[i].1 == 0)
            }
            None => (0..self.len).all(|e| self.at(e) == self.at(e % block)),
        }
    }

    fn injective(&self) -> bool {
        let kept: usize = self.axes.iter().map(|&(s, _)| s).product();
        if kept != self.len || self.axes.iter().any(|&(_, t)| t == 0) {
            // A dropped axis or one of stride 0 (all of size > 1): two elements read one parent.
            return self.len <= 1;
        }
        // Strides that each pass the reach of all smaller ones give distinct sums.
        let mut by_stride = self.axes.clone();
        by_stride.sort_unstable_by_key(|&(_, t)| t);
        let mut reach = 0;
        let nested = by_stride.iter().all(|&(s, t)| {
            let ok = t > reach;
            reach += (s - 1) * t;
            ok
        });
        nested || {
            let mut seen = std::collections::HashSet::with_capacity(self.len);
            (0..self.len).all(|e| seen.insert(self.at(e)))
        }
    }

    /// `function_of` from the strides: `None` when they do not decide it (other plates, or a key
    /// whose moving axes read one element twice), else the answer.
    fn function_of(&self, key: &Strided, keys: usize) -> Option<Option<Vec<u32>>> {
        let same = self.raw.len() == key.raw.len()
            && self.raw.iter().zip(&key.raw).all(|(x, y)| x.0 == y.0);
        if !same || self.len == 0 {
            return None;
        }
        let pairs: Vec<(usize, usize, usize)> = self
            .raw
            .iter()
            .zip(&key.raw)
            .filter(|(x, _)| x.0 > 1)
            .map(|(&(n, t), &(_, u))| (n, t, u))
            .collect();
        // An axis that moves the value but not the key: two elements with one key, two values.
        if pairs.iter().any(|&(_, t, u)| t != 0 && u == 0) {
            return Some(None);
        }
        // The key's moving axes, with the value's strides along them (the value moves along no
        // other); each key read once per combination of their digits.
        let moving: Vec<(usize, usize, usize)> =
            pairs.into_iter().filter(|&(_, _, u)| u != 0).collect();
        let cells: usize = moving.iter().map(|&(n, _, _)| n).product();
        let raw: Vec<(usize, usize)> = moving.iter().map(|&(n, _, u)| (n, u)).collect();
        if !Strided::normalised(&raw, cells).injective() {
            return None;
        }
        let mut of = vec![u32::MAX; keys];
        for c in 0..cells {
            let (mut rem, mut r, mut t) = (c, 0, 0);
            for &(n, tv, u) in moving.iter().rev() {
                let digit = rem % n;
                rem /= n;
                r += digit * u;
                t += digit * tv;
            }
            of[r] = t as u32;
        }
        Some(Some(of))
    }

    fn first_run(&self) -> usize {
        let places = self.places();
        (0..self.axes.len())
            .rev()
            .find(|&i| self.axes[i].1 != 0)
            .map_or(self.len, |i| places[i])
    }
}

#[cfg(test)]
#[path = "rule_reads_tests.rs"]
mod reads_tests;

#[cfg(test)]
mod tests {
    use super::super::{count, index_map};
    use super::*;
    use rand::{Rng as _, SeedableRng};

    /// The queries answered from the map itself, as the compiler asked them before rules.
    fn check(rule: &IndexRule, map: &[u32], what: &str) {
        for (e, &m) in map.iter().enumerate() {
            assert_eq!(rule.at(e), m as usize, "{what}: at({e})");
        }
        let len = map.len();
        for n in 0..=len.min(9) {
            let want = (0..n).all(|k| map[k] as usize == k);
            assert_eq!(rule.is_identity(n), want, "{what}: identity over {n}");
        }
        for step in 1..=len.max(1) {
            for count in 0..=len.div_ceil(step) {
                let want = (0..count).all(|r| r * step < len && map[r * step] as usize == r);
                assert_eq!(
                    rule.strided_identity(step, count),
                    want,
                    "{what}: strided identity {step} × {count}"
                );
            }
        }
        for block in (1..=len).filter(|b| len.is_multiple_of(*b)) {
            let want = map.chunks_exact(block).all(|c| c == &map[..block]);
            assert_eq!(rule.periodic(block), want, "{what}: periodic {block}");
        }
        let mut seen = vec![false; map.iter().max().map_or(0, |&m| m as usize + 1)];
        let injective = map
            .iter()
            .all(|&m| !std::mem::replace(&mut seen[m as usize], true));
        assert_eq!(rule.injective(), injective, "{what}: injective");
        if len > 0 {
            let p = map.iter().take_while(|&&m| m == map[0]).count();
            assert_eq!(rule.first_run(), Some(p), "{what}: first run");
            assert!(
                len.is_multiple_of(p) && map.chunks_exact(p).all(|r| r.iter().all(|&m| m == r[0])),
                "{what}: runs of {p} read one element"
            );
        }
    }

    /// Random plate, selector and stack layouts (parents over a random subset of the child's
    /// extended plates in a random order, some stacked along a plate of their own or one of the
    /// child's): every rule answer equals the explicit map's; so do those of two rules combined
    /// into grid cells.
    #[test]
    fn rules_equal_the_explicit_maps_they_replace() {
        let mut rng = crate::Rng::seed_from_u64(12);
        for case in 0..3000 {
            let n_axes = rng.random_range(0..5);
            let axes: Vec<Axis> = (0..n_axes + 1)
                .map(|id| Axis {
                    id,
                    size: [1, 1, 2, 3, 4, 6][rng.random_range(0..6)],
                })
                .collect();
            let (child_all, spare) = axes.split_at(n_axes);
            let mut child: Vec<Axis> = child_all.to_vec();
            // Shuffled: parents are matched by plate, never by position.
            for i in (1..child.len()).rev() {
                child.swap(i, rng.random_range(0..=i));
            }
            let mut parent: Vec<Axis> = child
                .iter()
                .copied()
                .filter(|_| rng.random_bool(0.6))
                .collect();
            let stack = match rng.random_range(0..4) {
                0 => Some(spare[0]),
                1 if !parent.is_empty() => Some(parent[rng.random_range(0..parent.len())]),
                _ => None,
            };
            if let Some(s) = stack {
                if !parent.contains(&s) {
                    parent.push(s);
                }
            }
            for i in (1..parent.len()).rev() {
                parent.swap(i, rng.random_range(0..=i));
            }
            let map = index_map(&child, &parent, stack);
            assert_eq!(map.len(), count(&child) * stack.map_or(1, |a| a.size));
            let rule = IndexRule::strided(&child, &parent, stack);
            let what = format!("case {case}: {child:?} → {parent:?} by {stack:?}");
            check(&rule, &map, &what);
            if stack.is_none() {
                // A second parent of the same child: the cells of the pairs in a grid.
                let other: Vec<Axis> = child
                    .iter()
                    .copied()
                    .filter(|_| rng.random_bool(0.5))
                    .collect();
                let other_map = index_map(&child, &other, None);
                let scale = count(&other);
                let cells: Vec<u32> = map
                    .iter()
                    .zip(&other_map)
                    .map(|(&a, &b)| a * scale as u32 + b)
                    .collect();
                let both = rule
                    .combine(scale, &IndexRule::strided(&child, &other, None))
                    .expect("same plates");
                check(&both, &cells, &format!("{what} with {other:?}"));
                // Whether what one parent reads is a function of what the other reads.
                let other_rule = IndexRule::strided(&child, &other, None);
                for (value, key, vmap, kmap) in [
                    (&rule, &other_rule, &map, &other_map),
                    (&other_rule, &rule, &other_map, &map),
                ] {
                    let keys = kmap.iter().max().map_or(0, |&m| m as usize + 1);
                    let mut want = Some(vec![u32::MAX; keys]);
                    for (&r, &t) in kmap.iter().zip(vmap.iter()) {
                        let of = want.as_mut().expect("still a function");
                        if of[r as usize] == u32::MAX {
                            of[r as usize] = t;
                        } else if of[r as usize] != t {
                            want = None;
                            break;
                        }
                    }
                    assert_eq!(
                        value.function_of(key, keys, kmap.len()),
                        want,
                        "{what}: function of {other:?}"
                    );
                }
                let with_broadcast = rule
                    .combine(scale, &IndexRule::Broadcast)
                    .expect("broadcast");
                let scaled: Vec<u32> = map.iter().map(|&a| a * scale as u32).collect();
                check(
                    &with_broadcast,
                    &scaled,
                    &format!("{what} scaled by {scale}"),
                );
            }
        }
    }

    /// A named layout: child axes, parent axes, stacked axis.
    type Layout<'a> = (&'a str, &'a [Axis], &'a [Axis], Option<Axis>);

    /// The layouts of the models the compiler must handle at 10⁶ elements, whole.
    #[test]
    fn named_layouts() {
        let (n, d, k, q) = (
            Axis { id: 0, size: 5 },
            Axis { id: 1, size: 3 },
            Axis { id: 2, size: 4 },
            Axis { id: 3, size: 2 },
        );
        let cases: [Layout; 8] = [
            ("x[N] reads mu[K] through z[N]", &[n, k], &[k], None),
            ("z[N] selects x[N]", &[n], &[n], None),
            ("x[N, D] reads mu[K, D]", &[n, d, k], &[k, d], None),
            ("z[N] selects x[N, D]", &[n, d], &[n], None),
            (
                "y[N, D] reads W[D] stacked along Q",
                &[n, d],
                &[d, q],
                Some(q),
            ),
            (
                "y[N, D] reads X[N] stacked along Q",
                &[n, d],
                &[n, q],
                Some(q),
            ),
            ("alpha[Q] stacked along Q by A[Q]", &[q], &[q], Some(q)),
            ("a scalar read over N", &[n], &[], None),
        ];
        for (what, child, parent, stack) in cases {
            let rule = IndexRule::strided(child, parent, stack);
            check(&rule, &index_map(child, parent, stack), what);
        }
        // The broadcast rule answers as the empty map it replaces did where that was asked, and as
        // "every element reads element 0" otherwise.
        let b = IndexRule::Broadcast;
        assert!(b.is_broadcast() && b.periodic(3) && !b.injective() && b.is_identity(1));
        assert!(!b.is_identity(2) && b.at(7) == 0 && b.first_run().is_none());
    }
}
