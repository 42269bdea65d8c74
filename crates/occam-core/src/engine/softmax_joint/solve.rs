//! The dense linear algebra of the softmax q-block (module docs of `softmax_joint`): the target's
//! natural parameters, the joint [m, Σ] from them, the marginals, η's moments and the path of a
//! shortened step. One group's joint is J = K·D means then a row-major J × J matrix.

use crate::dist::gaussian_vector_moments;
use crate::linalg::{chol_inverse_into, chol_log_det, chol_solve_in_place, cholesky_into};

/// The prior's part of every group's target [h, Λ] (block-diagonal: element c of the group holds
/// class c's φ = [φ₁, φ₂], so h_c = φ₁ and Λ_cc = −(φ₂ + φ₂ᵀ)).
pub(super) fn prior_natural(prior: &[f64], groups: usize, k: usize, d: usize) -> Vec<f64> {
    let (j, len) = (k * d, d + d * d);
    let mut out = vec![0.0; groups * (j + j * j)];
    for (g, t) in out.chunks_exact_mut(j + j * j).enumerate() {
        let (h, lam) = t.split_at_mut(j);
        for c in 0..k {
            let p = &prior[(g * k + c) * len..(g * k + c + 1) * len];
            h[c * d..(c + 1) * d].copy_from_slice(&p[..d]);
            for a in 0..d {
                for b in 0..d {
                    lam[(c * d + a) * j + c * d + b] = -(p[d + a * d + b] + p[d + b * d + a]);
                }
            }
        }
    }
    out
}

/// Adds one row's message [a, H] to η (on ⟨η⟩ and ⟨ηηᵀ⟩, K + K² values) to its group's target
/// [h, Λ], through η = (I_K ⊗ xᵀ) v: h_{cD+a} += a_c x_a, Λ_{(cD+a)(c'D+b)} −= (H_cc' + H_c'c) x_a x_b
/// (Winn (2.49) for a matrix–vector product with known x).
pub(super) fn add_row(msg: &[f64], x: &[f64], k: usize, target: &mut [f64]) {
    let d = x.len();
    let j = k * d;
    let (h, lam) = target.split_at_mut(j);
    for c in 0..k {
        for a in 0..d {
            h[c * d + a] += msg[c] * x[a];
        }
    }
    for c in 0..k {
        for cc in 0..k {
            let s = msg[k + c * k + cc] + msg[k + cc * k + c];
            if s == 0.0 {
                continue;
            }
            for a in 0..d {
                let sa = s * x[a];
                let row = &mut lam[(c * d + a) * j + cc * d..(c * d + a) * j + cc * d + d];
                for (l, xb) in row.iter_mut().zip(x) {
                    *l -= sa * xb;
                }
            }
        }
    }
}

/// ½ ln|Σ| − ½ Σ_c ln|Σ_cc| for a joint covariance `cov` (J × J) with ln|Σ| = `log_det`; `None`
/// if a diagonal block is not positive definite.
fn gap(cov: &[f64], log_det: f64, k: usize, d: usize) -> Option<f64> {
    let j = k * d;
    let (mut block, mut l) = (vec![0.0; d * d], vec![0.0; d * d]);
    let mut g = 0.5 * log_det;
    for c in 0..k {
        for a in 0..d {
            block[a * d..(a + 1) * d]
                .copy_from_slice(&cov[(c * d + a) * j + c * d..(c * d + a) * j + c * d + d]);
        }
        if !cholesky_into(&block, 1.0, d, &mut l) {
            return None;
        }
        g -= 0.5 * chol_log_det(&l, d);
    }
    Some(g)
}

/// Replaces a group's [h, Λ] by [m, Σ] = [Λ⁻¹h, Λ⁻¹] and writes its entropy gap; `false` if Λ
/// (or a marginal) is not positive definite.
pub(super) fn invert_in_place(
    t: &mut [f64],
    j: usize,
    out_gap: &mut f64,
    k: usize,
    d: usize,
) -> bool {
    let (h, lam) = t.split_at_mut(j);
    let (mut l, mut work) = (vec![0.0; j * j], vec![0.0; j * j]);
    if !cholesky_into(lam, 1.0, j, &mut l) {
        return false;
    }
    chol_solve_in_place(&l, j, h);
    chol_inverse_into(&l, j, lam, &mut work);
    match gap(lam, -chol_log_det(&l, j), k, d) {
        Some(g) => {
            *out_gap = g;
            true
        }
        None => false,
    }
}

/// Λ = Σ⁻¹ into `out`; `false` if Σ is not positive definite.
pub(super) fn precision(cov: &[f64], j: usize, out: &mut [f64]) -> bool {
    let (mut l, mut work) = (vec![0.0; j * j], vec![0.0; j * j]);
    if !cholesky_into(cov, 1.0, j, &mut l) {
        return false;
    }
    chol_inverse_into(&l, j, out, &mut work);
    true
}

/// Class c's marginal N(m_c, Σ_cc) as its family's φ = [Λ_c m_c, −½Λ_c], u and A; `false` if Σ_cc
/// is not positive definite.
pub(super) fn marginal(
    m: &[f64],
    cov: &[f64],
    c: usize,
    d: usize,
    phi: &mut [f64],
    u: &mut [f64],
    a: &mut f64,
) -> bool {
    let j = m.len();
    let mut block = vec![0.0; d * d];
    for r in 0..d {
        block[r * d..(r + 1) * d]
            .copy_from_slice(&cov[(c * d + r) * j + c * d..(c * d + r) * j + c * d + d]);
    }
    let (mut l, mut work, mut lam) = (vec![0.0; d * d], vec![0.0; d * d], vec![0.0; d * d]);
    if !cholesky_into(&block, 1.0, d, &mut l) {
        return false;
    }
    chol_inverse_into(&l, d, &mut lam, &mut work);
    let mc = &m[c * d..(c + 1) * d];
    for r in 0..d {
        phi[r] = (0..d).map(|s| lam[r * d + s] * mc[s]).sum();
        for s in 0..d {
            phi[d + r * d + s] = -0.5 * lam[r * d + s];
        }
    }
    match gaussian_vector_moments(phi, d, u) {
        Ok(v) => {
            *a = v;
            true
        }
        Err(_) => false,
    }
}

/// η's moments for one row x from its group's joint [m, Σ]: ⟨η_c⟩ = m_cᵀx,
/// ⟨η_c η_c'⟩ = ⟨η_c⟩⟨η_c'⟩ + xᵀΣ_cc'x. `sx` is scratch (J values).
pub(super) fn logit_moments(
    m: &[f64],
    cov: &[f64],
    x: &[f64],
    k: usize,
    sx: &mut [f64],
    u: &mut [f64],
) {
    let d = x.len();
    let j = k * d;
    for c in 0..k {
        u[c] = m[c * d..(c + 1) * d]
            .iter()
            .zip(x)
            .map(|(a, b)| a * b)
            .sum();
    }
    // sx = Σ (I_K ⊗ x) column by column: sx_c'[r] = Σ_b Σ[r, c'D + b] x_b.
    for cc in 0..k {
        for (r, s) in sx.iter_mut().enumerate() {
            *s = cov[r * j + cc * d..r * j + cc * d + d]
                .iter()
                .zip(x)
                .map(|(a, b)| a * b)
                .sum();
        }
        for c in 0..k {
            let q: f64 = sx[c * d..(c + 1) * d]
                .iter()
                .zip(x)
                .map(|(a, b)| a * b)
                .sum();
            u[k + c * k + cc] = u[c] * u[cc] + q;
        }
    }
}

/// The joint at step length ρ from `old` towards `full` (module docs of `softmax_joint`):
/// m(ρ) = m₀ + ρ(m* − m₀), Σ(ρ) = (Λ₀ + ρ(Λ* − Λ₀))⁻¹, with the gaps; `None` if not positive
/// definite.
#[allow(clippy::too_many_arguments)]
pub(super) fn along(
    old: &[f64],
    full: &[f64],
    old_lambda: &[f64],
    full_lambda: &[f64],
    rho: f64,
    groups: usize,
    k: usize,
    d: usize,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let j = k * d;
    let mut joint = vec![0.0; groups * (j + j * j)];
    let mut gaps = vec![0.0; groups];
    let (mut lam, mut l, mut work) = (vec![0.0; j * j], vec![0.0; j * j], vec![0.0; j * j]);
    for g in 0..groups {
        let r = g * (j + j * j)..(g + 1) * (j + j * j);
        let (m, cov) = joint[r.clone()].split_at_mut(j);
        for (i, mi) in m.iter_mut().enumerate() {
            let (a, b) = (old[r.start + i], full[r.start + i]);
            *mi = a + rho * (b - a);
        }
        for (i, li) in lam.iter_mut().enumerate() {
            let (a, b) = (old_lambda[g * j * j + i], full_lambda[g * j * j + i]);
            *li = a + rho * (b - a);
        }
        if !cholesky_into(&lam, 1.0, j, &mut l) {
            return None;
        }
        chol_inverse_into(&l, j, cov, &mut work);
        gaps[g] = gap(cov, -chol_log_det(&l, j), k, d)?;
    }
    Some((joint, gaps))
}
