//! Fitting the variational posterior: the papers' schedule, restarts chosen by the bound, and the
//! predictive distribution.
//!
//! Schedule (committee paper §3.3.3 and §4): with the hyper-posteriors held fixed, each mixture
//! component is first trained alone (`pretrain_iters` L-BFGS iterations, 100 in the paper); the
//! components are then trained jointly, with the smoothing kernels started at r̄_m = w̄_m, ρ_m = s_m,
//! for `cycles` × (`iters_per_cycle` L-BFGS iterations on all Gaussian and smoothing parameters,
//! then the closed-form updates of every q(α_j) and q(β)) — 5 × (500 + update) in the paper. The
//! mixing weights stay at Q(m) = 1/M, as in the paper. The thesis (§5.4) alternates instead: the
//! smoothing kernels alone, then the components with the kernels fixed, then Q(m)
//! (`VbOptions::smoothing_iters`, `update_mixing`).

use super::entropy::{entropy_bound, Layout};
use super::mixing::update_mixing;
use super::moments::G2Form;
use super::network::{Architecture, NetError};
use super::objective::{bound, update_hyper, weight_objective, BoundTerms, Hyper, Problem};
use super::prior::{Gamma, Prior, PriorKind};
use crate::data::Dataset;
use occam_core::optim::{minimize, LbfgsOptions};
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Settings of a variational fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VbOptions {
    /// Hidden units H.
    pub hidden: usize,
    /// Mixture components M (1: a single diagonal Gaussian).
    pub components: usize,
    /// The weight prior.
    pub prior: PriorKind,
    /// How ⟨g²⟩ is computed (the approximate form makes the objective an approximate bound).
    pub form: G2Form,
    /// Gamma hyper-prior of every α (committee paper: a = 3e-4, b = 1e-4).
    pub alpha_prior: Gamma,
    /// Gamma hyper-prior of β (committee paper: a = 0.05, b = 1e-4).
    pub beta_prior: Gamma,
    /// Initial ⟨α⟩ of every hyper-parameter.
    pub init_alpha: f64,
    /// Initial ⟨β⟩.
    pub init_beta: f64,
    /// Initial weight variances s.
    pub init_var: f64,
    /// L-BFGS iterations for each component alone before joint training (M > 1).
    pub pretrain_iters: usize,
    /// Number of (optimise, update hyper-parameters) cycles.
    pub cycles: usize,
    /// L-BFGS iterations per cycle.
    pub iters_per_cycle: usize,
    /// Seed of the initial weights.
    pub seed: u64,
    /// Update the mixing weights Q(m) by their fixed point each cycle (thesis); the committee paper
    /// keeps Q(m) = 1/M.
    pub update_mixing: bool,
    /// The thesis's alternating schedule for mixtures (§5.4): when non-zero, each cycle first
    /// optimises only the smoothing kernels (λ is closed-form) for this many L-BFGS iterations, then
    /// the components' means and variances with the kernels fixed for `iters_per_cycle`, and a fit
    /// ends with the kernels optimised once more (at most 20 × this many iterations) — which only
    /// tightens the entropy bound, q(w) is unchanged. 0: the committee paper's joint optimisation.
    #[serde(default)]
    pub smoothing_iters: usize,
}

impl VbOptions {
    /// The committee paper's settings for `hidden` units and `components` components, except that
    /// ⟨g²⟩ is exact (the paper's c = 1.24 form is `G2Form::Approx`: it makes the objective only an
    /// approximate bound, and its floor on Var g puts kinks in it that stall quasi-Newton steps).
    pub fn committee_paper(hidden: usize, components: usize) -> Self {
        VbOptions {
            hidden,
            components,
            prior: PriorKind::Single,
            form: G2Form::Exact,
            alpha_prior: Gamma { a: 3e-4, b: 1e-4 },
            beta_prior: Gamma { a: 0.05, b: 1e-4 },
            init_alpha: 0.3,
            init_beta: 200.0,
            init_var: 1e-4,
            pretrain_iters: 100,
            cycles: 5,
            iters_per_cycle: 500,
            seed: 0,
            update_mixing: false,
            smoothing_iters: 0,
        }
    }
}

/// A fitted variational posterior.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VbFit {
    /// The network.
    pub arch: Architecture,
    /// Mixture components M.
    pub components: usize,
    /// Mixing weights Q(m).
    pub q: Vec<f64>,
    /// Flat variational parameters (see [`Layout`]).
    pub theta: Vec<f64>,
    /// The prior.
    pub prior: Prior,
    /// q(α) and q(β).
    pub hyper: Hyper,
    /// Hyper-prior of β.
    pub beta_prior: Gamma,
    /// The ⟨g²⟩ form the bound was computed with.
    pub form: G2Form,
    /// The bound and its terms at the end.
    pub bound: BoundTerms,
    /// The bound after each cycle's hyper-parameter update.
    pub trace: Vec<f64>,
    /// The seed used.
    pub seed: u64,
}

/// Predictive moments at one input.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// ⟨f(x)⟩ = Σ_m Q_m ⟨f(x)⟩_m.
    pub mean: f64,
    /// Var f(x) = Σ_m Q_m ⟨f²⟩_m − ⟨f⟩² (function uncertainty, including the spread of components).
    pub var_function: f64,
    /// var_function + ⟨1/β⟩ (= b̃/(ã − 1), the expected noise variance).
    pub var_total: f64,
}

impl VbFit {
    /// The parameter layout.
    pub fn layout(&self) -> Layout {
        Layout {
            m: self.components,
            k: self.arch.n_weights(),
        }
    }

    /// Predictive mean and variances for each row of `x` (row-major, I columns).
    pub fn predict(&self, x: &[f64]) -> Result<Vec<Prediction>, NetError> {
        if !x.len().is_multiple_of(self.arch.inputs) {
            return Err(NetError::InputDim {
                expected: self.arch.inputs,
                got: x.len() % self.arch.inputs,
            });
        }
        let p = Problem {
            arch: self.arch,
            x,
            t: &[],
            form: self.form,
        };
        let lay = self.layout();
        let per: Vec<_> = (0..self.components)
            .map(|m| p.output_moments(&self.theta, lay, m, x))
            .collect();
        let b = self.hyper.beta;
        let noise = if b.a > 1.0 {
            b.b / (b.a - 1.0)
        } else {
            f64::INFINITY
        };
        Ok((0..x.len() / self.arch.inputs)
            .map(|n| {
                let mean: f64 = self.q.iter().zip(&per).map(|(q, o)| q * o[n].mean).sum();
                let second: f64 = self
                    .q
                    .iter()
                    .zip(&per)
                    .map(|(q, o)| q * (o[n].var + o[n].mean * o[n].mean))
                    .sum();
                let var_function = (second - mean * mean).max(0.0);
                Prediction {
                    mean,
                    var_function,
                    var_total: var_function + noise,
                }
            })
            .collect())
    }

    /// Predictive means only.
    pub fn predict_mean(&self, x: &[f64]) -> Result<Vec<f64>, NetError> {
        Ok(self.predict(x)?.into_iter().map(|p| p.mean).collect())
    }
}

fn check(data: &Dataset, opts: &VbOptions) -> Result<Architecture, NetError> {
    if data.n() == 0 {
        return Err(NetError::NoData);
    }
    if opts.components == 0 {
        return Err(NetError::Setting {
            name: "components",
            why: "must be ≥ 1".into(),
        });
    }
    for (name, g) in [
        ("alpha_prior", opts.alpha_prior),
        ("beta_prior", opts.beta_prior),
    ] {
        if !(g.a > 0.0 && g.b > 0.0 && g.a.is_finite() && g.b.is_finite()) {
            return Err(NetError::Setting {
                name,
                why: format!("Gamma({}, {}) needs a, b > 0", g.a, g.b),
            });
        }
    }
    for (name, v) in [
        ("init_alpha", opts.init_alpha),
        ("init_beta", opts.init_beta),
        ("init_var", opts.init_var),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            return Err(NetError::Setting {
                name,
                why: format!("{v} must be positive"),
            });
        }
    }
    Architecture::new(data.d, opts.hidden)
}

/// Random initial means: u ~ N(0, 1/(I+1)), v ~ N(0, 1/(H+1)); log-variances ln `init_var`.
pub(crate) fn init_component(
    arch: &Architecture,
    init_var: f64,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<f64> {
    let k = arch.n_weights();
    let nu =
        Normal::new(0.0, (1.0 / arch.fan_in() as f64).sqrt()).unwrap_or_else(|_| unreachable!());
    let nv = Normal::new(0.0, (1.0 / (arch.hidden + 1) as f64).sqrt())
        .unwrap_or_else(|_| unreachable!());
    let mut th = vec![init_var.ln(); 2 * k];
    for (i, w) in th[..k].iter_mut().enumerate() {
        *w = if i < arch.v(0) {
            nu.sample(rng)
        } else {
            nv.sample(rng)
        };
    }
    th
}

/// One variational fit from the seed in `opts`.
pub fn fit_vb(data: &Dataset, opts: &VbOptions) -> Result<VbFit, NetError> {
    let arch = check(data, opts)?;
    let p = Problem {
        arch,
        x: &data.x,
        t: &data.t,
        form: opts.form,
    };
    let k = arch.n_weights();
    let m_n = opts.components;
    let lay = Layout { m: m_n, k };
    let q = vec![1.0 / m_n as f64; m_n];
    let prior = Prior::new(opts.prior, &arch, opts.alpha_prior);
    let hyper = Hyper {
        alpha: prior.init_posterior(opts.init_alpha),
        beta: Gamma {
            a: opts.beta_prior.a + 0.5 * data.n() as f64,
            b: (opts.beta_prior.a + 0.5 * data.n() as f64) / opts.init_beta,
        },
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
    let single = Layout { m: 1, k };
    let mut theta = vec![0.0; lay.len()];
    // Every component's start is drawn first (in component order, from the one seeded stream); the
    // pre-training runs, independent of each other, then go to separate threads.
    let starts: Vec<Vec<f64>> = (0..m_n)
        .map(|_| init_component(&arch, opts.init_var, &mut rng))
        .collect();
    let trained: Vec<Vec<f64>> = starts
        .into_par_iter()
        .map(|th| {
            if m_n > 1 && opts.pretrain_iters > 0 {
                optimise(&p, th, single, &[1.0], &prior, &hyper, opts.pretrain_iters)
            } else {
                th
            }
        })
        .collect();
    for (m, th) in trained.iter().enumerate() {
        theta[lay.mean(m)..lay.mean(m) + 2 * k].copy_from_slice(th);
        if m_n > 1 {
            init_smoothing(&mut theta, lay, m);
        }
    }
    run_cycles(&p, opts, theta, q, prior, hyper)
}

/// A mixture started from a fitted single Gaussian (thesis §5.5): component means w̄ + ε with
/// ε_k ~ N(0, (jitter·|w̄_k|)²), the diagonal's variances and hyper-posteriors, r̄_m = w̄_m,
/// ρ_m = 100 s_m (see `init_smoothing`);
/// then `opts.cycles` × (optimise, [mixing update], hyper update).
pub fn mixture_from(
    data: &Dataset,
    diag: &VbFit,
    opts: &VbOptions,
    jitter: f64,
) -> Result<VbFit, NetError> {
    let arch = check(data, opts)?;
    if diag.arch != arch || diag.components != 1 {
        return Err(NetError::Setting {
            name: "diag",
            why: "needs a single-Gaussian fit of the same network".into(),
        });
    }
    let p = Problem {
        arch,
        x: &data.x,
        t: &data.t,
        form: opts.form,
    };
    let k = arch.n_weights();
    let lay = Layout {
        m: opts.components,
        k,
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
    let mut theta = vec![0.0; lay.len()];
    let std = Normal::new(0.0, 1.0).unwrap_or_else(|_| unreachable!());
    for m in 0..lay.m {
        for i in 0..k {
            let w = diag.theta[i];
            theta[lay.mean(m) + i] = w + jitter * w.abs() * std.sample(&mut rng);
            theta[lay.log_var(m) + i] = diag.theta[k + i];
        }
        if lay.m > 1 {
            init_smoothing(&mut theta, lay, m);
        }
    }
    let q = vec![1.0 / lay.m as f64; lay.m];
    run_cycles(&p, opts, theta, q, diag.prior.clone(), diag.hyper.clone())
}

/// `diag` as an M-component mixture that is the same distribution: every component at `diag`'s
/// posterior, Q(m) = 1/M, its hyper-posteriors, and smoothing kernels r̄_m = w̄, ρ_m = 10¹² s. Then
/// q(w) is `diag`'s, I(m; w) = 0, and 𝓘 = (K/2)[ln(1 + 10⁻¹²) − 10⁻¹²] vanishes to rounding, so
/// the bound is `diag`'s up to rounding (~1e-13 relative: the components' ⟨E_D⟩ are summed with
/// weights 1/M). The point from which a mixture cannot do worse than its single Gaussian.
pub fn degenerate_mixture(
    data: &Dataset,
    diag: &VbFit,
    components: usize,
) -> Result<VbFit, NetError> {
    if diag.components != 1 || components < 2 || data.d != diag.arch.inputs {
        return Err(NetError::Setting {
            name: "diag",
            why: "needs a single-Gaussian fit of the same network and M ≥ 2".into(),
        });
    }
    let k = diag.arch.n_weights();
    let lay = Layout { m: components, k };
    let mut theta = vec![0.0; lay.len()];
    for m in 0..components {
        theta[lay.mean(m)..lay.mean(m) + 2 * k].copy_from_slice(&diag.theta[..2 * k]);
        for i in 0..k {
            theta[lay.r_mean(m) + i] = diag.theta[i];
            theta[lay.r_log_var(m) + i] = diag.theta[k + i] + 1e12f64.ln();
        }
    }
    let p = Problem {
        arch: diag.arch,
        x: &data.x,
        t: &data.t,
        form: diag.form,
    };
    let q = vec![1.0 / components as f64; components];
    let b = bound(
        &p,
        &theta,
        lay,
        &q,
        &diag.prior,
        &diag.hyper,
        &diag.beta_prior,
    );
    Ok(VbFit {
        components,
        q,
        theta,
        bound: b,
        ..diag.clone()
    })
}

/// A committee of `opts.components` Gaussians whose best bound cannot end below the best of the
/// single-Gaussian fits `singles`, under any schedule. The candidates are the committee paper's
/// `restarts` random starts ([`fit_vb_restarts`]: each component pre-trained alone, then trained
/// jointly), followed by one mixture grown from the best single fit (thesis §5.5,
/// [`mixture_from`] with `jitter`, seed `opts.seed + restarts`, `opts.cycles` cycles). Should the
/// grown mixture end below its start, the start itself ([`degenerate_mixture`], the single
/// Gaussian as a mixture: the same bound up to rounding) takes its place. Pick among the returned
/// candidates with [`best_by_bound`]; the grown one is last.
pub fn fit_committee(
    data: &Dataset,
    opts: &VbOptions,
    restarts: usize,
    singles: &[VbFit],
    jitter: f64,
) -> Result<Vec<VbFit>, NetError> {
    if singles.is_empty() || opts.components < 2 {
        return Err(NetError::Setting {
            name: "singles",
            why: "a committee (M ≥ 2) grows from at least one single-Gaussian fit".into(),
        });
    }
    let mut all = fit_vb_restarts(data, opts, restarts)?;
    let best = &singles[best_by_bound(singles)];
    let start = degenerate_mixture(data, best, opts.components)?;
    let o = VbOptions {
        seed: opts.seed.wrapping_add(restarts as u64),
        ..opts.clone()
    };
    let grown = mixture_from(data, best, &o, jitter)?;
    all.push(if grown.bound.total >= start.bound.total {
        grown
    } else {
        start
    });
    Ok(all)
}

/// Smoothing kernel m starts centred on component m and 100 times wider (ρ = 100 s): with r = q
/// exactly, ⟨ln r_m⟩_m = −K/2 makes 𝓘 ≈ −0.3K at the start (−16 for K = 113), while for separated
/// components the per-weight loss −½(1/c) + ½ ln(1 + 1/c) of a width ratio c vanishes as c grows.
fn init_smoothing(theta: &mut [f64], lay: Layout, m: usize) {
    let k = lay.k;
    for i in 0..k {
        theta[lay.r_mean(m) + i] = theta[lay.mean(m) + i];
        theta[lay.r_log_var(m) + i] = theta[lay.log_var(m) + i] + 100f64.ln();
    }
}

/// The bound holds for any smoothing kernels, and a weight's contribution to 𝓘 vanishes as its ρ → ∞,
/// but the gradient towards wide kernels decays like (s/ρ)², so an optimiser leaves kernels too
/// narrow in the weights where the components overlap (𝓘 can even end below 0). This step tries,
/// weight by weight, multiplying that weight's ρ_m (all m) by 1e6, and keeps each change that raises
/// the entropy bound (so it never lowers it).
fn widen_smoothing_if_better(theta: &mut [f64], lay: Layout, q: &[f64]) {
    if lay.m < 2 {
        return;
    }
    let mut now = entropy_bound(theta, lay, q, None).total();
    for i in 0..lay.k {
        let old: Vec<f64> = (0..lay.m).map(|m| theta[lay.r_log_var(m) + i]).collect();
        for m in 0..lay.m {
            theta[lay.r_log_var(m) + i] += 1e6f64.ln();
        }
        let trial = entropy_bound(theta, lay, q, None).total();
        if trial > now {
            now = trial;
        } else {
            for (m, v) in old.iter().enumerate() {
                theta[lay.r_log_var(m) + i] = *v;
            }
        }
    }
}

/// Continues a fit on the same data for `cycles` more (optimise, mixing if any, hyper) cycles.
pub fn continue_fit(
    data: &Dataset,
    fit: &VbFit,
    opts: &VbOptions,
    cycles: usize,
) -> Result<VbFit, NetError> {
    if data.d != fit.arch.inputs {
        return Err(NetError::InputDim {
            expected: fit.arch.inputs,
            got: data.d,
        });
    }
    let p = Problem {
        arch: fit.arch,
        x: &data.x,
        t: &data.t,
        form: fit.form,
    };
    let o = VbOptions {
        cycles,
        ..opts.clone()
    };
    run_cycles(
        &p,
        &o,
        fit.theta.clone(),
        fit.q.clone(),
        fit.prior.clone(),
        fit.hyper.clone(),
    )
}

fn run_cycles(
    p: &Problem<'_>,
    opts: &VbOptions,
    mut theta: Vec<f64>,
    mut q: Vec<f64>,
    prior: Prior,
    mut hyper: Hyper,
) -> Result<VbFit, NetError> {
    let lay = Layout {
        m: q.len(),
        k: p.arch.n_weights(),
    };
    let mut trace = Vec::with_capacity(opts.cycles);
    let alternate = lay.m > 1 && opts.smoothing_iters > 0;
    for _ in 0..opts.cycles {
        if alternate {
            let it = opts.smoothing_iters;
            theta = optimise_part(p, theta, lay, &q, &prior, &hyper, it, lay.smoothing());
            let it = opts.iters_per_cycle;
            theta = optimise_part(p, theta, lay, &q, &prior, &hyper, it, lay.components());
        } else {
            theta = optimise(p, theta, lay, &q, &prior, &hyper, opts.iters_per_cycle);
        }
        widen_smoothing_if_better(&mut theta, lay, &q);
        if opts.update_mixing {
            update_mixing(p, &theta, lay, &mut q, &prior, &hyper);
        }
        update_hyper(p, &theta, lay, &q, &prior, &mut hyper, &opts.beta_prior);
        trace.push(bound(p, &theta, lay, &q, &prior, &hyper, &opts.beta_prior).total);
    }
    if alternate {
        let it = 20 * opts.smoothing_iters;
        theta = optimise_part(p, theta, lay, &q, &prior, &hyper, it, lay.smoothing());
    }
    let b = bound(p, &theta, lay, &q, &prior, &hyper, &opts.beta_prior);
    if !b.total.is_finite() {
        return Err(NetError::Numerical(format!(
            "bound is {} (seed {})",
            b.total, opts.seed
        )));
    }
    Ok(VbFit {
        arch: p.arch,
        components: lay.m,
        q,
        theta,
        prior,
        hyper,
        beta_prior: opts.beta_prior,
        form: opts.form,
        bound: b,
        trace,
        seed: opts.seed,
    })
}

/// Maximises the bound over θ with the hyper-posteriors fixed.
pub(crate) fn optimise(
    p: &Problem<'_>,
    theta: Vec<f64>,
    lay: Layout,
    q: &[f64],
    prior: &Prior,
    hyper: &Hyper,
    iters: usize,
) -> Vec<f64> {
    let all = 0..theta.len();
    optimise_part(p, theta, lay, q, prior, hyper, iters, all)
}

/// Maximises the bound over θ[`part`] with the rest of θ and the hyper-posteriors fixed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn optimise_part(
    p: &Problem<'_>,
    mut theta: Vec<f64>,
    lay: Layout,
    q: &[f64],
    prior: &Prior,
    hyper: &Hyper,
    iters: usize,
    part: Range<usize>,
) -> Vec<f64> {
    let prec = prior.weight_precisions(&hyper.alpha);
    let beta = hyper.beta.mean();
    let mut th = theta.clone();
    let mut full = vec![0.0; theta.len()];
    let res = minimize(
        |x, g| {
            th[part.clone()].copy_from_slice(x);
            full.iter_mut().for_each(|v| *v = 0.0);
            let v = weight_objective(p, &th, lay, q, &prec, beta, Some(&mut full)).0;
            for (gi, fi) in g.iter_mut().zip(&full[part.clone()]) {
                *gi = -fi;
            }
            -v
        },
        theta[part.clone()].to_vec(),
        LbfgsOptions {
            max_iters: iters,
            ..Default::default()
        },
    );
    theta[part].copy_from_slice(&res.x);
    theta
}

/// Restarts: `restarts` fits with seeds `opts.seed`, `opts.seed + 1`, …, run in parallel (each is
/// independent and seeded, so the result does not depend on the thread count). Failed restarts are
/// dropped; an error only if all fail.
pub fn fit_vb_restarts(
    data: &Dataset,
    opts: &VbOptions,
    restarts: usize,
) -> Result<Vec<VbFit>, NetError> {
    check(data, opts)?;
    let fits: Vec<Result<VbFit, NetError>> = (0..restarts.max(1) as u64)
        .into_par_iter()
        .map(|r| {
            fit_vb(
                data,
                &VbOptions {
                    seed: opts.seed.wrapping_add(r),
                    ..opts.clone()
                },
            )
        })
        .collect();
    let mut ok = Vec::new();
    let mut last_err = None;
    for f in fits {
        match f {
            Ok(f) => ok.push(f),
            Err(e) => last_err = Some(e),
        }
    }
    if ok.is_empty() {
        return Err(last_err.unwrap_or(NetError::NoData));
    }
    Ok(ok)
}

/// Index of the fit with the largest bound.
pub fn best_by_bound(fits: &[VbFit]) -> usize {
    (0..fits.len())
        .max_by(|&a, &b| fits[a].bound.total.total_cmp(&fits[b].bound.total))
        .unwrap_or(0)
}
