//! The Gibbs transitions of annealed importance sampling (module `ais`) over the state paths of
//! a hidden Markov chain (module `hmm`): forward filtering, backward sampling of every
//! sequence's path under the tempered joint p(z | p0, A) Π_t f(x_t | θ_{z_t})^β (Chib 1996,
//! "Calculating posterior distributions and modal estimates in Markov mixture models", §2.1;
//! the scaled forward pass of Rabiner 1989, eqs. 91–92), the paths' counts that the initial and
//! transition probabilities' Dirichlet conditionals read, and the paths' prior draw.
//!
//! The forward pass runs on probabilities, each step rescaled to sum to 1 (as module `hmm`'s
//! forward algorithm), with e^{β ln f − m_t} the step's tempered emissions relative to their
//! largest. A transition probability below the smallest double (a Dirichlet concentration far
//! below 1 draws them) is then 0; where that leaves a step, or a backward draw, with nothing
//! to choose from, the sequence is drawn again on logarithms throughout, which is exact
//! whatever the magnitudes.

use rand::rngs::StdRng;
use rand::Rng;

use super::ais::Chain;
use super::ais_draw::categorical;
use super::density::log_sum_exp;
use super::flat::Flat;
use super::hmm::forward_scaled;
use super::not_applicable::NotApplicable;

/// Checks the layout that the Gibbs moves over a chain read ([`Chain::step_in_state`], the
/// path counts): every observation holds one value per step of each sequence, step t of
/// sequence s at s·T + t. An observation with more or fewer values per sequence (several
/// values per step) is named, with its count and the chain's length, instead of being read
/// at the wrong places.
pub(super) fn check_layout(flat: &Flat) -> Result<(), NotApplicable> {
    let Some(chain) = &flat.chain else {
        return Ok(());
    };
    match flat.obs.iter().find(|o| o.cols != chain.steps) {
        Some(o) => Err(NotApplicable::Variable {
            var: o.name.clone(),
            why: format!(
                "has {} values per sequence where the chain has {} steps (AIS over a chain \
                 reads one value per step)",
                o.cols, chain.steps
            ),
        }),
        None => Ok(()),
    }
}

impl Chain<'_> {
    /// The indices of the chain's initial and transition probabilities in `flat.params`.
    fn chain_params(&self) -> (usize, usize) {
        let c = self.flat.chain.as_ref().expect("a chain model");
        (c.initial, c.transition)
    }

    /// ln f of every present value of step `t` of sequence `s` in state `k`.
    pub(super) fn step_in_state(&self, s: usize, t: usize, k: usize) -> f64 {
        let mut v = 0.0;
        for o in &self.flat.obs {
            let at = s * o.cols + t;
            if o.present[at] {
                v += self.ln_f(&o.lik, o.values[at], k, t);
            }
        }
        v
    }

    /// Every sequence's path from the chain's prior: the first state from p0, each next one
    /// from the row of A of the state before (θ holds their logarithms).
    pub(super) fn draw_paths_prior(&mut self, rng: &mut StdRng) {
        let (initial, transition) = self.chain_params();
        let (k, t_len) = (self.flat.k, self.steps);
        for s in 0..self.flat.n {
            for t in 0..t_len {
                let u = s * t_len + t;
                self.z[u] = if t == 0 {
                    categorical(&self.theta[initial], rng)
                } else {
                    let j = self.z[u - 1];
                    categorical(&self.theta[transition][j * k..(j + 1) * k], rng)
                };
            }
        }
    }

    /// Adds the paths' counts to the statistics `acc` (elements × `stride`) of parameter `p`
    /// when it is the chain's initial probabilities (how many sequences start in each state) or
    /// its transitions (row j: how many steps go from j to each state); nothing otherwise.
    pub(super) fn add_path_counts(&self, p: usize, acc: &mut [f64], stride: usize) {
        let Some(chain) = &self.flat.chain else {
            return;
        };
        let t_len = self.steps;
        for s in 0..self.flat.n {
            let path = &self.z[s * t_len..(s + 1) * t_len];
            if p == chain.initial {
                acc[path[0]] += 1.0;
            }
            if p == chain.transition {
                for w in path.windows(2) {
                    acc[w[0] * stride + w[1]] += 1.0;
                }
            }
        }
    }

    /// Every sequence's path drawn from its conditional given θ under inverse temperature `b`
    /// (module doc); `ll` holds ln f of every step in every state at θ.
    pub(super) fn sample_paths(&mut self, b: f64, rng: &mut StdRng) {
        let (initial, transition) = self.chain_params();
        let (k, t_len) = (self.flat.k, self.steps);
        let p0: Vec<f64> = self.theta[initial].iter().map(|l| l.exp()).collect();
        let a: Vec<f64> = self.theta[transition].iter().map(|l| l.exp()).collect();
        let mut scratch = Scratch::new(t_len, k);
        for s in 0..self.flat.n {
            let e = &self.ll[s * t_len * k..(s + 1) * t_len * k];
            let path = forward_backward(e, b, &p0, &a, k, &mut scratch, rng).unwrap_or_else(|| {
                let (ln_p0, ln_a) = (&self.theta[initial], &self.theta[transition]);
                forward_backward_logs(e, b, ln_p0, ln_a, k, rng)
            });
            self.z[s * t_len..(s + 1) * t_len].copy_from_slice(&path);
        }
    }
}

/// One sequence's path by forward filtering, backward sampling on rescaled probabilities:
/// `e` its steps' ln f in every state (T × K), `b` the inverse temperature, `p0` and `a` the
/// initial and transition probabilities; `None` where a step or a backward draw has nothing
/// to choose from (module doc). The forward pass is the evidence's (`hmm::forward_scaled`) at
/// inverse temperature `b`; `scratch` holds its arrays.
fn forward_backward(
    e: &[f64],
    b: f64,
    p0: &[f64],
    a: &[f64],
    k: usize,
    scratch: &mut Scratch,
    rng: &mut StdRng,
) -> Option<Vec<usize>> {
    let t_len = e.len() / k;
    let Scratch {
        alpha,
        emitted,
        scale,
        w,
    } = scratch;
    forward_scaled(e, b, p0, a, k, alpha, emitted, scale).ok()?;
    let mut path = vec![0; t_len];
    path[t_len - 1] = pick(&alpha[(t_len - 1) * k..], rng)?;
    for t in (0..t_len - 1).rev() {
        let next = path[t + 1];
        for j in 0..k {
            w[j] = alpha[t * k + j] * a[j * k + next];
        }
        path[t] = pick(w, rng)?;
    }
    Some(path)
}

/// The arrays of one sequence's forward filtering, backward sampling (T steps, K states),
/// reused from sequence to sequence.
struct Scratch {
    /// α̂_t, T × K.
    alpha: Vec<f64>,
    /// The tempered emissions relative to their step's largest, T × K.
    emitted: Vec<f64>,
    /// The steps' scales.
    scale: Vec<f64>,
    /// One backward draw's weights, K.
    w: Vec<f64>,
}

impl Scratch {
    fn new(t_len: usize, k: usize) -> Scratch {
        Scratch {
            alpha: vec![0.0; t_len * k],
            emitted: vec![0.0; t_len * k],
            scale: vec![0.0; t_len],
            w: vec![0.0; k],
        }
    }
}

/// A draw from the categorical distribution with probabilities ∝ `w`; `None` when `w` is all
/// zero (or not finite).
fn pick(w: &[f64], rng: &mut StdRng) -> Option<usize> {
    let total: f64 = w.iter().sum();
    if !(total > 0.0 && total.is_finite()) {
        return None;
    }
    let mut left = rng.random::<f64>() * total;
    for (c, &p) in w.iter().enumerate() {
        left -= p;
        if left <= 0.0 && p > 0.0 {
            return Some(c);
        }
    }
    // Round-off left some over: the last state with any probability.
    w.iter().rposition(|&p| p > 0.0)
}

/// [`forward_backward`] on logarithms throughout: `ln_p0` and `ln_a` the logarithms of the
/// initial and transition probabilities.
fn forward_backward_logs(
    e: &[f64],
    b: f64,
    ln_p0: &[f64],
    ln_a: &[f64],
    k: usize,
    rng: &mut StdRng,
) -> Vec<usize> {
    let t_len = e.len() / k;
    let mut la = vec![0.0; t_len * k];
    let mut terms = vec![0.0; k];
    for t in 0..t_len {
        for j in 0..k {
            let prior = if t == 0 {
                ln_p0[j]
            } else {
                for i in 0..k {
                    terms[i] = la[(t - 1) * k + i] + ln_a[i * k + j];
                }
                log_sum_exp(&terms)
            };
            la[t * k + j] = prior + b * e[t * k + j];
        }
    }
    let mut path = vec![0; t_len];
    path[t_len - 1] = categorical(&la[(t_len - 1) * k..], rng);
    for t in (0..t_len - 1).rev() {
        let next = path[t + 1];
        for j in 0..k {
            terms[j] = la[t * k + j] + ln_a[j * k + next];
        }
        path[t] = categorical(&terms, rng);
    }
    path
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::{DataSet, Model};

    #[test]
    fn an_observation_with_several_values_per_step_is_named() {
        // Two sequences of three steps, Gaussian emissions: recognised as a chain.
        let text = "plate K = 2\nplates S, T from data x\np0 ~ Dirichlet(1) over K\n\
                    A[K] ~ Dirichlet(1) over K\nz[S] over T ~ MarkovChain(initial = p0, transition = A)\n\
                    tau[K] ~ Gamma(2, 2)\nmu[K] ~ Gaussian(0, 0.5 * tau)\nx[S, T] ~ Gaussian(mu[z], tau[z])\n";
        let mut d = DataSet::new();
        let v = vec![-1.0, 0.2, 1.1, 0.4, -0.3, 2.0];
        d.insert_array("x", 2, 3, v.clone(), None).unwrap();
        let m = Model::from_source("m.occam", text, &d).unwrap();
        let mut flat = super::super::flat::recognise(m.loaded()).unwrap();
        assert_eq!(check_layout(&flat), Ok(()));
        assert!(super::super::ais_run::check(&flat).is_ok());
        // The same values read as two per step (x[S, T, D] with D = 2): refused, by name.
        let o = &mut flat.obs[0];
        o.cols = 6;
        o.values = v.iter().flat_map(|&x| [x, x]).collect();
        o.present = vec![true; 12];
        let want = NotApplicable::Variable {
            var: "x".into(),
            why: "has 6 values per sequence where the chain has 3 steps (AIS over a chain \
                  reads one value per step)"
                .into(),
        };
        assert_eq!(check_layout(&flat), Err(want.clone()));
        assert_eq!(super::super::ais_run::check(&flat), Err(want));
    }

    /// p(path | θ) ∝ p0(z_1) Π A(z_{t−1}, z_t) Π e^{b ln f_t(z_t)} of every path of `t_len` steps,
    /// by enumeration (path code: state of step t is digit t in base k).
    fn enumerate(e: &[f64], b: f64, p0: &[f64], a: &[f64], k: usize) -> Vec<f64> {
        let t_len = e.len() / k;
        let ln: Vec<f64> = (0..k.pow(t_len as u32))
            .map(|code| {
                let z: Vec<usize> = (0..t_len).map(|t| code / k.pow(t as u32) % k).collect();
                let mut v = p0[z[0]].ln() + b * e[z[0]];
                for t in 1..t_len {
                    v += a[z[t - 1] * k + z[t]].ln() + b * e[t * k + z[t]];
                }
                v
            })
            .collect();
        let total = log_sum_exp(&ln);
        ln.iter().map(|v| (v - total).exp()).collect()
    }

    fn code(path: &[usize], k: usize) -> usize {
        path.iter().rev().fold(0, |c, &z| c * k + z)
    }

    #[test]
    fn both_passes_draw_paths_with_their_exact_probabilities() {
        // Three states, four steps: 81 paths.
        let k = 3;
        let e = [
            -0.3, -2.0, -1.1, -1.7, -0.2, -0.9, -3.0, -0.4, -0.6, -0.5, -1.5, -2.2,
        ];
        let p0 = [0.5, 0.3, 0.2];
        let a = [0.7, 0.2, 0.1, 0.15, 0.6, 0.25, 0.3, 0.3, 0.4];
        let (ln_p0, ln_a): (Vec<f64>, Vec<f64>) = (
            p0.iter().map(|p: &f64| p.ln()).collect(),
            a.iter().map(|p: &f64| p.ln()).collect(),
        );
        let b = 0.6;
        let want = enumerate(&e, b, &p0, &a, k);
        let draws = 40_000;
        let mut rng = StdRng::seed_from_u64(11);
        let mut scratch = Scratch::new(e.len() / k, k);
        for logs in [false, true] {
            let mut seen = vec![0.0; want.len()];
            for _ in 0..draws {
                let path = if logs {
                    forward_backward_logs(&e, b, &ln_p0, &ln_a, k, &mut rng)
                } else {
                    forward_backward(&e, b, &p0, &a, k, &mut scratch, &mut rng).unwrap()
                };
                seen[code(&path, k)] += 1.0 / draws as f64;
            }
            for (c, (&p, &f)) in want.iter().zip(&seen).enumerate() {
                // Four binomial standard errors (81 cells).
                let sd = (p * (1.0 - p) / draws as f64).sqrt();
                assert!(
                    (f - p).abs() < 4.0 * sd,
                    "logs {logs}, path {c}: {f} vs {p}"
                );
            }
        }
    }

    #[test]
    fn an_underflowing_transition_falls_back_to_logarithms() {
        // From state 0 only 0 → 1 is possible at all (e^−800 underflows to 0), and state 0 at
        // step 2 is impossible: the rescaled pass finds nothing at step 2; on logarithms the
        // only path left is [0, 1].
        let k = 2;
        let e = [0.0, -1e4, -1e6, 0.0];
        let ln_p0 = [0.0, -900.0];
        let ln_a = [0.0, -800.0, -800.0, 0.0];
        let exp = |v: &[f64]| v.iter().map(|l| l.exp()).collect::<Vec<f64>>();
        let mut rng = StdRng::seed_from_u64(3);
        let mut scratch = Scratch::new(2, k);
        let scaled = forward_backward(
            &e,
            1.0,
            &exp(&ln_p0),
            &exp(&ln_a),
            k,
            &mut scratch,
            &mut rng,
        );
        assert!(scaled.is_none());
        for _ in 0..20 {
            assert_eq!(
                forward_backward_logs(&e, 1.0, &ln_p0, &ln_a, k, &mut rng),
                [0, 1]
            );
        }
    }
}
