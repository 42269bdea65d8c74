//! Learning Boltzmann machines by gradient ascent on F = L⁺ − L⁻ (Lawrence §1.8.2, §4.2–4.4).
//!
//! ∂F/∂w_ij = ⟨s_i s_j⟩⁺ − ⟨s_i s_j⟩⁻ and ∂F/∂h_i = ⟨s_i⟩⁺ − ⟨s_i⟩⁻ (4.6), (4.15), (4.25), with
//! Q⁺ ≈ P(H|V) (visible units clamped to each pattern, averaged over the data) and Q⁻ ≈ P(H,V).
//! Q⁻ can be exact, mean field or a mixture of mean field; mean-field Q⁻ can be warm-started from
//! the previous learning step or from each pattern's converged Q⁺ (Lawrence §4.4.1's fix, akin to
//! one-step contrastive divergence). Units 0..n_visible are visible, the rest hidden.

use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use super::error::{BmError, Result};
use super::exact::exact;
use super::mf::{mf_bound, mf_sweep};
use super::mixture::{MixtureState, MAX_COMPONENTS};
use super::model::{BoltzmannMachine, MAX_UNITS};
use super::optim::lbfgs_maximize;
use super::third_order::{third_order_grad_model, third_order_grad_mu};

/// How a phase distribution is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Exact enumeration.
    Exact,
    /// Factorised mean field.
    MeanField,
    /// Mixture of mean-field components (negative phase only).
    Mixture {
        /// Number of components.
        components: usize,
    },
    /// Leisink–Kappen third-order bound B_to (negative phase only): μ starts at the (warm-started)
    /// mean-field solution and is maximised by L-BFGS; the statistics are ∂B/∂h and ∂B/∂w at that μ,
    /// which are total derivatives there (envelope theorem; Leisink & Kappen §5.1, ⟨s_i⟩ = ∂log Z/∂θ^i).
    ThirdOrder,
}

/// Initialisation of a mean-field Q⁻ at each learning step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NegativeInit {
    /// Continue from the previous step's Q⁻ (Lawrence §4.5.2 toy and digits).
    Previous,
    /// Start each pattern's Q⁻ at that pattern's converged Q⁺ (Lawrence §4.4.1 fix; mean field
    /// only).
    FromPositive,
}

/// Learning options.
#[derive(Debug, Clone)]
pub struct LearnOptions {
    /// Number of hidden units.
    pub n_hidden: usize,
    /// Learning rate.
    pub learning_rate: f64,
    /// Gradient steps.
    pub iterations: usize,
    /// Q⁺ for the hidden units (Exact or MeanField).
    pub positive: Phase,
    /// Q⁻.
    pub negative: Phase,
    /// Warm start of a mean-field Q⁻.
    pub negative_init: NegativeInit,
    /// Maximal inference iterations per phase and step (Lawrence toy: 20).
    pub inference_max_iters: usize,
    /// Stop inference when the bound changes by at most this fraction (Lawrence toy: 0.01% = 1e-4).
    pub inference_rel_tol: f64,
    /// Initial parameters ~ N(0, init_std²) (Lawrence toy: 0.1).
    pub init_std: f64,
    /// Seed for the initial parameters and the initial Q⁻.
    pub seed: u64,
}

impl Default for LearnOptions {
    fn default() -> Self {
        Self {
            n_hidden: 0,
            learning_rate: 0.25,
            iterations: 200,
            positive: Phase::MeanField,
            negative: Phase::Mixture { components: 2 },
            negative_init: NegativeInit::Previous,
            inference_max_iters: 20,
            inference_rel_tol: 1e-4,
            init_std: 0.1,
            seed: 0,
        }
    }
}

/// The state after one gradient step.
#[derive(Debug, Clone, Serialize)]
pub struct LearnStep {
    /// Thresholds after the step.
    pub thresholds: Vec<f64>,
    /// Upper-triangular weights (i < j, row order) after the step.
    pub weights: Vec<f64>,
    /// F = L⁺ − L⁻ before the step (an approximation of the mean log-likelihood, not a bound).
    pub objective: f64,
}

/// Learning result.
#[derive(Debug, Clone)]
pub struct LearnResult {
    /// The learnt model.
    pub model: BoltzmannMachine,
    /// One entry per gradient step.
    pub trace: Vec<LearnStep>,
}

/// Statistics of one phase: L, ⟨s⟩ and ⟨s s⟩ (row-major n×n).
struct Stats {
    l: f64,
    mean: Vec<f64>,
    corr: Vec<f64>,
}

fn product_corr(m: &[f64]) -> Vec<f64> {
    let n = m.len();
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = if i == j { 1.0 } else { m[i] * m[j] };
        }
    }
    c
}

fn mf_infer(bm: &BoltzmannMachine, m: &mut [f64], max_iters: usize, rel_tol: f64) -> f64 {
    let mut prev = mf_bound(bm, m);
    for _ in 0..max_iters {
        mf_sweep(bm, m, 1.0, 1.0);
        let b = mf_bound(bm, m);
        if (b - prev).abs() <= rel_tol * b.abs().max(1e-300) {
            return b;
        }
        prev = b;
    }
    prev
}

/// The largest learning rate accepted: a step of that size leaves any bound on the parameters
/// behind (1e308 produced NaN parameters after one step).
pub const MAX_RATE: f64 = 1e6;
/// The most parameter values the learning trace may hold (steps × (units + pairs)), 2 GiB.
pub const MAX_TRACE_VALUES: usize = 1 << 28;

fn check(data: &[Vec<f64>], o: &LearnOptions) -> Result<usize> {
    let nv = data
        .first()
        .map(|r| r.len())
        .ok_or_else(|| BmError::Data("no patterns".into()))?;
    for (k, r) in data.iter().enumerate() {
        if r.len() != nv {
            return Err(BmError::Data(format!(
                "pattern {k} has {} values, expected {nv}",
                r.len()
            )));
        }
        if let Some(v) = r.iter().find(|v| **v != 1.0 && **v != -1.0) {
            return Err(BmError::Data(format!(
                "pattern {k} has value {v}, expected ±1"
            )));
        }
    }
    if matches!(o.positive, Phase::Mixture { .. } | Phase::ThirdOrder) {
        return Err(BmError::InvalidOption {
            option: "positive",
            why: "Q⁺ must be exact or mean field".into(),
        });
    }
    if let Phase::Mixture { components: 0 } = o.negative {
        return Err(BmError::InvalidOption {
            option: "negative",
            why: "mixture needs ≥ 1 component".into(),
        });
    }
    if o.negative_init == NegativeInit::FromPositive && o.negative != Phase::MeanField {
        return Err(BmError::InvalidOption {
            option: "negative_init",
            why: "warm start from Q⁺ is defined for a mean-field Q⁻".into(),
        });
    }
    if !(o.learning_rate.is_finite() && o.learning_rate > 0.0 && o.learning_rate <= MAX_RATE) {
        return Err(BmError::InvalidOption {
            option: "learning_rate",
            why: format!(
                "must be > 0 and at most {MAX_RATE:e}, got {:e}",
                o.learning_rate
            ),
        });
    }
    let n = match nv.checked_add(o.n_hidden) {
        Some(n) if n <= MAX_UNITS => n,
        _ => {
            return Err(BmError::InvalidOption {
                option: "hidden",
                why: format!(
                    "{nv} visible + {} hidden units is more than the limit of {MAX_UNITS} units",
                    o.n_hidden
                ),
            })
        }
    };
    if let Phase::Mixture { components } = o.negative {
        if components > MAX_COMPONENTS {
            return Err(BmError::InvalidOption {
                option: "negative",
                why: format!(
                    "mixture:{components} is more than the limit of {MAX_COMPONENTS} components"
                ),
            });
        }
        super::mixture::check_size(components, n, "negative")?;
    }
    // The trace keeps every step's thresholds and weights (n + n(n−1)/2 values).
    let per_step = n + n * n.saturating_sub(1) / 2;
    if o.iterations == 0 || o.iterations.saturating_mul(per_step.max(1)) > MAX_TRACE_VALUES {
        return Err(BmError::InvalidOption {
            option: "iterations",
            why: format!(
                "must be between 1 and {} for {n} units (the trace keeps every step's {per_step} parameters, at most {MAX_TRACE_VALUES} values in all), got {}",
                MAX_TRACE_VALUES / per_step.max(1),
                o.iterations
            ),
        });
    }
    Ok(nv)
}

/// Q⁺ statistics summed over patterns, and each pattern's full vector (visible values, hidden means).
fn positive_phase(
    bm: &BoltzmannMachine,
    data: &[Vec<f64>],
    nv: usize,
    o: &LearnOptions,
    pos_state: &mut [Vec<f64>],
) -> Result<(Stats, Vec<Vec<f64>>)> {
    let n = bm.n();
    let mut pos = Stats {
        l: 0.0,
        mean: vec![0.0; n],
        corr: vec![0.0; n * n],
    };
    let mut pos_full: Vec<Vec<f64>> = Vec::with_capacity(data.len());
    for (p, pat) in data.iter().enumerate() {
        let clamps: Vec<(usize, f64)> = pat.iter().copied().enumerate().collect();
        let (red, _free) = bm.clamp(&clamps)?;
        let (l, hm, hc) = if o.n_hidden == 0 {
            (red.offset(), Vec::new(), Vec::new())
        } else if o.positive == Phase::Exact {
            let e = exact(&red)?;
            (e.log_z, e.means, e.correlations)
        } else {
            let l = mf_infer(
                &red,
                &mut pos_state[p],
                o.inference_max_iters,
                o.inference_rel_tol,
            );
            let c = product_corr(&pos_state[p]);
            (l, pos_state[p].clone(), c)
        };
        let mut s = pat.clone();
        s.extend_from_slice(&hm);
        for i in 0..n {
            pos.mean[i] += s[i];
            for j in 0..n {
                let c = if i >= nv && j >= nv {
                    hc[(i - nv) * o.n_hidden + (j - nv)]
                } else {
                    s[i] * s[j]
                };
                pos.corr[i * n + j] += c;
            }
        }
        pos.l += l;
        pos_full.push(s);
    }
    Ok((pos, pos_full))
}

/// Learns a BM from ±1 patterns over the visible units (module doc).
pub fn learn(data: &[Vec<f64>], o: &LearnOptions) -> Result<LearnResult> {
    let nv = check(data, o)?;
    let n = nv + o.n_hidden;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(o.seed);
    let normal = Normal::new(0.0, o.init_std.max(0.0)).map_err(|e| BmError::InvalidOption {
        option: "init_std",
        why: e.to_string(),
    })?;
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..i {
            let v = normal.sample(&mut rng);
            w[i * n + j] = v;
            w[j * n + i] = v;
        }
    }
    let h: Vec<f64> = (0..n).map(|_| normal.sample(&mut rng)).collect();
    let mut bm = BoltzmannMachine::new(w, h, 0.0)?;
    let mut pos_state: Vec<Vec<f64>> = vec![vec![0.0; o.n_hidden]; data.len()];
    let mut neg_mf: Vec<f64> = (0..n).map(|_| 0.1 * normal.sample(&mut rng)).collect();
    let mut neg_mix = match o.negative {
        Phase::Mixture { components } => {
            Some(MixtureState::random(components, n, 0.1, o.seed ^ 0x5eed))
        }
        _ => None,
    };
    let mut trace = Vec::with_capacity(o.iterations.min(1 << 16));
    let fixed_pos = (o.n_hidden == 0).then(|| {
        let mut m = vec![0.0; n];
        let mut c = vec![0.0; n * n];
        for pat in data {
            for i in 0..n {
                m[i] += pat[i];
                for j in 0..n {
                    c[i * n + j] += pat[i] * pat[j];
                }
            }
        }
        (m, c)
    });
    for _ in 0..o.iterations {
        // Positive phase, averaged over patterns (constant data statistics without hidden units).
        let (pos, pos_full) = match (&fixed_pos, o.n_hidden) {
            (Some((m, c)), 0) => {
                let k = data.len() as f64;
                let mut l = bm.offset();
                for i in 0..n {
                    l += bm.thresholds()[i] * m[i] / k;
                    for j in 0..i {
                        l += bm.w(i, j) * c[i * n + j] / k;
                    }
                }
                (
                    Stats {
                        l: l * k,
                        mean: m.clone(),
                        corr: c.clone(),
                    },
                    data.to_vec(),
                )
            }
            _ => positive_phase(&bm, data, nv, o, &mut pos_state)?,
        };
        // Negative phase.
        let neg = match o.negative {
            Phase::Exact => {
                let e = exact(&bm)?;
                Stats {
                    l: e.log_z,
                    mean: e.means,
                    corr: e.correlations,
                }
            }
            Phase::MeanField => match o.negative_init {
                NegativeInit::Previous => {
                    let l = mf_infer(&bm, &mut neg_mf, o.inference_max_iters, o.inference_rel_tol);
                    Stats {
                        l,
                        mean: neg_mf.clone(),
                        corr: product_corr(&neg_mf),
                    }
                }
                NegativeInit::FromPositive => {
                    let mut acc = Stats {
                        l: 0.0,
                        mean: vec![0.0; n],
                        corr: vec![0.0; n * n],
                    };
                    for s in &pos_full {
                        let mut m = s.iter().map(|v| v.clamp(-0.999, 0.999)).collect::<Vec<_>>();
                        acc.l += mf_infer(&bm, &mut m, o.inference_max_iters, o.inference_rel_tol);
                        let c = product_corr(&m);
                        acc.mean.iter_mut().zip(&m).for_each(|(a, b)| *a += b);
                        acc.corr.iter_mut().zip(&c).for_each(|(a, b)| *a += b);
                    }
                    let k = pos_full.len() as f64;
                    acc.l /= k;
                    acc.mean.iter_mut().for_each(|a| *a /= k);
                    acc.corr.iter_mut().for_each(|a| *a /= k);
                    acc
                }
            },
            Phase::ThirdOrder => {
                mf_infer(&bm, &mut neg_mf, o.inference_max_iters, o.inference_rel_tol);
                let mut mu = vec![0.0; n];
                bm.fields(&neg_mf, &mut mu);
                lbfgs_maximize(
                    &mut mu,
                    |x, g| third_order_grad_mu(&bm, x, g),
                    200,
                    1e-10,
                    10,
                );
                let (l, dh, mut dw) = third_order_grad_model(&bm, &mu);
                for i in 0..n {
                    dw[i * n + i] = 1.0;
                }
                Stats {
                    l,
                    mean: dh,
                    corr: dw,
                }
            }
            Phase::Mixture { .. } => {
                let st = neg_mix.as_mut().expect("mixture state");
                st.refresh();
                let mut prev = st.bound(&bm);
                for _ in 0..o.inference_max_iters {
                    st.round(&bm);
                    let b = st.bound(&bm);
                    let done = (b - prev).abs() <= o.inference_rel_tol * b.abs().max(1e-300);
                    prev = b;
                    if done {
                        break;
                    }
                }
                Stats {
                    l: prev,
                    mean: st.means(),
                    corr: st.correlations(),
                }
            }
        };
        let k = data.len() as f64;
        let lr = o.learning_rate;
        for i in 0..n {
            let g = pos.mean[i] / k - neg.mean[i];
            bm.thresholds_mut()[i] += lr * g;
            for j in 0..i {
                let g = pos.corr[i * n + j] / k - neg.corr[i * n + j];
                let v = bm.w(i, j) + lr * g;
                bm.set_pair(i, j, v);
            }
        }
        let mut upper = Vec::with_capacity(n * (n - 1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                upper.push(bm.w(i, j));
            }
        }
        let objective = pos.l / k - neg.l;
        if !objective.is_finite() || bm.thresholds().iter().chain(&upper).any(|x| !x.is_finite()) {
            return Err(BmError::InvalidOption {
                option: "learning_rate",
                why: format!(
                    "learning diverged at step {} of {}: the parameters or the objective are no longer finite (objective {objective}); use a smaller rate than {lr:e}",
                    trace.len() + 1,
                    o.iterations
                ),
            });
        }
        trace.push(LearnStep {
            thresholds: bm.thresholds().to_vec(),
            weights: upper,
            objective,
        });
    }
    Ok(LearnResult { model: bm, trace })
}

/// Lawrence's bimodal toy (Kappen & Rodríguez; thesis §4.4): two visible units, no hidden units,
/// data {(1,1), (1,1), (−1,−1)}. Exact maximum likelihood drives the biases to ln 2 / 4.
pub fn toy_data() -> Vec<Vec<f64>> {
    vec![vec![1.0, 1.0], vec![1.0, 1.0], vec![-1.0, -1.0]]
}

/// The variants of Lawrence's toy study (ch. 4): name, negative phase and its start.
pub const TOY_VARIANTS: [(&str, Phase, NegativeInit); 4] = [
    ("exact", Phase::Exact, NegativeInit::Previous),
    ("mean-field", Phase::MeanField, NegativeInit::Previous),
    (
        "mean-field-from-positive",
        Phase::MeanField,
        NegativeInit::FromPositive,
    ),
    (
        "mixture-2",
        Phase::Mixture { components: 2 },
        NegativeInit::Previous,
    ),
];

/// Lawrence's toy run with the given Q⁻ (lr 0.25, init N(0, 0.1²), ≤ 20 inference iterations, 0.01%).
pub fn toy_run(
    negative: Phase,
    negative_init: NegativeInit,
    iterations: usize,
    seed: u64,
) -> Result<LearnResult> {
    learn(
        &toy_data(),
        &LearnOptions {
            negative,
            negative_init,
            iterations,
            seed,
            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::exact::exact;

    /// Data with the empirical distribution of a known 5-unit BM (states repeated ∝ probability).
    fn data_from(bm: &BoltzmannMachine, total: f64) -> Vec<Vec<f64>> {
        let n = bm.n();
        let lz = exact(bm).unwrap().log_z;
        let mut d = Vec::new();
        for s in 0..(1u64 << n) {
            let x: Vec<f64> = (0..n)
                .map(|i| if s >> i & 1 == 1 { 1.0 } else { -1.0 })
                .collect();
            let k = ((bm.log_weight(&x) - lz).exp() * total).round() as usize;
            d.extend(std::iter::repeat_n(x, k));
        }
        d
    }

    fn weight_error(a: &BoltzmannMachine, b: &BoltzmannMachine) -> f64 {
        a.weights()
            .iter()
            .zip(b.weights())
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            + a.thresholds()
                .iter()
                .zip(b.thresholds())
                .map(|(x, y)| (x - y).powi(2))
                .sum::<f64>()
    }

    #[test]
    fn third_order_learning_tracks_exact_where_mean_field_runs_away() {
        let target = crate::bm::sk::sk_network(5, 0.3, 0.3, 21).unwrap();
        let data = data_from(&target, 4000.0);
        let run = |negative| {
            let o = LearnOptions {
                negative,
                learning_rate: 0.2,
                iterations: 200,
                inference_max_iters: 200,
                inference_rel_tol: 1e-12,
                ..Default::default()
            };
            learn(&data, &o).unwrap().model
        };
        let ex = run(Phase::Exact);
        let to = run(Phase::ThirdOrder);
        let mf = run(Phase::MeanField);
        // exact learning reaches the maximum-likelihood fit: model moments equal data moments
        let fit = exact(&ex).unwrap();
        let k = data.len() as f64;
        for i in 0..5 {
            let dm: f64 = data.iter().map(|r| r[i]).sum::<f64>() / k;
            assert!(
                (fit.means[i] - dm).abs() < 1e-3,
                "mean {i}: {} vs {dm}",
                fit.means[i]
            );
        }
        assert!(weight_error(&ex, &target) < 0.1);
        let (e_to, e_mf) = (weight_error(&to, &ex), weight_error(&mf, &ex));
        eprintln!(
            "squared parameter error vs exact ML: third order {e_to:.5}, mean field {e_mf:.5}"
        );
        // weak couplings: the third-order statistics (at the optimised μ) track exact learning,
        // naive mean-field learning (product correlations) runs away (Galland 1993;
        // Lawrence §4.5.2)
        assert!(e_to < 0.05, "third order {e_to}");
        assert!(
            e_mf > 10.0 * e_to,
            "third order {e_to} vs mean field {e_mf}"
        );
    }

    #[test]
    fn bad_data_is_rejected() {
        assert!(learn(&[vec![1.0, 0.5]], &LearnOptions::default()).is_err());
        assert!(learn(&[vec![1.0], vec![1.0, 1.0]], &LearnOptions::default()).is_err());
        assert!(learn(&[], &LearnOptions::default()).is_err());
    }
}
