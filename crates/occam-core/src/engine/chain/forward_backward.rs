//! Exact inference in one discrete chain given expected log-parameters: scaled forward–backward
//! (Rabiner 1989, §III.A and the scaling of §V.A) and Viterbi in log space.
//!
//! The chain's q is the structured-VMP cluster update of Winn (5.43) for clusters {z_{t−1}, z_t}:
//! q(z) ∝ exp(⟨ln p0⟩·u(z_0) + Σ_t u(z_{t−1})ᵀ ⟨ln A⟩ u(z_t) + Σ_t η_t·u(z_t)), where η_t is the sum of
//! the children's messages to step t. One collect (forward) and one distribute (backward) pass gives
//! its marginals (Winn (5.25)–(5.28): Case I, one sweep is optimal). Everything here is O(T·K²) time
//! and O(T·K) memory.

use crate::special::exp_nonpositive;

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
    let mut b = vec![0.0; steps * k];
    let mut c = vec![0.0; steps];
    let mut log_z = 0.0;
    for t in 0..steps {
        let row = &eta[t * k..(t + 1) * k];
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !m.is_finite() {
            return None;
        }
        for j in 0..k {
            b[t * k + j] = exp_nonpositive(row[j] - m);
        }
        log_z += m;
    }
    // Forward (collect): α_t ∝ b_t ∘ (Aᵀ α_{t−1}), normalised by c_t; α is kept in `gamma`.
    let max_0 = log_p0.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for j in 0..k {
        gamma[j] = exp_nonpositive(log_p0[j] - max_0) * b[j];
    }
    log_z += max_0 + (steps - 1) as f64 * max_a;
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
    // Backward (distribute): β_t = A (b_{t+1} ∘ β_{t+1}) / c_{t+1}; γ_t = α_t ∘ β_t, and the pairwise
    // marginal of (t, t+1) is α_t(i) A_ij b_{t+1}(j) β_{t+1}(j) / c_{t+1}.
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
    Some(log_z)
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
