//! Laplace's approximation of the evidence (Sahani, "Laplace approximation"):
//! ln p(D) ≈ F(η*) + (d/2) ln 2π − ½ ln |A|, A = −∇∇F(η*), where F is the log joint in the
//! unconstrained coordinates of module `unconstrained` (Jacobian included, latents summed out)
//! and η* its maximum. Its error falls like 1/N as the data grow (BIC's stays O(1)).
//!
//! - **Mode.** L-BFGS ([`occam_core::optim`], the workspace's optimiser: every accepted step
//!   raises F, a stalled line search ends quietly at the best point) from q's mean, then up to
//!   [`NEWTON`] Newton steps with the Hessian below (halved until F does not fall), which take
//!   the gradient to rounding: the quadratic convergence L-BFGS lacks near the mode, where the
//!   log-determinant is read.
//! - **Hessian.** Central differences of the analytic gradient, coordinate j stepped by
//!   [`STEP`] × its scale σ_j = |H_jj|^(−½) (a first pass at a step of 10⁻⁴ (1 + |η_j|) finds
//!   σ_j), then symmetrised: the truncation error is O((STEP)²) relative, the rounding error
//!   ε/STEP relative to the curvature.
//! - **Log-determinant** by Cholesky of A. When A is not positive definite (a saddle, a flat
//!   direction: the mode is not a maximum) the estimate is flagged and uses Σ ln |λ_i| over A's
//!   eigenvalues.
//! - **Mixtures.** One mode of the K! relabelled modes of the posterior is found; when they are
//!   separated the evidence is their sum, so ln (K! / Π m_g!) is added, components whose
//!   Gaussian approximations coincide or overlap grouped as in module `relabel` (coordinate
//!   means within two standard deviations, variances within a factor 4) — the same assumption
//!   as `vbsym`, reported in the note.

use faer::{Mat, Side};
use occam_core::optim::{maximize, LbfgsOptions};

use super::density::Theta;
use super::flat::Flat;
use super::relabel::{count, Relabel};
use super::unconstrained::{log_joint, to_eta};
use super::NotApplicable;

/// Newton steps after L-BFGS, at most.
pub(crate) const NEWTON: usize = 20;

/// The finite-difference step of the Hessian, in units of each coordinate's scale.
pub(crate) const STEP: f64 = 1e-4;

/// Laplace's estimate and what it found.
#[derive(Clone, Debug)]
pub(crate) struct Laplace {
    /// ln p(D) ≈ F(η*) + (d/2) ln 2π − ½ ln |A| (+ the relabelling count).
    pub log_evidence: f64,
    /// F(η*).
    pub log_joint: f64,
    /// ln |A| (Σ ln |λ| when A is not positive definite).
    pub log_det: f64,
    /// Coordinates.
    pub dim: usize,
    /// Whether A is positive definite (the mode is a maximum).
    pub positive_definite: bool,
    /// The relabelling count of a mixture.
    pub relabel: Option<Relabel>,
    /// max |∇F| at η*.
    pub gradient: f64,
    /// How far the mode lies from the start (q's mean): max_j |η*_j − η0_j| / sd_j, sd_j² the
    /// j-th diagonal entry of A⁻¹. Far beyond a few sds the MAP is another mode than q's.
    pub moved: f64,
}

/// The Hessian ∇∇F at `eta` by central differences of the gradient, coordinate j stepped by
/// `h[j]`, symmetrised.
pub(crate) fn hessian(flat: &Flat, eta: &[f64], h: &[f64]) -> Mat<f64> {
    let d = eta.len();
    let mut hess = Mat::<f64>::zeros(d, d);
    let (mut gp, mut gm) = (vec![0.0; d], vec![0.0; d]);
    let mut x = eta.to_vec();
    for j in 0..d {
        x[j] = eta[j] + h[j];
        log_joint(flat, &x, Some(&mut gp));
        x[j] = eta[j] - h[j];
        log_joint(flat, &x, Some(&mut gm));
        x[j] = eta[j];
        for i in 0..d {
            hess[(i, j)] = (gp[i] - gm[i]) / (2.0 * h[j]);
        }
    }
    Mat::from_fn(d, d, |i, j| 0.5 * (hess[(i, j)] + hess[(j, i)]))
}

/// The Hessian with steps scaled to each coordinate's curvature (module doc).
fn scaled_hessian(flat: &Flat, eta: &[f64]) -> Mat<f64> {
    let h0: Vec<f64> = eta.iter().map(|v| 1e-4 * (1.0 + v.abs())).collect();
    let first = hessian(flat, eta, &h0);
    let h: Vec<f64> = (0..eta.len())
        .map(|j| {
            let c = first[(j, j)].abs();
            if c.is_finite() && c > 0.0 {
                STEP / c.sqrt()
            } else {
                h0[j]
            }
        })
        .collect();
    hessian(flat, eta, &h)
}

/// ln |A| and A⁻¹ by Cholesky, or `None` when A is not positive definite.
fn cholesky(a: &Mat<f64>) -> Option<(f64, Mat<f64>)> {
    use faer::linalg::solvers::DenseSolveCore;
    let llt = a.llt(Side::Lower).ok()?;
    let l = llt.L();
    let log_det = 2.0 * (0..a.nrows()).map(|i| l[(i, i)].ln()).sum::<f64>();
    log_det.is_finite().then(|| (log_det, llt.inverse()))
}

/// Laplace's approximation from the starting point `theta0` (q's mean).
pub(crate) fn laplace(flat: &Flat, theta0: &Theta) -> Result<Laplace, NotApplicable> {
    let eta0 = to_eta(flat, theta0);
    let start = eta0.clone();
    let d = eta0.len();
    let mut g = vec![0.0; d];
    if !log_joint(flat, &eta0, Some(&mut g)).is_finite() || g.iter().any(|v| !v.is_finite()) {
        return Err(NotApplicable::Other(
            "ln p(D, θ) or its gradient is not finite at q's mean".into(),
        ));
    }
    let opts = LbfgsOptions {
        max_iters: 5000,
        grad_tol: 1e-10,
        f_tol: 1e-15,
        ..LbfgsOptions::default()
    };
    let r = maximize(|x, g| log_joint(flat, x, Some(g)), eta0, opts);
    let mut eta = r.x;
    let mut f = log_joint(flat, &eta, Some(&mut g));
    // Newton: η ← η + A⁻¹ g, halved until F does not fall.
    for _ in 0..NEWTON {
        let a = -scaled_hessian(flat, &eta);
        let Some((_, inv)) = cholesky(&a) else { break };
        let step: Vec<f64> = (0..d)
            .map(|i| (0..d).map(|j| inv[(i, j)] * g[j]).sum())
            .collect();
        let decrement: f64 = step.iter().zip(&g).map(|(s, g)| s * g).sum();
        // Also stops on a NaN decrement.
        if decrement.is_nan() || decrement <= 1e-24 * (1.0 + f.abs()) {
            break;
        }
        let mut t = 1.0;
        let mut moved = false;
        let mut gn = vec![0.0; d];
        for _ in 0..30 {
            let x: Vec<f64> = eta.iter().zip(&step).map(|(e, s)| e + t * s).collect();
            let fx = log_joint(flat, &x, Some(&mut gn));
            if fx.is_finite() && fx >= f {
                (eta, f, moved) = (x, fx, true);
                g.copy_from_slice(&gn);
                break;
            }
            t *= 0.5;
        }
        if !moved {
            break;
        }
    }
    let a = -scaled_hessian(flat, &eta);
    let (log_det, inv, pd) = match cholesky(&a) {
        Some((l, inv)) => (l, Some(inv), true),
        None => {
            let eig = a.self_adjoint_eigen(Side::Lower).map_err(|e| {
                NotApplicable::Other(format!("the Hessian's eigendecomposition failed: {e:?}"))
            })?;
            let s = eig.S();
            // A zero (or non-finite) curvature has no Gaussian volume: ln|λ| would be −∞ and
            // the estimate +∞.
            if (0..d).any(|i| !(s[i].is_finite() && s[i] != 0.0)) {
                return Err(NotApplicable::Other(
                    "the Hessian at the mode is singular (a direction of zero curvature): \
                     Laplace's Gaussian has no volume there"
                        .into(),
                ));
            }
            ((0..d).map(|i| s[i].abs().ln()).sum::<f64>(), None, false)
        }
    };
    let mut value = f + 0.5 * d as f64 * (2.0 * std::f64::consts::PI).ln() - 0.5 * log_det;
    let relabel = flat.has_states().then(|| {
        let var = |j: usize| match &inv {
            Some(inv) => inv[(j, j)],
            None => 1.0 / a[(j, j)].abs(),
        };
        count(&components(flat, &eta, &var))
    });
    if let Some(r) = &relabel {
        value += r.log_count;
    }
    let sd = |j: usize| match &inv {
        Some(inv) => inv[(j, j)].sqrt(),
        None => a[(j, j)].abs().recip().sqrt(),
    };
    let moved = (0..d).fold(0.0f64, |m, j| m.max((eta[j] - start[j]).abs() / sd(j)));
    Ok(Laplace {
        moved,
        log_evidence: value,
        log_joint: f,
        log_det,
        dim: d,
        positive_definite: pd,
        relabel,
        gradient: g.iter().fold(0.0f64, |m, v| m.max(v.abs())),
    })
}

/// Per component k, (η_j, Var η_j) of the coordinates of its parameters.
fn components(flat: &Flat, eta: &[f64], var: &dyn Fn(usize) -> f64) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![Vec::new(); flat.k];
    let mut at = 0;
    for (i, p) in flat.params.iter().enumerate() {
        let n = flat.elements(i) * p.free();
        if p.by_k {
            let per = n / flat.k;
            for (k, o) in out.iter_mut().enumerate() {
                o.extend((at + k * per..at + (k + 1) * per).map(|j| (eta[j], var(j))));
            }
        }
        at += n;
    }
    out
}
