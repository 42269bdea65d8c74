//! Mixtures of mean-field distributions with smoothing distributions (Lawrence §2.4.2,
//! Jaakkola & Jordan 1998), with (2.31), (2.34), (2.36) and (2.37) in corrected form (see
//! docs/seed-corrections.md).
//!
//! q(h) = Σ_m Q(m) Π_i μ_mi^{h_i}(1−μ_mi)^{1−h_i}   (Lawrence (2.19)); each component has its own ξ.
//! L_λ = Σ_m Q(m) L_mf(μ_m, ξ_m) + 𝓘   (2.25), with the mutual-information lower bound (2.24)–(2.28)
//! 𝓘 = Σ_m Q(m)⟨ln R(h|m)⟩_m − Σ_m Q(m) ln Q(m) − Σ_m λ_m Σ_{m'} Q(m') π(m,m') + Σ_m Q(m) ln λ_m + 1,
//! π(m,m') = Π_{j∈H} [R(1|m)_j μ_{m'j} + R(0|m)_j (1−μ_{m'j})].
//!
//! Every update below is an exact coordinate maximisation of L_λ (the μ step is the mean-field
//! fixed point with a backtracking safeguard), so the bound never decreases.

use super::error::{Result, SbnError};
use super::math::{clamp_mu, MU_EPS};
use super::mf::{self, MfFit, MfState};
use super::model::{Evidence, Sbn};
use occam_core::special::{binary_entropy, log_sum_exp, logit, sigmoid};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A mixture-of-mean-field state. Arrays of components are row-major M × n.
#[derive(Debug, Clone, PartialEq)]
pub struct MixState {
    /// Number of components.
    pub m: usize,
    /// Number of units.
    pub n: usize,
    /// μ_mi (observed units clamped).
    pub mu: Vec<f64>,
    /// ξ_mi.
    pub xi: Vec<f64>,
    /// Mixing weights Q(m).
    pub q: Vec<f64>,
    /// Smoothing tables R(h_i = 1 | m).
    pub r1: Vec<f64>,
    /// Smoothing tables R(h_i = 0 | m).
    pub r0: Vec<f64>,
    /// λ_m.
    pub lambda: Vec<f64>,
}

/// How the mixture starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MixInit {
    /// Lawrence §2.5: μ ~ U(0,1), R = 1, λ = 1, Q(m) = 1/M.
    Random(u64),
    /// Start from a fitted mean-field solution and add components one at a time by splitting
    /// the heaviest component with a seeded logit jitter of the given size; a split whose run
    /// ends below the unsplit bound is discarded (the exact copy, which has the same bound, is
    /// kept). The bound therefore never falls below the mean-field bound it starts from.
    Grow {
        /// Seed of the jitter.
        seed: u64,
        /// Size of the uniform logit jitter.
        jitter: f64,
    },
}

/// Options of the mixture fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixOptions {
    /// Number of components M.
    pub components: usize,
    /// Initialisation.
    pub init: MixInit,
    /// Maximum number of sweeps (per growth stage).
    pub max_sweeps: usize,
    /// Stop when a sweep raises the bound by less than this.
    pub tol: f64,
    /// Options of the mean-field fit used by `Grow`.
    pub mf: mf::MfOptions,
}

impl Default for MixOptions {
    fn default() -> Self {
        MixOptions {
            components: 2,
            init: MixInit::Grow {
                seed: 0,
                jitter: 1.0,
            },
            max_sweeps: 200,
            tol: 1e-9,
            mf: mf::MfOptions::default(),
        }
    }
}

/// A fitted mixture.
#[derive(Debug, Clone, PartialEq)]
pub struct MixFit {
    /// Final state.
    pub state: MixState,
    /// Lower bound on ln P(v).
    pub bound: f64,
    /// Bound after each sweep of the last run (non-decreasing).
    pub trace: Vec<f64>,
    /// True if the last run met its tolerance.
    pub converged: bool,
}

impl MixState {
    fn comp(&self, m: usize) -> std::ops::Range<usize> {
        m * self.n..(m + 1) * self.n
    }

    /// Component m as a mean-field state.
    pub fn component(&self, m: usize) -> MfState {
        MfState {
            mu: self.mu[self.comp(m)].to_vec(),
            xi: self.xi[self.comp(m)].to_vec(),
        }
    }

    /// ln π(a, b) over the hidden units.
    fn ln_pi(&self, hid: &[usize], a: usize, b: usize) -> f64 {
        let (ra, mb) = (a * self.n, b * self.n);
        hid.iter()
            .map(|&j| {
                (self.r1[ra + j] * self.mu[mb + j] + self.r0[ra + j] * (1.0 - self.mu[mb + j])).ln()
            })
            .sum()
    }

    /// One factor of π(a, b) for hidden unit j.
    #[inline]
    fn pi_factor(&self, a: usize, b: usize, j: usize) -> f64 {
        let (ra, mb) = (a * self.n, b * self.n);
        self.r1[ra + j] * self.mu[mb + j] + self.r0[ra + j] * (1.0 - self.mu[mb + j])
    }

    /// ⟨ln R(h|m)⟩_m (2.28).
    fn exp_ln_r(&self, hid: &[usize], m: usize) -> f64 {
        let o = m * self.n;
        hid.iter()
            .map(|&j| {
                self.mu[o + j] * self.r1[o + j].ln() + (1.0 - self.mu[o + j]) * self.r0[o + j].ln()
            })
            .sum()
    }
}

fn component_bound(sbn: &Sbn, ev: &Evidence, st: &MixState, m: usize) -> f64 {
    let mut l = 0.0;
    let mu = &st.mu[st.comp(m)];
    let xi = &st.xi[st.comp(m)];
    for (i, &x) in xi.iter().enumerate() {
        l += mf::unit_term(sbn, i, mu, x);
    }
    for &h in ev.hidden() {
        l += binary_entropy(mu[h]);
    }
    l
}

/// The mixture bound L_λ (2.25) at the given state.
pub fn bound(sbn: &Sbn, ev: &Evidence, st: &MixState) -> f64 {
    let hid = ev.hidden();
    let mm = st.m;
    let mut l = 1.0;
    for a in 0..mm {
        if st.q[a] > 0.0 {
            l += st.q[a]
                * (component_bound(sbn, ev, st, a) + st.exp_ln_r(hid, a) - st.q[a].ln()
                    + st.lambda[a].ln());
        }
        let mut s = 0.0;
        for b in 0..mm {
            s += st.q[b] * st.ln_pi(hid, a, b).exp();
        }
        l -= st.lambda[a] * s;
    }
    l
}

/// Sets every λ_m to its optimum Q(m)/Σ_k Q(k)π(m,k) (Lawrence (2.37) corrected: the printed sum
/// lacks the Q(k)).
fn update_lambda(st: &mut MixState, hid: &[usize]) {
    for a in 0..st.m {
        let s: f64 = (0..st.m).map(|b| st.q[b] * st.ln_pi(hid, a, b).exp()).sum();
        if s > 0.0 && st.q[a] > 0.0 {
            st.lambda[a] = st.q[a] / s;
        }
    }
}

/// One sweep of all coordinate updates.
fn sweep(sbn: &Sbn, ev: &Evidence, st: &mut MixState) {
    let hid = ev.hidden().to_vec();
    let n = st.n;
    let mm = st.m;
    // ξ_m: 1-D minimisation per unit and component (Lawrence §2.4.2, after Saul et al.)
    for a in 0..mm {
        for i in 0..n {
            st.xi[a * n + i] =
                mf::optimise_xi_from(sbn, i, &st.mu[a * n..(a + 1) * n], st.xi[a * n + i]);
        }
    }
    // μ_mk (Lawrence (2.31) corrected: the printed −λ_m[R(1|m) − R(0|m)] drops the sum over m''
    // and the π^{(k)} factor):
    // μ_mk ← σ(E'_mk + ln[R(1|m)/R(0|m)] − Σ_{m''} λ_{m''} π^{(k)}(m'',m)[R(1|m'') − R(0|m'')])
    for a in 0..mm {
        for &k in &hid {
            let mut lnpi: Vec<f64> = (0..mm).map(|c| st.ln_pi(&hid, c, a)).collect();
            let mut extra = (st.r1[a * n + k] / st.r0[a * n + k]).ln();
            for (c, lp) in lnpi.iter_mut().enumerate() {
                let f = st.pi_factor(c, a, k);
                let pik = (*lp - f.ln()).exp();
                extra -= st.lambda[c] * pik * (st.r1[c * n + k] - st.r0[c * n + k]);
            }
            let (xi, mu) = (&st.xi[a * n..(a + 1) * n], &mut st.mu[a * n..(a + 1) * n]);
            mf::update_mu(sbn, k, mu, xi, extra);
        }
    }
    // R(h_j|m) ← Q(m)Q(h_j|m) / (λ_m Σ_k Q(k) π^{(j)}(m,k) Q(h_j|k))   (2.36), α_k = Q(k)
    for a in 0..mm {
        for &j in &hid {
            let (mut d1, mut d0) = (0.0, 0.0);
            for b in 0..mm {
                let lp = st.ln_pi(&hid, a, b) - st.pi_factor(a, b, j).ln();
                let w = st.q[b] * lp.exp();
                d1 += w * st.mu[b * n + j];
                d0 += w * (1.0 - st.mu[b * n + j]);
            }
            let la = st.lambda[a];
            let muj = st.mu[a * n + j];
            if la > 0.0 && d1 > 0.0 && d0 > 0.0 && st.q[a] > 0.0 {
                st.r1[a * n + j] = (st.q[a] * muj / (la * d1)).max(1e-300);
                st.r0[a * n + j] = (st.q[a] * (1.0 - muj) / (la * d0)).max(1e-300);
            }
        }
    }
    update_lambda(st, &hid);
    // Q(m) ← softmax(−E_m), −E_m = L_mf(m) + ⟨ln R⟩_m − Σ_k λ_k π(k,m) + ln λ_m
    // (Lawrence (2.34) corrected: printed with +Σ_k λ_k π(k,m))
    let neg_e: Vec<f64> = (0..mm)
        .map(|a| {
            let s: f64 = (0..mm)
                .map(|c| st.lambda[c] * st.ln_pi(&hid, c, a).exp())
                .sum();
            component_bound(sbn, ev, st, a) + st.exp_ln_r(&hid, a) - s + st.lambda[a].ln()
        })
        .collect();
    let lse = log_sum_exp(&neg_e);
    for (q, e) in st.q.iter_mut().zip(&neg_e) {
        *q = (e - lse).exp();
    }
    update_lambda(st, &hid);
}

/// Runs sweeps until the bound stalls.
pub fn run(sbn: &Sbn, ev: &Evidence, mut st: MixState, max_sweeps: usize, tol: f64) -> MixFit {
    let mut trace = vec![bound(sbn, ev, &st)];
    let mut converged = false;
    for _ in 0..max_sweeps {
        sweep(sbn, ev, &mut st);
        let l = bound(sbn, ev, &st);
        let prev = *trace.last().unwrap_or(&f64::NEG_INFINITY);
        trace.push(l);
        if (l - prev).abs() < tol * (1.0 + l.abs()) {
            converged = true;
            break;
        }
    }
    MixFit {
        bound: *trace.last().unwrap_or(&f64::NEG_INFINITY),
        state: st,
        trace,
        converged,
    }
}

/// A single-component mixture equal to a mean-field state (R = 1, λ = 1, Q = 1: 𝓘 = 0).
pub fn from_mf(st: &MfState) -> MixState {
    let n = st.mu.len();
    MixState {
        m: 1,
        n,
        mu: st.mu.clone(),
        xi: st.xi.clone(),
        q: vec![1.0],
        r1: vec![1.0; n],
        r0: vec![1.0; n],
        lambda: vec![1.0],
    }
}

/// Adds a copy of the heaviest component (halving its weight), jittering the copy's hidden
/// logits by U(−jitter, jitter). With zero jitter the bound is unchanged.
fn split(st: &MixState, ev: &Evidence, rng: &mut Xoshiro256PlusPlus, jitter: f64) -> MixState {
    let mut best = 0;
    for a in 1..st.m {
        if st.q[a] > st.q[best] {
            best = a;
        }
    }
    let mut s = st.clone();
    let n = st.n;
    let r = st.comp(best);
    s.mu.extend_from_slice(&st.mu[r.clone()]);
    s.xi.extend_from_slice(&st.xi[r.clone()]);
    s.r1.extend_from_slice(&st.r1[r.clone()]);
    s.r0.extend_from_slice(&st.r0[r]);
    s.q[best] *= 0.5;
    s.q.push(s.q[best]);
    s.lambda.push(1.0);
    s.m += 1;
    if jitter > 0.0 {
        let o = (s.m - 1) * n;
        for &k in ev.hidden() {
            let d = jitter * (2.0 * rng.random::<f64>() - 1.0);
            s.mu[o + k] = clamp_mu(sigmoid(logit(clamp_mu(s.mu[o + k])) + d));
        }
    }
    update_lambda(&mut s, ev.hidden());
    s
}

/// Random initial state of Lawrence §2.5.
fn random_state(sbn: &Sbn, ev: &Evidence, m: usize, seed: u64) -> MixState {
    let n = sbn.n_units();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut mu = Vec::with_capacity(m * n);
    for _ in 0..m {
        for i in 0..n {
            mu.push(match ev.get(i) {
                Some(v) => f64::from(u8::from(v)),
                None => rng.random::<f64>().clamp(MU_EPS, 1.0 - MU_EPS),
            });
        }
    }
    MixState {
        m,
        n,
        mu,
        xi: vec![0.5; m * n],
        q: vec![1.0 / m as f64; m],
        r1: vec![1.0; m * n],
        r0: vec![1.0; m * n],
        lambda: vec![1.0; m],
    }
}

/// Grows a mixture from a mean-field fit up to `max_m` components; returns the fit at every
/// M = 1..max_m (index M−1). Each stage's bound is ≥ the previous stage's.
pub fn grow_path(
    sbn: &Sbn,
    ev: &Evidence,
    mf_fit: &MfFit,
    max_m: usize,
    opts: &MixOptions,
) -> Vec<MixFit> {
    let (seed, jitter) = match opts.init {
        MixInit::Grow { seed, jitter } => (seed, jitter),
        MixInit::Random(seed) => (seed, 1.0),
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let st0 = from_mf(&mf_fit.state);
    let b0 = bound(sbn, ev, &st0);
    let mut out = vec![MixFit {
        state: st0,
        bound: b0,
        trace: vec![b0],
        converged: mf_fit.converged,
    }];
    for _ in 1..max_m {
        let prev = out
            .last()
            .map(|f| f.state.clone())
            .unwrap_or_else(|| from_mf(&mf_fit.state));
        let prev_bound = out.last().map(|f| f.bound).unwrap_or(b0);
        let trial = run(
            sbn,
            ev,
            split(&prev, ev, &mut rng, jitter),
            opts.max_sweeps,
            opts.tol,
        );
        if trial.bound >= prev_bound {
            out.push(trial);
        } else {
            let copy = split(&prev, ev, &mut rng, 0.0);
            let b = bound(sbn, ev, &copy);
            out.push(MixFit {
                state: copy,
                bound: b,
                trace: vec![b],
                converged: true,
            });
        }
    }
    out
}

/// Fits an M-component mixture.
pub fn fit(sbn: &Sbn, ev: &Evidence, opts: &MixOptions) -> Result<MixFit> {
    ev.check(sbn)?;
    if opts.components == 0 {
        return Err(SbnError::Option {
            name: "components".into(),
            why: "must be at least 1".into(),
        });
    }
    match opts.init {
        MixInit::Random(seed) => {
            let st = random_state(sbn, ev, opts.components, seed);
            Ok(run(sbn, ev, st, opts.max_sweeps, opts.tol))
        }
        MixInit::Grow { .. } => {
            let mf_fit = mf::fit(sbn, ev, &opts.mf)?;
            let mut path = grow_path(sbn, ev, &mf_fit, opts.components, opts);
            Ok(path.pop().expect("path has at least one stage"))
        }
    }
}

/// Gradient of the mixture bound wrt [weights..., biases...]: Σ_m Q(m) ∂L_mf(m)/∂W (𝓘 does not
/// depend on W). Adds `scale` × gradient into `g`.
pub fn grad_params(sbn: &Sbn, st: &MixState, scale: f64, g: &mut [f64]) {
    for a in 0..st.m {
        mf::grad_params(sbn, &st.component(a), scale * st.q[a], g);
    }
}
