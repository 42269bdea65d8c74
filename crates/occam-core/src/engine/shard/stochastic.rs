//! Stochastic VB (Hoffman, Blei, Wang & Paisley 2013, "Stochastic variational inference", JMLR
//! 14): the globals move by natural-gradient steps computed from one minibatch of rows at a time,
//! so data that are read once (a stream, a file bigger than memory) or too many to sweep often
//! still reach the batch fit.
//!
//! For a conjugate-exponential model the natural gradient of the bound with respect to a global's
//! natural parameters λ is λ̂ − λ, where λ̂ is the global's coordinate update (Hoffman et al., eq.
//! (22)–(23); here Winn (2.19)): its prior's expected natural parameters plus the messages of its
//! children. A minibatch B drawn with probability p_B gives an unbiased estimate of λ̂ when the
//! messages of its local children are scaled by 1/p_B: N/|B| for |B| rows drawn uniformly (the
//! "intermediate global parameter", Hoffman et al., eq. (24)–(25)), S for one of S shards drawn
//! uniformly — which is N/|B| when the shards are even; N/|B| of an uneven shard would be biased
//! (E = (1/S) Σ_s (N/|B_s|) t_s ≠ Σ_s t_s) — and the step
//!
//!   λ ← (1 − ρ_t) λ + ρ_t λ̂_B,   ρ_t = (t + τ)^−κ,  κ ∈ (0.5, 1], τ ≥ 0, t = 1, 2, …
//!
//! (their eq. (26) and Figure 6) satisfies the Robbins–Monro conditions Σ ρ_t = ∞, Σ ρ_t² < ∞.
//! Before the step, the minibatch's local q are optimised given the current globals (their local
//! step). Globals are stepped in the schedule's order, each from the messages of the minibatch's
//! locals given the globals stepped before it (a stochastic coordinate ascent over the mean-field
//! globals). Natural-parameter spaces are convex, so the blend is a valid q.
//!
//! The bound. A minibatch's bound terms estimate only their share, and the steps do not promise
//! an increase; the bound reported is the full one — Winn (2.31) — at the current globals with
//! every row's local q optimised given them: each local step over all the data, then the sum of
//! every row's local terms and the globals' terms, evaluated every `bound_every` epochs. It is a
//! true lower bound on ln p(data) (a bound at a q), not an estimate.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::sweep::Step;
use super::*;
use crate::exactsum::ExactSum;

/// The step sizes and minibatch order of a stochastic fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SviOptions {
    /// The forgetting rate κ ∈ (0.5, 1] of ρ_t = (t + τ)^−κ.
    pub kappa: f64,
    /// The delay τ ≥ 0 of ρ_t = (t + τ)^−κ (it down-weights the first steps).
    pub tau: f64,
    /// The seed of the minibatch order (a random permutation of the shards per epoch).
    pub seed: u64,
    /// Evaluate the full bound every this many epochs (passes over the shards); ≥ 1.
    pub bound_every: usize,
    /// Minibatches of this many rows drawn at random, without replacement within an epoch
    /// (module `minibatch`); 0: each shard (chunk) is a minibatch.
    pub batch_rows: usize,
}

impl Default for SviOptions {
    fn default() -> Self {
        SviOptions {
            kappa: 0.7,
            tau: 1.0,
            seed: 0,
            bound_every: 1,
            batch_rows: 0,
        }
    }
}

impl SviOptions {
    /// Why these options are not valid, if they are not.
    pub fn check(&self) -> Result<(), RunError> {
        let bad = |what: String| Err(RunError::Schedule(what));
        if !(self.kappa > 0.5 && self.kappa <= 1.0) {
            return bad(format!(
                "κ = {}: the step sizes (t + τ)^−κ need κ in (0.5, 1] (Robbins–Monro)",
                self.kappa
            ));
        }
        if !(self.tau >= 0.0 && self.tau.is_finite()) {
            return bad(format!(
                "τ = {}: the delay must be finite and ≥ 0",
                self.tau
            ));
        }
        if self.bound_every == 0 {
            return bad("bound every 0 epochs: give 1 or more".into());
        }
        Ok(())
    }

    /// The step size of step t (t = 1, 2, …): ρ_t = (t + τ)^−κ, at most 1.
    pub fn rho(&self, t: u64) -> f64 {
        (t as f64 + self.tau).powf(-self.kappa).min(1.0)
    }
}

/// The order in which a stochastic fit visits its S minibatches: a fresh random permutation per
/// epoch, each one a shuffle of the last by a generator seeded with `seed` ([`crate::Rng`]).
/// Every surface draws its order from here (the CLI's [`Sharded::svi`], `occam.distributed`
/// through the Python binding), so one seed gives one run wherever it runs.
#[derive(Clone, Debug)]
pub struct EpochOrder {
    rng: crate::Rng,
    perm: Vec<usize>,
}

impl EpochOrder {
    /// The order of `minibatches` minibatches from `seed`.
    pub fn new(seed: u64, minibatches: usize) -> EpochOrder {
        EpochOrder {
            rng: crate::Rng::seed_from_u64(seed),
            perm: (0..minibatches).collect(),
        }
    }

    /// The next epoch's order: a permutation of 0..S.
    pub fn next_epoch(&mut self) -> &[usize] {
        self.perm.shuffle(&mut self.rng);
        &self.perm
    }
}

/// The globals of a stochastic fit and its step counter: steps one minibatch (a [`Vmp`] compiled
/// on some rows of the model, held by the caller: a shard, or a chunk of a file) at a time.
pub struct Svi {
    split: Split,
    locals: Vec<NodeId>,
    globals_order: Vec<NodeId>,
    state: GlobalState,
    options: SviOptions,
    t: u64,
}

impl Svi {
    /// A stochastic fit starting from the globals of `home` (a started replica), with the
    /// schedule `order` (default: `home`'s).
    pub fn new(
        home: &Vmp,
        split: Split,
        order: Option<Vec<NodeId>>,
        options: SviOptions,
    ) -> Result<Svi, RunError> {
        options.check()?;
        let order = order.unwrap_or_else(|| home.default_order());
        let (locals, globals_order) = order.into_iter().partition(|id| split.is_local(*id));
        Ok(Svi {
            state: home.global_state(&split),
            split,
            locals,
            globals_order,
            options,
            t: 0,
        })
    }

    /// The steps taken.
    pub fn steps(&self) -> u64 {
        self.t
    }

    /// The current globals.
    pub fn globals(&self) -> &GlobalState {
        &self.state
    }

    /// Sets `batch`'s globals to the current ones and optimises its local q given them: one pass
    /// of its local updates when one local node is updated (its update is then the optimum given
    /// the globals), else passes until its bound stops increasing (10⁻¹² relative, ≤ 100).
    pub fn local_step(&self, batch: &mut Vmp) -> Result<(), RunError> {
        batch
            .set_global_state(&self.split, &self.state)
            .map_err(|e| RunError::Schedule(e.to_string()))?;
        batch.optimise_locals(&self.split, &self.locals)
    }

    /// One step of stochastic VB on minibatch `batch`, drawn with probability 1/`scale`: its
    /// local step, then every global in the schedule's order from its children's messages
    /// scaled by `scale` and blended with step size ρ_t (module docs). Returns ρ_t.
    pub fn step(&mut self, batch: &mut Vmp, scale: f64) -> Result<f64, RunError> {
        if batch.plate_size(self.split.plate()) == 0 {
            return Err(RunError::Schedule("an empty minibatch".into()));
        }
        if !(scale >= 1.0 && scale.is_finite()) {
            return Err(RunError::Schedule(format!(
                "minibatch weight {scale}: the inverse of a probability, ≥ 1"
            )));
        }
        self.local_step(batch)?;
        self.t += 1;
        let rho = self.options.rho(self.t);
        for &g in &self.globals_order {
            let mut m = batch.local_messages(&self.split, g);
            m.iter_mut().for_each(|v| *v *= scale);
            batch.step_global(&self.split, g, m, rho)?;
        }
        self.state = batch.global_state(&self.split);
        Ok(rho)
    }

    /// `batch`'s share of the full bound at the current globals: its local step, then its local
    /// terms and the globals' terms (alike for every batch).
    pub fn bound_terms(&self, batch: &mut Vmp) -> Result<(f64, f64), RunError> {
        self.local_step(batch)?;
        Ok(batch.split_bound(&self.split))
    }
}

/// What a stochastic fit reached.
#[derive(Clone, Debug)]
pub struct SviFit {
    /// The full bound (module docs) after every `bound_every` epochs and after the last.
    pub bound_trace: Vec<f64>,
    /// The epoch of each entry of `bound_trace`.
    pub epochs: Vec<usize>,
    /// The steps taken (minibatches).
    pub steps: u64,
    /// Whether the bound's change per observed value between two evaluations fell to `tol`.
    pub converged: bool,
}

impl Sharded {
    /// Stochastic VB over the shards (module `stochastic`): each shard is a minibatch, visited in
    /// a random order per epoch (seeded), its local messages scaled by the number of shards S
    /// (each is drawn with probability 1/S per step: N/|B| for even shards); at most
    /// `epochs` passes, stopping when the full bound's change per observed value between two
    /// evaluations is at most `tol`. Afterwards every shard holds the final globals and its
    /// locals optimised given them. Starts from the shards' current state (e.g. [`Sharded::start`]).
    pub fn svi(
        &mut self,
        epochs: usize,
        tol: f64,
        options: SviOptions,
    ) -> Result<SviFit, RunError> {
        self.svi_observed(epochs, tol, options, &mut |_, _, _| Flow::Continue)
    }

    /// [`Sharded::svi`] that calls `see(epoch, bound, change)` after every evaluation of the
    /// bound; a [`Flow::Stop`] ends the run with [`RunError::Interrupted`].
    pub fn svi_observed(
        &mut self,
        epochs: usize,
        tol: f64,
        options: SviOptions,
        see: &mut SeeSweep<'_>,
    ) -> Result<SviFit, RunError> {
        self.svi_batches(epochs, tol, options, None, see)
    }

    /// [`Sharded::svi_observed`] whose minibatches are, with `options.batch_rows` > 0, rows drawn
    /// at random (module `minibatch`), each compiled by `make`; the order is drawn over the N rows
    /// from `options.seed`.
    pub fn svi_batches(
        &mut self,
        epochs: usize,
        tol: f64,
        options: SviOptions,
        mut make: Option<&mut MakeBatch<'_>>,
        see: &mut SeeSweep<'_>,
    ) -> Result<SviFit, RunError> {
        let order: Vec<NodeId> = self
            .steps
            .iter()
            .flat_map(|s| match s {
                Step::Locals(ids) => ids.clone(),
                Step::Global(g) => vec![*g],
            })
            .collect();
        let mut svi = Svi::new(&self.shards[0], self.split.clone(), Some(order), options)?;
        let minibatches = if options.batch_rows == 0 {
            self.shards.len()
        } else {
            self.total_rows()
        };
        let mut order = EpochOrder::new(options.seed, minibatches);
        let mut fit = SviFit {
            bound_trace: Vec::new(),
            epochs: Vec::new(),
            steps: 0,
            converged: false,
        };
        for epoch in 1..=epochs {
            self.svi_epoch(
                &mut svi,
                &mut order,
                options.batch_rows,
                make.as_deref_mut(),
            )?;
            if epoch % options.bound_every != 0 && epoch != epochs {
                continue;
            }
            // The shards' local terms summed exactly, rounded once (as the batch bound's).
            let mut global = 0.0;
            let mut local = ExactSum::new();
            for v in &mut self.shards {
                let (l, g) = svi.bound_terms(v)?;
                local.add(l);
                global = g;
            }
            let bound = local.rounded().unwrap_or(f64::NAN) + global;
            let prev = fit.bound_trace.last().copied();
            fit.bound_trace.push(bound);
            fit.epochs.push(epoch);
            if see(epoch, bound, prev.map(|p| bound - p)) == Flow::Stop {
                return Err(RunError::Interrupted { iteration: epoch });
            }
            if prev.is_some_and(|p| (bound - p).abs() / self.observed_values as f64 <= tol) {
                fit.converged = true;
                break;
            }
        }
        fit.steps = svi.steps();
        Ok(fit)
    }
}

impl Vmp {
    /// Optimises the local q given the globals: one pass of the updates of `locals` (local
    /// nodes) when there is one (its update is then the optimum given the globals), else passes
    /// until the local bound terms stop increasing (10⁻¹² relative, at most 100).
    pub fn optimise_locals(&mut self, split: &Split, locals: &[NodeId]) -> Result<(), RunError> {
        let passes = if locals.len() <= 1 { 1 } else { 100 };
        let mut last = f64::NEG_INFINITY;
        for _ in 0..passes {
            for &id in locals {
                self.update(id)?;
            }
            if passes > 1 {
                let l = self.split_bound(split).0;
                if l - last <= 1e-12 * l.abs() {
                    break;
                }
                last = l;
            }
        }
        Ok(())
    }

    /// A natural-gradient step on global `node` (Hoffman et al. 2013, eq. (26)): its coordinate
    /// update from `outside` ([`Vmp::update_global`], e.g. a minibatch's messages scaled by
    /// N/|B|) gives λ̂; its latent elements then take φ = (1 − ρ) φ_old + ρ λ̂ and their moments
    /// from it. ρ = 1 is [`Vmp::update_global`].
    pub fn step_global(
        &mut self,
        split: &Split,
        node: NodeId,
        outside: Vec<f64>,
        rho: f64,
    ) -> Result<(), RunError> {
        let i = node.0;
        if !(rho > 0.0 && rho <= 1.0) {
            return Err(RunError::Schedule(format!(
                "step size {rho} for `{}`: it must be in (0, 1]",
                self.nodes[i].name
            )));
        }
        if self.nodes[i].map {
            return Err(RunError::Schedule(format!(
                "`{}` is a point estimate (MAP): stochastic steps blend distributions",
                self.nodes[i].name
            )));
        }
        if rho == 1.0 {
            return self.update_global(split, node, outside);
        }
        // The blend below runs element by element: a gated block's W kept with one covariance
        // per component (`gated_linear/weights.rs`) is expanded per element before and after its
        // update (the blend of two such states is one too, but kept per element here it needs
        // no second code path; its next update groups it again).
        self.unshare(i);
        self.nodes[i].keep_natural();
        let old = self.nodes[i].q.phi.clone();
        self.update_global(split, node, outside)?;
        self.unshare(i);
        let Body::Stochastic(dist) = &self.nodes[i].body else {
            return Err(self.not_stochastic(i));
        };
        let dist = dist.clone();
        let n = &mut self.nodes[i];
        let mut q = std::mem::take(&mut n.q);
        let broke = dist.visit(Blend {
            node: n,
            old: &old,
            rho,
            q: &mut q,
        });
        n.q = q;
        n.lazy = Default::default();
        self.changed(i);
        self.refresh_dependents(i);
        match broke {
            None => Ok(()),
            Some((e, why)) => Err(RunError::Schedule(format!(
                "`{}` element {e}: a stochastic step left its domain: {why}",
                self.nodes[i].name
            ))),
        }
    }
}

/// φ = (1 − ρ) φ_old + ρ φ̂ of every latent element, then its u and A (module docs).
struct Blend<'a> {
    node: &'a Node,
    old: &'a [f64],
    rho: f64,
    q: &'a mut NodeState,
}

impl DistVisitor for Blend<'_> {
    type Output = Option<(usize, String)>;
    fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
        let (len, c, q) = (self.node.len, self.node, self.q);
        for e in (0..c.n).filter(|&e| !c.is_observed(e) && c.participates(e)) {
            let r = e * len..(e + 1) * len;
            for (p, o) in q.phi[r.clone()].iter_mut().zip(&self.old[r.clone()]) {
                *p = (1.0 - self.rho) * o + self.rho * *p;
            }
            match d.moments(&q.phi[r.clone()], &mut q.u[r]) {
                Ok(a) => q.a[e] = a,
                Err(err) => return Some((e, err.0.to_string())),
            }
        }
        None
    }
}
