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

use super::{Stage, Sweeps, Watch};
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

    /// The first sweeps of a restart initialised from `seed` (`None`: the run continues from a
    /// state it did not initialise, and only that state is run). With
    /// [`RunOptions::candidate_starts`] and a mixture index started by k-means, the same model
    /// is then initialised again, [`RANDOM_STARTS`] times, with the k-means-started indices
    /// drawn at random (`Init::Random`: one-hot labels from the prior) and run until converged
    /// or unable to reach the best bound so far; the state with the highest bound is kept (the
    /// earlier on a tie). Returns the kept sweeps (their trace, the warnings of every start) and
    /// the number of sweeps of the others.
    pub(super) fn candidate_sweeps(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        seed: Option<u64>,
    ) -> Result<(Sweeps, usize), RunError> {
        let first = self.sweeps(opts, order, watch)?;
        let indices = self.kmeans_started();
        let Some(seed) = seed.filter(|_| opts.candidate_starts && !indices.is_empty()) else {
            return Ok((first, 0));
        };
        let mut best = first;
        let mut other = 0;
        for c in 0..RANDOM_STARTS {
            let kept = self.snapshot();
            for &i in &indices {
                self.nodes[i].start_override = Some(Init::Random);
            }
            // The first random start draws from `seed` itself; further ones from seeds spread
            // far from `seed + r` (the restarts').
            let started = self.initialize(seed.wrapping_add(c as u64 * SEED_STRIDE));
            for &i in &indices {
                self.nodes[i].start_override = None;
            }
            started?;
            let stage = std::mem::replace(&mut watch.stage, Stage::Candidate);
            // A start whose bound cannot reach the best one's ends early, as a pruning trial
            // does (`Watch::floor`).
            let next = self.sweeps_above(opts, order, watch, best.trace.last().copied());
            watch.stage = stage;
            let mut next = next?;
            let last = |s: &Sweeps| *s.trace.last().unwrap_or(&f64::NEG_INFINITY);
            if last(&next) > last(&best) {
                other += best.trace.len();
                best.warnings.append(&mut next.warnings);
                next.warnings = std::mem::take(&mut best.warnings);
                best = next;
            } else {
                self.restore(kept);
                other += next.trace.len();
                best.warnings.append(&mut next.warnings);
            }
        }
        Ok((best, other))
    }
}
