//! Entropy of a mixture of M diagonal Gaussians q(w) = Σ_m Q_m N(w̄_m, diag s_m), bounded below as
//! Σ_m Q_m H(q_m) + 𝓘 (committee paper (23)–(27), (A.10); thesis (5.26)–(5.30), (C.1)–(C.13)).
//!
//! 𝓘 is the Jaakkola–Jordan lower bound on the mutual information I(m; w) with unnormalised
//! Gaussian smoothing kernels r(w|m) = exp{−½ (w − r̄_m)ᵀ diag(ρ_m)⁻¹ (w − r̄_m)} and scalars λ_m:
//! 𝓘 = Σ_m Q_m ⟨ln r_m⟩_m − Σ_{m,m'} Q_m λ_{m'} G_{mm'} − Σ Q ln Q + Σ Q_m ln λ_m + 1, with
//! ⟨ln r_m⟩_m = −½ Σ_k (s_mk + (w̄_mk − r̄_mk)²)/ρ_mk (A.8) and
//! G_{mm'} = ⟨r_{m'}⟩_m = Π_k (1 + s_mk/ρ_m'k)^{−½} exp(−½ Σ_k (w̄_mk − r̄_m'k)²/(s_mk + ρ_m'k)) (A.7).
//! The papers optimise λ by gradient; setting ∂𝓘/∂λ_{m'} = 0 gives λ_{m'} = Q_{m'} / Σ_m Q_m G_{mm'},
//! and substituting it leaves 𝓘 = Σ_{m'} Q_{m'} [⟨ln r_{m'}⟩_{m'} − ln Σ_m Q_m G_{mm'}], which is what
//! is evaluated here (its gradient in the other parameters equals the fixed-λ gradient at the optimum).
//! For M = 1 the mutual information is exactly 0 and no smoothing parameters are used.

use occam_core::special::log_sum_exp;

/// Offsets of the variational parameters in a flat vector θ: for each component m the means w̄_m
/// (K) then ln s_m (K); then, when M > 1, for each m the smoothing means r̄_m (K) then ln ρ_m (K).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Number of components M.
    pub m: usize,
    /// Number of weights K.
    pub k: usize,
}

impl Layout {
    /// Length of θ.
    pub fn len(&self) -> usize {
        if self.m > 1 {
            4 * self.m * self.k
        } else {
            2 * self.k
        }
    }

    /// Always false (a layout has at least one weight); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.k == 0
    }

    /// Offset of w̄_m.
    pub fn mean(&self, m: usize) -> usize {
        2 * m * self.k
    }

    /// Offset of ln s_m.
    pub fn log_var(&self, m: usize) -> usize {
        2 * m * self.k + self.k
    }

    /// Offset of r̄_m (M > 1 only).
    pub fn r_mean(&self, m: usize) -> usize {
        2 * self.m * self.k + 2 * m * self.k
    }

    /// Offset of ln ρ_m (M > 1 only).
    pub fn r_log_var(&self, m: usize) -> usize {
        2 * self.m * self.k + 2 * m * self.k + self.k
    }

    /// The components' means and log-variances in θ.
    pub fn components(&self) -> std::ops::Range<usize> {
        0..2 * self.m * self.k
    }

    /// The smoothing kernels' means and log-variances in θ (empty for M = 1).
    pub fn smoothing(&self) -> std::ops::Range<usize> {
        2 * self.m * self.k..self.len()
    }
}

/// The terms of the entropy bound.
#[derive(Clone, Debug, PartialEq)]
pub struct EntropyTerms {
    /// Σ_m Q_m H(q_m) with H(q_m) = ½ Σ_k ln s_mk + (K/2)(1 + ln 2π) (A.9).
    pub components: f64,
    /// The mutual-information lower bound 𝓘 at the optimal λ (0 for M = 1).
    pub mutual_information: f64,
    /// The optimal λ_m.
    pub lambda: Vec<f64>,
}

impl EntropyTerms {
    /// The entropy lower bound Ĥ = Σ Q H + 𝓘.
    pub fn total(&self) -> f64 {
        self.components + self.mutual_information
    }
}

/// Evaluates the bound and adds its gradient with respect to θ into `grad` (if given).
pub fn entropy_bound(
    theta: &[f64],
    lay: Layout,
    q: &[f64],
    mut grad: Option<&mut [f64]>,
) -> EntropyTerms {
    let k = lay.k;
    let c = 0.5 * k as f64 * (1.0 + occam_core::special::LN_2PI);
    let mut components = 0.0;
    for (m, &qm) in q.iter().enumerate() {
        let lv = &theta[lay.log_var(m)..lay.log_var(m) + k];
        components += qm * (0.5 * lv.iter().sum::<f64>() + c);
        if let Some(gr) = grad.as_deref_mut() {
            for gi in &mut gr[lay.log_var(m)..lay.log_var(m) + k] {
                *gi += 0.5 * qm;
            }
        }
    }
    if lay.m == 1 {
        return EntropyTerms {
            components,
            mutual_information: 0.0,
            lambda: vec![1.0],
        };
    }
    let mm = lay.m;
    let slice = |o: usize| &theta[o..o + k];
    // ⟨ln r_m⟩_m and its gradient.
    let mut mi = 0.0;
    for m in 0..mm {
        let (wm, lv, rm, lr) = (
            slice(lay.mean(m)),
            slice(lay.log_var(m)),
            slice(lay.r_mean(m)),
            slice(lay.r_log_var(m)),
        );
        let mut acc = 0.0;
        for i in 0..k {
            let (s, rho, d) = (lv[i].exp(), lr[i].exp(), wm[i] - rm[i]);
            acc += (s + d * d) / rho;
            if let Some(gr) = grad.as_deref_mut() {
                gr[lay.mean(m) + i] -= q[m] * d / rho;
                gr[lay.r_mean(m) + i] += q[m] * d / rho;
                gr[lay.log_var(m) + i] -= 0.5 * q[m] * s / rho;
                gr[lay.r_log_var(m) + i] += 0.5 * q[m] * (s + d * d) / rho;
            }
        }
        mi -= 0.5 * q[m] * acc;
    }
    // ln G_{mm'} for all pairs.
    let mut ln_g = vec![0.0; mm * mm];
    for m in 0..mm {
        for mp in 0..mm {
            let (wm, lv, rm, lr) = (
                slice(lay.mean(m)),
                slice(lay.log_var(m)),
                slice(lay.r_mean(mp)),
                slice(lay.r_log_var(mp)),
            );
            let mut acc = 0.0;
            for i in 0..k {
                let (s, rho, d) = (lv[i].exp(), lr[i].exp(), wm[i] - rm[i]);
                acc += -0.5 * (1.0 + s / rho).ln() - 0.5 * d * d / (s + rho);
            }
            ln_g[m * mm + mp] = acc;
        }
    }
    let mut lambda = vec![0.0; mm];
    let mut terms = vec![0.0; mm];
    for mp in 0..mm {
        for m in 0..mm {
            terms[m] = q[m].ln() + ln_g[m * mm + mp];
        }
        let ln_s = log_sum_exp(&terms);
        mi -= q[mp] * ln_s;
        lambda[mp] = q[mp] * (-ln_s).exp();
        if let Some(gr) = grad.as_deref_mut() {
            for m in 0..mm {
                // −Q_{m'} ω_{mm'} ∂ln G_{mm'}/∂θ.
                let c = -q[mp] * (terms[m] - ln_s).exp();
                for i in 0..k {
                    let s = theta[lay.log_var(m) + i].exp();
                    let rho = theta[lay.r_log_var(mp) + i].exp();
                    let d = theta[lay.mean(m) + i] - theta[lay.r_mean(mp) + i];
                    let sum = s + rho;
                    let dd = 0.5 * d * d / (sum * sum);
                    gr[lay.mean(m) + i] += c * (-d / sum);
                    gr[lay.r_mean(mp) + i] += c * (d / sum);
                    gr[lay.log_var(m) + i] += c * s * (-0.5 / sum + dd);
                    gr[lay.r_log_var(mp) + i] += c * rho * (-0.5 / sum + 0.5 / rho + dd);
                }
            }
        }
    }
    EntropyTerms {
        components,
        mutual_information: mi,
        lambda,
    }
}

#[cfg(test)]
mod tests;
