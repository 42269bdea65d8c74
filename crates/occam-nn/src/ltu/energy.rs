//! The objective of inference, and exact inference by enumeration for small networks.
//!
//! At temperature T a unit's conditional is P(s_i | pa) = σ(s_i a_i / T) with a_i = Σ_j w_ij s_j +
//! w_i0 (eq. 3.2 for ±1 units), and the joint over the units given the inputs is the product of
//! these (eq. 3.4). As T → 0, −T ln P(s_i | pa) → ½(|a_i| − a_i s_i): zero when the unit agrees
//! with the sign of its activation and |a_i| otherwise — the perceptron criterion that eqs.
//! 3.26–3.28 sum over units. Its sum over hidden and output units is the *energy* that
//! zero-temperature inference (ICM, see `icm`) minimises over the hidden states; a pattern has
//! likelihood 1 exactly when the energy is 0.

use occam_core::special::softplus;
use serde::{Deserialize, Serialize};

use super::error::{check_bipolar, check_finite, check_len, LtuError, Result};
use super::network::{LtuNetwork, States};

/// The largest number of hidden units `exact_map` and `exact_marginals` enumerate (2²⁰ states).
pub const MAX_EXACT_HIDDEN: usize = 20;

/// Σ_i ½(|a_i| − a_i s_i) over all hidden and output units: the T → 0 limit of −T ln P(S | I)
/// (eqs. 3.26–3.28 for one pattern).
pub fn energy(net: &LtuNetwork, states: &States) -> f64 {
    net.layers()
        .iter()
        .enumerate()
        .map(|(l, layer)| {
            (0..layer.n_out())
                .map(|i| {
                    let a = layer.activation(i, &states[l]);
                    0.5 * (a.abs() - a * states[l + 1][i])
                })
                .sum::<f64>()
        })
        .sum()
}

/// ln P(S | I) = Σ_i ln σ(s_i a_i / T) at temperature `t > 0` (eqs. 3.2, 3.4).
pub fn log_joint(net: &LtuNetwork, states: &States, t: f64) -> f64 {
    net.layers()
        .iter()
        .enumerate()
        .map(|(l, layer)| {
            (0..layer.n_out())
                .map(|i| -softplus(-states[l + 1][i] * layer.activation(i, &states[l]) / t))
                .sum::<f64>()
        })
        .sum()
}

/// The minimum-energy hidden states of one pattern, found by enumeration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactMap {
    /// The smallest energy over all hidden configurations.
    pub min_energy: f64,
    /// The first configuration (in enumeration order) attaining it.
    pub states: States,
    /// How many configurations attain it (to within 1e-12 relative).
    pub n_minimisers: usize,
}

/// Calls `visit` on every hidden configuration of one pattern (outputs clamped to `targets`).
fn enumerate_hidden(
    net: &LtuNetwork,
    x: &[f64],
    targets: &[f64],
    mut visit: impl FnMut(&States),
) -> Result<()> {
    check_len("inputs", net.n_inputs(), x.len())?;
    check_finite("inputs", x)?;
    check_len("targets", net.n_outputs(), targets.len())?;
    check_bipolar("targets", targets)?;
    let h = net.n_hidden();
    if h > MAX_EXACT_HIDDEN {
        return Err(LtuError::TooManyHidden {
            hidden: h,
            max: MAX_EXACT_HIDDEN,
        });
    }
    let mut states = net.forward_unchecked(x);
    let last = states.len() - 1;
    states[last].copy_from_slice(targets);
    for code in 0u64..(1u64 << h) {
        let mut bit = 0;
        for layer in states[1..last].iter_mut() {
            for s in layer.iter_mut() {
                *s = if code >> bit & 1 == 1 { 1.0 } else { -1.0 };
                bit += 1;
            }
        }
        visit(&states);
    }
    Ok(())
}

/// Exact zero-temperature inference: the hidden states of minimum energy given inputs `x` and
/// ±1 output `targets`, by enumerating all 2^H hidden configurations (H ≤ [`MAX_EXACT_HIDDEN`]).
pub fn exact_map(net: &LtuNetwork, x: &[f64], targets: &[f64]) -> Result<ExactMap> {
    let mut best: Option<ExactMap> = None;
    enumerate_hidden(net, x, targets, |s| {
        let e = energy(net, s);
        match &mut best {
            None => {
                best = Some(ExactMap {
                    min_energy: e,
                    states: s.clone(),
                    n_minimisers: 1,
                })
            }
            Some(b) => {
                let tie = 1e-12 * (1.0 + b.min_energy.abs());
                if e < b.min_energy - tie {
                    *b = ExactMap {
                        min_energy: e,
                        states: s.clone(),
                        n_minimisers: 1,
                    };
                } else if e <= b.min_energy + tie {
                    b.n_minimisers += 1;
                }
            }
        }
    })?;
    // 2^H ≥ 1 configurations were visited, so `best` is set.
    best.ok_or_else(|| LtuError::InvalidOption {
        name: "network",
        why: "no hidden configuration was enumerated".into(),
    })
}

/// Exact posterior means ⟨s_j⟩ under P(H | O, I) at temperature `t > 0`, by enumeration; the
/// result has the shape of [`States`] with the input and output layers copied from `x`, `targets`.
pub fn exact_marginals(net: &LtuNetwork, x: &[f64], targets: &[f64], t: f64) -> Result<States> {
    if !(t.is_finite() && t > 0.0) {
        return Err(LtuError::InvalidOption {
            name: "temperature",
            why: format!("exact marginals need a finite T > 0, got {t}"),
        });
    }
    let mut log_w = Vec::new();
    let mut configs: Vec<States> = Vec::new();
    enumerate_hidden(net, x, targets, |s| {
        log_w.push(log_joint(net, s, t));
        configs.push(s.clone());
    })?;
    let m = log_w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = log_w.iter().map(|l| (l - m).exp()).collect();
    let z: f64 = w.iter().sum();
    let mut mean = configs[0].clone();
    let last = mean.len() - 1;
    for layer in mean[1..last].iter_mut() {
        layer.iter_mut().for_each(|v| *v = 0.0);
    }
    for (c, wc) in configs.iter().zip(&w) {
        for (ml, cl) in mean[1..last].iter_mut().zip(&c[1..last]) {
            for (m, s) in ml.iter_mut().zip(cl) {
                *m += wc / z * s;
            }
        }
    }
    Ok(mean)
}
