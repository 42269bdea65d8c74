//! Importance-sampled nodes — Winn §4.4, (4.13)–(4.21), with erratum E5's bound term.
//!
//! The block of a scalar Gaussian-moment node x whose q has a factor outside the exponential
//! family: its own prior is a [`crate::dist::TruncatedGaussian`] or a [`crate::dist::GaussianMixture2`], or it is
//! the mean of observed [`StudentT`] children (Winn's observed non-exponential-family node Z). Per
//! element, the optimal q is
//!
//!   q(x) ∝ exp(φ_c·u(x) + ℓ(x)),  φ_c = ⟨φ_prior⟩ + Σ conjugate child messages  (Winn (2.19)),
//!
//! where the prior's φ is its Gaussian envelope and ℓ the log of what is left: the prior's log
//! density over its envelope, plus Σ ln t_ν(y | x, s) over the Student-t children that read the
//! element (their messages are zero, so φ_c is Winn's proposal "omitting Z's message", (4.16)).
//! `estimate` samples it (module docs there), and x adopts the weighted moments (4.20) as the
//! Gaussian with those moments: every other part of the engine (children's messages and terms,
//! reports, restarts) reads an ordinary Gaussian q.
//!
//! Bound term. With ln q = φ_c·u + ℓ − ln Z, the element's term ⟨ln p(x | pa)⟩ + ⟨Σ ln t⟩ − ⟨ln q⟩
//! is (⟨φ_prior⟩ − φ_c)·⟨u⟩ − ⟨A_prior⟩ + ln Z: the ⟨ℓ⟩ of the prior and the likelihood cancel
//! against q's own, so the term needs no ⟨ℓ⟩ estimate (E5 suggests Σ w_s ln P(Z | pa⁽ˢ⁾) for it;
//! here it drops out exactly). ln Z and ⟨u⟩ are the sampled ones, so the term is an estimate
//! (`Approximate`). Its Monte Carlo error is about √(1/S_eff − 1/S) in ln Z.
//!
//! Closed form. When no Student-t value reads an element and the prior knows its tilted form
//! ([`crate::dist::SampledPrior::tilted_moments`]: a mixture of tilted Gaussians, a tilted
//! truncated Gaussian), q(x) = p(x) exp(m·u)/C for the children's message m, and ⟨u⟩ and
//! ln Z = A_prior + ln C are closed form: nothing is sampled (S = 0 in `a` marks it), the update
//! is a deterministic function of m (so fits reach fixed points), and the term is
//! ln C − m·⟨u⟩ = ⟨ln p⟩ − ⟨ln q⟩ exactly: a node whose every element is in closed form says
//! `Exact` ([`Sampled::quality`]).
//!
//! Storage: the node's `a` holds, per element, A of the adopted Gaussian (n entries), then
//! ln Z − φ_c·⟨u⟩ (the element's own part of the term), then S and S_eff of its last update, then
//! the sampler's key drawn from the run's seed at the start, then the refits of each element's
//! plan (module `estimate`; −1 until its first update), then the variances of the estimates of
//! ⟨x⟩ and ⟨x²⟩ (`Estimate::var_u`), the φ_c of the last update (two entries) and the variance of
//! the bound's change at that update that the moments' noise explains ([`Vmp::sampling_variance`]),
//! and last the index in the whole data of the node's element 0 (0 but on a shard), so that
//! restart snapshots carry them and a seed gives the same bits whatever the thread count and
//! however the rows are sharded (each element's draws are keyed by seed, key, node, the
//! element's index in the whole data and pass). Module `layout` indexes it.

mod estimate;
mod layout;

use super::factorised::factorised_send;
use super::qblock::QBlock;
use super::*;
use crate::dist::{Sampling, StudentT};
use estimate::{estimate, First, Plan};
use layout::{at, base, base_at, key_at, started_len, Slot};
pub(super) use layout::{saved_a_fits, upgrade_saved_a};

/// What an importance-sampled node reports: its S and S_eff per element, and the S_eff it
/// aimed at (below it at the cap: a warning).
#[derive(Clone, Debug, PartialEq)]
pub struct SampledNode {
    /// The node's name.
    pub name: String,
    /// S of each sampled latent element's last update (elements in closed form left out).
    pub samples: Vec<usize>,
    /// S_eff = 1/Σ w² of each sampled latent element's last update.
    pub s_eff: Vec<f64>,
    /// The variances of each sampled element's estimates of ⟨x⟩ and ⟨x²⟩ at its last update
    /// (delta method, about Var_q/S_eff).
    pub moment_variance: Vec<[f64; 2]>,
    /// For each sampled element, the variance of the change of the bound at its last update that
    /// the moments' Monte Carlo error explains ([`Vmp::sampling_variance`]; 0 at the start).
    pub shift_variance: Vec<f64>,
    /// How many latent elements had q in closed form at their last update (no Student-t value
    /// reads them and the prior's tilted form is known): not sampled, no S or S_eff.
    pub closed_form: usize,
    /// The sampler's settings.
    pub sampling: Sampling,
}

impl SampledNode {
    /// Whether some element ended with S_eff below the target: the adaptation keeps a pass at the
    /// target or above unless S reached the cap (or every larger pass had no positive weight).
    pub fn capped(&self) -> bool {
        self.s_eff.iter().any(|&s| s < self.sampling.target)
    }
}

/// The block of an importance-sampled node (module docs).
#[derive(Clone, Debug)]
pub(crate) struct Sampled {
    node: [usize; 1],
    /// The Student-t children reading x as their mean.
    children: Vec<usize>,
    /// For each element of x, the (child, child element) pairs that read it.
    links: Vec<Vec<(u32, u32)>>,
    sampling: Sampling,
}

fn student(nodes: &[Node], c: usize) -> Option<&StudentT> {
    match nodes[c].dist() {
        Some(Dist::StudentT(t)) => Some(t),
        _ => None,
    }
}

/// The Student-t children of node i that read it directly in their mean slot.
fn t_children(nodes: &[Node], i: usize) -> Vec<usize> {
    let mut out: Vec<usize> = nodes[i]
        .children
        .iter()
        .filter(|&&(c, role)| role == Role::Slot(0) && student(nodes, c).is_some())
        .map(|&(c, _)| c)
        .collect();
    out.dedup();
    out
}

/// Whether stochastic node i is importance sampled: a truncated or mixture prior, or a scalar
/// Gaussian read by Student-t children.
pub(super) fn needs_sampling(nodes: &[Node], i: usize) -> bool {
    match nodes[i].dist() {
        Some(d) if d.sampled_prior().is_some() => true,
        Some(Dist::Gaussian(_)) => !t_children(nodes, i).is_empty(),
        _ => false,
    }
}

impl Sampled {
    pub(super) fn new(nodes: &[Node], i: usize) -> Self {
        let children = t_children(nodes, i);
        let mut links = vec![Vec::new(); nodes[i].n];
        for (k, &c) in children.iter().enumerate() {
            let edge = &nodes[c].parents[0];
            for e in 0..nodes[c].n {
                links[edge.at(e * nodes[c].configs)].push((k as u32, e as u32));
            }
        }
        let sampling = match nodes[i].dist().and_then(Dist::sampled_prior) {
            Some(p) => p.sampling(),
            None => children
                .first()
                .and_then(|&c| student(nodes, c))
                .map(|t| t.sampling)
                .unwrap_or_default(),
        };
        Sampled {
            node: [i],
            children,
            links,
            sampling,
        }
    }

    /// The first Student-t child of the node that `on_rows` marks (the data plate's nodes of a
    /// sharded fit): its likelihood, a term of ℓ, lives on the shards' rows.
    pub(super) fn child_on_rows(&self, on_rows: &[bool]) -> Option<usize> {
        self.children.iter().copied().find(|&c| on_rows[c])
    }

    /// ℓ(x) of element e (module docs).
    fn ell(&self, vmp: &Vmp, e: usize, x: f64) -> f64 {
        let own = vmp.nodes[self.node[0]]
            .dist()
            .and_then(Dist::sampled_prior)
            .map_or(0.0, |p| p.log_ratio(x));
        own + self.likelihood(vmp, e, x)
    }

    /// Σ ln t_ν(y | x, s) over the observed Student-t values that read element e.
    fn likelihood(&self, vmp: &Vmp, e: usize, x: f64) -> f64 {
        let mut total = 0.0;
        for &(k, ce) in &self.links[e] {
            let c = &vmp.nodes[self.children[k as usize]];
            let ce = ce as usize;
            if c.is_observed(ce) {
                let t = student(&vmp.nodes, self.children[k as usize]).expect("a Student-t");
                total += t.ln_density(c.q.u[2 * ce], x);
            }
        }
        total
    }

    /// Samples every latent element of x from φ_c = prior + `messages` (none: the prior alone)
    /// and installs the adopted Gaussians.
    fn sample(&self, vmp: &mut Vmp, messages: Option<&[f64]>, key: u64) -> Result<(), RunError> {
        let i = self.node[0];
        let node = &vmp.nodes[i];
        let n = node.n;
        let sampling = Sampling {
            seed: self.sampling.seed ^ key,
            ..self.sampling
        };
        let dist = node.dist().expect("stochastic");
        let priors = dist.visit(Priors { vmp, i });
        let prior = dist.sampled_prior();
        // Element e's index in the whole data (module `layout`): its draws' key.
        let base0 = base(&node.q.a, n);
        let latent: Vec<usize> = (0..node.n)
            .filter(|&e| !node.is_observed(e) && node.participates(e))
            .collect();
        let results: Vec<Result<Sampled1, (usize, String)>> = latent
            .par_iter()
            .map(|&e| {
                let (mut phi, a_prior) = priors[e];
                let m = messages.map_or([0.0; 2], |m| [m[2 * e], m[2 * e + 1]]);
                phi[0] += m[0];
                phi[1] += m[1];
                // No Student-t value reads the element: q is the prior tilted by the message, in
                // closed form (module docs), with ln Z = A_prior + ln C.
                if self.links[e].is_empty() {
                    if let Some((ln_c, mv)) = prior.and_then(|p| p.tilted_moments(m)) {
                        return Ok((e, phi, estimate::Estimate::closed(mv, a_prior + ln_c)));
                    }
                }
                let ell = |x: f64| self.ell(vmp, e, x);
                // The prior's own proposal, tilted by the Gaussian message; it is q itself when
                // no Student-t value reads the element (module `estimate`).
                let first = match prior.and_then(|p| p.tilted(m)) {
                    Some(p) => First::Prior(p, self.links[e].is_empty()),
                    None => First::Gaussian,
                };
                // The element's plan, chosen at its first update after the start (module
                // `estimate`): S in `a`'s S slot, the refits after the key, −1 before then.
                let plan = (messages.is_some() && node.q.a.len() == started_len(n))
                    .then(|| {
                        let a = &node.q.a;
                        (a[at(Slot::Samples, n, e)], a[at(Slot::Refits, n, e)])
                    })
                    .filter(|&(s, r)| s > 0.0 && r >= 0.0)
                    .map(|(s, r)| Plan {
                        samples: s as usize,
                        refits: r as u64,
                    });
                estimate(
                    phi,
                    &ell,
                    first,
                    &sampling,
                    [i as u64, base0 + e as u64],
                    plan,
                )
                .map(|est| (e, phi, est))
                .map_err(|what| (e, what))
            })
            .collect();
        let mut q = node.q.clone();
        let before = (q.a.len() == started_len(n)).then(|| q.a.clone());
        q.a.resize(started_len(n), 0.0);
        q.a[key_at(n)] = key as f64;
        q.a[base_at(n)] = base0 as f64;
        for r in results {
            // Errors name the element by its index in the whole data (module `layout`).
            let at_e = |e: usize| (base0 as usize).saturating_add(e);
            let (e, phi_c, est) = r.map_err(|(e, what)| vmp.numerical(i, at_e(e), what))?;
            let phi = adopted(&est).map_err(|what| vmp.numerical(i, at_e(e), what))?;
            q.phi[2 * e..2 * e + 2].copy_from_slice(&phi);
            q.a[e] = crate::dist::Gaussian
                .moments(&phi, &mut q.u[2 * e..2 * e + 2])
                .map_err(|err| vmp.numerical(i, at_e(e), err.0.into()))?;
            q.u[2 * e..2 * e + 2].copy_from_slice(&est.u);
            let shift = before
                .as_deref()
                .map_or(0.0, |old| moment_shift(old, n, e, phi_c, est.var_u));
            let slots = [
                (
                    Slot::Own,
                    est.log_z - phi_c[0] * est.u[0] - phi_c[1] * est.u[1],
                ),
                (Slot::Samples, est.samples as f64),
                (Slot::SEff, est.s_eff),
                (
                    Slot::Refits,
                    if messages.is_some() {
                        est.refits as f64
                    } else {
                        -1.0
                    },
                ),
                (Slot::VarX, est.var_u[0]),
                (Slot::VarX2, est.var_u[1]),
                (Slot::Phi0, phi_c[0]),
                (Slot::Phi1, phi_c[1]),
                (Slot::Shift, shift),
            ];
            for (slot, v) in slots {
                q.a[at(slot, n, e)] = v;
            }
        }
        let node = &mut vmp.nodes[i];
        node.q = q;
        node.lazy = Default::default();
        vmp.changed(i);
        vmp.refresh_dependents(i);
        Ok(())
    }

    /// What the node reports (`None` before its first update).
    pub(super) fn report(&self, vmp: &Vmp) -> Option<SampledNode> {
        let node = &vmp.nodes[self.node[0]];
        let n = node.n;
        if node.q.a.len() != started_len(n) {
            return None;
        }
        let latent: Vec<usize> = (0..n)
            .filter(|&e| !node.is_observed(e) && node.participates(e))
            .collect();
        // S = 0 marks an element whose q was in closed form (`Estimate::closed`).
        let a = &node.q.a;
        let sampled: Vec<usize> = latent
            .iter()
            .copied()
            .filter(|&e| a[at(Slot::Samples, n, e)] > 0.0)
            .collect();
        let each = |slot| sampled.iter().map(|&e| a[at(slot, n, e)]).collect();
        Some(SampledNode {
            name: node.name.clone(),
            samples: sampled
                .iter()
                .map(|&e| a[at(Slot::Samples, n, e)] as usize)
                .collect(),
            s_eff: each(Slot::SEff),
            moment_variance: sampled
                .iter()
                .map(|&e| [a[at(Slot::VarX, n, e)], a[at(Slot::VarX2, n, e)]])
                .collect(),
            shift_variance: each(Slot::Shift),
            closed_form: latent.len() - sampled.len(),
            sampling: self.sampling,
        })
    }

    /// The kind of the node's bound term: `Exact` when every latent element's q was in closed
    /// form at its last update (the term ln C − m·⟨u⟩ is then ⟨ln p⟩ − ⟨ln q⟩ itself) and every
    /// child reads x only through ⟨x⟩ and ⟨x²⟩, else `Approximate` (an estimate; also before the
    /// first update). A non-conjugate child below x (a logit or log link, through deterministic
    /// nodes) takes its expectation under the Gaussian with q's two moments, not under q (a
    /// mixture or truncated density), so its term, and the total, would not be a bound: the node
    /// says `Approximate` then.
    pub(super) fn quality(&self, vmp: &Vmp) -> crate::dist::BoundQuality {
        let linear_children = !super::noncj::needs_checked_step(&vmp.nodes, self.node[0]);
        match self.report(vmp) {
            Some(r) if r.samples.is_empty() && linear_children => crate::dist::BoundQuality::Exact,
            _ => crate::dist::BoundQuality::Approximate,
        }
    }
}

/// The variance of the change of element e's bound term at an update from φ_c (in `old`, the
/// node's `a` before it) to `phi_c`, that the Monte Carlo error of the moment estimates explains
/// (0 when either update was in closed form, or before the first).
///
/// Reasoning. The element's term is ln Ẑ(φ_c) − φ_c·û, and the rest of the bound reads û
/// through ⟨φ_prior⟩ + m, so between the two updates the bound's dependence on the element is
/// ln Ẑ(φ_c) + (φ_c' − φ_c)·û(φ_c) before and ln Ẑ(φ_c') after (φ_c' = ⟨φ_prior⟩ + m now). The
/// exact change ln Z(φ_c') − ln Z(φ_c) − Δφ·u(φ_c) is ≥ 0 (ln Z is convex, its gradient u). The
/// estimate's error in it is [ε_lnZ(φ_c') − ε_lnZ(φ_c)] − Δφ·ε_u(φ_c). The draws are common to
/// the two updates (module `estimate`), so the bracket is first order in Δφ: Δφ times the error
/// of ln Ẑ's gradient, which (the proposal moving with φ_c) is an error of the size of ε_u at φ_c'
/// rather than equal to ε_u(φ_c). Taking no cancellation between the two, the change's error has
/// sd at most Σ_k |Δφ_k| (sd_k(φ_c) + sd_k(φ_c')), sd_k the estimates' sd of ⟨x⟩ (k = 0) and ⟨x²⟩
/// (k = 1); its square is returned. ln Ẑ's own noise at a fixed φ_c is the (1/S_eff − 1/S) part.
fn moment_shift(old: &[f64], n: usize, e: usize, phi_c: [f64; 2], var_u: [f64; 2]) -> f64 {
    if old[at(Slot::Samples, n, e)] <= 0.0 || var_u == [0.0; 2] {
        return 0.0;
    }
    let was = [old[at(Slot::VarX, n, e)], old[at(Slot::VarX2, n, e)]];
    let phi_was = [old[at(Slot::Phi0, n, e)], old[at(Slot::Phi1, n, e)]];
    let sd: f64 = (0..2)
        .map(|k| (phi_c[k] - phi_was[k]).abs() * (was[k].sqrt() + var_u[k].sqrt()))
        .sum();
    sd * sd
}

/// The natural parameters [m/v, −1/(2v)] of the Gaussian an element adopts (Winn (4.20)) from
/// the estimate's mean m and variance v (formed about the mean, `Estimate::var`); else why no
/// Gaussian represents them and what to do, for the sampled and the closed-form path.
fn adopted(est: &estimate::Estimate) -> Result<[f64; 2], String> {
    let (mean, var) = (est.u[0], est.var);
    let prec = 1.0 / var;
    if var > 0.0 && prec.is_finite() && mean.is_finite() && (prec * mean).is_finite() {
        return Ok([prec * mean, -0.5 * prec]);
    }
    Err(if est.samples == 0 {
        format!(
            "q in closed form (the prior tilted by the Gaussian children's message) has mean \
             {mean:e} and variance {var:e}, which no Gaussian in f64 represents: the children pin \
             the value beyond what f64 resolves at that scale; rescale the data and the prior's \
             constants so the value is of order 1, or give the children's precision a broader prior"
        )
    } else {
        format!(
            "the {} importance samples (S_eff = {:.1}) have no spread about their mean {mean:e} \
             (variance {var:e}): the weight sits on one draw, the proposal missing q's mass; \
             rescale the data so the value is of order 1, or widen the Student-t scale",
            est.samples, est.s_eff
        )
    })
}

/// One element's sampling: the element, its φ_c and the estimate.
type Sampled1 = (usize, [f64; 2], estimate::Estimate);

/// ⟨φ_prior⟩ and ⟨A_prior⟩ of every element of node i.
struct Priors<'a> {
    vmp: &'a Vmp,
    i: usize,
}

impl DistVisitor for Priors<'_> {
    type Output = Vec<([f64; 2], f64)>;
    fn visit<D: ExpFamily>(self, d: &D) -> Self::Output {
        let (nodes, node) = (&self.vmp.nodes[..], &self.vmp.nodes[self.i]);
        let (mut tmp, mut buf) = ([0.0; 2], Vec::new());
        (0..node.n)
            .map(|e| {
                let mut phi = [0.0; 2];
                let a = elements::prior_of(d, nodes, node, e, &mut phi, &mut tmp, &mut buf);
                (phi, a)
            })
            .collect()
    }
}

impl QBlock for Sampled {
    fn members(&self) -> &[usize] {
        &self.node
    }

    fn update(&self, vmp: &mut Vmp, _member: usize) -> Result<(), RunError> {
        let messages = vmp.child_messages(self.node[0]);
        let a = &vmp.nodes[self.node[0]].q.a;
        let key = a
            .get(key_at(vmp.nodes[self.node[0]].n))
            .map_or(0, |&k| k as u64);
        let out = self.sample(vmp, Some(&messages), key);
        vmp.recycle(messages);
        out
    }

    /// Σ over elements of (⟨φ_prior⟩ − φ_c)·⟨u⟩ − ⟨A_prior⟩ + ln Z (module docs); an observed
    /// element's ⟨φ_prior⟩·u + f − ⟨A_prior⟩ + Σ ln t.
    fn bound(&self, vmp: &Vmp, _cache: &Cache, member: usize, sizes: bool) -> f64 {
        let node = &vmp.nodes[member];
        let n = node.n;
        let priors = node
            .dist()
            .expect("stochastic")
            .visit(Priors { vmp, i: member });
        let mut total = 0.0;
        for e in (0..n).filter(|&e| node.participates(e)) {
            let (phi, a) = priors[e];
            let u = &node.q.u[2 * e..2 * e + 2];
            let own = if node.is_observed(e) {
                node.q.a[e] + self.likelihood(vmp, e, u[0])
            } else if node.q.a.len() == started_len(n) {
                node.q.a[at(Slot::Own, n, e)]
            } else {
                f64::NEG_INFINITY
            };
            let dot = phi[0] * u[0] + phi[1] * u[1];
            total += if sizes {
                dot.abs() + a.abs() + own.abs()
            } else {
                dot - a + own
            };
        }
        total
    }

    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        factorised_send(vmp, member, role, out)
    }

    /// The start's structures, then q given the prior and the Student-t data alone; the run's
    /// seed gives the sampler's key (52 bits, kept exactly in `a`).
    fn start(&self, vmp: &mut Vmp, member: usize, rng: &mut Rng) -> Result<(), RunError> {
        use rand::Rng as _;
        vmp.start_stochastic(member, rng)?;
        let key = rng.random::<u64>() >> 12;
        self.sample(vmp, None, key)
    }
}

impl Vmp {
    /// The importance-sampled nodes' S and S_eff (module `sampled`), in node order.
    pub fn sampled_nodes(&self) -> Vec<SampledNode> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                qblock::Block::Sampled(s) => s.report(self),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod draw_tests;
#[cfg(test)]
mod tests;
