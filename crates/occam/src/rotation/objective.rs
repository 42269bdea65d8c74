//! The bound as a function of the rotation R, up to a constant, with its analytic gradient.
//!
//! Two latent Gaussian vector factors of a dot product, x_n and w_d (q each), are rotated jointly:
//! x → R x and w → R⁻ᵀ w, so every wᵀx, and with it every term of the bound below the product, is
//! unchanged (⟨(wᵀx)²⟩ = tr(⟨wwᵀ⟩⟨xxᵀ⟩) is invariant too under the factorised q). A side with n
//! elements, S = Σ⟨x xᵀ⟩ and transform T contributes:
//!
//! * its entropy's change, n ln|det T|;
//! * its prior, either held (`Prior::Fixed`: ⟨φ_p⟩ fixed by the other nodes, the Gaussian
//!   prior term ⟨φ_p⟩₁·T m + ⟨φ_p⟩₂·T S Tᵀ summed over the elements), or ARD re-optimised
//!   (`Prior::Ard`: zero mean, α_k ~ Γ(a_k, b_k) per coordinate, whose optimal q(α_k) =
//!   Γ(a_k + n/2, b_k + ½ M_kk), M = T S Tᵀ, Winn (3.12)–(3.13); at that optimum the terms of α and
//!   of the prior of the side add up to −(a_k + n/2) ln(b_k + ½ M_kk) plus a constant).
//!
//! Gradients with respect to T (row-major, G_ij = ∂ℓ/∂T_ij): n T⁻ᵀ from the entropy; C + (Φ₂ + Φ₂ᵀ) T S
//! for a held prior (C = Σ ⟨φ_p⟩₁ mᵀ); −diag(λ) T S for ARD, λ_k = (a_k + n/2)/(b_k + ½ M_kk) (the
//! re-optimised ⟨α_k⟩). The second side's T = R⁻ᵀ: by dR⁻¹ = −R⁻¹ dR R⁻¹ its gradient in R is
//! −R⁻ᵀ Gᵀ R⁻ᵀ (BayesPy's `RotationOptimizer` derives the same chain rule).

use occam_core::linalg::{inverse_and_log_det, transpose};

/// How a side's prior enters the bound as a function of its transform.
#[derive(Clone, Debug, PartialEq)]
pub enum Prior {
    /// Expected prior natural parameters held: C = Σ_e ⟨φ_p⟩₁,e ⟨x_e⟩ᵀ and ⟨φ_p⟩₂ (q × q each).
    Fixed {
        /// C.
        first: Vec<f64>,
        /// ⟨φ_p⟩₂.
        second: Vec<f64>,
    },
    /// Zero mean and precisions α_k ~ Γ(shape_k, rate_k) re-optimised with the rotation.
    Ard {
        /// Prior shapes a_k.
        shape: Vec<f64>,
        /// Prior (expected) rates b_k.
        rate: Vec<f64>,
    },
}

/// One rotated factor: its number of elements, Σ⟨x xᵀ⟩ and its prior.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// Number of elements n.
    pub n: usize,
    /// S = Σ_e ⟨x_e x_eᵀ⟩ (q × q, row-major).
    pub second: Vec<f64>,
    /// The prior's part.
    pub prior: Prior,
}

/// A B for q × q row-major matrices.
pub(super) fn mul(a: &[f64], b: &[f64], q: usize) -> Vec<f64> {
    let mut c = vec![0.0; q * q];
    for i in 0..q {
        for k in 0..q {
            let aik = a[i * q + k];
            for j in 0..q {
                c[i * q + j] += aik * b[k * q + j];
            }
        }
    }
    c
}

impl Side {
    /// ℓ(T) up to a constant and ∂ℓ/∂T, given T⁻¹ and ln|det T| (see the module doc).
    pub fn value(&self, t: &[f64], t_inv: &[f64], log_det: f64) -> (f64, Vec<f64>) {
        let q = (t.len() as f64).sqrt() as usize;
        let n = self.n as f64;
        let ts = mul(t, &self.second, q);
        let mut value = n * log_det;
        let mut grad: Vec<f64> = transpose(t_inv, q, q).iter().map(|v| n * v).collect();
        match &self.prior {
            Prior::Fixed { first, second } => {
                // ⟨C, T⟩ + ⟨Φ₂, T S Tᵀ⟩.
                let m = mul(&ts, &transpose(t, q, q), q);
                value += dot(first, t) + dot(second, &m);
                let sym: Vec<f64> = second
                    .iter()
                    .zip(transpose(second, q, q))
                    .map(|(a, b)| a + b)
                    .collect();
                let g = mul(&sym, &ts, q);
                for ((o, c), g) in grad.iter_mut().zip(first).zip(g) {
                    *o += c + g;
                }
            }
            Prior::Ard { shape, rate } => {
                for k in 0..q {
                    let mkk: f64 = (0..q).map(|j| ts[k * q + j] * t[k * q + j]).sum();
                    let b = rate[k] + 0.5 * mkk;
                    let c = shape[k] + 0.5 * n;
                    value -= c * b.ln();
                    let lambda = c / b;
                    for j in 0..q {
                        grad[k * q + j] -= lambda * ts[k * q + j];
                    }
                }
            }
        }
        (value, grad)
    }
}

/// Σ a_i b_i.
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The bound's change-carrying part F(R) = ℓ_x(R) + ℓ_w(R⁻ᵀ) and ∂F/∂R; `None` where R is not
/// invertible.
pub fn bound(x: &Side, w: &Side, r: &[f64]) -> Option<(f64, Vec<f64>)> {
    let q = (r.len() as f64).sqrt() as usize;
    let (r_inv, log_det) = inverse_and_log_det(r, q)?;
    let (fx, gx) = x.value(r, &r_inv, log_det);
    let (fw, gw) = inverse_side(w, r, &r_inv, log_det);
    let grad = gx.iter().zip(gw).map(|(a, b)| a + b).collect();
    let value = fx + fw;
    (value.is_finite()).then_some((value, grad))
}

/// ℓ_w(R⁻ᵀ), a side transformed by R⁻ᵀ, and its gradient in R, given R⁻¹ and ln|det R|.
pub fn inverse_side(w: &Side, r: &[f64], r_inv: &[f64], log_det: f64) -> (f64, Vec<f64>) {
    let q = (r.len() as f64).sqrt() as usize;
    let r_inv_t = transpose(r_inv, q, q);
    let (fw, gw) = w.value(&r_inv_t, &transpose(r, q, q), -log_det);
    // ∂ℓ_w(R⁻ᵀ)/∂R = −R⁻ᵀ Gᵀ R⁻ᵀ.
    let chain = mul(&mul(&r_inv_t, &transpose(&gw, q, q), q), &r_inv_t, q);
    (fw, chain.into_iter().map(|v| -v).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn spd(rng: &mut Xoshiro256PlusPlus, q: usize, n: usize) -> Vec<f64> {
        // Σ of n random outer products plus a little of the identity.
        let mut s = vec![0.0; q * q];
        for _ in 0..n {
            let v: Vec<f64> = (0..q).map(|_| rng.random::<f64>() - 0.5).collect();
            for i in 0..q {
                for j in 0..q {
                    s[i * q + j] += v[i] * v[j];
                }
            }
        }
        (0..q).for_each(|i| s[i * q + i] += 0.1);
        s
    }

    fn sides(q: usize) -> (Side, Side) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let first: Vec<f64> = (0..q * q).map(|_| rng.random::<f64>() - 0.5).collect();
        let mut second = vec![0.0; q * q];
        (0..q).for_each(|i| second[i * q + i] = -0.5 * (1.0 + i as f64));
        second[1] = 0.1; // not symmetric: the gradient must use Φ₂ + Φ₂ᵀ
        let x = Side {
            n: 30,
            second: spd(&mut rng, q, 30),
            prior: Prior::Fixed { first, second },
        };
        let w = Side {
            n: 7,
            second: spd(&mut rng, q, 7),
            prior: Prior::Ard {
                shape: (0..q).map(|k| 1e-3 + k as f64).collect(),
                rate: vec![1e-3; q],
            },
        };
        (x, w)
    }

    #[test]
    fn gradient_matches_central_differences() {
        let q = 4;
        let (x, w) = sides(q);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        for _ in 0..5 {
            let r: Vec<f64> = (0..q * q)
                .map(|k| if k % (q + 1) == 0 { 1.0 } else { 0.0 } + 0.3 * (rng.random::<f64>() - 0.5))
                .collect();
            let (_, g) = bound(&x, &w, &r).unwrap();
            for k in 0..q * q {
                let h = 1e-6;
                let (mut up, mut down) = (r.clone(), r.clone());
                up[k] += h;
                down[k] -= h;
                let fd =
                    (bound(&x, &w, &up).unwrap().0 - bound(&x, &w, &down).unwrap().0) / (2.0 * h);
                assert!(
                    (fd - g[k]).abs() < 1e-6 * (1.0 + g[k].abs()),
                    "entry {k}: analytic {} vs central difference {fd}",
                    g[k]
                );
            }
        }
    }

    #[test]
    fn one_dimension_matches_the_closed_form() {
        // q = 1: F(r) = n_x ln|r| + c r + φ₂ s_x r² + n_w ln|1/r| − (a + n_w/2) ln(b + ½ s_w / r²).
        let (nx, c, phi2, sx) = (30.0, 0.7, -0.5, 12.0);
        let (nw, a, b, sw) = (7.0, 2.0, 0.3, 5.0);
        let x = Side {
            n: 30,
            second: vec![sx],
            prior: Prior::Fixed {
                first: vec![c],
                second: vec![phi2],
            },
        };
        let w = Side {
            n: 7,
            second: vec![sw],
            prior: Prior::Ard {
                shape: vec![a],
                rate: vec![b],
            },
        };
        let f = |r: f64| {
            nx * r.abs().ln() + c * r + phi2 * sx * r * r
                - nw * r.abs().ln()
                - (a + nw / 2.0) * (b + 0.5 * sw / (r * r)).ln()
        };
        for r in [0.3, 1.0, 1.7, -2.0] {
            let (value, _) = bound(&x, &w, &[r]).unwrap();
            let (base, _) = bound(&x, &w, &[1.0]).unwrap();
            assert!(
                ((value - base) - (f(r) - f(1.0))).abs() < 1e-12,
                "r = {r}: {} vs {}",
                value - base,
                f(r) - f(1.0)
            );
        }
        // A singular R has no bound.
        assert!(bound(&x, &w, &[0.0]).is_none());
    }
}
