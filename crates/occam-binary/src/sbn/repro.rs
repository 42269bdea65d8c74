//! Reproductions of the published SBN experiments (Lawrence Fig. 2.4 and Fig. 2.7; Leisink &
//! Kappen Table 1, Fig. 8 and the cascade learning experiment). Every run is driven by an explicit
//! seed; network k of a study uses seed `seed + k`.

use super::error::{Result, SbnError};
use super::exact;
use super::gen;
use super::mf::{self, MfInit, MfOptions};
use super::mixture::{self, MixInit, MixOptions};
use serde::Serialize;

/// Options of the Lawrence Fig. 2.4 study (2–4–6 nets, visible clamped to 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixtureStudyOptions {
    /// Number of random networks.
    pub networks: usize,
    /// Largest number of components.
    pub max_components: usize,
    /// Span of the uniform weights and biases.
    pub span: f64,
    /// Base seed.
    pub seed: u64,
    /// Use Lawrence's random initialisation per M instead of growing from mean field.
    pub random_init: bool,
}

impl Default for MixtureStudyOptions {
    fn default() -> Self {
        MixtureStudyOptions {
            networks: 100,
            max_components: 5,
            span: 1.0,
            seed: 0,
            random_init: false,
        }
    }
}

/// Result of the Fig. 2.4 study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixtureStudy {
    /// Mean relative error |L − ln P|/|ln P| for M = 1..max (index M−1).
    pub mean_relative_error: Vec<f64>,
    /// Number of runs in which the bound exceeded the exact value (must be 0).
    pub bound_violations: usize,
    /// Number of runs with a decreasing bound trace (must be 0).
    pub non_monotone: usize,
}

/// Lawrence Fig. 2.4: relative error of mean field and mixtures on random 2–4–6 SBNs.
pub fn mixture_study(o: &MixtureStudyOptions) -> Result<MixtureStudy> {
    if o.networks == 0 || o.max_components == 0 {
        return Err(SbnError::Option {
            name: "networks/max_components".into(),
            why: "must be positive".into(),
        });
    }
    let mut sum = vec![0.0; o.max_components];
    let mut viol = 0;
    let mut nonmono = 0;
    for k in 0..o.networks {
        let seed = o.seed.wrapping_add(k as u64);
        let (sbn, ev) = gen::saul_246(o.span, o.span, seed)?;
        let ll = exact::log_likelihood(&sbn, &ev)?;
        let mfo = MfOptions {
            init: MfInit::Uniform(seed ^ 0x5eed),
            ..MfOptions::default()
        };
        let fits: Vec<(f64, Vec<f64>)> = if o.random_init {
            (1..=o.max_components)
                .map(|m| {
                    let opts = MixOptions {
                        components: m,
                        init: MixInit::Random(seed.wrapping_mul(31).wrapping_add(m as u64)),
                        max_sweeps: 500,
                        tol: 1e-10,
                        mf: mfo,
                    };
                    mixture::fit(&sbn, &ev, &opts).map(|f| (f.bound, f.trace))
                })
                .collect::<Result<_>>()?
        } else {
            let mf_fit = mf::fit(&sbn, &ev, &mfo)?;
            let opts = MixOptions {
                components: o.max_components,
                init: MixInit::Grow {
                    seed: seed ^ 0xabcd,
                    jitter: 1.0,
                },
                max_sweeps: 500,
                tol: 1e-10,
                mf: mfo,
            };
            mixture::grow_path(&sbn, &ev, &mf_fit, o.max_components, &opts)
                .into_iter()
                .map(|f| (f.bound, f.trace))
                .collect()
        };
        for (m, (b, trace)) in fits.iter().enumerate() {
            if *b > ll + 1e-9 {
                viol += 1;
            }
            if trace
                .windows(2)
                .any(|w| w[1] < w[0] - 1e-9 * (1.0 + w[0].abs()))
            {
                nonmono += 1;
            }
            sum[m] += ((b - ll) / ll).abs();
        }
    }
    Ok(MixtureStudy {
        mean_relative_error: sum.iter().map(|s| s / o.networks as f64).collect(),
        bound_violations: viol,
        non_monotone: nonmono,
    })
}

/// Options of the Leisink–Kappen Table 1 / Fig. 8 study on 2–4–6 nets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LkTableOptions {
    /// Span a of the uniform thresholds (biases, 0/1 coding).
    pub a: f64,
    /// Span b of the uniform weights (0/1 coding).
    pub b: f64,
    /// Number of networks.
    pub networks: usize,
    /// Base seed.
    pub seed: u64,
}

/// Result of one Table 1 cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LkTableCell {
    /// a.
    pub a: f64,
    /// b.
    pub b: f64,
    /// Mean η from Saul mean field to third order with full ξ (43).
    pub eta: f64,
    /// Mean relative error of Saul's mean field.
    pub rel_err_mf: f64,
    /// Mean relative error of the first-order bound with full ξ.
    pub rel_err_first: f64,
    /// Mean relative error of the third-order bound with full ξ.
    pub rel_err_third: f64,
    /// Networks where the ordering Saul ≤ first ≤ third ≤ exact failed (must be 0).
    pub order_violations: usize,
}

/// One cell of Leisink & Kappen Table 1 (η_{MF-Saul → third-full}) with the Fig. 8 relative errors.
pub fn lk_table_cell(o: &LkTableOptions) -> Result<LkTableCell> {
    if o.networks == 0 {
        return Err(SbnError::Option {
            name: "networks".into(),
            why: "must be positive".into(),
        });
    }
    let lko = super::third::LkOptions::default();
    let (mut eta, mut e_mf, mut e_1, mut e_3) = (0.0, 0.0, 0.0, 0.0);
    let mut viol = 0;
    for k in 0..o.networks {
        let seed = o.seed.wrapping_add(k as u64);
        let (sbn, ev) = gen::saul_246(o.b, o.a, seed)?;
        let ll = exact::log_likelihood(&sbn, &ev)?;
        let mf_fit = mf::fit(&sbn, &ev, &MfOptions::default())?;
        let ch = super::third::chain_from_mf(&sbn, &ev, &mf_fit, &lko)?;
        let tol = 1e-9 * (1.0 + ll.abs());
        if ch.saul > ch.first.bound + tol
            || ch.first.bound > ch.third.bound + tol
            || ch.third.bound > ll + tol
        {
            viol += 1;
        }
        eta += (ch.third.bound - ch.saul) / (ll - ch.saul);
        e_mf += ch.saul / ll - 1.0;
        e_1 += ch.first.bound / ll - 1.0;
        e_3 += ch.third.bound / ll - 1.0;
    }
    let nn = o.networks as f64;
    Ok(LkTableCell {
        a: o.a,
        b: o.b,
        eta: eta / nn,
        rel_err_mf: e_mf / nn,
        rel_err_first: e_1 / nn,
        rel_err_third: e_3 / nn,
        order_violations: viol,
    })
}

/// Options of the Leisink–Kappen learning experiment (cascade, zero thresholds not adapted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LkLearningOptions {
    /// Number of runs (paper: 20).
    pub runs: usize,
    /// Layers L of the cascade (paper: 5).
    pub layers: usize,
    /// σ₂ of the generating and initial weights (paper: 0.5).
    pub sigma2: f64,
    /// Gradient steps.
    pub steps: usize,
    /// Learning rate (±1 coding).
    pub rate: f64,
    /// Base seed.
    pub seed: u64,
    /// Start every method from the generating weights (the paper's second protocol) instead of
    /// a shared random initialisation.
    pub init_at_generator: bool,
}

impl Default for LkLearningOptions {
    fn default() -> Self {
        LkLearningOptions {
            runs: 20,
            layers: 5,
            sigma2: 0.5,
            steps: 300,
            rate: 2.0,
            seed: 0,
            init_at_generator: true,
        }
    }
}

/// One run of the learning experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LkLearningRun {
    /// Error (46) = sqrt Σ_ij (θ_exact − θ_mf)² against the exactly trained weights.
    pub error_mf: f64,
    /// Error (46) for third order.
    pub error_third: f64,
    /// Exact objective (45) of the exactly trained network.
    pub loglik_exact: f64,
    /// Exact objective of the mean-field trained network.
    pub loglik_mf: f64,
    /// Exact objective of the third-order trained network.
    pub loglik_third: f64,
}

/// Result of the learning experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LkLearning {
    /// Per-run results.
    pub runs: Vec<LkLearningRun>,
    /// Mean weight error of mean field (paper: 0.566).
    pub mean_error_mf: f64,
    /// Mean weight error of third order (paper: 0.073).
    pub mean_error_third: f64,
    /// Runs in which third order had the smaller error.
    pub third_better: usize,
}

/// Leisink & Kappen §5.2 learning experiment: learn the exact bottom-layer distribution (45) of
/// a random cascade by gradient ascent with the exact likelihood, mean field and third order,
/// all from the same random initialisation; compare the weights with the exactly learned ones.
pub fn lk_learning(o: &LkLearningOptions) -> Result<LkLearning> {
    use super::learn::{self, Coding, Dataset, LearnOptions, Method};
    if o.runs == 0 || o.layers < 2 {
        return Err(SbnError::Option {
            name: "runs/layers".into(),
            why: "need at least one run and two layers".into(),
        });
    }
    let mut runs = Vec::with_capacity(o.runs);
    for r in 0..o.runs {
        let seed = o.seed.wrapping_add(r as u64);
        let gen_net = gen::cascade(o.layers, 0.0, o.sigma2, seed)?;
        let vis = gen::cascade_bottom(o.layers);
        let lp = exact::visible_distribution(&gen_net, &vis)?;
        let patterns: Vec<Vec<bool>> = (0..lp.len())
            .map(|s| (0..vis.len()).map(|k| (s >> k) & 1 == 1).collect())
            .collect();
        let data = Dataset {
            visible: vis.clone(),
            patterns,
            weights: lp.iter().map(|l| l.exp()).collect(),
        };
        let init = if o.init_at_generator {
            gen_net.clone()
        } else {
            gen::cascade(o.layers, 0.0, o.sigma2, seed.wrapping_add(1_000_003))?
        };
        let base = LearnOptions {
            steps: o.steps,
            rate: o.rate,
            coding: Coding::PlusMinus,
            learn_biases: false,
            inner: 3,
            third_iters: 5,
            seed,
            method: Method::Exact,
        };
        let ex = learn::learn(&init, &data, &base)?;
        let mfr = learn::learn(
            &init,
            &data,
            &LearnOptions {
                method: Method::MeanField,
                ..base
            },
        )?;
        let th = learn::learn(
            &init,
            &data,
            &LearnOptions {
                method: Method::ThirdOrder,
                ..base
            },
        )?;
        let te = super::third::PmParams::from_sbn(&ex.sbn).theta_e;
        let err = |s: &super::model::Sbn| -> f64 {
            let t = super::third::PmParams::from_sbn(s).theta_e;
            te.iter()
                .zip(&t)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt()
        };
        runs.push(LkLearningRun {
            error_mf: err(&mfr.sbn),
            error_third: err(&th.sbn),
            loglik_exact: learn::exact_objective(&ex.sbn, &data)?,
            loglik_mf: learn::exact_objective(&mfr.sbn, &data)?,
            loglik_third: learn::exact_objective(&th.sbn, &data)?,
        });
    }
    let nn = runs.len() as f64;
    Ok(LkLearning {
        mean_error_mf: runs.iter().map(|r| r.error_mf).sum::<f64>() / nn,
        mean_error_third: runs.iter().map(|r| r.error_third).sum::<f64>() / nn,
        third_better: runs.iter().filter(|r| r.error_third < r.error_mf).count(),
        runs,
    })
}

/// Options of the bars study (Lawrence §2.5, Fig. 2.7).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BarsOptions {
    /// Image side k (thesis: 4); the network is 1–2k–k².
    pub size: usize,
    /// Largest number of mixture components.
    pub max_components: usize,
    /// Training runs per M (thesis: 10).
    pub runs: usize,
    /// Batch gradient steps on the exact bars distribution.
    pub steps: usize,
    /// Learning rate (0/1 coding).
    pub rate: f64,
    /// Mixture sweeps per pattern per step (warm-started).
    pub inner: usize,
    /// Standard deviation of the random initial weights.
    pub init_scale: f64,
    /// Base seed.
    pub seed: u64,
}

impl Default for BarsOptions {
    fn default() -> Self {
        BarsOptions {
            size: 4,
            max_components: 5,
            runs: 10,
            steps: 1000,
            rate: 2.0,
            inner: 3,
            init_scale: 0.5,
            seed: 0,
        }
    }
}

/// Result of the bars study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BarsStudy {
    /// Mean true log-likelihood per pattern after learning, for M = 1..max (index M−1).
    pub mean_loglik: Vec<f64>,
    /// Per-run true log-likelihoods, `runs[M−1][r]`.
    pub runs: Vec<Vec<f64>>,
    /// −(generator entropy): no model can exceed this expected log-likelihood (−3.3791 nats).
    pub generator_bound: f64,
}

/// The bars training set: the 30 distinct images weighted by their generator probabilities,
/// over the 16 visible units 9..25 of the 1–8–16 network.
pub fn bars_dataset() -> super::learn::Dataset {
    bars_dataset_k(4)
}

/// The k×k bars training set over the k² visible units 1+2k.. of a 1–2k–k² network.
pub fn bars_dataset_k(k: usize) -> super::learn::Dataset {
    let d = gen::bars_distribution_k(k);
    super::learn::Dataset {
        visible: (1 + 2 * k..1 + 2 * k + k * k).collect(),
        patterns: d.iter().map(|(img, _)| img.clone()).collect(),
        weights: d.iter().map(|(_, p)| *p).collect(),
    }
}

/// Lawrence Fig. 2.7: train 1–8–16 SBNs on the bars problem with mixtures of M = 1..max
/// components; report the exact expected log-likelihood per pattern of the trained networks.
pub fn bars_study(o: &BarsOptions) -> Result<BarsStudy> {
    if o.max_components == 0 {
        return Err(SbnError::Option {
            name: "max_components".into(),
            why: "must be positive".into(),
        });
    }
    let runs = (1..=o.max_components)
        .map(|m| bars_runs(o, m))
        .collect::<Result<Vec<_>>>()?;
    Ok(BarsStudy {
        mean_loglik: runs
            .iter()
            .map(|v| v.iter().sum::<f64>() / v.len() as f64)
            .collect(),
        runs,
        generator_bound: -gen::bars_entropy_k(o.size),
    })
}

/// The bars runs for one number of components M: the exact expected log-likelihood per pattern
/// of each of `o.runs` networks trained with an M-component mixture. Run r starts from the same
/// random network for every M.
pub fn bars_runs(o: &BarsOptions, m: usize) -> Result<Vec<f64>> {
    use super::learn::{self, Coding, LearnOptions, Method};
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};
    if m == 0 || o.runs == 0 || !(2..=5).contains(&o.size) {
        return Err(SbnError::Option {
            name: "components/runs/size".into(),
            why: "components and runs must be positive and the image side 2..=5".into(),
        });
    }
    let k = o.size;
    let data = bars_dataset_k(k);
    let normal = Normal::new(0.0, o.init_scale.abs()).map_err(|e| SbnError::Option {
        name: "init_scale".into(),
        why: e.to_string(),
    })?;
    let mut lls = Vec::new();
    for r in 0..o.runs {
        let mut rng =
            rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(o.seed.wrapping_add(r as u64));
        let init = super::model::Sbn::layered(
            &[1, 2 * k, k * k],
            |_, _, _| normal.sample(&mut rng),
            |_, _| 0.0,
        )?;
        let res = learn::learn(
            &init,
            &data,
            &LearnOptions {
                method: Method::Mixture(m),
                steps: o.steps,
                rate: o.rate,
                coding: Coding::ZeroOne,
                learn_biases: true,
                inner: o.inner,
                third_iters: 0,
                seed: o.seed.wrapping_add(1000 * r as u64),
            },
        )?;
        lls.push(learn::exact_objective(&res.sbn, &data)?);
    }
    Ok(lls)
}
