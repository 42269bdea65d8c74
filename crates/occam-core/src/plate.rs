//! Plate arithmetic: mapping elements of a child's (extended) plates to its parents' elements by
//! plate *name*, never by position. A parent outside a plate is shared across it (stride 0).

mod rule;

pub(crate) use rule::IndexRule;

/// A plate's identity and size, as used in layout computations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Axis {
    pub id: usize,
    pub size: usize,
}

/// Number of elements of a list of axes.
pub(crate) fn count(axes: &[Axis]) -> usize {
    axes.iter().map(|a| a.size).product()
}

/// For each element of `child` (row-major, last axis fastest) and each index `s` along `stack`
/// (if any), the index of the corresponding element of `parent` (row-major over its own axes):
/// the explicit map that [`IndexRule`] computes element by element (kept as the reference its
/// tests compare with).
/// Every parent axis must be a child axis or the stacked axis; the caller checks this first.
/// A stacked plate that is also a child plate is gathered whole for every child element (the
/// child's own coordinate there does not select the parent's): `A[L] over L` with a precision
/// `alpha[L]` stacked along the event plate has one precision per column, shared by the rows.
#[cfg(test)]
pub(crate) fn index_map(child: &[Axis], parent: &[Axis], stack: Option<Axis>) -> Vec<u32> {
    let parent_strides: Vec<usize> = {
        let mut s = vec![0; parent.len()];
        let mut acc = 1;
        for i in (0..parent.len()).rev() {
            s[i] = acc;
            acc *= parent[i].size;
        }
        s
    };
    let stride_of = |id: usize| {
        parent
            .iter()
            .position(|a| a.id == id)
            .map_or(0, |p| parent_strides[p])
    };
    let stacked = stack.map(|a| a.id);
    let child_strides: Vec<usize> = child
        .iter()
        .map(|a| {
            if Some(a.id) == stacked {
                0
            } else {
                stride_of(a.id)
            }
        })
        .collect();
    let (stack_size, stack_stride) = stack.map_or((1, 0), |a| (a.size, stride_of(a.id)));
    // Built axis by axis, outermost first: every entry so far is repeated for each index along the
    // next axis, offset by that axis's stride (contiguous pushes, no per-element coordinates).
    let mut out = Vec::with_capacity(count(child) * stack_size);
    out.push(0u32);
    let expand = |out: &mut Vec<u32>, size: usize, stride: usize| {
        let prev = out.len();
        if size == 0 {
            out.clear();
            return;
        }
        out.resize(prev * size, 0);
        for b in (0..prev).rev() {
            let base = out[b];
            for (c, o) in out[b * size..(b + 1) * size].iter_mut().enumerate() {
                *o = base + (c * stride) as u32;
            }
        }
    };
    for (a, &stride) in child.iter().zip(&child_strides) {
        expand(&mut out, a.size, stride);
    }
    expand(&mut out, stack_size, stack_stride);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_by_name_with_sharing_and_stacking() {
        let (n, d, k) = (
            Axis { id: 0, size: 2 },
            Axis { id: 1, size: 3 },
            Axis { id: 2, size: 2 },
        );
        // Parent in D only: shared over N.
        assert_eq!(index_map(&[n, d], &[d], None), vec![0, 1, 2, 0, 1, 2]);
        // Parent with axes in the other order.
        assert_eq!(index_map(&[n, d], &[d, n], None), vec![0, 2, 4, 1, 3, 5]);
        // Parent over K stacked for each child element in N.
        assert_eq!(index_map(&[n], &[k], Some(k)), vec![0, 1, 0, 1]);
        // Scalar parent.
        assert_eq!(index_map(&[n], &[], None), vec![0, 0]);
        // An empty plate maps nothing.
        let empty = Axis { id: 3, size: 0 };
        assert!(index_map(&[n, empty], &[n], None).is_empty());
    }

    /// The axis-by-axis construction against the definition, element by element: coordinates of
    /// each child element (last axis fastest) dotted with the parent's strides by plate id.
    #[test]
    fn matches_coordinate_definition() {
        let axes = [
            Axis { id: 0, size: 3 },
            Axis { id: 1, size: 4 },
            Axis { id: 2, size: 2 },
            Axis { id: 3, size: 5 },
        ];
        let reference = |child: &[Axis], parent: &[Axis], stack: Option<Axis>| {
            let stride = |id: usize| {
                parent.iter().position(|a| a.id == id).map_or(0, |p| {
                    parent[p + 1..].iter().map(|a| a.size).product::<usize>()
                })
            };
            let (ss, st) = stack.map_or((1, 0), |a| (a.size, stride(a.id)));
            let mut out = Vec::new();
            for e in 0..count(child) {
                let (mut rem, mut base) = (e, 0);
                for a in child.iter().rev() {
                    base += (rem % a.size) * stride(a.id);
                    rem /= a.size;
                }
                out.extend((0..ss).map(|s| (base + s * st) as u32));
            }
            out
        };
        let [a, b, c, d] = axes;
        let cases: [(&[Axis], &[Axis], Option<Axis>); 5] = [
            (&[a, b, c], &[c, a], None),
            (&[a, b, c], &[b, d], Some(d)),
            (&[c, b, a], &[a, b, c], None),
            (&[a], &[d, a], Some(d)),
            (&[a, b, c, d], &[], None),
        ];
        for (child, parent, stack) in cases {
            assert_eq!(
                index_map(child, parent, stack),
                reference(child, parent, stack),
                "{child:?} → {parent:?} stacked {stack:?}"
            );
        }
        // Stacked along a plate the child also has: the whole plate for every child element.
        assert_eq!(index_map(&[d], &[d], Some(d)), [0, 1, 2, 3, 4].repeat(5));
    }
}
