//! The row-major block updates of the fused index update: the whole-block array operations
//! (`fast_block`, when every element of the block is latent and takes part and the priors are per
//! group) and the element-by-element one (`slow_block`: observed labels, missing child entries,
//! priors per element), with the check that chooses between them.

use super::{Child, Node};
use crate::dist::ExpFamily;
use crate::engine::factorised::update_rows;
use crate::engine::Priors;
use crate::kernels;

/// The new q(z_e) of a block when every element is latent, every child element takes part and
/// the priors are per group (the common case): Winn (2.19) as whole-block array operations — the
/// first child's scores written straight into φ by the GEMM with the prior folded into the
/// subtracted ⟨A⟩ when it is one for all elements (else added to each row), the other children's
/// scores added, then one softmax over the block. `false`: not applicable, nothing written.
#[allow(clippy::too_many_arguments)]
pub(super) fn fast_block<D: ExpFamily>(
    d: &D,
    z: &Node,
    children: &[Child],
    priors: &Option<Priors>,
    start: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
) -> Result<bool, (usize, String)> {
    let (k, rows) = (z.len, a.len());
    let (Some(priors), Some((group, _))) = (priors, &z.groups) else {
        return Ok(false);
    };
    if !whole_block(z, children, start..start + rows) {
        return Ok(false);
    }
    let score = |c: &Child, a: &[f64], out: &mut [f64]| {
        let uc = &c.u[start * c.len..(start + rows) * c.len];
        kernels::scores_block(uc, c.len, c.theta(), a, out);
    };
    let one_group = z.groups.as_ref().is_some_and(|(_, reps)| reps.len() == 1);
    if one_group {
        // One prior for every element: subtracted with ⟨A⟩ in the GEMM's one pass over the rows,
        // Θ u − (⟨A⟩ − φ_prior), instead of a second pass adding it.
        let prior = priors.row(0, k).0;
        if k <= 16 {
            // (On the stack: no allocation per block.)
            let mut am = [0.0; 16];
            am.iter_mut()
                .zip(children[0].a().iter().zip(prior))
                .for_each(|(o, (a, p))| *o = a - p);
            score(&children[0], &am[..k], phi);
        } else {
            score(&children[0], &a_minus_prior(&children[0], prior), phi);
        }
    } else {
        score(&children[0], children[0].a(), phi);
        for (r, row) in phi.chunks_exact_mut(k).enumerate() {
            let g = group[start + r] as usize;
            row.iter_mut()
                .zip(priors.row(g, k).0)
                .for_each(|(p, prior)| *p += prior);
        }
    }
    if children.len() > 1 {
        let mut l = vec![0.0; rows * k];
        for c in &children[1..] {
            score(c, c.a(), &mut l);
            kernels::add_into(phi, &l);
        }
    }
    d.moments_rows(phi, u, a)
        .map_err(|(r, err)| (start + r, err.0.to_string()))?;
    Ok(true)
}

/// Whether elements `range` of z are updated as a whole block (given priors per group): z is not
/// MAP, has children, and every element is latent and takes part in every child.
pub(super) fn whole_block(z: &Node, children: &[Child], range: std::ops::Range<usize>) -> bool {
    !z.map && !children.is_empty() && children.iter().all(|c| c.all) && z.observed.none_in(range)
}

/// The one prior φ of every element when all of z is updated as whole blocks and its elements
/// form one group (then the tiled path may take every block).
pub(super) fn one_prior<'p>(
    z: &Node,
    children: &[Child],
    priors: &'p Option<Priors<'p>>,
) -> Option<&'p [f64]> {
    let (Some(priors), Some((_, reps))) = (priors, &z.groups) else {
        return None;
    };
    (reps.len() == 1 && whole_block(z, children, 0..z.n)).then(|| priors.row(0, z.len).0)
}

/// The first child's ⟨A⟩ with the one prior of every element taken off, so that its scores
/// Θ u − (⟨A⟩ − φ_prior) include the prior.
pub(super) fn a_minus_prior(first: &Child, prior: &[f64]) -> Vec<f64> {
    first.a().iter().zip(prior).map(|(a, p)| a - p).collect()
}

/// The new q(z_e) of a block element by element (observed or MAP elements, missing child entries,
/// priors per element).
#[allow(clippy::too_many_arguments)]
pub(super) fn slow_block<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    z: &Node,
    children: &[Child],
    priors: &Option<Priors>,
    start: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut [f64],
) -> Result<(), (usize, String)> {
    let (k, rows) = (z.len, a.len());
    let scores: Vec<Vec<f64>> = children
        .iter()
        .map(|c| {
            let len = c.len;
            let mut l = vec![0.0; rows * k];
            let uc = &c.u[start * len..(start + rows) * len];
            kernels::scores_block(uc, len, c.theta(), c.a(), &mut l);
            l
        })
        .collect();
    let messages = |e: usize, r: usize, pe: &mut [f64]| {
        for (c, l) in children.iter().zip(&scores) {
            if c.all || c.node.participates(e) {
                kernels::add_into(pe, &l[r * k..(r + 1) * k]);
            }
        }
    };
    update_rows(d, nodes, z, priors, start, phi, u, a, messages)
}
