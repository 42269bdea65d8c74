//! One entry point for fitting a network to a user's data set: a [`NetSpec`] (architecture, prior,
//! method, schedule, restarts, seed) and a [`Dataset`] in, a [`TrainedNet`] out that predicts in the
//! data's own units and serialises to JSON (what `occam nn fit` writes and `occam nn predict`
//! reads).
//!
//! Inputs and target are standardised with the training set's means and standard deviations
//! before fitting (the papers' protocols standardise too), and predictions are mapped back: the
//! mean by t = μ_t + σ_t z, variances by σ_t².

use crate::baselines::early_stopping::{early_stopping, EarlyStoppingFit, EarlyStoppingOptions};
use crate::baselines::evidence::{
    committee_predict, fit_evidence_restarts, EvidenceFit, EvidenceOptions,
};
use crate::baselines::hmc::{hmc, HmcOptions, HmcRun};
use crate::bnn::moments::G2Form;
use crate::bnn::network::NetError;
use crate::bnn::prior::{Gamma, PriorKind};
use crate::bnn::structure::{structure_em, StructureFit};
use crate::bnn::vb::{best_by_bound, fit_vb_restarts, Prediction, VbFit, VbOptions};
use crate::data::{Dataset, ZScore};
use serde::{Deserialize, Serialize};

/// How the weights' posterior is approximated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Variational Bayes: one diagonal Gaussian (`components` = 1) or a committee of M.
    #[default]
    Vb,
    /// The evidence procedure (Laplace + MacKay's re-estimation); predicts with the mean of the
    /// `committee` restarts of highest evidence.
    Evidence,
    /// Hybrid Monte Carlo started at the best evidence mode.
    Hmc,
    /// Early stopping on a random tenth of the training set held out for validation.
    EarlyStopping,
}

/// Everything that defines a fit. Every field has a default, so a JSON spec names only what it
/// changes (`{"hidden": 8, "components": 3}`); unknown fields are an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetSpec {
    /// Hidden units H.
    pub hidden: usize,
    /// Mixture components M of the variational posterior (VB only).
    pub components: usize,
    /// Weight prior.
    pub prior: PriorKind,
    /// Approximation method.
    pub method: Method,
    /// Independent restarts (VB and the evidence procedure keep the best by bound / evidence).
    pub restarts: usize,
    /// Seed of every random choice (restart r uses seed + r).
    pub seed: u64,
    /// ⟨g²⟩ exactly (a true bound) rather than by the c = 1.24 approximation.
    pub exact_g2: bool,
    /// Single-component pre-training iterations of each committee member.
    pub pretrain_iters: usize,
    /// (optimise, hyper-parameter update) cycles; for HMC the number of samples ÷ 100.
    pub cycles: usize,
    /// Optimiser iterations per cycle.
    pub iters_per_cycle: usize,
    /// NRD structure-EM cycles after the initial fit (prior `nrd` only; 0: none).
    pub structure_cycles: usize,
    /// Evidence committee size (method `evidence`).
    pub committee: usize,
    /// Gamma hyper-prior of each α.
    pub alpha_prior: Gamma,
    /// Gamma hyper-prior of β.
    pub beta_prior: Gamma,
}

impl Default for NetSpec {
    /// The committee paper's settings (§4): H = 8, one diagonal Gaussian, single α, 10 restarts,
    /// 100 pre-training iterations, 5 × 500 iterations, a_α = 3e-4, b_α = 1e-4, a_β = 0.05,
    /// b_β = 1e-4.
    fn default() -> Self {
        let p = VbOptions::committee_paper(8, 1);
        NetSpec {
            hidden: 8,
            components: 1,
            prior: PriorKind::Single,
            method: Method::Vb,
            restarts: 10,
            seed: 1,
            exact_g2: true,
            pretrain_iters: p.pretrain_iters,
            cycles: p.cycles,
            iters_per_cycle: p.iters_per_cycle,
            structure_cycles: 0,
            committee: 1,
            alpha_prior: p.alpha_prior,
            beta_prior: p.beta_prior,
        }
    }
}

/// The most hidden units a spec may ask for (the thesis's networks have at most a few tens; a
/// fit's time grows with rows × hidden × inputs per iteration).
pub const MAX_HIDDEN: usize = 1024;
/// The most mixture components (the committee's entropy bound holds M² terms per update).
pub const MAX_COMPONENTS: usize = 64;
/// The most restarts (each is a whole fit).
pub const MAX_RESTARTS: usize = 10_000;
/// The most iterations of each schedule field (`cycles`, `iters_per_cycle`, `pretrain_iters`).
pub const MAX_ITERS: usize = 1_000_000;
/// The most NRD structure-EM cycles (each refits the network).
pub const MAX_STRUCTURE_CYCLES: usize = 1000;
/// The most weights K = H(I + 1) + H + 1 times components a fit may hold (16 M weights, 128 MiB
/// per copy; the optimiser keeps a few tens of copies).
pub const MAX_WEIGHTS: usize = 1 << 24;
/// The most weights of a Laplace fit (evidence, HMC): its Hessian holds K² numbers (2 GiB at the
/// cap) and is factorised (K³ operations) every cycle.
pub const MAX_LAPLACE_WEIGHTS: usize = 16_384;
/// The most numbers HMC keeps (kept samples × K weights, 2 GiB).
pub const MAX_HMC_VALUES: usize = 1 << 28;
/// The most numbers of per-row work per iteration (rows × hidden units × components), 2 GiB of
/// activation moments.
pub const MAX_ROW_UNITS: usize = 1 << 28;

fn setting(name: &'static str, why: impl Into<String>) -> NetError {
    NetError::Setting {
        name,
        why: why.into(),
    }
}

impl NetSpec {
    /// Checks the settings that the fitting functions do not check themselves.
    pub fn validate(&self) -> Result<(), NetError> {
        let positive = [
            ("hidden", self.hidden),
            ("components", self.components),
            ("restarts", self.restarts),
            ("cycles", self.cycles),
            ("iters_per_cycle", self.iters_per_cycle),
            ("committee", self.committee),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(setting(name, "must be at least 1"));
            }
        }
        let capped = [
            ("hidden", self.hidden, MAX_HIDDEN),
            ("components", self.components, MAX_COMPONENTS),
            ("restarts", self.restarts, MAX_RESTARTS),
            ("cycles", self.cycles, MAX_ITERS),
            ("iters_per_cycle", self.iters_per_cycle, MAX_ITERS),
            ("pretrain_iters", self.pretrain_iters, MAX_ITERS),
            (
                "structure_cycles",
                self.structure_cycles,
                MAX_STRUCTURE_CYCLES,
            ),
        ];
        for (name, v, max) in capped {
            if v > max {
                return Err(setting(name, format!("must be at most {max}, got {v}")));
            }
        }
        if self.components > 1 && self.method != Method::Vb {
            return Err(setting(
                "components",
                "a mixture posterior needs method `vb`",
            ));
        }
        if self.structure_cycles > 0 && (self.prior != PriorKind::Nrd || self.method != Method::Vb)
        {
            return Err(setting(
                "structure_cycles",
                "structure EM needs method `vb` and prior `nrd`",
            ));
        }
        if self.prior == PriorKind::Nrd && self.method != Method::Vb {
            return Err(setting("prior", "the NRD prior needs method `vb`"));
        }
        if self.committee > self.restarts {
            return Err(setting("committee", "cannot exceed restarts"));
        }
        Ok(())
    }

    /// Checks that a fit of this spec to `rows` rows of `inputs` columns stays within the
    /// documented caps ([`MAX_WEIGHTS`], [`MAX_LAPLACE_WEIGHTS`], [`MAX_HMC_VALUES`],
    /// [`MAX_ROW_UNITS`]) before anything is allocated.
    pub fn check_size(&self, inputs: usize, rows: usize) -> Result<(), NetError> {
        let too_big = |what: String, max: usize| {
            setting(
                "hidden",
                format!("{what} is more than the limit of {max} (fewer hidden units, inputs or components)"),
            )
        };
        let k = inputs
            .checked_add(2)
            .and_then(|f| f.checked_mul(self.hidden))
            .and_then(|v| v.checked_add(1));
        let km = k.and_then(|k| k.checked_mul(self.components));
        match km {
            Some(v) if v <= MAX_WEIGHTS => {}
            _ => {
                return Err(too_big(
                    format!(
                        "{} hidden × ({inputs} inputs + 2) + 1 weights × {} components",
                        self.hidden, self.components
                    ),
                    MAX_WEIGHTS,
                ))
            }
        }
        let k = k.unwrap_or(usize::MAX);
        match rows
            .checked_mul(self.hidden)
            .and_then(|v| v.checked_mul(self.components))
        {
            Some(v) if v <= MAX_ROW_UNITS => {}
            _ => {
                return Err(too_big(
                    format!(
                        "{rows} rows × {} hidden units × {} components",
                        self.hidden, self.components
                    ),
                    MAX_ROW_UNITS,
                ))
            }
        }
        if matches!(self.method, Method::Evidence | Method::Hmc) && k > MAX_LAPLACE_WEIGHTS {
            return Err(too_big(
                format!("{k} weights (a Laplace fit holds K² numbers)"),
                MAX_LAPLACE_WEIGHTS,
            ));
        }
        if self.method == Method::Hmc {
            let kept = self.cycles.max(2).checked_mul(100).map(|s| s - s / 3);
            match kept.and_then(|s| s.checked_mul(k)) {
                Some(v) if v <= MAX_HMC_VALUES => {}
                _ => {
                    return Err(setting(
                        "cycles",
                        format!(
                            "HMC would keep {} × 100 × 2/3 samples of {k} weights, more than the limit of {MAX_HMC_VALUES} numbers",
                            self.cycles
                        ),
                    ))
                }
            }
        }
        Ok(())
    }

    fn vb_options(&self) -> VbOptions {
        VbOptions {
            prior: self.prior,
            form: if self.exact_g2 {
                G2Form::Exact
            } else {
                G2Form::Approx
            },
            alpha_prior: self.alpha_prior,
            beta_prior: self.beta_prior,
            pretrain_iters: self.pretrain_iters,
            cycles: self.cycles,
            iters_per_cycle: self.iters_per_cycle,
            seed: self.seed,
            ..VbOptions::committee_paper(self.hidden, self.components)
        }
    }

    fn evidence_options(&self) -> EvidenceOptions {
        EvidenceOptions {
            prior: self.prior,
            cycles: self.cycles,
            iters_per_cycle: self.iters_per_cycle,
            seed: self.seed,
            ..EvidenceOptions::paper(self.hidden)
        }
    }
}

/// The fitted posterior of each method (on standardised data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Posterior {
    /// A variational fit (the restart with the largest bound).
    Vb(VbFit),
    /// A variational fit after NRD structure EM.
    Structure(StructureFit),
    /// Evidence fits sorted by decreasing evidence; predictions average the first `committee`.
    Evidence(Vec<EvidenceFit>),
    /// HMC samples.
    Hmc(HmcRun),
    /// The early-stopped network.
    EarlyStopping(EarlyStoppingFit),
}

/// A fitted network: the spec, the standardisation, the posterior and a summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainedNet {
    /// The spec it was fitted with.
    pub spec: NetSpec,
    /// Input columns.
    pub inputs: usize,
    /// Input standardisation (training means and sds).
    pub input_scale: ZScore,
    /// Target mean and sd (training).
    pub target_scale: ZScore,
    /// The posterior.
    pub posterior: Posterior,
    /// The variational bound on ln p(D) of the standardised data (VB only).
    pub bound: Option<f64>,
    /// Training root-mean-square error of the predictive mean, in the target's units.
    pub train_rmse: f64,
}

/// Predictions in the target's units; the variances are those of the method (VB: closed form;
/// HMC: the spread of f over the samples plus the mean noise variance; evidence and early
/// stopping give none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Predictions {
    /// Predictive means.
    pub mean: Vec<f64>,
    /// Variance of f(x) (function uncertainty), when the method gives one.
    pub var_function: Option<Vec<f64>>,
    /// Variance of a new target (function + noise), when the method gives one.
    pub var_total: Option<Vec<f64>>,
}

/// Fits a network to `data` (inputs and targets in their own units).
pub fn fit_network(data: &Dataset, spec: &NetSpec) -> Result<TrainedNet, NetError> {
    spec.validate()?;
    if data.n() < 2 {
        return Err(NetError::NoData);
    }
    spec.check_size(data.d, data.n())?;
    let data_err = |e: crate::data::DataError| setting("data", e.to_string());
    let input_scale = ZScore::fit(&data.x, data.d).map_err(data_err)?;
    let target_scale = ZScore::fit(&data.t, 1).map_err(data_err)?;
    let z = Dataset::new(
        input_scale.apply(&data.x),
        data.d,
        target_scale.apply(&data.t),
    )
    .map_err(data_err)?;
    let (posterior, bound) = match spec.method {
        Method::Vb if spec.structure_cycles > 0 => {
            let s = structure_em(&z, &spec.vb_options(), spec.structure_cycles)?;
            let b = s.fit.bound.total;
            (Posterior::Structure(s), Some(b))
        }
        Method::Vb => {
            let mut all = fit_vb_restarts(&z, &spec.vb_options(), spec.restarts)?;
            let best = all.swap_remove(best_by_bound(&all));
            let b = best.bound.total;
            (Posterior::Vb(best), Some(b))
        }
        Method::Evidence => {
            let all = fit_evidence_restarts(&z, &spec.evidence_options(), spec.restarts)?;
            (Posterior::Evidence(all), None)
        }
        Method::Hmc => {
            let ev = fit_evidence_restarts(&z, &spec.evidence_options(), spec.restarts)?;
            let samples = 100 * spec.cycles.max(2);
            let o = HmcOptions {
                prior: spec.prior,
                seed: spec.seed,
                samples,
                burn_in: samples / 3,
                alpha_prior: spec.alpha_prior,
                beta_prior: spec.beta_prior,
                ..HmcOptions::paper(spec.hidden)
            };
            let run = hmc(&z, &o, &ev[0].w, &ev[0].alpha, ev[0].beta)?;
            (Posterior::Hmc(run), None)
        }
        Method::EarlyStopping => {
            let o = EarlyStoppingOptions {
                hidden: spec.hidden,
                validation: (z.n() / 10).max(1),
                networks: spec.restarts,
                max_iters: spec.cycles * spec.iters_per_cycle,
                check_every: 10,
                seed: spec.seed,
            };
            (Posterior::EarlyStopping(early_stopping(&z, &o)?), None)
        }
    };
    let mut net = TrainedNet {
        spec: spec.clone(),
        inputs: data.d,
        input_scale,
        target_scale,
        posterior,
        bound,
        train_rmse: 0.0,
    };
    let p = net.predict(&data.x)?;
    let sse: f64 = p
        .mean
        .iter()
        .zip(&data.t)
        .map(|(a, b)| (a - b).powi(2))
        .sum();
    net.train_rmse = (sse / data.n() as f64).sqrt();
    let finite = |v: &Option<Vec<f64>>| v.iter().flatten().all(|x| x.is_finite());
    if !net.train_rmse.is_finite() || !finite(&p.var_function) || !finite(&p.var_total) {
        return Err(NetError::Numerical(
            "the fitted network's training predictions are not finite numbers (the data's scale \
             overflows double precision once squared; rescale the data)"
                .into(),
        ));
    }
    Ok(net)
}

impl TrainedNet {
    /// Predictions for the rows of `x` (row-major, `inputs` columns, the data's own units).
    pub fn predict(&self, x: &[f64]) -> Result<Predictions, NetError> {
        if self.inputs == 0 || !x.len().is_multiple_of(self.inputs) {
            return Err(NetError::InputDim {
                expected: self.inputs,
                got: if self.inputs == 0 {
                    0
                } else {
                    x.len() % self.inputs
                },
            });
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(setting(
                "inputs",
                format!(
                    "row {} column {} is not a finite number",
                    i / self.inputs + 1,
                    i % self.inputs + 1
                ),
            ));
        }
        let z = self.input_scale.apply(x);
        let (mt, st) = (self.target_scale.mean[0], self.target_scale.sd[0]);
        let from_vb = |p: Vec<Prediction>| Predictions {
            mean: p.iter().map(|p| mt + st * p.mean).collect(),
            var_function: Some(p.iter().map(|p| st * st * p.var_function).collect()),
            var_total: Some(p.iter().map(|p| st * st * p.var_total).collect()),
        };
        let means = |m: Vec<f64>| Predictions {
            mean: m.iter().map(|v| mt + st * v).collect(),
            ..Default::default()
        };
        Ok(match &self.posterior {
            Posterior::Vb(f) => from_vb(f.predict(&z)?),
            Posterior::Structure(s) => {
                let cols: Vec<f64> = z
                    .chunks_exact(self.inputs)
                    .flat_map(|r| s.inputs.iter().map(move |&c| r[c]))
                    .collect();
                from_vb(s.fit.predict(&cols)?)
            }
            Posterior::Evidence(fits) => means(committee_predict(fits, self.spec.committee, &z)),
            Posterior::EarlyStopping(f) => means(f.predict(&z)),
            Posterior::Hmc(run) => {
                let (mean, var) = run.predict_moments(&z);
                let noise = run.beta.iter().map(|b| 1.0 / b).sum::<f64>() / run.beta.len() as f64;
                Predictions {
                    mean: mean.iter().map(|v| mt + st * v).collect(),
                    var_function: Some(var.iter().map(|v| st * st * v).collect()),
                    var_total: Some(var.iter().map(|v| st * st * (v + noise)).collect()),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests;

mod saved;
