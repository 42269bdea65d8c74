//! Plate arithmetic: mapping elements of a child's (extended) plates to its parents' elements by
//! plate *name*, never by position. A parent outside a plate is shared across it (stride 0).

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
/// (if any), the index of the corresponding element of `parent` (row-major over its own axes).
/// Every parent axis must be a child axis or the stacked axis; the caller checks this first.
/// A stacked plate that is also a child plate is gathered whole for every child element (the
/// child's own coordinate there does not select the parent's): `A[L] over L` with a precision
/// `alpha[L]` stacked along the event plate has one precision per column, shared by the rows.
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
    let n = count(child);
    let mut out = Vec::with_capacity(n * stack_size);
    let mut coord = vec![0usize; child.len()];
    for _ in 0..n {
        let base: usize = coord.iter().zip(&child_strides).map(|(c, s)| c * s).sum();
        for s in 0..stack_size {
            out.push((base + s * stack_stride) as u32);
        }
        for i in (0..child.len()).rev() {
            coord[i] += 1;
            if coord[i] < child[i].size {
                break;
            }
            coord[i] = 0;
        }
    }
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
        // Stacked along a plate the child also has: the whole plate for every child element.
        assert_eq!(
            index_map(&[d], &[d], Some(d)),
            vec![0, 1, 2, 0, 1, 2, 0, 1, 2]
        );
    }
}
