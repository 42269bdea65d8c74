//! Candidate starts of a mixture ([`RunOptions::candidate_starts`]): the default k-means start
//! and [`RANDOM_STARTS`] starts from random labels are each run, and the state with the highest
//! bound is kept (Winn §2.5.1: the bound judges between local optima reached from different
//! initialisations, as between restarts). A random start whose bound cannot reach the best so
//! far ends early, by the rule of a rejected pruning trial (`Watch::floor`), so where the k-means
//! start is already good the others cost a few sweeps (N = 10⁶, D = 2, K = 10: 6 sweeps).
//!
//! Neither start dominates. k-means (Lloyd's squared distances, one spread assumed for every
//! cluster) evens out cluster sizes and splits a large cluster when there are surplus
//! components: a Bernoulli mixture with clusters of 3,684 and 117 points (N = 10⁴, D = 50) is
//! started with the large clusters split and the small ones merged, and a Gaussian mixture with
//! 40 components on 10 clusters with each cluster cut in four tight pieces. Mean-field VMP does
//! not leave either start (bench/results/issue25_*). Random labels start every component near
//! the data's overall statistics and let the components separate as the updates proceed (the
//! start of BayesPy's examples), which finds those optima but over-merges close clusters that
//! k-means separates (nine clusters on a grid of spacing 4 sd). One random start reached the better
//! optimum for 3 of 6 seeds on the N = 10⁴ Bernoulli mixture, two for all 6 (three: the same),
//! the measurements in bench/results/issue25_candidates_*.
//!
//! A caller may offer one more start for the next run ([`Vmp::offer_start`]: the plate sweep's
//! warm start from the previous size's fit). It runs after the other starts, from the same
//! seed with the offered nodes' starts replaced, and is judged by the same rule: its converged
//! bound against the best start's, both before the pruning stage, ending early once it cannot
//! get above it (`Watch::floor`). It is kept only where its bound is higher by more than its
//! margin, so where it is not, the run ends exactly as it would have without it.

use super::{Offered, OfferedStart, Stage, StopReason, Sweeps, Watch};
use crate::engine::{Init, Vmp};
use crate::error::RunError;
use crate::graph::NodeId;

use super::RunOptions;

/// How many random-label starts follow the k-means start ([`RunOptions::candidate_starts`]).
pub(super) const RANDOM_STARTS: usize = 2;

/// Distance between the seeds of successive random-label starts (2⁶⁴ over the golden ratio).
const SEED_STRIDE: u64 = 0x9E37_79B9_7F4A_7C15;

impl Vmp {
    /// The mixture indices that start from the default k-means labels (no `init` of their own).
    fn kmeans_started(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| {
                self.is_mixture_index(i)
                    && self.nodes[i].init.is_none()
                    && matches!(*self.start(i), Init::KMeansPlusPlus)
            })
            .collect()
    }

    /// Offers one more candidate start for the next run (module doc): restart 0, when it is
    /// initialised afresh, runs it after its other starts where `start.when` holds for the best
    /// of them, and its [`super::Fit::offered`] says what it did. The offer is used once.
    pub fn offer_start(&mut self, start: OfferedStart) {
        self.offered = Some(start);
    }

    /// The first sweeps of a restart initialised from `seed` (`None`: the run continues from a
    /// state it did not initialise, and only that state is run). With
    /// [`RunOptions::candidate_starts`] and a mixture index started by k-means, the same model
    /// is then initialised again, [`RANDOM_STARTS`] times, with the k-means-started indices
    /// drawn at random (`Init::Random`: one-hot labels from the prior) and run until converged
    /// or unable to reach the best bound so far; the state with the highest bound is kept (the
    /// earlier on a tie). Then the `offered` start, if any (module doc). Returns the kept
    /// sweeps (their trace, the warnings of every start), the number of sweeps of the others
    /// and what the offered start did.
    pub(super) fn candidate_sweeps(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        seed: Option<u64>,
        offered: Option<&OfferedStart>,
    ) -> Result<(Sweeps, usize, Option<Offered>), RunError> {
        let first = self.sweeps(opts, order, watch)?;
        let Some(seed) = seed else {
            return Ok((first, 0, None));
        };
        let indices = self.kmeans_started();
        let mut best = first;
        let mut other = 0;
        if opts.candidate_starts && !indices.is_empty() {
            for c in 0..RANDOM_STARTS {
                self.random_start(opts, order, watch, seed, c, &indices, &mut best, &mut other)?;
            }
        }
        let offered = match offered.filter(|o| (o.when)(self)) {
            Some(o) => {
                Some(self.offered_start(opts, order, watch, seed, o, &mut best, &mut other)?)
            }
            None => None,
        };
        Ok((best, other, offered))
    }

    /// Random start `c` of the k-means-started `indices` ([`Vmp::candidate_sweeps`]): kept in
    /// place of `best` where its bound is higher, its sweeps added to `other` otherwise.
    #[allow(clippy::too_many_arguments)]
    fn random_start(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        seed: u64,
        c: usize,
        indices: &[usize],
        best: &mut Sweeps,
        other: &mut usize,
    ) -> Result<(), RunError> {
        let kept = self.snapshot();
        for &i in indices {
            self.nodes[i].start_override = Some(Init::Random);
        }
        // The first random start draws from `seed` itself; further ones from seeds spread
        // far from `seed + r` (the restarts').
        let started = self.initialize(seed.wrapping_add(c as u64 * SEED_STRIDE));
        for &i in indices {
            self.nodes[i].start_override = None;
        }
        started?;
        let stage = std::mem::replace(&mut watch.stage, Stage::Candidate);
        // A start whose bound cannot reach the best one's ends early, as a pruning trial
        // does (`Watch::floor`).
        let next = self.sweeps_above(opts, order, watch, best.trace.last().copied());
        watch.stage = stage;
        let next = next?;
        self.keep_higher(next, 0.0, kept, best, other);
        Ok(())
    }

    /// The offered start `o` ([`Vmp::offer_start`]): initialised from `seed` with `o.starts`
    /// in place of those nodes' starts, run until converged or unable to pass `best` by
    /// `o.margin`, and kept in place of `best` where it does pass. A numerical failure of its
    /// run restores `best` and is reported, not raised; an interrupt is raised.
    #[allow(clippy::too_many_arguments)]
    fn offered_start(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        seed: u64,
        o: &OfferedStart,
        best: &mut Sweeps,
        other: &mut usize,
    ) -> Result<Offered, RunError> {
        let against = best.trace.last().copied().unwrap_or(f64::NEG_INFINITY);
        let kept = self.snapshot();
        for (id, init) in &o.starts {
            self.nodes[id.0].start_override = Some(init.clone());
        }
        let started = self.initialize(seed);
        for (id, _) in &o.starts {
            self.nodes[id.0].start_override = None;
        }
        let stage = std::mem::replace(&mut watch.stage, Stage::Candidate);
        let run =
            started.and_then(|()| self.sweeps_above(opts, order, watch, Some(against + o.margin)));
        watch.stage = stage;
        let next = match run {
            Ok(next) => next,
            Err(e @ RunError::Interrupted { .. }) => return Err(e),
            Err(e) => {
                self.restore(kept);
                return Ok(Offered {
                    bound: f64::NAN,
                    against,
                    kept: false,
                    ended_early: false,
                    sweeps: 0,
                    failed: Some(e.to_string()),
                });
            }
        };
        let bound = next.trace.last().copied().unwrap_or(f64::NEG_INFINITY);
        let sweeps = next.trace.len();
        let ended_early = next.stop.reason != StopReason::Converged && sweeps < opts.max_iter;
        let kept = self.keep_higher(next, o.margin, kept, best, other);
        Ok(Offered {
            bound,
            against,
            kept,
            ended_early,
            sweeps,
            failed: None,
        })
    }

    /// Keeps the start just run (`next`, whose state the model holds) in place of `best` where
    /// its last bound is above `best`'s by more than `margin`, else restores `best`'s state
    /// `kept`; the loser's sweeps go to `other`, every start's warnings to the kept one.
    /// Returns whether `next` was kept.
    fn keep_higher(
        &mut self,
        mut next: Sweeps,
        margin: f64,
        kept: Vec<super::NodeState>,
        best: &mut Sweeps,
        other: &mut usize,
    ) -> bool {
        let last = |s: &Sweeps| *s.trace.last().unwrap_or(&f64::NEG_INFINITY);
        if last(&next) > last(best) + margin {
            *other += best.trace.len();
            best.warnings.append(&mut next.warnings);
            next.warnings = std::mem::take(&mut best.warnings);
            *best = next;
            true
        } else {
            self.restore(kept);
            *other += next.trace.len();
            best.warnings.append(&mut next.warnings);
            false
        }
    }
}
