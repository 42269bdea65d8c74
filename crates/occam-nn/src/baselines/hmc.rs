//! Hybrid Monte Carlo (Neal 1996; committee paper §2.1, thesis §5.3.1) for the network weights, with
//! Gibbs updates of the Gamma-distributed hyper-parameters between trajectories (Neal's scheme for
//! grouped/ARD priors).
//!
//! Each iteration: (1) momentum refresh p ← ρ p + √(1−ρ²) ξ with ξ ~ N(0, M) (ρ = 0: full refresh;
//! ρ > 0: Horowitz's persistence, with the momentum negated after a rejection so the chain stays
//! reversible); (2) L leapfrog steps of size ε on H = U(w) + ½ pᵀM⁻¹p, U = β E_D + ½ Σ α_k w_k²,
//! with a diagonal mass M_k = α_k + β max(∂²E_D/∂w_k², 0) taken at the start (a fixed
//! preconditioner); (3) Metropolis accept/reject; (4) α_j | w ~ Gamma(a + n_j/2, b + ½ Σ_{k∈j} w_k²)
//! and β | w ~ Gamma(a_β + N/2, b_β + E_D). During burn-in ε is adapted towards an acceptance rate
//! of 0.8 (ε ← ε·1.02 after an acceptance, ε·0.96 after a rejection), then frozen. Predictions
//! average f(x, w_s) over the kept samples.

use super::map::MapProblem;
use crate::bnn::network::{Architecture, NetError};
use crate::bnn::prior::{Gamma, Prior, PriorKind};
use crate::data::Dataset;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma as GammaDist, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// Settings of a hybrid Monte Carlo run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HmcOptions {
    /// Hidden units.
    pub hidden: usize,
    /// Weight prior (single, grouped or ARD).
    pub prior: PriorKind,
    /// Total iterations (committee paper: 300).
    pub samples: usize,
    /// Iterations discarded first (committee paper: 100).
    pub burn_in: usize,
    /// Leapfrog steps per trajectory.
    pub leapfrog: usize,
    /// Initial step size ε (in units of the preconditioned coordinates).
    pub step: f64,
    /// Momentum persistence ρ ∈ [0, 1) (thesis sunspots: 0.95).
    pub persistence: f64,
    /// Gamma hyper-prior of each α.
    pub alpha_prior: Gamma,
    /// Gamma hyper-prior of β.
    pub beta_prior: Gamma,
    /// Seed.
    pub seed: u64,
}

impl HmcOptions {
    /// The committee paper's run length (300 samples, 100 burned) with the paper's hyper-priors.
    pub fn paper(hidden: usize) -> Self {
        HmcOptions {
            hidden,
            prior: PriorKind::Single,
            samples: 300,
            burn_in: 100,
            leapfrog: 50,
            step: 0.2,
            persistence: 0.0,
            alpha_prior: Gamma { a: 3e-4, b: 1e-4 },
            beta_prior: Gamma { a: 0.05, b: 1e-4 },
            seed: 0,
        }
    }
}

/// The kept samples and diagnostics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HmcRun {
    /// The network.
    pub arch: Architecture,
    /// Kept weight samples.
    pub samples: Vec<Vec<f64>>,
    /// Acceptance rate after burn-in.
    pub acceptance: f64,
    /// The frozen step size.
    pub step: f64,
    /// β of each kept sample.
    pub beta: Vec<f64>,
}

impl HmcRun {
    /// The sample average of f(x, w_s) at each row of `x`.
    pub fn predict(&self, x: &[f64]) -> Vec<f64> {
        let p = MapProblem {
            arch: self.arch,
            x,
            t: &[],
        };
        let mut out = vec![0.0; x.len() / self.arch.inputs];
        for w in &self.samples {
            for (o, f) in out.iter_mut().zip(p.predict(w, x)) {
                *o += f / self.samples.len() as f64;
            }
        }
        out
    }

    /// The sample mean and sample variance (÷ S) of f(x, w_s) at each row of `x`.
    pub fn predict_moments(&self, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let p = MapProblem {
            arch: self.arch,
            x,
            t: &[],
        };
        let rows = x.len() / self.arch.inputs;
        let (mut m1, mut m2) = (vec![0.0; rows], vec![0.0; rows]);
        let s = self.samples.len().max(1) as f64;
        for w in &self.samples {
            for ((a, b), f) in m1.iter_mut().zip(m2.iter_mut()).zip(p.predict(w, x)) {
                *a += f / s;
                *b += f * f / s;
            }
        }
        let var = m1
            .iter()
            .zip(&m2)
            .map(|(a, b)| (b - a * a).max(0.0))
            .collect();
        (m1, var)
    }
}

/// Runs HMC from weights `w0` and hyper-parameters (`alpha0` per prior hyper-parameter, `beta0`).
pub fn hmc(
    data: &Dataset,
    opts: &HmcOptions,
    w0: &[f64],
    alpha0: &[f64],
    beta0: f64,
) -> Result<HmcRun, NetError> {
    let arch = Architecture::new(data.d, opts.hidden)?;
    if opts.prior == PriorKind::Nrd {
        return Err(NetError::Setting {
            name: "prior",
            why: "HMC here supports single, grouped and ARD priors".into(),
        });
    }
    let prior = Prior::new(opts.prior, &arch, opts.alpha_prior);
    let k = arch.n_weights();
    if w0.len() != k {
        return Err(NetError::ParamLen {
            expected: k,
            got: w0.len(),
        });
    }
    if alpha0.len() != prior.n_hyper()
        || opts.burn_in >= opts.samples
        || !(0.0..1.0).contains(&opts.persistence)
    {
        return Err(NetError::Setting {
            name: "hmc",
            why: "needs one α per hyper-parameter, burn_in < samples and persistence in [0, 1)"
                .into(),
        });
    }
    let p = MapProblem {
        arch,
        x: &data.x,
        t: &data.t,
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
    let mut w = w0.to_vec();
    let mut alpha = alpha0.to_vec();
    let mut beta = beta0;
    let ak = |alpha: &[f64]| -> Vec<f64> { prior.links.iter().map(|l| alpha[l[0]]).collect() };
    let h = p.hessian_error(&w);
    let mass: Vec<f64> = (0..k)
        .map(|i| ak(&alpha)[i] + beta * h[i * k + i].max(0.0))
        .collect();
    let mut mom: Vec<f64> = mass
        .iter()
        .map(|m| m.sqrt() * rng.sample::<f64, _>(StandardNormal))
        .collect();
    let mut eps = opts.step;
    let (mut g, mut gn) = (vec![0.0; k], vec![0.0; k]);
    let mut run = HmcRun {
        arch,
        samples: Vec::new(),
        acceptance: 0.0,
        step: eps,
        beta: Vec::new(),
    };
    let mut accepted = 0usize;
    for it in 0..opts.samples {
        let a = ak(&alpha);
        let rho = opts.persistence;
        for (pm, m) in mom.iter_mut().zip(&mass) {
            *pm = rho * *pm
                + (1.0 - rho * rho).sqrt() * m.sqrt() * rng.sample::<f64, _>(StandardNormal);
        }
        let u0 = p.penalised(&w, &a, beta, &mut g);
        let k0: f64 = mom.iter().zip(&mass).map(|(q, m)| 0.5 * q * q / m).sum();
        let (mut wn, mut pn) = (w.clone(), mom.clone());
        // Leapfrog.
        gn.copy_from_slice(&g);
        let mut u1 = u0;
        for _ in 0..opts.leapfrog {
            for (q, gi) in pn.iter_mut().zip(&gn) {
                *q -= 0.5 * eps * gi;
            }
            for ((x, q), m) in wn.iter_mut().zip(&pn).zip(&mass) {
                *x += eps * q / m;
            }
            u1 = p.penalised(&wn, &a, beta, &mut gn);
            for (q, gi) in pn.iter_mut().zip(&gn) {
                *q -= 0.5 * eps * gi;
            }
            if !u1.is_finite() {
                break;
            }
        }
        let k1: f64 = pn.iter().zip(&mass).map(|(q, m)| 0.5 * q * q / m).sum();
        let log_acc = (u0 + k0) - (u1 + k1);
        let accept = u1.is_finite() && log_acc.is_finite() && rng.random::<f64>().ln() < log_acc;
        if accept {
            w = wn;
            mom = pn;
            if it >= opts.burn_in {
                accepted += 1;
            }
        } else {
            mom.iter_mut().for_each(|q| *q = -*q);
        }
        if it < opts.burn_in {
            eps *= if accept { 1.02 } else { 0.96 };
        }
        // Gibbs updates of the hyper-parameters.
        let mut shape: Vec<f64> = prior.hyper.iter().map(|h| h.a).collect();
        let mut rate: Vec<f64> = prior.hyper.iter().map(|h| h.b).collect();
        for (l, wk) in prior.links.iter().zip(&w) {
            shape[l[0]] += 0.5;
            rate[l[0]] += 0.5 * wk * wk;
        }
        for j in 0..alpha.len() {
            alpha[j] = sample_gamma(&mut rng, shape[j], rate[j])?;
        }
        let ed = p.error(&w, None);
        beta = sample_gamma(
            &mut rng,
            opts.beta_prior.a + 0.5 * data.n() as f64,
            opts.beta_prior.b + ed,
        )?;
        if it >= opts.burn_in {
            run.samples.push(w.clone());
            run.beta.push(beta);
        }
    }
    run.acceptance = accepted as f64 / (opts.samples - opts.burn_in) as f64;
    run.step = eps;
    Ok(run)
}

/// `chains` independent HMC chains run in parallel from the same start, chain c seeded with
/// `opts.seed + c`, each with `opts`' run length; the kept samples are pooled in chain order (so
/// predictions average over all chains), the acceptance rate and the frozen step size are the
/// chains' means. The result does not depend on the number of threads.
pub fn hmc_chains(
    data: &Dataset,
    opts: &HmcOptions,
    chains: usize,
    w0: &[f64],
    alpha0: &[f64],
    beta0: f64,
) -> Result<HmcRun, NetError> {
    use rayon::prelude::*;
    let runs: Vec<Result<HmcRun, NetError>> = (0..chains.max(1) as u64)
        .into_par_iter()
        .map(|c| {
            let o = HmcOptions {
                seed: opts.seed.wrapping_add(c),
                ..opts.clone()
            };
            hmc(data, &o, w0, alpha0, beta0)
        })
        .collect();
    let mut it = runs.into_iter();
    let mut all = it.next().ok_or(NetError::NoData)??;
    let mut n = 1.0;
    for r in it {
        let r = r?;
        all.samples.extend(r.samples);
        all.beta.extend(r.beta);
        all.acceptance += r.acceptance;
        all.step += r.step;
        n += 1.0;
    }
    all.acceptance /= n;
    all.step /= n;
    Ok(all)
}

fn sample_gamma(rng: &mut Xoshiro256PlusPlus, shape: f64, rate: f64) -> Result<f64, NetError> {
    let d = GammaDist::new(shape, 1.0 / rate)
        .map_err(|e| NetError::Numerical(format!("Gamma({shape}, {rate}): {e}")))?;
    Ok(d.sample(rng).max(1e-300))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_a_known_posterior_moment() {
        // With β tiny the likelihood is flat and the weights' posterior is the prior given α; with a
        // very informative α hyper-prior (mean 4, tiny variance) every weight has variance ≈ 1/4.
        let x: Vec<f64> = (0..10).map(|i| i as f64 / 10.0).collect();
        let data = Dataset::new(x.clone(), 1, x).unwrap();
        let opts = HmcOptions {
            samples: 1500,
            burn_in: 300,
            leapfrog: 20,
            step: 0.3,
            alpha_prior: Gamma { a: 4e6, b: 1e6 },
            beta_prior: Gamma { a: 1e6, b: 1e12 },
            ..HmcOptions::paper(2)
        };
        let k = Architecture::new(1, 2).unwrap().n_weights();
        let run = hmc(&data, &opts, &vec![0.1; k], &[4.0], 1e-6).unwrap();
        let n = run.samples.len() as f64;
        let var: f64 = (0..k)
            .map(|i| run.samples.iter().map(|w| w[i] * w[i]).sum::<f64>() / n)
            .sum::<f64>()
            / k as f64;
        assert!((var - 0.25).abs() < 0.04, "mean second moment {var}");
        assert!(run.acceptance > 0.5, "acceptance {}", run.acceptance);
    }
}
