//! The sweeps of one stage of a run (Winn Algorithm 1.1's loop): node updates in the schedule's
//! order, the bound after each sweep, the decrease check, the observer, and the stop at the
//! tolerance; and the settling rounds of a prefix of nodes that start from their priors.

use super::*;

impl Vmp {
    /// [`Vmp::sweeps`] for a trial judged against `floor` (a pruning trial, a further candidate
    /// start): it ends early once its bound cannot reach it ([`Watch::floor`]).
    pub(in crate::engine) fn sweeps_above(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
        floor: Option<f64>,
    ) -> Result<Sweeps, RunError> {
        watch.floor = floor;
        let run = self.sweeps(opts, order, watch);
        watch.floor = None;
        run
    }

    /// Sweeps until the bound's change per observed value is at most `tol`, or `max_iter` sweeps.
    pub(in crate::engine) fn sweeps(
        &mut self,
        opts: &RunOptions,
        order: &[NodeId],
        watch: &mut Watch<'_>,
    ) -> Result<Sweeps, RunError> {
        if !self.initialized {
            self.initialize(opts.seed)?;
        }
        let mut trace: Vec<f64> = Vec::new();
        let mut warnings = Vec::new();
        let observed_values = self.observed_values().max(1);
        let mut stop = Stop {
            reason: StopReason::MaxIter,
            change_per_value: None,
            tol: opts.tol,
            observed_values,
            max_iter: opts.max_iter,
        };
        let mut last = f64::NEG_INFINITY;
        // A sweep with a parallel loop runs on a pool thread, handed over once (and its bound
        // once): see `threads::in_pool`. A sweep without one stays on this thread, where every
        // loop already runs (`kernels::sequential`): a hand-off would only add two.
        let pool = self.has_parallel_work();
        for iteration in 1..=opts.max_iter {
            let mut order = order;
            if iteration == 1 && opts.settle {
                let (settling, rest) = order.split_at(self.uninformed_prefix(order));
                self.settle(settling, opts, observed_values, &mut warnings)?;
                order = rest;
            }
            let updates = |vmp: &mut Vmp, warnings: &mut Vec<Warning>, last: &mut f64| {
                for &id in order {
                    vmp.update(id)?;
                    // Until every factor has been updated once, initial moments (e.g. a one-hot
                    // draw) need not be consistent with φ, so L is only a bound from the second
                    // sweep on.
                    if opts.check_every_update && iteration > 1 {
                        let l = vmp.bound();
                        vmp.check_decrease(*last, l, iteration, id, opts, warnings)?;
                        *last = l;
                    }
                }
                Ok::<(), RunError>(())
            };
            if pool {
                crate::threads::in_pool(|| updates(self, &mut warnings, &mut last))?;
            } else {
                updates(self, &mut warnings, &mut last)?;
            }
            watch.observer.after_updates(self)?;
            let l = if pool {
                crate::threads::in_pool(|| self.bound())
            } else {
                self.bound()
            };
            if !l.is_finite() {
                // Name the node whose term is not finite (a prior so vague its ln p overflows,
                // e.g. a precision of 1e-310), so the error points at a variable of the model.
                let terms = self.node_bounds();
                let (node, what) = match terms.iter().position(|t| !t.is_finite()) {
                    Some(i) => (
                        self.nodes[i].name.clone(),
                        format!(
                            "its term of the bound is {} (the bound is {l}): a parameter too extreme for double precision?",
                            terms[i]
                        ),
                    ),
                    None => ("(bound)".into(), format!("bound is {l}")),
                };
                return Err(RunError::Numerical {
                    node,
                    element: 0,
                    what,
                });
            }
            let prev = trace.last().copied();
            if let Some(prev) = prev {
                let after = *order.last().unwrap_or(&NodeId(0));
                self.check_decrease(prev, l, iteration, after, opts, &mut warnings)?;
            }
            trace.push(l);
            last = l;
            let flow = watch.observer.observe(&Progress {
                restart: watch.restart,
                restarts: watch.restarts,
                iteration,
                max_iter: opts.max_iter,
                bound: l,
                change: prev.map(|p| l - p),
                elapsed: watch.start.elapsed(),
                stage: watch.stage,
            });
            if flow == Flow::Stop {
                return Err(RunError::Interrupted { iteration });
            }
            if let Some(prev) = prev {
                let change = (l - prev).abs() / observed_values as f64;
                stop.change_per_value = Some(change);
                if change <= opts.tol && !opts.fixed_sweeps {
                    stop.reason = StopReason::Converged;
                    break;
                }
            }
            if let (Some(floor), [.., a, b, c]) = (watch.floor, trace.as_slice()) {
                let (before, last) = (b - a, c - b);
                if last >= 0.0 && 2.0 * last <= before && c + PRUNE_REACH * last < floor {
                    break;
                }
            }
        }
        Ok(Sweeps {
            trace,
            warnings,
            stop,
        })
    }

    /// Whether some node holds more values than a loop runs on the calling thread
    /// (`kernels::sequential`): only then does a sweep have parallel work to hand to the pool.
    fn has_parallel_work(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| !crate::kernels::sequential(n.n * n.len))
    }

    /// The length of the leading part of `order` whose nodes start from their priors (see
    /// [`RunOptions::settle`]); 0 when no node of `order` has an informative start.
    fn uninformed_prefix(&self, order: &[NodeId]) -> usize {
        order
            .iter()
            .position(|id| !matches!(*self.start(id.0), super::super::Init::Prior))
            .unwrap_or(0)
    }

    /// Rounds of the updates `prefix` until the bound's change over a round is at most `tol`
    /// per observed value, or [`SETTLE_ROUNDS`]. The nodes after the prefix keep their starting
    /// moments throughout, so the bound's change over a round is the change the prefix made (a
    /// sum of coordinate-ascent steps, never negative, checked as every sweep is).
    fn settle(
        &mut self,
        prefix: &[NodeId],
        opts: &RunOptions,
        observed_values: usize,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), RunError> {
        if prefix.is_empty() {
            return Ok(());
        }
        let mut last = f64::NEG_INFINITY;
        for round in 1..=SETTLE_ROUNDS {
            for &id in prefix {
                self.update(id)?;
            }
            if round == SETTLE_ROUNDS {
                break;
            }
            let l = self.bound();
            if !l.is_finite() {
                break;
            }
            if round > 1 {
                let after = *prefix.last().expect("a non-empty prefix");
                self.check_decrease(last, l, 1, after, opts, warnings)?;
                if (l - last).abs() / observed_values as f64 <= opts.tol {
                    break;
                }
            }
            last = l;
        }
        Ok(())
    }
}
