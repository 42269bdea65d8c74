//! The pruning screen: each deletion's trial run first on a random subsample of the data plate's
//! rows, weighted to the whole data, so that only deletions the subsample cannot tell from an
//! accepted one get the full trial (module docs of `prune`).
//!
//! The subsample is the model compiled on m of the N rows (the caller draws them from a seed and
//! compiles them, [`Vmp::set_prune_screen`]), cut into a few shards (`SCREEN_BATCHES` in the
//! facade) and swept as a sharded fit ([`Sharded`], Winn (2.19) with the children's messages
//! summed over the shards) whose local messages and local bound terms are multiplied by
//! w = N/m: the weighted subsample's bound, Winn (2.31), is an unbiased estimate of the whole
//! data's at any fixed q of the globals, and its sweeps follow the full trial's dynamics with
//! every sum over rows replaced by w times the subsample's sum.
//!
//! Once per pass over the components ([`Screen::start`]), from the full model's current state:
//! 1. the globals are copied from the full model and every local is updated once from them;
//! 2. baseline: weighted sweeps to convergence without the deletion (the subsample's optimum
//!    lies near the full data's, not at it), bound L₀ and each shard's local terms ℓ₀_g.
//!
//! Then for each deletion of a component j in turn ([`Screen::passes`]):
//! 3. the trial: from the baseline state, component j is emptied on every shard and the
//!    weighted sweeps run to convergence, bound L_j and local terms ℓ_g;
//! 4. the estimate Δ = L_j − L₀ and its standard error from the shards as batches of iid rows,
//!    se = w·√(G·s²) with s² the sample variance of d_g = ℓ_g − ℓ₀_g over the G shards.
//!
//! A deletion gets the full trial when Δ + [`SCREEN_Z`]·se > 0; a trial ends early, rejected,
//! once its bound, plus [`PRUNE_REACH`] times its last change and [`SCREEN_Z`] standard errors,
//! stays below L₀ while the changes halve per sweep (the rule of a full trial, `Watch::floor`).

use super::super::driver::{RunOptions, PRUNE_REACH};
use super::super::{NodeId, NodeState, RunError, Sharded, SplitError, Vmp};

/// How many standard errors a screened deletion's bound change may lie below acceptance and
/// still get the full trial. The standard error is estimated from a few batches (a χ² with
/// G − 1 degrees of freedom: with G = 8, below a third of the true one with probability under
/// 1%), and a deletion of a real cluster lies tens of standard errors below (bench/results/
/// prune_screen_*).
pub const SCREEN_Z: f64 = 6.0;

/// What the screen did in a run's pruning stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ScreenCounts {
    /// Rows of the subsample (m of the data plate's N).
    pub rows: usize,
    /// Deletions screened on the subsample.
    pub screened: usize,
    /// Screened deletions that went on to the full trial.
    pub passed: usize,
    /// Sweeps of the subsample (each costs about m/N of a full sweep).
    pub sweeps: usize,
}

/// The model on a subsample of the data plate's rows, as weighted shards.
pub(in crate::engine) struct Screen {
    sharded: Sharded,
    /// N/m.
    weight: f64,
    pub(super) counts: ScreenCounts,
    /// The observed values of the whole data (the tolerance is per observed value).
    values: f64,
    /// The baseline of the current pass ([`Screen::start`]): its bound L₀, each shard's local
    /// terms ℓ₀ and each shard's state.
    base: f64,
    base_terms: Vec<f64>,
    kept: Vec<Vec<NodeState>>,
}

impl Vmp {
    /// Attaches a pruning screen: `shards` are this model compiled on disjoint random subsets of
    /// its data plate's rows (drawn from a seed; together m of its N rows, m < N), each a
    /// compilation of the same model text. The pruning stage then screens every deletion on
    /// them first (module `prune::screen`). Checks that the shards are this model on fewer rows.
    pub fn set_prune_screen(&mut self, shards: Vec<Vmp>) -> Result<(), SplitError> {
        let split = self.split(None)?;
        let mut sharded = Sharded::new(shards, Some(split.plate()), None)?;
        let n = self.plate_size(split.plate());
        let m: usize = sharded
            .shards()
            .iter()
            .map(|v| v.plate_size(split.plate()))
            .sum();
        let first = &sharded.shards()[0];
        let same = first.nodes.len() == self.nodes.len()
            && first
                .nodes
                .iter()
                .zip(&self.nodes)
                .enumerate()
                .all(|(i, (a, b))| {
                    a.name == b.name && a.len == b.len && (split.is_local(NodeId(i)) || a.n == b.n)
                });
        if !same || m == 0 || m >= n {
            return Err(SplitError::Mismatch(format!(
                "a pruning screen must be this model on fewer of its {n} rows (got {m})"
            )));
        }
        let weight = n as f64 / m as f64;
        sharded.set_weight(weight);
        self.screen = Some(Box::new(Screen {
            sharded,
            weight,
            counts: ScreenCounts {
                rows: m,
                ..Default::default()
            },
            values: 1.0,
            base: f64::NEG_INFINITY,
            base_terms: Vec::new(),
            kept: Vec::new(),
        }));
        Ok(())
    }

    /// Drops the pruning screen.
    pub fn clear_prune_screen(&mut self) {
        self.screen = None;
    }

    /// Empties component j of mixture index i (k components): each latent element's
    /// responsibility of j moved to the others in proportion (uniformly where j held all of it),
    /// then what reads the index is refreshed. Observed labels are data and stay (pruning never
    /// tries a component one of them names).
    pub(super) fn delete_component(&mut self, i: usize, j: usize, k: usize) {
        let node = &mut self.nodes[i];
        for e in 0..node.n {
            if node.is_observed(e) {
                continue;
            }
            let row = &mut node.q.u[e * k..(e + 1) * k];
            row[j] = 0.0;
            let total: f64 = row.iter().sum();
            if total > 0.0 {
                row.iter_mut().for_each(|v| *v /= total);
            } else {
                row.iter_mut()
                    .enumerate()
                    .for_each(|(c, v)| *v = if c == j { 0.0 } else { 1.0 / (k - 1) as f64 });
            }
        }
        node.drop_natural();
        self.changed(i);
        self.refresh_dependents(i);
    }
}

impl Screen {
    /// Starts a pass of screened deletions of mixture index `i` from `full`'s current state:
    /// copies the globals, updates the locals once and re-converges the subsample's baseline
    /// (L₀, ℓ₀ per shard). Returns false when the index does not have the data plate (nothing to
    /// screen on a subsample). The baseline stays valid while `full`'s state does (a rejected
    /// full trial restores it).
    pub(super) fn start(
        &mut self,
        full: &Vmp,
        i: usize,
        order: &[NodeId],
        opts: &RunOptions,
    ) -> Result<bool, RunError> {
        let split = self.sharded.split().clone();
        if !split.is_local(NodeId(i)) {
            return Ok(false);
        }
        let globals = full.global_state(&split);
        self.sharded.set_order(order);
        for v in self.sharded.shards_mut() {
            v.set_global_state(&split, &globals)
                .map_err(|e| RunError::Schedule(e.to_string()))?;
        }
        self.sharded.update_locals()?;
        // Convergence is judged per observed value of the whole data, as a full trial's.
        self.values = full.observed_values().max(1) as f64;
        let (base, _) = self.converge(None, opts)?;
        self.base = base;
        self.base_terms = self.sharded.local_terms();
        self.kept = self.sharded.shards().iter().map(|v| v.snapshot()).collect();
        Ok(true)
    }

    /// Screens the deletion of component j of mixture index i (of k) from the baseline of the
    /// last [`Screen::start`]: whether it gets the full trial.
    pub(super) fn passes(
        &mut self,
        i: usize,
        j: usize,
        k: usize,
        opts: &RunOptions,
    ) -> Result<bool, RunError> {
        for (v, state) in self.sharded.shards_mut().iter_mut().zip(&self.kept) {
            v.restore(state.clone());
            v.delete_component(i, j, k);
        }
        let (l, se) = self.converge(Some(self.base), opts)?;
        let passed = l - self.base + SCREEN_Z * se > 0.0;
        self.counts.screened += 1;
        self.counts.passed += usize::from(passed);
        Ok(passed)
    }

    /// Weighted sweeps until the bound's change per observed value (of the whole data) is at
    /// most the tolerance, or the iteration limit; with `against` = L₀, also until the bound
    /// cannot reach L₀ (module docs). Returns the last bound and its standard error against
    /// the baseline's local terms (0 without `against`).
    fn converge(
        &mut self,
        against: Option<f64>,
        opts: &RunOptions,
    ) -> Result<(f64, f64), RunError> {
        let mut trace: Vec<f64> = Vec::new();
        let mut se = 0.0;
        for _ in 0..opts.max_iter {
            let l = self.sharded.sweep()?;
            self.counts.sweeps += 1;
            if against.is_some() {
                se = self.standard_error();
            }
            trace.push(l);
            if let [.., b, c] = trace[..] {
                if (c - b).abs() / self.values <= opts.tol {
                    break;
                }
            }
            if let (Some(floor), [.., a, b, c]) = (against, &trace[..]) {
                let (before, last) = (b - a, c - b);
                if last >= 0.0
                    && 2.0 * last <= before
                    && c + PRUNE_REACH * last + SCREEN_Z * se < floor
                {
                    break;
                }
            }
        }
        Ok((*trace.last().unwrap_or(&f64::NEG_INFINITY), se))
    }

    /// The standard error of the weighted difference of local terms against `base_terms`, the
    /// shards taken as batches of iid rows: w·√(G·s²), s² the sample variance of the per-shard
    /// differences.
    fn standard_error(&self) -> f64 {
        let d: Vec<f64> = self
            .sharded
            .local_terms()
            .iter()
            .zip(&self.base_terms)
            .map(|(a, b)| a - b)
            .collect();
        let g = d.len() as f64;
        if d.len() < 2 {
            return f64::INFINITY;
        }
        let mean = d.iter().sum::<f64>() / g;
        let s2 = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (g - 1.0);
        self.weight * (g * s2).sqrt()
    }
}
