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
use super::pool::Kept;
use super::{group_priors, own_of, Body, Node, NodeState, Priors, Role, Vmp};
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
    node: &'a Node,
    u: &'a [f64],
    packed: Option<&'a Packed>,
    len: usize,
    /// The node's cached component priors (Θ over a run and ⟨A⟩; shared, not copied).
    priors: super::pool::Pair,
    /// Θ folded onto the packed layout (a packed child only).
    folded: Option<Vec<f64>>,
    /// Every element takes part (no missing leaf entries).
    all: bool,
}

impl Child<'_> {
    /// Θ (K × len) over the moments the pass reads.
    fn theta(&self) -> &[f64] {
        self.folded.as_deref().unwrap_or(&self.priors.0)
    }

    /// ⟨A⟩ of each component.
    fn a(&self) -> &[f64] {
        &self.priors.1
    }
}

/// What the pass adds up: z's own bound part, z's group sums and counts, each child's S and totals.
#[derive(Debug, Default)]
struct Sums {
    own: f64,
    groups: Option<(Vec<f64>, Vec<f64>)>,
    stats: Vec<(Vec<f64>, Vec<f64>)>,
}

/// `v` as `n` zeros, in its own storage.
fn zeros(v: &mut Vec<f64>, n: usize) {
    v.clear();
    v.resize(n, 0.0);
}

impl Sums {
    /// Every sum 0, shaped for K = `k` components, `groups` groups of z and the `children`
    /// (reusing the arrays held: the values of a new `Sums`).
    fn reset(&mut self, k: usize, groups: Option<usize>, children: &[Child]) {
        self.own = 0.0;
        match groups {
            Some(g) => {
                let (s, n) = self.groups.get_or_insert_with(Default::default);
                zeros(s, g * k);
                zeros(n, g);
            }
            None => self.groups = None,
        }
        self.stats.resize_with(children.len(), Default::default);
        for ((s, t), c) in self.stats.iter_mut().zip(children) {
            zeros(s, k * c.len);
            zeros(t, k);
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

/// The fused update's work arrays, kept by the block between updates (`pool::Kept`): the total
/// and one round's partial sums, and the round's block results.
#[derive(Debug, Default)]
pub(super) struct Work {
    total: Sums,
    partials: Vec<Sums>,
    done: Vec<Result<(), (usize, String)>>,
}

/// The fused update of index node `id` (moved-out state in `state`); the sums go into
/// `work.total`.
struct FusedUpdate<'a> {
    cache: &'a super::Cache,
    nodes: &'a [Node],
    id: usize,
    children: &'a [Child<'a>],
    state: NodeState,
    work: &'a mut Work,
}

type Fused = (NodeState, Result<(), (usize, String)>);

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
        let priors = group_priors(d, self.cache, nodes, self.id);
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
                .map(|c| crate::linalg::transpose(c.theta(), k, c.len))
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
                    a: if i == 0 { first_a } else { c.a() },
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
        let Work {
            total,
            partials,
            done,
        } = self.work;
        total.reset(k, groups, children);
        let blocks = z.n.div_ceil(BLOCK);
        // One round's partial sums, kept by the block and cleared for each block.
        partials.resize_with(blocks.min(ROUND), Default::default);
        partials.truncate(blocks.min(ROUND));
        for p in partials.iter_mut() {
            p.reset(k, groups, children);
        }
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
            // (The results into the kept array: no allocation per round.)
            if phi.is_empty() {
                rows.map(|(b, ((u, a), s))| {
                    // Taken out while the block runs: a block started on this thread meanwhile
                    // (work stolen while waiting) finds none and uses a fresh one.
                    let mut scratch = BLOCK_PHI.with(std::cell::Cell::take);
                    let done = run(lo + b * BLOCK, None, &mut scratch, u, a, s);
                    BLOCK_PHI.with(|c| c.set(scratch));
                    done
                })
                .collect_into_vec(done)
            } else {
                rows.zip(phi[lo * k..hi * k].par_chunks_mut(BLOCK * k))
                    .map(|((b, ((u, a), s)), phi)| {
                        run(lo + b * BLOCK, Some(phi), &mut Vec::new(), u, a, s)
                    })
                    .collect_into_vec(done)
            };
            for (r, s) in done.drain(..).zip(partials.iter()) {
                match r {
                    Ok(()) => total.add(s),
                    Err(e) => return (NodeState { phi, u, a }, Err(e)),
                }
            }
        }
        (NodeState { phi, u, a }, Ok(()))
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
    priors: &Option<Priors>,
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
    // part), computed once (on the stack for up to 16 components).
    let (mut stack, mut heap) = ([0.0; 16], Vec::new());
    let cols: &mut [f64] = if k <= 16 {
        &mut stack[..k]
    } else {
        heap.resize(k, 0.0);
        &mut heap
    };
    match (&mut sums.groups, &z.groups) {
        // Every element latent and taking part, one group: the sums of the block as a whole.
        (Some((gsum, count)), Some((_, reps))) if fast && reps.len() == 1 => {
            let dot = kernels::column_sums_and_natural_dot(phi, u, cols);
            kernels::add_into(gsum, cols);
            count[0] += rows as f64;
            sums.own += a.iter().sum::<f64>() - dot;
            return stats(children, start, rows, k, u, cols, sums);
        }
        (None, _) if fast => {
            let dot = kernels::column_sums_and_natural_dot(phi, u, cols);
            sums.own += a.iter().sum::<f64>() - dot;
            return stats(children, start, rows, k, u, cols, sums);
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
        kernels::column_sums(u, cols);
    }
    stats(children, start, rows, k, u, cols, sums)
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
    /// parents' and children's updates and the bound read; `kept` holds the block's work arrays.
    pub(super) fn update_fused(&mut self, i: usize, kept: &Kept<Work>) -> Result<(), RunError> {
        // The static node, shared (a copy of its family would allocate).
        let model = self.nodes[i].model.clone();
        let Body::Stochastic(dist) = &model.body else {
            unreachable!("fusable nodes are stochastic")
        };
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
                let (u, len, folded) = match &node.packed {
                    Some(p) => (&p.u[..], p.len, Some(p.fold(&priors.0))),
                    None => (&node.q.u[..], node.period * node.len, None),
                };
                Child {
                    node,
                    u,
                    packed: node.packed.as_ref(),
                    len,
                    priors,
                    folded,
                    // `participates` for every element: latent, a parent, or every element data.
                    all: node.observed.is_none()
                        || !node.children.is_empty()
                        || node.observed.is_all(),
                }
            })
            .collect();
        let mut work = kept.take();
        let (state, result) = dist.visit(FusedUpdate {
            cache,
            nodes,
            id: i,
            children: &children,
            state,
            work: &mut work,
        });
        if result.is_ok() {
            // S of a packed child back on its node's full layout, what its parents read.
            for (c, (s, _)) in children.iter().zip(&mut work.total.stats) {
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
        if let Err((e, what)) = result {
            kept.keep(work);
            return Err(self.numerical(i, e, what));
        }
        {
            // Copies of the sums in the cache's pairs (from its pool: the ones `changed` just
            // gave back), the sums' arrays kept for the next update.
            let sums = &work.total;
            let pool = &self.cache.pool;
            let copy = |(s, n): &(Vec<f64>, Vec<f64>)| {
                pool.pair_with(s.len(), n.len(), |a, b| {
                    a.copy_from_slice(s);
                    b.copy_from_slice(n);
                })
            };
            let mut cache = self.cache.lock().expect("cache lock");
            let entry = cache.entry(i).or_default();
            entry.own = Some(sums.own);
            entry.group_sums = sums.groups.as_ref().map(copy);
            for (&(c, _), stats) in self.nodes[i].children.iter().zip(&sums.stats) {
                cache.entry(c).or_default().stats = Some(copy(stats));
            }
        }
        kept.keep(work);
        self.refresh_dependents(i);
        Ok(())
    }
}

mod block;
mod rows;
#[cfg(test)]
pub(super) mod tests;
mod tile;
