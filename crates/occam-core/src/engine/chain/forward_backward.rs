//! Exact inference in one discrete chain given expected log-parameters: scaled forward–backward
//! (Rabiner 1989, §III.A and the scaling of §V.A) and Viterbi in log space.
//!
//! The chain's q is the structured-VMP cluster update of Winn (5.43) for clusters {z_{t−1}, z_t}:
//! q(z) ∝ exp(⟨ln p0⟩·u(z_0) + Σ_t u(z_{t−1})ᵀ ⟨ln A⟩ u(z_t) + Σ_t η_t·u(z_t)), where η_t is the sum of
//! the children's messages to step t. One collect (forward) and one distribute (backward) pass gives
//! its marginals (Winn (5.25)–(5.28): Case I, one sweep is optimal). Everything here is O(T·K²) time
//! and O(T·K) memory.

use crate::special::{exp_minus_row_max, exp_nonpositive};

/// Forward–backward on one sequence of `gamma.len() / k` steps.
///
/// `log_p0` (K) and `log_a` (K×K, row = previous state) are expected log-parameters, `eta` (T×K)
/// the summed child messages. Writes the marginals q(z_t = k) into `gamma` (T×K) and adds the
/// expected transition counts Σ_t q(z_{t−1} = j, z_t = k) into `xi` (K×K). Returns ln Z, the log
/// normaliser of the unnormalised q above; `None` if the chain has
/// no positive-probability path (every path has an infinite or underflowing weight).
pub(crate) fn forward_backward(
    k: usize,
    log_p0: &[f64],
    log_a: &[f64],
    eta: &[f64],
    gamma: &mut [f64],
    xi: &mut [f64],
) -> Option<f64> {
    // The per-step emission weights and scales live in a buffer kept per thread: a fresh T×K array
    // per sequence and sweep cost more in page faults than the recursions themselves.
    let mut scratch = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    // The same code with K known at compile time for the common small K (its loops unrolled).
    let s = &mut scratch;
    let out = match k {
        2 => fb(2, log_p0, log_a, eta, gamma, xi, s),
        3 => fb(3, log_p0, log_a, eta, gamma, xi, s),
        4 => fb(4, log_p0, log_a, eta, gamma, xi, s),
        _ => fb(k, log_p0, log_a, eta, gamma, xi, s),
    };
    SCRATCH.with(|s| *s.borrow_mut() = scratch);
    out
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[inline(always)]
fn fb(
    k: usize,
    log_p0: &[f64],
    log_a: &[f64],
    eta: &[f64],
    gamma: &mut [f64],
    xi: &mut [f64],
    scratch: &mut Vec<f64>,
) -> Option<f64> {
    let steps = gamma.len() / k;
    if steps == 0 {
        return Some(0.0);
    }
    // Scaling: the largest transition weight and each step's largest emission weight are factored
    // out, so the exponentials below are at most 1; their logs go back into ln Z.
    let max_a = log_a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ea: Vec<f64> = log_a.iter().map(|v| exp_nonpositive(v - max_a)).collect();
    // Aᵀ, so that each forward entry is one contiguous dot product.
    let ea_t: Vec<f64> = (0..k * k).map(|ji| ea[(ji % k) * k + ji / k]).collect();
    scratch.resize(steps * (k + 2), 0.0);
    let (b, rest) = scratch.split_at_mut(steps * k);
    let (c, maxes) = rest.split_at_mut(steps);
    // b_t = e^{η_t − max η_t}, all steps in one vectorised pass; the maxima go into ln Z.
    exp_minus_row_max(&eta[..steps * k], k, b, maxes).ok()?;
    let mut log_z: f64 = maxes.iter().sum();
    // Forward (collect): α_t ∝ b_t ∘ (Aᵀ α_{t−1}), normalised by c_t; α is kept in `gamma`.
    let max_0 = log_p0.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for j in 0..k {
        gamma[j] = exp_nonpositive(log_p0[j] - max_0) * b[j];
    }
    log_z += max_0 + (steps - 1) as f64 * max_a;
    let fixed = match k {
        2 => forward_fixed::<2>(&ea_t, b, gamma, c, &mut log_z),
        3 => forward_fixed::<3>(&ea_t, b, gamma, c, &mut log_z),
        4 => forward_fixed::<4>(&ea_t, b, gamma, c, &mut log_z),
        _ => None,
    };
    match fixed {
        Some(true) => {}
        Some(false) => return None,
        None => {
            let mut scale = 1.0f64;
            for t in 0..steps {
                if t > 0 {
                    let (prev, cur) = gamma.split_at_mut(t * k);
                    let prev = &prev[(t - 1) * k..];
                    let cur = &mut cur[..k];
                    for (j, v) in cur.iter_mut().enumerate() {
                        let col = &ea_t[j * k..(j + 1) * k];
                        *v = b[t * k + j] * prev.iter().zip(col).map(|(p, a)| p * a).sum::<f64>();
                    }
                }
                let s: f64 = gamma[t * k..(t + 1) * k].iter().sum();
                if !(s > 0.0) || !s.is_finite() {
                    return None;
                }
                let inv = 1.0 / s;
                gamma[t * k..(t + 1) * k].iter_mut().for_each(|v| *v *= inv);
                // c holds 1/c_t; ln Π c_t is taken only when the running product leaves a safe range.
                c[t] = inv;
                scale *= s;
                if !(1e-150..=1e150).contains(&scale) {
                    log_z += scale.ln();
                    scale = 1.0;
                }
            }
            log_z += scale.ln();
        }
    }
    // Backward (distribute): β_t = A (b_{t+1} ∘ β_{t+1}) / c_{t+1}; γ_t = α_t ∘ β_t, and the pairwise
    // marginal of (t, t+1) is α_t(i) A_ij b_{t+1}(j) β_{t+1}(j) / c_{t+1}.
    match k {
        2 => backward_fixed::<2>(&ea, b, c, gamma, xi),
        3 => backward_fixed::<3>(&ea, b, c, gamma, xi),
        4 => backward_fixed::<4>(&ea, b, c, gamma, xi),
        _ => {
            let mut beta = vec![1.0; k];
            let mut w = vec![0.0; k];
            for t in (0..steps - 1).rev() {
                for j in 0..k {
                    w[j] = b[(t + 1) * k + j] * beta[j] * c[t + 1];
                }
                for i in 0..k {
                    let alpha = gamma[t * k + i];
                    let row = &ea[i * k..(i + 1) * k];
                    let mut s = 0.0;
                    for j in 0..k {
                        let r = row[j] * w[j];
                        xi[i * k + j] += alpha * r;
                        s += r;
                    }
                    beta[i] = s;
                }
                let g = &mut gamma[t * k..(t + 1) * k];
                g.iter_mut().zip(&beta).for_each(|(v, be)| *v *= be);
                let inv = 1.0 / g.iter().sum::<f64>();
                g.iter_mut().for_each(|v| *v *= inv);
            }
        }
    }
    Some(log_z)
}

/// The forward pass for K known at compile time: the generic loop's operations in the same order
/// (the same bits), on arrays. `Some(false)`: no positive-probability path.
fn forward_fixed<const K: usize>(
    ea_t: &[f64],
    b: &[f64],
    gamma: &mut [f64],
    c: &mut [f64],
    log_z: &mut f64,
) -> Option<bool> {
    let mut at = [[0.0; K]; K];
    for (j, row) in at.iter_mut().enumerate() {
        row.copy_from_slice(&ea_t[j * K..(j + 1) * K]);
    }
    let mut prev = [0.0; K];
    let mut scale = 1.0f64;
    for (t, (g, bt)) in gamma.chunks_exact_mut(K).zip(b.chunks_exact(K)).enumerate() {
        let mut cur = [0.0; K];
        if t == 0 {
            cur.copy_from_slice(g);
        } else {
            for j in 0..K {
                let mut s = 0.0;
                for i in 0..K {
                    s += prev[i] * at[j][i];
                }
                cur[j] = bt[j] * s;
            }
        }
        let mut s = 0.0;
        for v in cur {
            s += v;
        }
        if !(s > 0.0) || !s.is_finite() {
            return Some(false);
        }
        let inv = 1.0 / s;
        for j in 0..K {
            cur[j] *= inv;
        }
        g.copy_from_slice(&cur);
        c[t] = inv;
        scale *= s;
        if !(1e-150..=1e150).contains(&scale) {
            *log_z += scale.ln();
            scale = 1.0;
        }
        prev = cur;
    }
    *log_z += scale.ln();
    Some(true)
}

/// The backward pass for K known at compile time (the generic loop's operations in order).
fn backward_fixed<const K: usize>(
    ea: &[f64],
    b: &[f64],
    c: &[f64],
    gamma: &mut [f64],
    xi: &mut [f64],
) {
    let mut a = [[0.0; K]; K];
    let mut x = [[0.0; K]; K];
    for i in 0..K {
        a[i].copy_from_slice(&ea[i * K..(i + 1) * K]);
        x[i].copy_from_slice(&xi[i * K..(i + 1) * K]);
    }
    let steps = gamma.len() / K;
    let mut beta = [1.0; K];
    for t in (0..steps.saturating_sub(1)).rev() {
        let mut w = [0.0; K];
        let bt = &b[(t + 1) * K..(t + 2) * K];
        for j in 0..K {
            w[j] = bt[j] * beta[j] * c[t + 1];
        }
        let g = &mut gamma[t * K..(t + 1) * K];
        for i in 0..K {
            let alpha = g[i];
            let mut s = 0.0;
            for j in 0..K {
                let r = a[i][j] * w[j];
                x[i][j] += alpha * r;
                s += r;
            }
            beta[i] = s;
        }
        let mut sum = 0.0;
        for i in 0..K {
            g[i] *= beta[i];
            sum += g[i];
        }
        let inv = 1.0 / sum;
        for v in g.iter_mut() {
            *v *= inv;
        }
    }
    for i in 0..K {
        xi[i * K..(i + 1) * K].copy_from_slice(&x[i]);
    }
}

/// −⟨ln q(z)⟩ = ln Z − ⟨ln p0⟩·γ_0 − Σ ξ ∘ ⟨ln A⟩ − Σ_t η_t·γ_t, for the `xi` of this sequence alone.
pub(crate) fn entropy(
    log_z: f64,
    log_p0: &[f64],
    log_a: &[f64],
    eta: &[f64],
    gamma: &[f64],
    xi: &[f64],
) -> f64 {
    let dot = |a: &[f64], b: &[f64]| -> f64 {
        a.iter()
            .zip(b)
            .filter(|(_, y)| **y != 0.0)
            .map(|(x, y)| x * y)
            .sum()
    };
    log_z - dot(log_p0, &gamma[..log_p0.len()]) - dot(log_a, xi) - dot(eta, gamma)
}

/// The most probable path of the same unnormalised q (Viterbi in log space; ties go to the lower
/// state). Writes one state per step into `path`.
pub(crate) fn viterbi(k: usize, log_p0: &[f64], log_a: &[f64], eta: &[f64], path: &mut [usize]) {
    let steps = path.len();
    if steps == 0 {
        return;
    }
    let mut delta: Vec<f64> = (0..k).map(|j| log_p0[j] + eta[j]).collect();
    let mut next = vec![0.0; k];
    let mut back = vec![0usize; steps * k];
    for t in 1..steps {
        for j in 0..k {
            let (mut best, mut arg) = (f64::NEG_INFINITY, 0);
            for i in 0..k {
                let v = delta[i] + log_a[i * k + j];
                if v > best {
                    (best, arg) = (v, i);
                }
            }
            next[j] = best + eta[t * k + j];
            back[t * k + j] = arg;
        }
        std::mem::swap(&mut delta, &mut next);
    }
    let mut state = (0..k).fold(0, |a, j| if delta[j] > delta[a] { j } else { a });
    for t in (0..steps).rev() {
        path[t] = state;
        state = back[t * k + state];
    }
}
