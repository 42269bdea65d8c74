//! Inference of the hidden states of one pattern: iterated conditional modes (ICM) from a forward
//! pass, with optional deterministic annealing (thesis §3.4 and §3.7), or the thesis's printed
//! update ([`UpdateRule`]).
//!
//! **The update.** The thesis's zero-temperature update (eqs. 3.23–3.24) mixes up its indices, and
//! its (w/2)(s_i − φ_ij) child term is not the exact limit of the mean-field update. Taking the
//! limit properly, unit j's state is the sign of
//!
//! Δ_j = b_j + Σ_{i ∈ ch(j)} [ w_ij s_i − ½(|c_ij + w_ij| − |c_ij − w_ij|) ],
//!
//! with b_j = Σ_k w_jk s_k + w_j0 its own activation and c_ij = a_i − w_ij s_j the activation of
//! child i without j's contribution. Δ_j is exactly E(s_j = −1) − E(s_j = +1) for the energy of
//! `energy` (the summed perceptron criteria), so the update is ICM on that energy: it never raises
//! it. Ties (Δ_j = 0) keep the current state.
//!
//! **Annealing.** At temperature T the same difference of exact log-conditionals is Δ_j(T)/T with
//! each |x| replaced by 2T ln cosh(x / 2T) (which tends to |x| as T → 0), and the conditional mean
//! is ⟨s_j⟩ = tanh(Δ_j(T) / 2T) (eq. 3.15 with its missing factor ½ restored). Deterministic
//! annealing applies this with the neighbours' current (soft) means in place of their states, at
//! T_k = T_0 ρ^{k−1} for passes k = 1, 2, … until T_k falls below the cut-off, then switches to
//! ICM. The thesis uses T_0 = 1000, ρ = 0.8 and a cut-off of 0.001 (62 annealed passes), then at
//! most 70 zero-temperature passes.

use occam_core::special::softplus;
use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::error::{check_bipolar, check_finite, check_len, LtuError, Result};
use super::network::{threshold, LtuNetwork, States};

/// The deterministic annealing schedule T_k = `t_start` · `decay`^{k−1}, taken as zero once
/// below `t_zero_below`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Anneal {
    /// T_1.
    pub t_start: f64,
    /// The geometric decay ρ ∈ (0, 1).
    pub decay: f64,
    /// Temperatures below this are taken to be zero.
    pub t_zero_below: f64,
}

impl Anneal {
    /// The thesis's schedule (§3.8): T_0 = 1000, ρ = 0.8, zero below 0.001.
    pub fn thesis() -> Self {
        Self {
            t_start: 1000.0,
            decay: 0.8,
            t_zero_below: 1e-3,
        }
    }

    /// The positive temperatures of the annealed passes, in order.
    pub fn temperatures(&self) -> Result<Vec<f64>> {
        let ok = self.t_start.is_finite()
            && self.t_start > 0.0
            && self.t_zero_below > 0.0
            && self.decay > 0.0
            && self.decay < 1.0;
        if !ok {
            return Err(LtuError::InvalidOption {
                name: "anneal",
                why: format!("need finite T_0 > 0, 0 < decay < 1 and a cut-off > 0, got {self:?}"),
            });
        }
        let mut ts = Vec::new();
        let mut t = self.t_start;
        while t >= self.t_zero_below {
            ts.push(t);
            t *= self.decay;
        }
        Ok(ts)
    }
}

/// Which update a hidden unit's state follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpdateRule {
    /// The exact T → 0 limit, Δ_j above: iterated conditional modes on the energy, which it never
    /// raises.
    Icm,
    /// The thesis's printed update (eqs. 3.23–3.24, indices made consistent): the child term is
    /// ½ w_ij (s_i − φ_ij) with φ_ij = ½ sign(c_ij + w_ij) − ½ sign(c_ij − w_ij). It also pulls
    /// j towards w_ij s_i when j cannot change child i's correctness, so it is not a descent on
    /// the energy; but it is the rule behind the thesis's Table 3.1, and on Pima and crabs its
    /// networks generalise markedly better than exact ICM's (see `experiments`).
    Thesis,
}

/// Options of [`infer`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InferenceOptions {
    /// The update rule.
    pub rule: UpdateRule,
    /// Deterministic annealing before ICM, or `None` for plain ICM.
    pub anneal: Option<Anneal>,
    /// The most zero-temperature (ICM) passes; inference stops earlier once a pass changes nothing.
    pub max_icm_passes: usize,
}

impl InferenceOptions {
    /// The thesis's setting: its printed update rule, annealing as in §3.8, then at most 70
    /// zero-temperature passes.
    pub fn thesis() -> Self {
        Self {
            rule: UpdateRule::Thesis,
            anneal: Some(Anneal::thesis()),
            max_icm_passes: 70,
        }
    }

    /// Plain ICM (exact rule, no annealing) from the forward pass, at most `max_icm_passes` passes.
    pub fn icm(max_icm_passes: usize) -> Self {
        Self {
            rule: UpdateRule::Icm,
            anneal: None,
            max_icm_passes,
        }
    }
}

/// What one call of [`infer`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InferenceStats {
    /// Passes at positive temperature.
    pub annealed_passes: usize,
    /// ICM passes (the last one, if converged, changed nothing).
    pub icm_passes: usize,
    /// Whether an ICM pass left every state unchanged.
    pub converged: bool,
}

/// 2T ln cosh(x / 2T), a smooth |x| (exactly |x| at T = 0).
#[inline]
fn smooth_abs(x: f64, t: f64) -> f64 {
    if t == 0.0 {
        x.abs()
    } else {
        x.abs() + 2.0 * t * (softplus(-x.abs() / t) - std::f64::consts::LN_2)
    }
}

/// The field Δ_j(T) of hidden unit `j` in layer `layer` (1 ≤ layer < the output layer), given
/// every other state in `states` (an error if the unit is not hidden or the shapes disagree): at T = 0, E(s_j = −1) − E(s_j = +1); at
/// T > 0, T times the log-odds ln P(s_j = +1 | rest) − ln P(s_j = −1 | rest).
pub fn field(net: &LtuNetwork, states: &States, layer: usize, j: usize, t: f64) -> Result<f64> {
    rule_field(UpdateRule::Icm, net, states, layer, j, t)
}

/// The field of unit `j` in hidden layer `layer` under either update rule (for
/// [`UpdateRule::Icm`] this is [`field`]); the unit's new state is sign(field) at T = 0 and
/// tanh(field / 2T) at T > 0.
pub fn rule_field(
    rule: UpdateRule,
    net: &LtuNetwork,
    states: &States,
    layer: usize,
    j: usize,
    t: f64,
) -> Result<f64> {
    let sizes = net.sizes();
    check_len("states (layers)", sizes.len(), states.len())?;
    for (s, &n) in states.iter().zip(&sizes) {
        check_len("states (layer size)", n, s.len())?;
    }
    if layer == 0 || layer + 1 >= sizes.len() || j >= sizes[layer] || t.is_nan() || t < 0.0 {
        return Err(LtuError::InvalidOption {
            name: "unit",
            why: format!("({layer}, {j}) at T = {t} is not a hidden unit of a {sizes:?} network"),
        });
    }
    let own = net.layers()[layer - 1].activation(j, &states[layer - 1]);
    let out = &net.layers()[layer];
    let s_j = states[layer][j];
    let children: f64 = (0..out.n_out())
        .map(|i| {
            let w = out.weight(i, j);
            let c = out.activation(i, &states[layer]) - w * s_j;
            child_term(rule, w, c, states[layer + 1][i], t)
        })
        .sum();
    Ok(own + children)
}

/// The contribution of child i (weight `w` from j, rest-of-activation `c`, state `s_i`) to
/// unit j's field at temperature `t`.
#[inline]
fn child_term(rule: UpdateRule, w: f64, c: f64, s_i: f64, t: f64) -> f64 {
    match rule {
        UpdateRule::Icm => w * s_i - 0.5 * (smooth_abs(c + w, t) - smooth_abs(c - w, t)),
        UpdateRule::Thesis => {
            // φ_ij of eq. 3.24 (eq. 3.19 at T > 0, with eq. 3.15's factor ½ restored).
            let sign = |x: f64| {
                if t > 0.0 {
                    (x / (2.0 * t)).tanh()
                } else if x == 0.0 {
                    0.0
                } else {
                    x.signum()
                }
            };
            let phi = 0.5 * (sign(c + w) - sign(c - w));
            0.5 * w * (s_i - phi)
        }
    }
}

/// Runs inference on `states` in place. `states[0]` are the inputs and the last layer the clamped
/// ±1 outputs; the hidden layers hold the starting point (usually the forward pass, see
/// [`infer_pattern`]). On return every hidden state is ±1. Units are visited in a fresh random order
/// on every pass.
pub fn infer<R: Rng + ?Sized>(
    net: &LtuNetwork,
    states: &mut States,
    opts: &InferenceOptions,
    rng: &mut R,
) -> Result<InferenceStats> {
    let sizes = net.sizes();
    check_len("states (layers)", sizes.len(), states.len())?;
    for (s, &n) in states.iter().zip(&sizes) {
        check_len("states (layer size)", n, s.len())?;
    }
    for layer in states.iter() {
        check_finite("states", layer)?;
    }
    check_bipolar("outputs", &states[sizes.len() - 1])?;
    let temps = match &opts.anneal {
        Some(a) => a.temperatures()?,
        None => Vec::new(),
    };
    let mut order: Vec<(usize, usize)> = (1..sizes.len() - 1)
        .flat_map(|l| (0..sizes[l]).map(move |j| (l, j)))
        .collect();
    // acts[l][i]: activation of unit i of layer l (acts[0] unused).
    let mut acts: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![0.0; n]).collect();
    let mut stats = InferenceStats {
        annealed_passes: 0,
        icm_passes: 0,
        converged: order.is_empty(),
    };
    let mut pass = |t: f64, states: &mut States, rng: &mut R| -> bool {
        recompute_activations(net, states, &mut acts);
        order.shuffle(rng);
        let mut changed = false;
        for &(l, j) in &order {
            let out = &net.layers()[l];
            let s_j = states[l][j];
            let mut delta = acts[l][j];
            for i in 0..out.n_out() {
                let w = out.weight(i, j);
                delta += child_term(opts.rule, w, acts[l + 1][i] - w * s_j, states[l + 1][i], t);
            }
            let new = if t > 0.0 {
                (delta / (2.0 * t)).tanh()
            } else if delta > 0.0 {
                1.0
            } else if delta < 0.0 {
                -1.0
            } else {
                s_j
            };
            if new != s_j {
                changed = true;
                states[l][j] = new;
                let d = new - s_j;
                for (i, a) in acts[l + 1].iter_mut().enumerate() {
                    *a += out.weight(i, j) * d;
                }
            }
        }
        changed
    };
    for &t in &temps {
        pass(t, states, rng);
        stats.annealed_passes += 1;
    }
    while !stats.converged && stats.icm_passes < opts.max_icm_passes {
        stats.icm_passes += 1;
        stats.converged = !pass(0.0, states, rng);
    }
    let last = states.len() - 1;
    for layer in states[1..last].iter_mut() {
        layer.iter_mut().for_each(|s| *s = threshold(*s));
    }
    Ok(stats)
}

fn recompute_activations(net: &LtuNetwork, states: &States, acts: &mut [Vec<f64>]) {
    for (l, layer) in net.layers().iter().enumerate() {
        for (i, a) in acts[l + 1].iter_mut().enumerate() {
            *a = layer.activation(i, &states[l]);
        }
    }
}

/// Inference for one pattern from the forward pass (heuristic "expectation initialisation",
/// §3.7): returns the inferred states with the outputs clamped to `targets`.
pub fn infer_pattern<R: Rng + ?Sized>(
    net: &LtuNetwork,
    x: &[f64],
    targets: &[f64],
    opts: &InferenceOptions,
    rng: &mut R,
) -> Result<(States, InferenceStats)> {
    let mut states = net.forward(x)?;
    let last = states.len() - 1;
    check_len("targets", net.n_outputs(), targets.len())?;
    states[last].copy_from_slice(targets);
    let stats = infer(net, &mut states, opts, rng)?;
    Ok((states, stats))
}
