//! The update of a mixture's Categorical index fused with the messages of its mixture children.
//!
//! For an index z whose every child x is a `config_only` mixture whose runs (single elements, or
//! e.g. the D elements x[n, ·] of a row) read z element for element, the message to z_n is the row
//! L_n = Θ u_n − A of x's scores (Winn (2.53)), u_n the run's moments back to back. The generic update would
//! materialise L (n × K), the summed messages, the priors and, later, S = Wᵀ U and the bound terms,
//! each a pass over n × K values. Here one parallel pass over blocks of elements computes a block of
//! L (a small matrix product), the new q(z_e) (Winn (2.19)), and from the new moments everything the rest of
//! the sweep reads from z: each child's S and totals, z's group sums (its message to its parents)
//! and its own bound part. Those are put in the node cache, so the other updates and the bound cost
//! O(K) instead of O(n K), and no n × K temporary is allocated.
//!
//! When every element of a block is latent and takes part and the priors are per group (the
//! common case), the block is updated as whole-block array operations (`fast_block`): no
//! per-element prior copy, message closure or own-term loop. The per-element path remains for
//! observed labels, missing child entries and MAP indices. When every block is whole and the
//! prior is one for all elements, z keeps no φ (n × K values): each block forms its φ in
//! scratch, and φ_ek = ln u_ek + A_e is formed on request (`Node::natural_row`).
//!
//! Blocks have a fixed size and their partial sums are added in block order, in rounds of a fixed
//! number of blocks (bounding the memory of the partials): the result does not depend on the number
//! of threads.

use super::packed::Packed;
use super::{group_priors, own_of, Body, Node, NodeState, Role, Vmp};
use crate::dist::{DistVisitor, ExpFamily};
use crate::error::RunError;
use crate::kernels;
use crate::moments::MomentKind;
pub(super) use block::FusedIndex;
use rayon::prelude::*;
use rows::{a_minus_prior, fast_block, one_prior, slow_block};
use std::sync::Arc;

/// Elements per block (one task; its L block stays in the core's cache).
const BLOCK: usize = 512;
/// Blocks per reduction round.
const ROUND: usize = 64;
/// Group sums are produced by the pass only up to this many values (else computed when needed).
const MAX_GROUP_VALUES: usize = 1 << 12;

thread_local! {
    /// The φ of a block of an index that keeps none, one array per thread (see `visit`).
    static BLOCK_PHI: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Whether node `i` is an index whose update can be fused: a Categorical, not MAP, whose children
/// are all single-selector `config_only` mixtures with run r reading index element r.
pub(super) fn fusable(nodes: &[Node], i: usize) -> bool {
    let z = &nodes[i];
    matches!(z.body, Body::Stochastic(_))
        && matches!(z.kind, MomentKind::Categorical { .. })
        && !z.map
        && !z.children.is_empty()
        && z.children.iter().all(|&(c, role)| {
            let x = &nodes[c];
            role == Role::Selector(0)
                && x.config_only
                && x.n == z.n * x.period
                && x.selectors[0].rule.strided_identity(x.period, z.n)
        })
}

/// A mixture child during the pass: its node, its runs' moments `u` (runs × len), Θ (K × len) and
/// ⟨A⟩ (K) of its components over a run of `len` moments. `u` is the node's own moments, or its
/// data's packed moments (`packed`, module `packed`), with Θ folded onto them.
struct Child<'a> {
    id: usize,
    node: &'a Node,
    u: &'a [f64],
    packed: Option<&'a Packed>,
    len: usize,
    theta: Vec<f64>,
    a: Vec<f64>,
    /// Every element takes part (no missing leaf entries).
    all: bool,
}

/// What the pass adds up: z's own bound part, z's group sums and counts, each child's S and totals.
struct Sums {
    own: f64,
    groups: Option<(Vec<f64>, Vec<f64>)>,
    stats: Vec<(Vec<f64>, Vec<f64>)>,
}

impl Sums {
    fn zero(k: usize, groups: Option<usize>, children: &[Child]) -> Sums {
        Sums {
            own: 0.0,
            groups: groups.map(|g| (vec![0.0; g * k], vec![0.0; g])),
            stats: children
                .iter()
                .map(|c| (vec![0.0; k * c.len], vec![0.0; k]))
                .collect(),
        }
    }

    /// Every sum back to 0.
    fn clear(&mut self) {
        self.own = 0.0;
        if let Some((g, n)) = &mut self.groups {
            g.fill(0.0);
            n.fill(0.0);
        }
        for (s, t) in &mut self.stats {
            s.fill(0.0);
            t.fill(0.0);
        }
    }

    fn add(&mut self, other: &Sums) {
        self.own += other.own;
        if let (Some(a), Some(b)) = (&mut self.groups, &other.groups) {
            kernels::add_into(&mut a.0, &b.0);
            kernels::add_into(&mut a.1, &b.1);
        }
        for (a, b) in self.stats.iter_mut().zip(&other.stats) {
            kernels::add_into(&mut a.0, &b.0);
            kernels::add_into(&mut a.1, &b.1);
        }
    }
}

/// Θ and ⟨A⟩ of every component of `config_only` mixture node `id` (kept in the cache for the
/// bound).
struct ComponentPriors<'a> {
    cache: &'a super::Cache,
    nodes: &'a [Node],
    id: usize,
}

impl DistVisitor for ComponentPriors<'_> {
    type Output = Arc<(Vec<f64>, Vec<f64>)>;
    fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
        super::cached_component_priors(d, self.cache, self.nodes, self.id)
    }
}

/// The fused update of index node `id` (moved-out state in `state`).
struct FusedUpdate<'a> {
    nodes: &'a [Node],
    id: usize,
    children: &'a [Child<'a>],
    state: NodeState,
}

type Fused = (NodeState, Result<Sums, (usize, String)>);

impl DistVisitor for FusedUpdate<'_> {
    type Output = Fused;
    fn visit<D: ExpFamily>(self, d: &D) -> Fused {
        let (nodes, z, children) = (self.nodes, &self.nodes[self.id], self.children);
        let k = z.len;
        let NodeState {
            mut phi,
            mut u,
            mut a,
        } = self.state;
        let priors = group_priors(d, nodes, z);
        let groups = z
            .groups
            .as_ref()
            .map(|(_, reps)| reps.len())
            .filter(|g| g * (k + 1) <= MAX_GROUP_VALUES);
        // Every block whole (every element latent and taking part, one prior for all): no φ is
        // kept, each block forms its φ in scratch and φ is formed on request from q
        // (`Node::natural_row`), on the tiled and the row-major path alike.
        let one = one_prior(z, children, &priors);
        // The tiled path for every block, set up once: the one prior subtracted with the first
        // child's ⟨A⟩, Θ u − (⟨A⟩ − φ_prior).
        let first_a = one
            .filter(|_| tile::applies(k, children))
            .map(|prior| a_minus_prior(&children[0], prior));
        let thetas: Vec<Vec<f64>> = match first_a {
            Some(_) => children
                .iter()
                .map(|c| crate::linalg::transpose(&c.theta, k, c.len))
                .collect(),
            None => Vec::new(),
        };
        let tiles: Option<Vec<tile::TileChild>> = first_a.as_ref().map(|first_a| {
            children
                .iter()
                .zip(&thetas)
                .enumerate()
                .map(|(i, (c, theta))| tile::TileChild {
                    u: c.u,
                    len: c.len,
                    theta,
                    a: if i == 0 { first_a } else { &c.a },
                })
                .collect()
        });
        if one.is_some() {
            phi = Vec::new();
        } else if phi.is_empty() {
            // Kept from here on (the last update kept none).
            phi = z.natural_rows_from(&u, &a);
        }
        let tiles = tiles.as_deref();
        let mut total = Sums::zero(k, groups, children);
        let blocks = z.n.div_ceil(BLOCK);
        // One round's partial sums, allocated once and cleared for each block.
        let mut partials: Vec<Sums> = (0..blocks.min(ROUND))
            .map(|_| Sums::zero(k, groups, children))
            .collect();
        let run = |start: usize,
                   phi: Option<&mut [f64]>,
                   scratch: &mut Vec<f64>,
                   u: &mut [f64],
                   a: &mut [f64],
                   sums: &mut Sums|
         -> Result<(), (usize, String)> {
            sums.clear();
            block(
                d, nodes, z, children, tiles, &priors, start, phi, scratch, u, a, sums,
            )
        };
        for round in 0..blocks.div_ceil(ROUND) {
            let (lo, hi) = (
                round * ROUND * BLOCK,
                ((round + 1) * ROUND * BLOCK).min(z.n),
            );
            let rows = u[lo * k..hi * k]
                .par_chunks_mut(BLOCK * k)
                .zip(a[lo..hi].par_chunks_mut(BLOCK))
                .zip(partials.par_iter_mut())
                .enumerate();
            // No φ kept: each block's φ goes into its thread's scratch array (`BLOCK_PHI`),
            // reused from block to block and from update to update, never cleared — the block's
            // scores overwrite it (`kernels::scores_block` replaces). A fresh zeroed array per
            // block cost 15% of the GMM estimator's sweep, and one per rayon task (`map_init`)
            // still 6% of case a's (callgrind, bench_gmm: a memset of BLOCK × K values each).
            let done: Vec<Result<(), (usize, String)>> = if phi.is_empty() {
                rows.map(|(b, ((u, a), s))| {
                    // Taken out while the block runs: a block started on this thread meanwhile
                    // (work stolen while waiting) finds none and uses a fresh one.
                    let mut scratch = BLOCK_PHI.with(std::cell::Cell::take);
                    let done = run(lo + b * BLOCK, None, &mut scratch, u, a, s);
                    BLOCK_PHI.with(|c| c.set(scratch));
                    done
                })
                .collect()
            } else {
                rows.zip(phi[lo * k..hi * k].par_chunks_mut(BLOCK * k))
                    .map(|((b, ((u, a), s)), phi)| {
                        run(lo + b * BLOCK, Some(phi), &mut Vec::new(), u, a, s)
                    })
                    .collect()
            };
            for (r, s) in done.into_iter().zip(&partials) {
                match r {
                    Ok(()) => total.add(s),
                    Err(e) => return (NodeState { phi, u, a }, Err(e)),
                }
            }
        }
        (NodeState { phi, u, a }, Ok(total))
    }
}

/// One block of elements starting at `start`: L, the new q(z_e), then the block's sums.
#[allow(clippy::too_many_arguments)]
fn block<D: ExpFamily>(
    d: &D,
    nodes: &[Node],
    z: &Node,
    children: &[Child],
    tiles: Option<&[tile::TileChild]>,
    priors: &Option<(Vec<f64>, Vec<f64>)>,
    start: usize,
    mut phi: Option<&mut [f64]>,
    scratch: &mut Vec<f64>,
    u: &mut [f64],
    a: &mut [f64],
    sums: &mut Sums,
) -> Result<(), (usize, String)> {
    let (k, rows) = (z.len, a.len());
    if let Some(tiles) = tiles {
        if tile::try_block(tiles, k, start, phi.as_deref_mut(), u, a, sums) {
            return Ok(());
        }
    }
    // φ not kept (every block whole): the block's φ in the worker's scratch, rows × K values,
    // left as the last block wrote it: every block is whole here, so `fast_block` takes it and
    // its scores overwrite every value before any is read. (Also where the tiled path failed on
    // a block: the row-major path then reports why.)
    let phi = match phi {
        Some(phi) => phi,
        None => {
            if scratch.len() < rows * k {
                scratch.resize(rows * k, 0.0);
            }
            &mut scratch[..rows * k]
        }
    };
    let fast = fast_block(d, z, children, priors, start, phi, u, a)?;
    if !fast {
        slow_block(d, nodes, z, children, priors, start, phi, u, a)?;
    }
    // The column sums of the block's q(z) (the totals of every child whose elements all take
    // part), computed once.
    let mut cols = vec![0.0; k];
    match (&mut sums.groups, &z.groups) {
        // Every element latent and taking part, one group: the sums of the block as a whole.
        (Some((gsum, count)), Some((_, reps))) if fast && reps.len() == 1 => {
            let dot = kernels::column_sums_and_natural_dot(phi, u, &mut cols);
            kernels::add_into(gsum, &cols);
            count[0] += rows as f64;
            sums.own += a.iter().sum::<f64>() - dot;
            return stats(children, start, rows, k, u, &cols, sums);
        }
        (None, _) if fast => {
            let dot = kernels::column_sums_and_natural_dot(phi, u, &mut cols);
            sums.own += a.iter().sum::<f64>() - dot;
            return stats(children, start, rows, k, u, &cols, sums);
        }
        _ => {}
    }
    for r in (0..rows).filter(|&r| z.participates(start + r)) {
        let e = start + r;
        let ue = &u[r * k..(r + 1) * k];
        sums.own += own_of(z.is_observed(e), &phi[r * k..(r + 1) * k], ue, a[r]);
        if let (Some((gsum, count)), Some((group, _))) = (&mut sums.groups, &z.groups) {
            let g = group[e] as usize;
            count[g] += 1.0;
            kernels::add_into(&mut gsum[g * k..(g + 1) * k], ue);
        }
    }
    if children.iter().any(|c| c.all) {
        kernels::column_sums(u, &mut cols);
    }
    stats(children, start, rows, k, u, &cols, sums)
}

/// Each child's S and totals over a block, from the block's new q(z) (`cols`: its column sums, the
/// totals of a child whose elements all take part).
fn stats(
    children: &[Child],
    start: usize,
    rows: usize,
    k: usize,
    u: &[f64],
    cols: &[f64],
    sums: &mut Sums,
) -> Result<(), (usize, String)> {
    for (c, (s, t)) in children.iter().zip(&mut sums.stats) {
        let len = c.len;
        let uc = &c.u[start * len..(start + rows) * len];
        if c.all {
            kernels::weighted_sums_block(u, k, uc, len, s);
            kernels::add_into(t, cols);
            continue;
        }
        let mut w = u.to_vec();
        for r in (0..rows).filter(|&r| !c.node.participates(start + r)) {
            w[r * k..(r + 1) * k].iter_mut().for_each(|v| *v = 0.0);
        }
        kernels::weighted_sums_block(&w, k, uc, len, s);
        kernels::column_sums(&w, t);
    }
    Ok(())
}

impl Vmp {
    /// Updates fusable index node `i` (see the module documentation) and fills the caches that its
    /// parents' and children's updates and the bound read.
    pub(super) fn update_fused(&mut self, i: usize) -> Result<(), RunError> {
        let Body::Stochastic(dist) = &self.nodes[i].body else {
            unreachable!("fusable nodes are stochastic")
        };
        let dist = dist.clone();
        let z = &mut self.nodes[i];
        let state = std::mem::take(&mut z.q);
        let (nodes, cache) = (&self.nodes, &self.cache);
        let children: Vec<Child> = nodes[i]
            .children
            .iter()
            .map(|&(c, _)| {
                let node = &nodes[c];
                let Body::Stochastic(cd) = &node.body else {
                    unreachable!("mixtures are stochastic")
                };
                let priors = cd.visit(ComponentPriors {
                    cache,
                    nodes,
                    id: c,
                });
                let (theta, a) = (&priors.0, priors.1.clone());
                let (u, len, theta) = match &node.packed {
                    Some(p) => (&p.u[..], p.len, p.fold(theta)),
                    None => (&node.q.u[..], node.period * node.len, theta.clone()),
                };
                Child {
                    id: c,
                    node,
                    u,
                    packed: node.packed.as_ref(),
                    len,
                    theta,
                    a,
                    // `participates` for every element: latent, a parent, or every element data.
                    all: node.observed.is_none()
                        || !node.children.is_empty()
                        || node.observed.is_all(),
                }
            })
            .collect();
        let ids: Vec<usize> = children.iter().map(|c| c.id).collect();
        let (state, mut result) = dist.visit(FusedUpdate {
            nodes,
            id: i,
            children: &children,
            state,
        });
        if let Ok(sums) = &mut result {
            // S of a packed child back on its node's full layout, what its parents read.
            for (c, (s, _)) in children.iter().zip(&mut sums.stats) {
                if let Some(p) = c.packed {
                    *s = p.unfold(s);
                }
            }
        }
        drop(children);
        let z = &mut self.nodes[i];
        z.q = state;
        // φ formed on request (`Vmp::natural`) belongs to the old q.
        z.lazy = Default::default();
        self.changed(i);
        let sums = result.map_err(|(e, what)| self.numerical(i, e, what))?;
        {
            let mut cache = self.cache.lock().expect("cache lock");
            let entry = cache.entry(i).or_default();
            entry.own = Some(sums.own);
            entry.group_sums = sums.groups.map(Arc::new);
            for (c, stats) in ids.into_iter().zip(sums.stats) {
                cache.entry(c).or_default().stats = Some(Arc::new(stats));
            }
        }
        self.refresh_dependents(i);
        Ok(())
    }
}

mod block;
mod rows;
#[cfg(test)]
pub(super) mod tests;
mod tile;
