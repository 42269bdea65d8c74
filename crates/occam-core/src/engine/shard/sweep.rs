//! Sharded fits in one process: batch sweeps (the single-process schedule, step by step) and
//! memoized VB (Hughes & Sudderth 2013: one shard's locals at a time, then the globals from
//! every shard's cached state).

use super::*;
use crate::exactsum::{exact_sum, exact_sums};

/// One step of the schedule: local updates run on every shard; a global's update is a reduction.
#[derive(Clone, Debug)]
pub(super) enum Step {
    Locals(Vec<NodeId>),
    Global(NodeId),
}

/// A model split along its data plate into shards, each its own compiled [`Vmp`] on its rows,
/// with the globals replicated (module docs).
pub struct Sharded {
    pub(super) shards: Vec<Vmp>,
    pub(super) split: Split,
    pub(super) steps: Vec<Step>,
    pub(super) observed_values: usize,
    /// The weight of the shards' data: 1 when they hold all the rows; N/m when they hold a
    /// random subsample of m of N rows (the pruning screen, `engine/prune/screen.rs`), so that
    /// the messages to globals and the local bound terms estimate the whole data's.
    pub(super) weight: f64,
}

/// What a sharded run reached.
#[derive(Clone, Debug)]
pub struct ShardedFit {
    /// The bound after each sweep (batch) or pass over the shards (memoized).
    pub bound_trace: Vec<f64>,
    /// Whether the bound's change per observed value fell to the tolerance.
    pub converged: bool,
}

impl Sharded {
    /// Shards of one model (compilations of the same text on consecutive rows of the data), split
    /// along `plate` (or the inferred data plate), swept in `order` (default: the model's default
    /// order, [`Vmp::default_order`], of the first shard).
    pub fn new(
        shards: Vec<Vmp>,
        plate: Option<&str>,
        order: Option<Vec<NodeId>>,
    ) -> Result<Sharded, SplitError> {
        let first = shards
            .first()
            .ok_or_else(|| SplitError::Mismatch("no shards".into()))?;
        let split = first.split(plate)?;
        for (s, v) in shards.iter().enumerate().skip(1) {
            let same = v.nodes.len() == first.nodes.len()
                && v.nodes
                    .iter()
                    .zip(&first.nodes)
                    .enumerate()
                    .all(|(i, (a, b))| {
                        a.name == b.name && a.len == b.len && (split.local[i] || a.n == b.n)
                    });
            if !same {
                return Err(SplitError::Mismatch(format!(
                    "shard {s} is not the model of shard 0 on other rows"
                )));
            }
        }
        let order = order.unwrap_or_else(|| first.default_order());
        let mut steps: Vec<Step> = Vec::new();
        for id in order {
            if id.0 >= split.local.len() {
                return Err(SplitError::Mismatch(format!(
                    "node {} is not in the model",
                    id.0
                )));
            }
            match steps.last_mut() {
                _ if !split.local[id.0] => steps.push(Step::Global(id)),
                Some(Step::Locals(ids)) => ids.push(id),
                _ => steps.push(Step::Locals(vec![id])),
            }
        }
        let observed_values = shards.iter().map(|v| v.observed_values()).sum::<usize>();
        Ok(Sharded {
            shards,
            split,
            steps,
            observed_values: observed_values.max(1),
            weight: 1.0,
        })
    }

    /// Weighs the shards' data by `w` (see `Sharded::weight`): a subsample of m of N rows with
    /// w = N/m. Every local message and local bound term is multiplied by `w`.
    pub(in crate::engine) fn set_weight(&mut self, w: f64) {
        self.weight = w;
    }

    /// Sweeps in `order` from now on (the run's schedule; [`Sharded::new`] takes the default).
    pub(in crate::engine) fn set_order(&mut self, order: &[NodeId]) {
        let mut steps: Vec<Step> = Vec::new();
        for &id in order {
            match steps.last_mut() {
                _ if !self.split.local[id.0] => steps.push(Step::Global(id)),
                Some(Step::Locals(ids)) => ids.push(id),
                _ => steps.push(Step::Locals(vec![id])),
            }
        }
        self.steps = steps;
    }

    /// The shards, to change their local state (the pruning screen's deletions).
    pub(in crate::engine) fn shards_mut(&mut self) -> &mut [Vmp] {
        &mut self.shards
    }

    /// Every local step of the schedule once on every shard, from the current globals.
    pub(in crate::engine) fn update_locals(&mut self) -> Result<(), RunError> {
        for step in self.steps.clone() {
            if let Step::Locals(ids) = step {
                for s in 0..self.shards.len() {
                    self.locals(s, &ids)?;
                }
            }
        }
        Ok(())
    }

    /// Each shard's local bound terms (unweighted).
    pub(in crate::engine) fn local_terms(&self) -> Vec<f64> {
        self.shards
            .iter()
            .map(|v| v.split_bound(&self.split).0)
            .collect()
    }

    /// The split (which nodes are local).
    pub fn split(&self) -> &Split {
        &self.split
    }

    /// The shards.
    pub fn shards(&self) -> &[Vmp] {
        &self.shards
    }

    /// The shards, given back (in order).
    pub fn into_shards(self) -> Vec<Vmp> {
        self.shards
    }

    /// Starts every shard from the rows of `full`, a single-process compilation of the model on
    /// all the data, started (so both fits start alike): shard s takes the rows after those of
    /// shards 0..s.
    pub fn start_from(&mut self, full: &Vmp) -> Result<(), SplitError> {
        let full_split = full.split(Some(&self.split.plate))?;
        let mut offset = 0;
        for v in &mut self.shards {
            let rows = v.plate_size(&self.split.plate);
            v.set_state(
                &self.split,
                &full.rows_state(&full_split, offset, offset + rows)?,
            )?;
            offset += rows;
        }
        Ok(())
    }

    /// A start without the full data: every shard starts (Winn §2.5.1) from `seed + s`; shard 0's
    /// globals are then updated once from its own rows (so a start that carries information, a
    /// mixture index's k-means++, reaches them) and copied to every shard, and the other shards'
    /// locals are updated once from these globals (so their labels agree with shard 0's).
    pub fn start(&mut self, seed: u64) -> Result<(), RunError> {
        for (s, v) in self.shards.iter_mut().enumerate() {
            v.initialize(seed.wrapping_add(s as u64))?;
        }
        let split = self.split.clone();
        let (first, rest) = self.shards.split_first_mut().expect("at least one shard");
        for step in &self.steps {
            if let Step::Global(g) = step {
                first.update(*g)?;
            }
        }
        let globals = first.global_state(&split);
        for v in rest {
            v.set_global_state(&split, &globals)
                .map_err(|e| RunError::Schedule(e.to_string()))?;
            for step in &self.steps {
                if let Step::Locals(ids) = step {
                    for &id in ids {
                        v.update(id)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// One global's update: every shard's local messages summed exactly and rounded once
    /// ([`exact_sums`]: the same bits in any shard order, and as `occam.distributed`'s
    /// reduction), then the same update on every replica. Messages without a sum (a NaN, or
    /// +inf with −inf) are an error naming the global.
    fn reduce(&mut self, g: NodeId) -> Result<(), RunError> {
        let split = &self.split;
        let messages: Vec<Vec<f64>> = self
            .shards
            .iter()
            .map(|v| v.local_messages(split, g))
            .collect();
        let mut total = exact_sums(messages.iter().map(|m| &m[..]))
            .map_err(|e| e.messages_to(&self.shards[0].nodes[g.0].name))?;
        if self.weight != 1.0 {
            total.iter_mut().for_each(|v| *v *= self.weight);
        }
        for v in &mut self.shards {
            v.update_global(split, g, total.clone())?;
        }
        Ok(())
    }

    /// Runs the local steps `ids` on shard s.
    fn locals(&mut self, s: usize, ids: &[NodeId]) -> Result<(), RunError> {
        ids.iter().try_for_each(|&id| self.shards[s].update(id))
    }

    /// One sweep of the schedule over every shard; returns the bound after it.
    pub fn sweep(&mut self) -> Result<f64, RunError> {
        for step in self.steps.clone() {
            match step {
                Step::Locals(ids) => {
                    for s in 0..self.shards.len() {
                        self.locals(s, &ids)?;
                    }
                }
                Step::Global(g) => self.reduce(g)?,
            }
        }
        Ok(self.bound())
    }

    /// One pass of memoized VB (Hughes & Sudderth 2013): for each shard in turn, its local steps
    /// (from the current globals), then every global's update from the sum over all shards, whose
    /// other shards' local q are those cached from their last visit (the engine's per-node sums,
    /// `NodeCache`, make their messages a product of cached statistics with the globals). Every
    /// step is a coordinate step on the whole bound, so the bound never decreases, and a fixed
    /// point of the pass is one of the batch sweep. Returns the bound after the pass.
    pub fn memoized_pass(&mut self) -> Result<f64, RunError> {
        for s in 0..self.shards.len() {
            for step in self.steps.clone() {
                match step {
                    Step::Locals(ids) => self.locals(s, &ids)?,
                    Step::Global(g) => self.reduce(g)?,
                }
            }
        }
        Ok(self.bound())
    }

    /// The bound: every shard's local terms, summed exactly and rounded once ([`exact_sum`], as
    /// the messages; NaN when they have no sum), times the weight (1 unless a subsample's), plus
    /// the globals' terms — Winn (2.31).
    pub fn bound(&self) -> f64 {
        let global = self.shards[0].split_bound(&self.split).1;
        let local = exact_sum(self.local_terms()).unwrap_or(f64::NAN);
        global + self.weight * local
    }

    /// Sweeps (or memoized passes) until the bound's change per observed value is at most `tol`,
    /// or `max_iter`; a decrease beyond round-off ([`check_decrease`] with
    /// [`Sharded::decrease_allowance`]) is an error, as every step is a coordinate ascent step on
    /// the bound.
    pub fn run(
        &mut self,
        max_iter: usize,
        tol: f64,
        memoized: bool,
    ) -> Result<ShardedFit, RunError> {
        self.run_observed(max_iter, tol, memoized, true, &mut |_, _, _| Flow::Continue)
            .map(|(fit, _)| fit)
    }

    /// [`Sharded::run`] that calls `see(sweep, bound, change)` after every sweep (pass) — a
    /// [`Flow::Stop`] ends the run with [`RunError::Interrupted`] — and, unless
    /// `decrease_is_error`, records a decrease as a [`Warning::BoundDecreased`] and goes on, as a
    /// single-process fit does without `--strict`.
    pub fn run_observed(
        &mut self,
        max_iter: usize,
        tol: f64,
        memoized: bool,
        decrease_is_error: bool,
        see: &mut dyn FnMut(usize, f64, Option<f64>) -> Flow,
    ) -> Result<(ShardedFit, Vec<Warning>), RunError> {
        let mut trace: Vec<f64> = Vec::new();
        let mut warnings = Vec::new();
        for iteration in 1..=max_iter {
            let l = if memoized {
                self.memoized_pass()?
            } else {
                self.sweep()?
            };
            let prev = trace.last().copied();
            trace.push(l);
            if see(iteration, l, prev.map(|p| l - p)) == Flow::Stop {
                return Err(RunError::Interrupted { iteration });
            }
            let Some(prev) = prev else { continue };
            check_decrease(
                prev,
                l,
                || self.decrease_allowance(),
                iteration,
                || "(sharded sweep)".into(),
                decrease_is_error,
                &mut warnings,
            )?;
            if (l - prev).abs() / self.observed_values as f64 <= tol {
                let fit = ShardedFit {
                    bound_trace: trace,
                    converged: true,
                };
                return Ok((fit, warnings));
            }
        }
        let fit = ShardedFit {
            bound_trace: trace,
            converged: false,
        };
        Ok((fit, warnings))
    }

    /// What two of the sharded bounds may differ by with no real decrease ([`check_decrease`]):
    /// twice the shards' summed round-off, or the Monte Carlo allowance of their summed
    /// importance-sampled variance ([`sampling_allowance`]), whichever is larger. A global's
    /// terms are counted on every replica, which only widens the allowance by their round-off.
    pub fn decrease_allowance(&self) -> f64 {
        shards_allowance(
            self.shards
                .iter()
                .map(|v| (v.bound_roundoff(), v.sampling_variance())),
        )
    }

    /// The number of f64 values that travel per sweep between the shards and the reduction: for
    /// every global step, each shard's n·len message values up and the n·len sum back down.
    pub fn values_per_sweep(&self) -> usize {
        let v = &self.shards[0];
        let per: usize = self
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Global(g) => Some(v.nodes[g.0].n * v.nodes[g.0].len),
                Step::Locals(_) => None,
            })
            .sum();
        2 * per * self.shards.len()
    }
}

/// What two bounds summed over shards may differ by with no real decrease, from each shard's
/// `(bound_roundoff, sampling_variance)`: twice the summed round-off, or the Monte Carlo allowance
/// of the summed variance ([`sampling_allowance`]), whichever is larger ([`check_decrease`]). The
/// one allowance of every sharded loop: [`Sharded::decrease_allowance`] and the surfaces that run
/// the shards elsewhere (`occam.distributed`).
pub fn shards_allowance(parts: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let (roundoff, variance) = parts
        .into_iter()
        .fold((0.0, 0.0), |(r, v), (a, b)| (r + a, v + b));
    (2.0 * roundoff).max(sampling_allowance(variance))
}

impl Vmp {
    /// The size of plate `name` (0 if the model has no such plate).
    pub fn plate_size(&self, name: &str) -> usize {
        self.plates
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |p| p.1)
    }
}
