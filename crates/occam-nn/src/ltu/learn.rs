//! Learning a network of linear threshold units (thesis §3.5–3.7): alternate inference of every
//! pattern's hidden states with a maximum-margin linear classifier per unit, given those states.
//!
//! Given the inferred states, each hidden or output unit's incoming weights form an independent
//! linear classification problem (inputs: its parents' states; targets: its own states), one
//! constraint per pattern (eq. 3.28). The thesis solves each by a soft-margin SVM (SMO) rather
//! than the perceptron rule (eq. 3.29). The heuristics of §3.7 are options:
//! * deterministic annealing of the hidden-state updates, and initialisation from a forward pass;
//! * keeping the network with the best training error seen so far;
//! * weight normalisation (below);
//! * the relaxed KKT tolerance 10^{−(k−1)} in rounds k ≤ 4, 10⁻⁴ afterwards.
//!
//! **Weight normalisation.** The thesis "normalises the weights which propagate into a node by the
//! magnitude of the vector of weights which propagate out from it", without a formula; the intent
//! is that neither side dominates the inference field. A unit's hyperplane is invariant to scaling
//! its incoming weights and bias, so we rescale them until the norm of its incoming weights (bias
//! excluded) equals the norm of its outgoing weights. The mapping the network computes is unchanged.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::datasets::Dataset;
use super::error::{LtuError, Result};
use super::icm::{infer_pattern, InferenceOptions};
use super::network::{LtuNetwork, States};
use super::smo::{kkt_tolerance, train_svm, Gram, SmoOptions};

/// Options of [`train`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainOptions {
    /// Sizes of the hidden layers (the thesis uses one layer of H units).
    pub hidden: Vec<usize>,
    /// The SVM error penalty C.
    pub c: f64,
    /// Rounds of inference + learning (the thesis uses seven).
    pub rounds: usize,
    /// How hidden states are inferred.
    pub inference: InferenceOptions,
    /// Cap on SMO iterations per unit and round (the thesis: 100 000).
    pub smo_max_iter: usize,
    /// Use the relaxed KKT tolerance schedule ([`kkt_tolerance`]); otherwise 10⁻⁴ throughout.
    pub relax_kkt: bool,
    /// Apply weight normalisation after each learning step.
    pub normalise_weights: bool,
    /// Return the network with the best training error seen (ties go to the later network)
    /// rather than the last one.
    pub keep_best: bool,
    /// Initial weights and biases are drawn from U(−init_scale, init_scale).
    pub init_scale: f64,
}

impl TrainOptions {
    /// The thesis's protocol (§3.7–3.8) for one hidden layer of `hidden` units and penalty `c`.
    pub fn thesis(hidden: usize, c: f64) -> Self {
        Self {
            hidden: vec![hidden],
            c,
            rounds: 7,
            inference: InferenceOptions::thesis(),
            smo_max_iter: 100_000,
            relax_kkt: true,
            normalise_weights: true,
            keep_best: true,
            init_scale: 1.0,
        }
    }
}

/// The outcome of [`train`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainReport {
    /// The returned network.
    pub network: LtuNetwork,
    /// Training errors of the initial network (index 0) and after each round.
    pub train_errors: Vec<usize>,
    /// The round whose network is returned (0 = the initial random network).
    pub best_round: usize,
    /// Total SMO iterations in each round.
    pub smo_iterations: Vec<usize>,
    /// Number of unit SVMs, over all rounds, stopped by the iteration cap.
    pub smo_capped: usize,
    /// Number of pattern inferences, over all rounds, whose ICM passes did not converge.
    pub icm_unconverged: usize,
}

/// Trains a network with the given options from a random initialisation drawn with `seed`;
/// the result depends only on the data, the options and the seed.
pub fn train(data: &Dataset, opts: &TrainOptions, seed: u64) -> Result<TrainReport> {
    if opts.hidden.contains(&0) {
        return Err(LtuError::InvalidOption {
            name: "hidden",
            why: format!("hidden layers must be non-empty, got {:?}", opts.hidden),
        });
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let sizes: Vec<usize> = std::iter::once(data.d)
        .chain(opts.hidden.iter().copied())
        .chain(std::iter::once(data.k))
        .collect();
    let mut net = LtuNetwork::random(&sizes, opts.init_scale, &mut rng)?;

    let mut report = TrainReport {
        train_errors: vec![net.count_errors(&data.x, &data.y)?],
        network: net.clone(),
        best_round: 0,
        smo_iterations: Vec::new(),
        smo_capped: 0,
        icm_unconverged: 0,
    };
    for round in 1..=opts.rounds {
        let mut all: Vec<States> = Vec::with_capacity(data.n);
        for p in 0..data.n {
            let (s, stats) = infer_pattern(
                &net,
                data.input(p),
                data.target(p),
                &opts.inference,
                &mut rng,
            )?;
            report.icm_unconverged += usize::from(!stats.converged);
            all.push(s);
        }
        let smo = SmoOptions {
            c: opts.c,
            tol: if opts.relax_kkt {
                kkt_tolerance(round)
            } else {
                1e-4
            },
            max_iter: opts.smo_max_iter,
        };
        let mut iterations = 0;
        for l in 0..net.layers().len() {
            let n_in = net.layers()[l].n_in();
            let x: Vec<f64> = all.iter().flat_map(|s| s[l].iter().copied()).collect();
            let gram = Gram::new(x, data.n, n_in)?;
            for i in 0..net.layers()[l].n_out() {
                let y: Vec<f64> = all.iter().map(|s| s[l + 1][i]).collect();
                let svm = train_svm(&gram, &y, &smo)?;

                iterations += svm.iterations;
                report.smo_capped += usize::from(!svm.converged);
                let row = net.layers_mut()[l].row_mut(i);
                row[..n_in].copy_from_slice(&svm.w);
                row[n_in] = svm.b;
            }
        }
        report.smo_iterations.push(iterations);
        if opts.normalise_weights {
            normalise_weights(&mut net);
        }
        let errors = net.count_errors(&data.x, &data.y)?;
        report.train_errors.push(errors);
        if !opts.keep_best || errors <= report.train_errors[report.best_round] {
            report.best_round = round;
            report.network = net.clone();
        }
    }
    Ok(report)
}

/// Rescales each hidden unit's incoming weights and bias so that the norm of its incoming weights
/// equals the norm of its outgoing weights (see the module docs); units with either norm zero are
/// left alone. Layers go from the output side down, so that each unit's outgoing weights are
/// final when it is rescaled.
pub fn normalise_weights(net: &mut LtuNetwork) {
    for l in (0..net.layers().len() - 1).rev() {
        for j in 0..net.layers()[l].n_out() {
            let out = &net.layers()[l + 1];
            let out_norm = (0..out.n_out())
                .map(|i| out.weight(i, j).powi(2))
                .sum::<f64>()
                .sqrt();
            let layer = &mut net.layers_mut()[l];
            let n_in = layer.n_in();
            let row = layer.row_mut(j);
            let in_norm = row[..n_in].iter().map(|w| w * w).sum::<f64>().sqrt();
            if in_norm > 0.0 && out_norm > 0.0 {
                let scale = out_norm / in_norm;
                row.iter_mut().for_each(|w| *w *= scale);
            }
        }
    }
}
