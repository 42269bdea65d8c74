//! Annealed importance sampling of the evidence (Neal 2001, "Annealed importance sampling";
//! Sahani, "Sampling Approximations"). Chains move from the prior to the posterior through the
//! tempered joints
//!
//!   π_β(θ, z) ∝ p(θ) p(z) p(D | z, θ)^β,   β = β_0 = 0 < β_1 < … < β_T = 1,
//!
//! whose normalisers are Z_0 = 1 (the prior) and Z_1 = p(D). A chain starts from a prior draw
//! and its log weight is Σ_t (β_t − β_{t−1}) ln p(D | z_{t−1}, θ_{t−1}) (under a weight prior
//! sparser than Dirichlet(1), plus the term of the path below), the state x_{t−1} having
//! been moved by a transition that leaves π_{β_{t−1}} invariant; the mean of the weights is
//! unbiased for p(D), and ln of the mean, its standard error (delta method) and the effective
//! sample size are summarised as importance sampling's are ([`super::importance::summarise`]).
//!
//! The transition is one Gibbs sweep: every row's component in turn given the others and θ, the
//! weights π integrated out (∝ (α + n_k^{−i}) p(x_i | θ_k)^β), then every other parameter given z
//! and the rest, in closed form because each is conjugate or
//! semi-conjugate to what reads it (a Gaussian mean given the precision, a Gamma precision given
//! the mean, Beta, Gamma–Poisson, Dirichlet), with the data's statistics multiplied by β. The
//! mixture index is annealed with the data: tempering the likelihood with z summed out,
//! p(D | θ)^β, would leave no conditional in closed form. Tempering the augmented joint gives the
//! same Z_0 and Z_1.
//!
//! **Sparse weight priors.** With the weights π ~ Dirichlet(α) integrated out, p(z) is the
//! Dirichlet–multinomial DM(z; α) = Γ(Kα)/Γ(N + Kα) Π_k Γ(n_k + α)/Γ(α). Under α ≪ 1 (the VIBES
//! tutorial's Dirichlet(0.001)) a draw from it puts (almost) every row in one component, and a
//! row joins an empty component with probability ∝ α p(x_i | θ_k)^β, θ_k a draw from a vague
//! prior: the chains rarely opened the components the data need (on small mixtures the estimate
//! missed the exact evidence by up to 12 standard errors). So where α < 1 the weights'
//! concentration is annealed too, along the geometric path
//!
//!   π_β(θ, z) ∝ DM(z; 1)^(1−β) DM(z; α)^β p(θ) p(D | z, θ)^β,
//!
//! whose start, DM(z; 1) p(θ), is normalised and drawn exactly (the Pólya urn with concentration
//! 1 spreads the rows over all K components), and whose end is the target joint. A row's
//! conditional stays closed form, ∝ (1 + n_k^{−i})^(1−β) (α + n_k^{−i})^β p(x_i | θ_k)^β (the
//! denominators N − 1 + K and N − 1 + Kα do not depend on k), and each increment of the log
//! weight gains (β_t − β_{t−1}) [ln DM(z; α) − ln DM(z; 1)] at the state before the move. The
//! chains start with every component populated and empty the ones the data do not need as
//! β → 1, which a Gibbs move does easily (leaving a component costs a factor α; entering one
//! costs α times a vague prior's density). Where α ≥ 1 the urn already spreads the rows and the
//! path is the one above, unchanged.
//!
//! **From q.** That is not enough where the priors on the components are vague too (the VIBES
//! tutorial's Gamma(0.001, 0.001) precisions): the chains drain a tight cluster's component in
//! mid-path and never re-open it, and end with one component in use. A mixture's chains
//! therefore start from the fitted q instead, b(θ, z)^(1−β) [p(θ) DM(z; α) p(D | z, θ)]^β with
//! b = q (module `ais_q`, which also handles the relabellings); the prior's path above is kept
//! for a mixture whose q lacks a part, and for hidden Markov chains.
//!
//! A hidden Markov chain (module `hmm`) is annealed the same way with z its state paths and
//! p(z | p0, A) the chain's prior: the transition draws every sequence's path at once from
//! p(z | p0, A) Π_t f(x_t | θ_{z_t})^β by forward filtering, backward sampling (module
//! `ais_chain`), then p0 and each row of A from their Dirichlet conditionals given the path's
//! counts, and the emission parameters as a mixture's.
//!
//! Positive parameters (Gamma precisions and rates, Beta and Dirichlet probabilities) are drawn
//! and kept as logarithms (a Gamma(a < 1) draw as ln G(a + 1) + ln U / a): under a vague prior
//! such as Gamma(0.001, 0.001) half the prior mass lies below the smallest positive double, and
//! clamping it there biased the estimate by most of a nat on the VIBES tutorial's one-component
//! model.
//!
//! Temperatures follow β_t = (t/T)^4, dense near the prior where ln p(D | ·) changes fastest
//! (a common choice; Neal uses geometric spacing near 0 to the same end). Chain c draws from
//! its own generator seeded by (seed, c), so the estimate does not depend on the thread count.

use rand::rngs::StdRng;

use occam_core::special::ln_gamma;

use super::ais_draw::{categorical, draw, ln_one_minus_exp};
use super::ais_q::{ln_prior, Base};
use super::conjugate::dirichlet_multinomial;
use super::flat::{Flat, Lik, Prior, Slot};

/// The inverse temperature of step `t` of `steps`.
pub(crate) fn beta(t: usize, steps: usize) -> f64 {
    (t as f64 / steps as f64).powi(4)
}

/// One chain's state.
pub(super) struct Chain<'a> {
    pub(super) flat: &'a Flat,
    /// Per parameter, its elements (each `width` values): the value of a Gaussian, the logarithm
    /// of a Gamma, of a Beta's probability, of each Dirichlet probability.
    pub(super) theta: Vec<Vec<f64>>,
    /// Units per row: 1 (a row's component), or a hidden Markov chain's steps T (each step's
    /// state, module `ais_chain`).
    pub(super) steps: usize,
    /// The state of every unit (row-major: row i's units at i·steps..): a row's component, or
    /// the state of step t of sequence i.
    pub(super) z: Vec<usize>,
    /// ln p(unit u | component or state k, θ), units × K.
    pub(super) ll: Vec<f64>,
    /// The path's base where it is not the prior (module `ais_q`).
    base: Option<&'a Base>,
    /// On the path from the prior, the base whose region R the last target leaves out.
    region: Option<&'a Base>,
}

/// Whether parameter `p` is kept as a logarithm.
fn in_logs(flat: &Flat, p: usize) -> bool {
    !matches!(
        flat.params[p].prior,
        Prior::Gaussian { .. } | Prior::NormalGamma { .. }
    )
}

impl<'a> Chain<'a> {
    /// A draw from the prior: θ, then every row's component (the weights integrated out), or
    /// every sequence's path from the chain's initial and transition probabilities.
    pub(super) fn new(
        flat: &'a Flat,
        base: Option<&'a Base>,
        region: Option<&'a Base>,
        rng: &mut StdRng,
    ) -> Chain<'a> {
        if let Some(b) = base {
            let (theta, z) = b.draw(flat, rng);
            return Chain {
                flat,
                theta,
                steps: 1,
                z,
                ll: vec![0.0; flat.n * flat.k],
                base,
                region: None,
            };
        }
        // Normal–Gamma means after their precisions.
        let mut theta = vec![Vec::new(); flat.params.len()];
        let order: Vec<usize> = (0..flat.params.len())
            .filter(|&i| !matches!(flat.params[i].prior, Prior::NormalGamma { .. }))
            .chain(
                (0..flat.params.len())
                    .filter(|&i| matches!(flat.params[i].prior, Prior::NormalGamma { .. })),
            )
            .collect();
        for p in order {
            // No statistics: the prior itself.
            let zeros = vec![0.0; flat.params[p].width().max(2)];
            let ln_taus = match flat.params[p].prior {
                Prior::NormalGamma { tau, .. } => theta[tau].clone(),
                _ => vec![f64::NAN; flat.elements(p)],
            };
            let mut v = Vec::new();
            for ln_tau in ln_taus {
                draw(&flat.params[p].prior, &zeros, ln_tau, rng, &mut v);
            }
            theta[p] = v;
        }
        let steps = super::hmm::steps(flat);
        let mut chain = Chain {
            flat,
            theta,
            steps,
            z: vec![0; flat.n * steps],
            ll: vec![0.0; flat.n * steps * flat.k],
            base: None,
            region,
        };
        if flat.chain.is_some() {
            chain.draw_paths_prior(rng);
        } else {
            chain.draw_z_prior(rng);
        }
        chain
    }

    /// The rows' components from the path's start DM(z; a_0), the weights integrated out: the
    /// Pólya urn, row i joining component k with probability ∝ a_0 + (earlier rows in k).
    fn draw_z_prior(&mut self, rng: &mut StdRng) {
        let Some((a0, _)) = self.alphas() else {
            return;
        };
        let mut counts = vec![0.0; self.flat.k];
        let mut logit = vec![0.0; self.flat.k];
        for i in 0..self.flat.n {
            for (l, c) in logit.iter_mut().zip(&counts) {
                *l = (a0 + c).ln();
            }
            self.z[i] = categorical(&logit, rng);
            counts[self.z[i]] += 1.0;
        }
    }

    /// For a mixture, the weights' concentration at the start of the path, a_0 = max(α, 1), and
    /// the prior's own α (equal where α ≥ 1: nothing is annealed).
    fn alphas(&self) -> Option<(f64, f64)> {
        match self.flat.params[self.flat.weights?].prior {
            Prior::Dirichlet { alpha, .. } => Some((alpha.max(1.0), alpha)),
            _ => None,
        }
    }

    /// ln DM(z; α) − ln DM(z; a_0) at the current components: the weights' share of the log
    /// weight's increment, zero where nothing is annealed (and for a hidden Markov chain).
    fn ln_weights_ratio(&self) -> f64 {
        match self.alphas() {
            Some((a0, alpha)) if a0 != alpha && self.flat.chain.is_none() => {
                let k = self.flat.k;
                let mut counts = vec![0.0; k];
                for &c in &self.z {
                    counts[c] += 1.0;
                }
                dirichlet_multinomial(alpha, k, &counts) - dirichlet_multinomial(a0, k, &counts)
            }
            _ => 0.0,
        }
    }

    /// ln DM(z; α) − ln b(θ, z) + ln p(θ) at the current state: the share of the log weight's
    /// increment beside the likelihood on the path from a base (module `ais_q`).
    fn ln_base_ratio(&self, base: &Base) -> f64 {
        let Some((_, alpha)) = self.alphas() else {
            return f64::NAN;
        };
        let k = self.flat.k;
        let mut counts = vec![0.0; k];
        for &c in &self.z {
            counts[c] += 1.0;
        }
        dirichlet_multinomial(alpha, k, &counts) + ln_prior(self.flat, &self.theta)
            - base.ln_b(self.flat, &self.theta, &self.z)
    }

    /// The log weight after annealing through `steps` temperatures; `occupied`, if given,
    /// receives the number of components holding rows at each temperature's increment.
    pub(super) fn run(
        &mut self,
        steps: usize,
        rng: &mut StdRng,
        mut occupied: Option<&mut Vec<usize>>,
    ) -> f64 {
        let mut ln_w = 0.0;
        for t in 1..=steps {
            self.fill_ll();
            let k = self.flat.k;
            let ln_lik: f64 = self
                .z
                .iter()
                .enumerate()
                .map(|(u, &c)| self.ll[u * k + c])
                .sum();
            if let Some(o) = occupied.as_deref_mut() {
                let mut seen = vec![false; k];
                self.z.iter().for_each(|&c| seen[c] = true);
                o.push(seen.iter().filter(|&&x| x).count());
            }
            let rest = match self.base {
                Some(b) => self.ln_base_ratio(b),
                None => self.ln_weights_ratio(),
            };
            ln_w += (beta(t, steps) - beta(t - 1, steps)) * (ln_lik + rest);
            if t < steps {
                // A transition leaving π_{β_t} invariant (the last one is not needed).
                let b = beta(t, steps);
                if self.flat.chain.is_some() {
                    self.sample_paths(b, rng);
                } else {
                    self.sample_z_from_ll(b, rng);
                }
                self.sample_theta(b, rng);
            }
        }
        // The last targets of the two strata (module `ais_q`): from q, p h 1_R (h = 1/Π m_g! in
        // the base's basin, 0 outside, the estimate K! times the mean weight); from the prior
        // beside it, p 1_(not R).
        let ln_start = |c: &Self| match c.alphas() {
            Some((a0, _)) => {
                let k = c.flat.k;
                let mut counts = vec![0.0; k];
                c.z.iter().for_each(|&j| counts[j] += 1.0);
                dirichlet_multinomial(a0, k, &counts) + ln_prior(c.flat, &c.theta)
            }
            None => f64::NAN,
        };
        let (flat, theta, z) = (self.flat, &self.theta, &self.z);
        match (self.base, self.region) {
            (Some(b), _) => {
                if b.in_basin(flat, theta, z) && b.explains(flat, theta, z, ln_start(self)) {
                    ln_w + b.ln_modes
                } else {
                    f64::NEG_INFINITY
                }
            }
            (None, Some(b)) if b.explains(flat, theta, z, ln_start(self)) => f64::NEG_INFINITY,
            _ => ln_w,
        }
    }

    /// `ll` at the current θ.
    fn fill_ll(&mut self) {
        let (units, k) = (self.z.len(), self.flat.k);
        for u in 0..units {
            for c in 0..k {
                self.ll[u * k + c] = if self.flat.chain.is_some() {
                    self.step_in_state(u / self.steps, u % self.steps, c)
                } else {
                    self.row_in_component(u, c)
                };
            }
        }
    }

    /// The state that reads column `d` of row `i`: the row's component, or step d's state.
    fn state(&self, i: usize, d: usize) -> usize {
        if self.flat.chain.is_some() {
            self.z[i * self.steps + d]
        } else {
            self.z[i]
        }
    }

    /// ln p(row i | component k, θ): every present value of the row.
    fn row_in_component(&self, i: usize, k: usize) -> f64 {
        let mut s = 0.0;
        for o in &self.flat.obs {
            for d in 0..o.cols {
                let at = i * o.cols + d;
                if o.present[at] {
                    s += self.ln_f(&o.lik, o.values[at], k, d);
                }
            }
        }
        s
    }

    /// ln f(x | θ) of one value in component `k`, column `d`, from the kept logarithms.
    pub(super) fn ln_f(&self, lik: &Lik, x: f64, k: usize, d: usize) -> f64 {
        // ln of a positive slot: a constant's logarithm or a kept logarithm.
        let ln = |s: Slot| match s {
            Slot::Const(c) => c.ln(),
            Slot::Param(_) => self.value(s, k, d),
        };
        match *lik {
            Lik::Gaussian { mean, precision } => {
                let (m, ln_t) = (self.value(mean, k, d), ln(precision));
                0.5 * (ln_t - (2.0 * std::f64::consts::PI).ln())
                    - 0.5 * ln_t.exp() * (x - m) * (x - m)
            }
            Lik::Bernoulli(p) => {
                let ln_p = ln(p);
                if x == 1.0 {
                    ln_p
                } else {
                    ln_one_minus_exp(ln_p)
                }
            }
            Lik::Poisson(r) => {
                let ln_r = ln(r);
                x * ln_r - ln_r.exp() - ln_gamma(x + 1.0)
            }
            Lik::Categorical(Slot::Param(p)) => {
                let q = &self.flat.params[p];
                self.theta[p][q.element(k, d) * q.width() + x as usize]
            }
            Lik::Categorical(Slot::Const(_)) => f64::NAN,
        }
    }

    /// Every row's component in turn from (a_0 + n_k^{−i})^(1−b) (α + n_k^{−i})^b p(x_i | θ_k)^b
    /// (`ll` current; the first factor only where a_0 ≠ α): Gibbs with the weights integrated out
    /// (Dirichlet–multinomial), so that a component left empty can be re-entered. With the
    /// weights kept, an empty component's weight under a small α (Dirichlet(0.001) in the VIBES
    /// tutorial) is drawn below 1e−300 and no row ever joins it.
    fn sample_z_from_ll(&mut self, b: f64, rng: &mut StdRng) {
        let k = self.flat.k;
        let Some((a0, alpha)) = self.alphas() else {
            return;
        };
        let mut counts = vec![0.0; k];
        for &c in &self.z {
            counts[c] += 1.0;
        }
        let mut logit = vec![0.0; k];
        for i in 0..self.flat.n {
            counts[self.z[i]] -= 1.0;
            for c in 0..k {
                let prior = if let Some(base) = self.base {
                    (1.0 - b) * base.ln_r(i, c, k) + b * (alpha + counts[c]).ln()
                } else if a0 == alpha {
                    (alpha + counts[c]).ln()
                } else {
                    (1.0 - b) * (a0 + counts[c]).ln() + b * (alpha + counts[c]).ln()
                };
                logit[c] = prior + b * self.ll[i * k + c];
            }
            self.z[i] = categorical(&logit, rng);
            counts[self.z[i]] += 1.0;
        }
    }

    /// Every parameter from its conditional given z and the others, the data's statistics
    /// multiplied by `b`.
    fn sample_theta(&mut self, b: f64, rng: &mut StdRng) {
        let flat = self.flat;
        for p in 0..flat.params.len() {
            if flat.weights == Some(p) {
                // Integrated out (`sample_z_from_ll`).
                continue;
            }
            let param = &flat.params[p];
            let width = param.width();
            let elements = flat.elements(p);
            // Per element: two accumulated statistics, or `width` counts for a Dirichlet.
            let mut acc = vec![0.0; elements * width.max(2)];
            let stride = width.max(2);
            for o in &flat.obs {
                for i in 0..flat.n {
                    for d in 0..o.cols {
                        let at = i * o.cols + d;
                        if !o.present[at] {
                            continue;
                        }
                        let k = self.state(i, d);
                        let x = o.values[at];
                        let e = param.element(k, d);
                        let a = &mut acc[e * stride..(e + 1) * stride];
                        match o.lik {
                            Lik::Gaussian { mean, precision } => {
                                if mean == Slot::Param(p) {
                                    let t = self.positive(precision, k, d);
                                    a[0] += b * t;
                                    a[1] += b * t * x;
                                } else if precision == Slot::Param(p) {
                                    let m = self.value(mean, k, d);
                                    a[0] += 0.5 * b;
                                    a[1] += 0.5 * b * (x - m) * (x - m);
                                }
                            }
                            Lik::Bernoulli(s) if s == Slot::Param(p) => {
                                a[0] += b * x;
                                a[1] += b * (1.0 - x);
                            }
                            Lik::Poisson(s) if s == Slot::Param(p) => {
                                a[0] += b * x;
                                a[1] += b;
                            }
                            Lik::Categorical(s) if s == Slot::Param(p) => a[x as usize] += b,
                            _ => {}
                        }
                    }
                }
            }
            // A Gamma that is the precision of Normal–Gamma means: their prior reads it too.
            for (m, q) in flat.params.iter().enumerate() {
                if let Prior::NormalGamma { mean, kappa, tau } = q.prior {
                    if tau == p {
                        for e in 0..flat.elements(m) {
                            let mu = self.theta[m][e];
                            debug_assert!(!in_logs(flat, m));
                            // On the path from a base the prior is tempered too.
                            let s = if self.base.is_some() { b } else { 1.0 };
                            acc[e * stride] += 0.5 * s;
                            acc[e * stride + 1] += 0.5 * s * kappa * (mu - mean) * (mu - mean);
                        }
                    }
                }
            }
            // A chain's initial and transition probabilities: the counts of its paths (the chain's
            // prior p(z | p0, A) is not tempered).
            self.add_path_counts(p, &mut acc, stride);
            let mut next = Vec::with_capacity(elements * width);
            for e in 0..elements {
                let ln_tau = match param.prior {
                    Prior::NormalGamma { tau, .. } => self.theta[tau][e],
                    _ => f64::NAN,
                };
                let a = &mut acc[e * stride..(e + 1) * stride];
                if let Some(base) = self.base {
                    base.temper(&param.prior, p, e, b, ln_tau, a);
                }
                draw(&param.prior, a, ln_tau, rng, &mut next);
            }
            self.theta[p] = next;
        }
    }

    /// The kept number of a slot: a constant, a Gaussian's value, a logarithm ([`in_logs`]).
    fn value(&self, s: Slot, k: usize, d: usize) -> f64 {
        match s {
            Slot::Const(c) => c,
            Slot::Param(p) => {
                let q = &self.flat.params[p];
                self.theta[p][q.element(k, d) * q.width()]
            }
        }
    }

    /// The value of a positive slot (a constant or a kept logarithm, exponentiated).
    fn positive(&self, s: Slot, k: usize, d: usize) -> f64 {
        match s {
            Slot::Const(c) => c,
            Slot::Param(_) => self.value(s, k, d).exp(),
        }
    }
}
