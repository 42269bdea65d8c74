//! Greedy pruning of surplus mixture components after convergence (Winn §1.8.7 footnote 8,
//! §3.3: model order adapted by deleting components, judged by L), part of the run loop in
//! [`super::driver`].

use super::driver::{RunOptions, Stop, Warning, Watch};
use super::{Role, Vmp};
use crate::error::RunError;
use crate::graph::NodeId;
use crate::moments::MomentKind;

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
    /// (`reorder_by_size`). Returns the (bound, stop) of each accepted trial, the number of
    /// deleted components, and the trial sweeps' count and warnings.
    #[allow(clippy::type_complexity)]
    pub(super) fn prune(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        mut best: f64,
    ) -> Result<(Vec<(f64, Stop)>, usize, (usize, Vec<Warning>)), RunError> {
        let indices: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.is_mixture_index(i))
            .collect();
        let mut kept = Vec::new();
        let mut sweeps = 0;
        let mut warnings = Vec::new();
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
                used.sort_by(|a, b| a.0.total_cmp(&b.0));
                for &(_, j) in &used {
                    self.snapshot_into(&mut saved);
                    let node = &mut self.nodes[i];
                    for e in 0..node.n {
                        let row = &mut node.q.u[e * k..(e + 1) * k];
                        row[j] = 0.0;
                        let total: f64 = row.iter().sum();
                        if total > 0.0 {
                            row.iter_mut().for_each(|v| *v /= total);
                        } else {
                            row.iter_mut().enumerate().for_each(|(c, v)| {
                                *v = if c == j { 0.0 } else { 1.0 / (k - 1) as f64 }
                            });
                        }
                    }
                    // φ formed on request (`Vmp::natural`) belongs to the old q.
                    node.lazy = Default::default();
                    self.changed(i);
                    self.refresh_dependents(i);
                    if let Some(accepted) = self.trial(opts, order, watch, best, &mut sweeps)? {
                        best = accepted.0;
                        warnings.extend(accepted.2);
                        kept.push((accepted.0, accepted.1));
                        continue 'outer;
                    }
                    self.restore_swap(&mut saved);
                }
                break;
            }
            if self.orders_components(i) {
                self.snapshot_into(&mut saved);
                if self.reorder_by_size(i, k) {
                    match self.trial(opts, order, watch, best, &mut sweeps)? {
                        Some(accepted) => {
                            best = accepted.0;
                            warnings.extend(accepted.2);
                            kept.push((accepted.0, accepted.1));
                            relabelled += 1;
                        }
                        None => self.restore_swap(&mut saved),
                    }
                }
            }
        }
        // Deleted components: the accepted trials but the relabellings.
        let n = kept.len() - relabelled;
        Ok((kept, n, (sweeps, warnings)))
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
    /// Welling & Vlassis 2007 sort the sticks by size). The components' q follow from q(z) in the
    /// next sweep. Returns false when the order is already decreasing or some labels are observed.
    fn reorder_by_size(&mut self, i: usize, k: usize) -> bool {
        let node = &mut self.nodes[i];
        if (0..node.n).any(|e| node.is_observed(e)) {
            // Observed labels name their components: no relabelling.
            return false;
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
            return false;
        }
        let mut row = vec![0.0; k];
        for e in 0..node.n {
            let u = &mut node.q.u[e * k..(e + 1) * k];
            row.iter_mut().zip(&perm).for_each(|(r, &j)| *r = u[j]);
            u.copy_from_slice(&row);
        }
        node.lazy = Default::default();
        self.changed(i);
        self.refresh_dependents(i);
        true
    }
}
