//! Greedy pruning of surplus mixture components after convergence (Winn §1.8.7 footnote 8,
//! §3.3: model order adapted by deleting components, judged by L), part of the run loop in
//! [`super::driver`].
//!
//! A deletion's trial empties the component and re-converges; it is kept if the bound rises by
//! more than the tolerance. A rejected trial ends early once its bound cannot reach acceptance
//! (`Watch::floor`), but costs at least three full sweeps: at N = 10⁶ (D = 2, K = 10 real
//! clusters) ten rejected trials were 39 of the fit's 42 sweeps and half its CPU time.
//!
//! **The screen** (`screen`, attached by the caller with [`Vmp::set_prune_screen`]; the facade
//! does so from N = 10⁵ rows of the data plate): in each pass over the used components, every
//! deletion is first tried on the model compiled on a seeded random subsample of m rows, swept as
//! shards whose local messages and bound terms are weighted by N/m (module `shard`; each sum over
//! rows estimated from the subsample). Its estimate Δ of the bound's change, against the
//! subsample's own re-converged baseline, comes with a standard error from the shards taken as
//! batches; only deletions with Δ + [`SCREEN_Z`]·se > 0 get the full trial, in the same order as
//! without the screen. Deletions are screened one at a time just before their turn, so a pass
//! whose first deletion is accepted screens only that one (the baseline is re-converged once per
//! pass, as the full state changes only when a deletion is accepted). The full trial alone
//! accepts, and a skipped trial would have been restored anyway, so the screen changes the
//! result only if it rejects a deletion the full trial would accept, and otherwise leaves the
//! state bit for bit as unscreened pruning does.
//!
//! Why a subsample of the trial and not a cheaper test: no first-order formula on the current q
//! separates accepted from rejected deletions (an accepted deletion can lose much bound in its
//! first sweep before it gains), so the screen runs the trial's own dynamics, on 1% of the rows
//! at N = 10⁶. Ordering trials by a score and stopping after a few rejections was tried and lost
//! an accepted deletion (bench/results/prune_1m_2026-11-29_0837utc.txt).

use super::driver::{RunOptions, Stop, Warning, Watch};
use super::{Role, Vmp};
use crate::error::RunError;
use crate::graph::NodeId;
use crate::moments::MomentKind;

mod screen;
pub(super) use screen::Screen;
pub use screen::{ScreenCounts, SCREEN_Z};

/// What a pruning stage did.
#[derive(Default)]
pub(super) struct Pruned {
    /// The (bound, stop) of each accepted trial.
    pub kept: Vec<(f64, Stop)>,
    /// Deleted components.
    pub deleted: usize,
    /// Sweeps of the full trials.
    pub sweeps: usize,
    /// Full trials run (deletions and relabellings).
    pub trials: usize,
    /// The trials' warnings.
    pub warnings: Vec<Warning>,
    /// What the screen did, if one is attached.
    pub screen: Option<ScreenCounts>,
}

impl Vmp {
    /// Whether some latent Categorical node selects mixture components (pruning applies).
    pub(super) fn has_mixture_index(&self) -> bool {
        (0..self.nodes.len()).any(|i| self.is_mixture_index(i))
    }

    pub(super) fn is_mixture_index(&self, i: usize) -> bool {
        self.nodes[i]
            .children
            .iter()
            .any(|(_, r)| matches!(r, Role::Selector(_)))
            && self.nodes[i].has_latent()
            && matches!(self.nodes[i].kind, MomentKind::Categorical { .. })
            && !matches!(self.nodes[i].body, super::Body::Chain(_))
            && self.nodes[i].block.is_none()
    }

    /// Greedy component deletion: for each mixture index, empty its used components one at a time
    /// (smallest total responsibility first), re-converge, and keep the change if L rises by more
    /// than the tolerance; then, under a prior that orders the components, one relabelling trial
    /// (`reorder_by_size`). With a screen attached ([`Vmp::set_prune_screen`]), each pass's
    /// deletions are screened on the subsample first and only those it cannot tell from an
    /// accepted one get the full trial (module docs).
    pub(super) fn prune(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        best: f64,
    ) -> Result<Pruned, RunError> {
        let mut screen = self.screen.take();
        if let Some(s) = screen.as_mut() {
            s.counts = ScreenCounts {
                rows: s.counts.rows,
                ..Default::default()
            };
        }
        let out = self.prune_screened(opts, order, watch, best, screen.as_deref_mut());
        let counts = screen.as_ref().map(|s| s.counts);
        self.screen = screen;
        out.map(|mut p| {
            p.screen = counts;
            p
        })
    }

    fn prune_screened(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        mut best: f64,
        mut screen: Option<&mut Screen>,
    ) -> Result<Pruned, RunError> {
        let indices: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.is_mixture_index(i))
            .collect();
        let mut out = Pruned::default();
        let mut relabelled = 0;
        // One snapshot buffer for every trial (`Vmp::snapshot_into`).
        let mut saved = Vec::new();
        for i in indices {
            let MomentKind::Categorical { k } = self.nodes[i].kind else {
                continue;
            };
            'outer: loop {
                let n = &self.nodes[i];
                let mut used: Vec<(f64, usize)> = (0..k)
                    .map(|j| ((0..n.n).map(|e| n.q.u[e * k + j]).sum::<f64>(), j))
                    .filter(|(w, _)| *w > 0.5)
                    .collect();
                if used.len() <= 1 {
                    break;
                }
                // A component an observed label names holds data: deleting it would rewrite the
                // label as a spread over the other components.
                let named = n.observed_categories(k);
                used.retain(|&(_, j)| !named[j]);
                used.sort_by(|a, b| a.0.total_cmp(&b.0));
                // A pass's screen starts from the current state (its baseline); a screen that
                // fails (a numerical error on the subsample) screens nothing: every deletion then
                // gets its full trial.
                let mut pass_screen = match screen.as_deref_mut() {
                    Some(s) => s.start(self, i, order, opts).unwrap_or(false).then_some(s),
                    None => None,
                };
                for &(_, j) in &used {
                    if let Some(s) = pass_screen.as_deref_mut() {
                        match s.passes(i, j, k, opts) {
                            Ok(false) => continue,
                            Ok(true) => {}
                            Err(_) => pass_screen = None,
                        }
                    }
                    out.trials += 1;
                    self.snapshot_into(&mut saved);
                    self.delete_component(i, j, k);
                    if let Some(accepted) = self.trial(opts, order, watch, best, &mut out.sweeps)? {
                        best = accepted.0;
                        out.warnings.extend(accepted.2);
                        out.kept.push((accepted.0, accepted.1));
                        continue 'outer;
                    }
                    self.restore_swap(&mut saved);
                }
                break;
            }
            if self.orders_components(i) {
                self.snapshot_into(&mut saved);
                if self.reorder_by_size(i, k, order)? {
                    match self.trial(opts, order, watch, best, &mut out.sweeps)? {
                        Some(accepted) => {
                            best = accepted.0;
                            out.warnings.extend(accepted.2);
                            out.kept.push((accepted.0, accepted.1));
                            relabelled += 1;
                        }
                        None => self.restore_swap(&mut saved),
                    }
                }
            }
        }
        // Deleted components: the accepted trials but the relabellings.
        out.deleted = out.kept.len() - relabelled;
        Ok(out)
    }

    /// Re-converges a trial state (a deletion, a relabelling), ended early once its bound cannot
    /// pass the acceptance threshold — `best` plus the tolerance over every observed value —
    /// (`Watch::floor`). Adds its sweeps to `sweeps`; returns its bound, stop and warnings if it
    /// passes, `None` to reject it.
    fn trial(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        best: f64,
        sweeps: &mut usize,
    ) -> Result<Option<(f64, Stop, Vec<Warning>)>, RunError> {
        let threshold = best + opts.tol.max(1e-12) * self.observed_values().max(1) as f64;
        let trial = self.sweeps_above(opts, order, watch, Some(threshold))?;
        *sweeps += trial.trace.len();
        let bound = *trial.trace.last().unwrap_or(&f64::NEG_INFINITY);
        Ok((bound > threshold).then_some((bound, trial.stop, trial.warnings)))
    }

    /// Whether the probabilities mixture index `i` reads favour some orders of its components
    /// ([`crate::dist::ExpFamily::orders_categories`]: a stick-breaking prior).
    fn orders_components(&self, i: usize) -> bool {
        self.nodes[i]
            .parents
            .first()
            .is_some_and(|e| match e.source {
                crate::network::Source::Node(p) => {
                    self.nodes[p].dist().is_some_and(|d| d.orders_categories())
                }
                crate::network::Source::Const(_) => false,
            })
    }

    /// Relabels index `i`'s components by decreasing total responsibility (a stable sort), for a
    /// trial: under stick-breaking weights an empty or small component before larger ones costs
    /// bound (about ln(α / N_after) per empty stick) that deletions cannot recover (Kurihara,
    /// Welling & Vlassis 2007 sort the sticks by size). The components and the weights then take
    /// one update each in `order` (every node of the schedule but the index), so that their q
    /// follow the new labels: the schedule updates the index first, and it would otherwise read
    /// the old components and put every row back under its old label, which undid every
    /// relabelling. Returns false when the order is already decreasing or some labels are
    /// observed.
    pub(super) fn reorder_by_size(
        &mut self,
        i: usize,
        k: usize,
        order: &[NodeId],
    ) -> Result<bool, RunError> {
        let node = &mut self.nodes[i];
        if (0..node.n).any(|e| node.is_observed(e)) {
            // Observed labels name their components: no relabelling.
            return Ok(false);
        }
        let mut totals = vec![0.0f64; k];
        for e in 0..node.n {
            totals
                .iter_mut()
                .zip(&node.q.u[e * k..(e + 1) * k])
                .for_each(|(t, v)| *t += v);
        }
        let mut perm: Vec<usize> = (0..k).collect();
        perm.sort_by(|&a, &b| totals[b].total_cmp(&totals[a]));
        if perm.iter().enumerate().all(|(p, &j)| p == j) {
            return Ok(false);
        }
        let mut row = vec![0.0; k];
        for e in 0..node.n {
            let u = &mut node.q.u[e * k..(e + 1) * k];
            row.iter_mut().zip(&perm).for_each(|(r, &j)| *r = u[j]);
            u.copy_from_slice(&row);
        }
        node.drop_natural();
        self.changed(i);
        self.refresh_dependents(i);
        for &id in order.iter().filter(|id| id.index() != i) {
            self.update(id)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
