//! The bound of a linear dynamical system as a function of the rotation R of its state space, up
//! to a constant, with its analytic gradient (Luttinen, "Fast variational Bayesian linear
//! state-space model", ECML 2013; BayesPy's `RotateGaussianMarkovChain`).
//!
//! The transform: every state x_t → R x_t (the chain's q stays one Gaussian per sequence), the
//! emission rows c_o → R⁻ᵀ c_o (so every c_oᵀx_t, and with it the likelihood, is unchanged) and the
//! dynamics A → R A R⁻¹ (so x_t − A x_{t−1} → R(x_t − A x_{t−1})). With A's rows a_i independent in
//! q, row i of R A R⁻¹, a_i' = R⁻ᵀ Σ_k R_ik a_k, is kept as its marginal: mean R⁻ᵀ Mᵀ r_i (M = ⟨A⟩,
//! r_i row i of R) and covariance R⁻ᵀ W_i R⁻¹, W_i = Σ_k R_ik² Σ_k (`Vmp::mix_gaussian_rows`).
//! BayesPy scales the covariances by squared column sums of R instead (its `rotate_plates` calls
//! itself approximate); the marginal is exact, and the bound below is the bound of exactly the q
//! that is applied. The terms that change:
//!
//! * the chain's entropy and x_0's prior: N ln|det R| (N rotated states) and the held Gaussian
//!   prior of x_0 (`objective::Side` with `Prior::Fixed`);
//! * the transitions: −½ Σ_i ⟨τ_i⟩ Σ_t ⟨(x'_t,i − a_i'ᵀx'_{t−1})²⟩ = −½ Σ_i ⟨τ_i⟩ (r_iᵀ E r_i +
//!   Σ_k R_ik² v_k), with E = S₊ − C Mᵀ − M Cᵀ + M S₋ Mᵀ and v_k = tr(Σ_k S₋) (S₋, S₊, C the chain's
//!   sums, `ChainSums`); ⟨ln τ_i⟩ does not move;
//! * A's entropy: Σ_i (−ln|det R| + ½ ln|W_i|);
//! * A's prior through S_A' = Σ_i ⟨a_i' a_i'ᵀ⟩ = P K Pᵀ, P = R⁻ᵀ, K = Mᵀ RᵀR M + Σ_k c_k Σ_k
//!   (c_k = Σ_i R_ik²): with ARD on the columns re-optimised, −Σ_k (a_k + D/2) ln(b_k + ½ S'_kk)
//!   (as in `objective`), or a zero-mean prior held, ⟨Φ₂, S_A'⟩;
//! * the emission: `objective::Side` under R⁻ᵀ, as for PCA's W.
//!
//! Gradients (G_ij = ∂F/∂R_ij): transitions −⟨τ_i⟩((E r_i)_j + R_ij v_j); A's entropy −D R⁻ᵀ +
//! R_ik tr(W_i⁻¹ Σ_k); A's prior, with dF = tr(G_S dS') (G_S = −½ diag(λ) for ARD, λ_k the
//! re-optimised ⟨α_k⟩; sym(Φ₂) held): through P, 2 G_S P K, taken to R by dP = −P dRᵀ P; through
//! K, 2 R M N Mᵀ + 2 R_ik tr(N Σ_k), N = Pᵀ G_S P.

use occam_core::engine::ChainSums;
use occam_core::linalg::{inverse_and_log_det, transpose};

use super::objective::{dot, inverse_side, mul, Prior, Side};

/// The prior of the dynamics' rows, over their columns.
#[derive(Clone, Debug, PartialEq)]
pub enum RowPrior {
    /// Zero mean and precisions α_k ~ Γ(shape_k, rate_k) per column, re-optimised.
    Ard {
        /// Prior shapes a_k.
        shape: Vec<f64>,
        /// Prior (expected) rates b_k.
        rate: Vec<f64>,
    },
    /// Zero mean and the expected quadratic natural parameter Φ₂, the same for every row, held.
    Held {
        /// Φ₂ (d × d).
        second: Vec<f64>,
    },
}

/// q(A): the rows' means and covariances and their prior.
#[derive(Clone, Debug, PartialEq)]
pub struct Dynamics {
    /// M = ⟨A⟩ (d × d, row i = ⟨a_i⟩).
    pub mean: Vec<f64>,
    /// Σ_i, each row's covariance (d × d each).
    pub covs: Vec<Vec<f64>>,
    /// The rows' prior.
    pub prior: RowPrior,
}

/// Everything the rotation of one linear dynamical system reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Lds {
    /// The chain's sums.
    pub chain: ChainSums,
    /// q(A).
    pub dynamics: Dynamics,
    /// The emission's rows (transformed by R⁻ᵀ).
    pub emission: Side,
}

fn add(a: &mut [f64], b: &[f64], c: f64) {
    a.iter_mut().zip(b).for_each(|(o, v)| *o += c * v);
}

/// The transitions' term and gradient (module doc).
fn transitions(lds: &Lds, r: &[f64], d: usize) -> (f64, Vec<f64>) {
    let (ch, dy) = (&lds.chain, &lds.dynamics);
    let m = &dy.mean;
    let mt = transpose(m, d, d);
    // E = S₊ − C Mᵀ − M Cᵀ + M S₋ Mᵀ.
    let c_mt = mul(&ch.cross, &mt, d);
    let mut e = ch.cur.clone();
    add(&mut e, &c_mt, -1.0);
    add(&mut e, &transpose(&c_mt, d, d), -1.0);
    add(&mut e, &mul(&mul(m, &ch.prev, d), &mt, d), 1.0);
    let v: Vec<f64> = dy.covs.iter().map(|s| dot(s, &ch.prev)).collect();
    let (mut value, mut grad) = (0.0, vec![0.0; d * d]);
    for i in 0..d {
        let (tau, ri) = (ch.noise[i], &r[i * d..(i + 1) * d]);
        let er: Vec<f64> = (0..d).map(|j| dot(&e[j * d..(j + 1) * d], ri)).collect();
        let quad = dot(ri, &er) + (0..d).map(|k| ri[k] * ri[k] * v[k]).sum::<f64>();
        value -= 0.5 * tau * quad;
        for j in 0..d {
            grad[i * d + j] = -tau * (er[j] + ri[j] * v[j]);
        }
    }
    (value, grad)
}

/// A's entropy and prior, with their gradient (module doc); `None` where a W_i is singular.
fn dynamics(
    dy: &Dynamics,
    r: &[f64],
    r_inv: &[f64],
    log_det: f64,
    d: usize,
) -> Option<(f64, Vec<f64>)> {
    let n = d as f64;
    let r_inv_t = transpose(r_inv, d, d);
    let mut value = -n * log_det;
    let mut grad: Vec<f64> = r_inv_t.iter().map(|v| -n * v).collect();
    for i in 0..d {
        let mut w = vec![0.0; d * d];
        for (k, s) in dy.covs.iter().enumerate() {
            add(&mut w, s, r[i * d + k] * r[i * d + k]);
        }
        let (w_inv, ln_w) = inverse_and_log_det(&w, d)?;
        value += 0.5 * ln_w;
        for (k, s) in dy.covs.iter().enumerate() {
            grad[i * d + k] += r[i * d + k] * dot(&w_inv, s);
        }
    }
    // K = Mᵀ RᵀR M + Σ_k c_k Σ_k, S' = P K Pᵀ.
    let (m, mt) = (&dy.mean, transpose(&dy.mean, d, d));
    let rm = mul(r, m, d);
    let mut k_mat = mul(&transpose(&rm, d, d), &rm, d);
    for (k, s) in dy.covs.iter().enumerate() {
        let c: f64 = (0..d).map(|i| r[i * d + k] * r[i * d + k]).sum();
        add(&mut k_mat, s, c);
    }
    let p = &r_inv_t;
    let s_new = mul(&mul(p, &k_mat, d), r_inv, d);
    // G_S, dF = tr(G_S dS').
    let mut g_s = vec![0.0; d * d];
    match &dy.prior {
        RowPrior::Ard { shape, rate } => {
            for k in 0..d {
                let b = rate[k] + 0.5 * s_new[k * d + k];
                let c = shape[k] + 0.5 * n;
                value -= c * b.ln();
                g_s[k * d + k] = -0.5 * c / b;
            }
        }
        RowPrior::Held { second } => {
            value += dot(second, &s_new);
            let st = transpose(second, d, d);
            for (o, (a, b)) in g_s.iter_mut().zip(second.iter().zip(&st)) {
                *o = 0.5 * (a + b);
            }
        }
    }
    // Through P: ∂F/∂P = 2 G_S P K, taken to R as −R⁻ᵀ (∂F/∂P)ᵀ R⁻ᵀ.
    let gp = mul(&mul(&g_s, p, d), &k_mat, d);
    let through_p = mul(&mul(p, &transpose(&gp, d, d), d), p, d);
    add(&mut grad, &through_p, -2.0);
    // Through K: 2 R M N Mᵀ + 2 R_ik tr(N Σ_k), N = Pᵀ G_S P.
    let nn = mul(&mul(r_inv, &g_s, d), p, d);
    add(&mut grad, &mul(&mul(&rm, &nn, d), &mt, d), 2.0);
    for (k, s) in dy.covs.iter().enumerate() {
        let tr = dot(&nn, s);
        for i in 0..d {
            grad[i * d + k] += 2.0 * r[i * d + k] * tr;
        }
    }
    Some((value, grad))
}

/// F(R), the part of the bound that the rotation changes, and ∂F/∂R; `None` where R is not
/// invertible.
pub fn bound(lds: &Lds, r: &[f64]) -> Option<(f64, Vec<f64>)> {
    let d = lds.chain.d;
    let (r_inv, log_det) = inverse_and_log_det(r, d)?;
    let ch = &lds.chain;
    let states = Side {
        n: ch.steps,
        second: ch.initial_second.clone(),
        prior: Prior::Fixed {
            first: ch.initial_first.clone(),
            second: ch.initial_precision.iter().map(|l| -0.5 * l).collect(),
        },
    };
    let (mut value, mut grad) = states.value(r, &r_inv, log_det);
    let (tv, tg) = transitions(lds, r, d);
    let (av, ag) = dynamics(&lds.dynamics, r, &r_inv, log_det, d)?;
    let (cv, cg) = inverse_side(&lds.emission, r, &r_inv, log_det);
    value += tv + av + cv;
    for g in [tg, ag, cg] {
        add(&mut grad, &g, 1.0);
    }
    value.is_finite().then_some((value, grad))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn spd(rng: &mut Xoshiro256PlusPlus, d: usize, n: usize) -> Vec<f64> {
        let mut s = vec![0.0; d * d];
        for _ in 0..n {
            let v: Vec<f64> = (0..d).map(|_| rng.random::<f64>() - 0.5).collect();
            for i in 0..d {
                for j in 0..d {
                    s[i * d + j] += v[i] * v[j];
                }
            }
        }
        (0..d).for_each(|i| s[i * d + i] += 0.1);
        s
    }

    fn random(rng: &mut Xoshiro256PlusPlus, n: usize) -> Vec<f64> {
        (0..n).map(|_| rng.random::<f64>() - 0.5).collect()
    }

    fn lds(d: usize, ard: bool) -> Lds {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let chain = ChainSums {
            d,
            steps: 40,
            initial_second: spd(&mut rng, d, 3),
            initial_first: random(&mut rng, d * d),
            initial_precision: spd(&mut rng, d, 4),
            prev: spd(&mut rng, d, 39),
            cur: spd(&mut rng, d, 39),
            cross: random(&mut rng, d * d),
            noise: (0..d).map(|i| 1.0 + i as f64).collect(),
        };
        let prior = if ard {
            RowPrior::Ard {
                shape: (0..d).map(|k| 1e-3 + k as f64).collect(),
                rate: vec![1e-2; d],
            }
        } else {
            let mut second = vec![0.0; d * d];
            (0..d).for_each(|k| second[k * d + k] = -0.5 * (1.0 + k as f64));
            second[1] = 0.2; // not symmetric: the gradient must symmetrise
            RowPrior::Held { second }
        };
        let dynamics = Dynamics {
            mean: random(&mut rng, d * d),
            covs: (0..d).map(|k| spd(&mut rng, d, 2 + k)).collect(),
            prior,
        };
        let emission = Side {
            n: 6,
            second: spd(&mut rng, d, 6),
            prior: Prior::Ard {
                shape: vec![1e-3; d],
                rate: vec![1e-3; d],
            },
        };
        Lds {
            chain,
            dynamics,
            emission,
        }
    }

    #[test]
    fn gradient_matches_central_differences() {
        let d = 3;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for ard in [true, false] {
            let l = lds(d, ard);
            for _ in 0..4 {
                let r: Vec<f64> = (0..d * d)
                    .map(|k| f64::from(k % (d + 1) == 0) + 0.4 * (rng.random::<f64>() - 0.5))
                    .collect();
                let (_, g) = bound(&l, &r).unwrap();
                for k in 0..d * d {
                    let h = 1e-6;
                    let (mut up, mut down) = (r.clone(), r.clone());
                    up[k] += h;
                    down[k] -= h;
                    let fd = (bound(&l, &up).unwrap().0 - bound(&l, &down).unwrap().0) / (2.0 * h);
                    assert!(
                        (fd - g[k]).abs() < 1e-6 * (1.0 + g[k].abs()),
                        "ard {ard}, entry {k}: analytic {} vs central difference {fd}",
                        g[k]
                    );
                }
            }
        }
    }

    #[test]
    fn one_dimension_matches_the_closed_form() {
        // d = 1: F(r) = N ln|r| + f0 r − ½λ0 s0 r² − ½τ(e r² + r² v) − ln|r| + ½ ln(r² σ²)
        //        − (a + ½) ln(b + ½ σ²... ) with S_A' = (m² r² + r² σ²)/r² = m² + σ²: A's prior and
        //        entropy do not move in one dimension, only the states', transitions' and C's terms.
        let l = lds(1, true);
        let ch = &l.chain;
        let e = ch.cur[0] - 2.0 * ch.cross[0] * l.dynamics.mean[0]
            + l.dynamics.mean[0].powi(2) * ch.prev[0];
        let v = l.dynamics.covs[0][0] * ch.prev[0];
        let Prior::Ard { shape, rate } = &l.emission.prior else {
            unreachable!()
        };
        let (nc, sc) = (l.emission.n as f64, l.emission.second[0]);
        let f = |r: f64| {
            ch.steps as f64 * r.abs().ln() + ch.initial_first[0] * r
                - 0.5 * ch.initial_precision[0] * ch.initial_second[0] * r * r
                - 0.5 * ch.noise[0] * (e + v) * r * r
                - nc * r.abs().ln()
                - (shape[0] + nc / 2.0) * (rate[0] + 0.5 * sc / (r * r)).ln()
        };
        let base = bound(&l, &[1.0]).unwrap().0;
        for r in [0.3, 1.7, -2.0] {
            let got = bound(&l, &[r]).unwrap().0 - base;
            assert!(
                (got - (f(r) - f(1.0))).abs() < 1e-10 * (1.0 + got.abs()),
                "r = {r}: {got} vs {}",
                f(r) - f(1.0)
            );
        }
        assert!(bound(&l, &[0.0]).is_none());
    }
}
