//! MacKay's evidence procedure (committee paper §2.2, (14)–(15); thesis §5.3.2): MAP weights under
//! M(w) = β E_D + ½ Σ α_k w_k², a Gaussian (Laplace) approximation with Hessian
//! A = β ∇∇E_D + diag(α) at the mode, and type-II re-estimation of the hyper-parameters,
//! γ_j = Σ_{k ∈ j} (1 − α_j (A⁻¹)_kk), α_j ← γ_j / Σ_{k ∈ j} w_k², β ← (N − Σ_j γ_j) / (2 E_D)
//! (MacKay 1992; the papers do not print these). Negative eigenvalues of ∇∇E_D (the mode of a
//! non-convex error may be a saddle of E_D alone) are set to 0, as NETLAB's `evidence` does.
//! Restarts are ranked by the Laplace log evidence
//! ln p(D | α, β) ≈ −M(w*) − ½ ln|A| + ½ Σ_k ln α_k + (N/2) ln β − (N/2) ln 2π
//! (without the H!·2^H symmetry factor, which is the same for every restart of one network).

use super::map::MapProblem;
use crate::bnn::network::{Architecture, NetError};
use crate::bnn::prior::{Gamma, Prior, PriorKind};
use crate::bnn::vb::init_component;
use crate::data::Dataset;
use faer::{Mat, Side};
use occam_core::special::LN_2PI;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Settings of the evidence procedure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvidenceOptions {
    /// Hidden units.
    pub hidden: usize,
    /// Weight prior (single, grouped or ARD; NRD is not supported here).
    pub prior: PriorKind,
    /// Initial α (thesis: 0.3).
    pub init_alpha: f64,
    /// Initial β (thesis: 200).
    pub init_beta: f64,
    /// (train, re-estimate) cycles (committee paper: 5).
    pub cycles: usize,
    /// L-BFGS iterations per cycle (committee paper: 500).
    pub iters_per_cycle: usize,
    /// Seed of the initial weights.
    pub seed: u64,
}

impl EvidenceOptions {
    /// The committee paper's schedule for `hidden` units with the thesis's initial values.
    pub fn paper(hidden: usize) -> Self {
        EvidenceOptions {
            hidden,
            prior: PriorKind::Single,
            init_alpha: 0.3,
            init_beta: 200.0,
            cycles: 5,
            iters_per_cycle: 500,
            seed: 0,
        }
    }
}

/// A fitted network with its re-estimated hyper-parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvidenceFit {
    /// The network.
    pub arch: Architecture,
    /// The MAP weights w*.
    pub w: Vec<f64>,
    /// The prior's grouping.
    pub prior: Prior,
    /// α_j.
    pub alpha: Vec<f64>,
    /// β.
    pub beta: f64,
    /// Effective number of parameters Σ γ_j.
    pub gamma: f64,
    /// Laplace log evidence at the end.
    pub log_evidence: f64,
    /// Seed used.
    pub seed: u64,
}

impl EvidenceFit {
    /// Predictions f(x, w*) (the procedure predicts with the mode).
    pub fn predict(&self, x: &[f64]) -> Vec<f64> {
        MapProblem {
            arch: self.arch,
            x,
            t: &[],
        }
        .predict(&self.w, x)
    }
}

/// Re-estimates α and β at w; returns (α, β, γ, log evidence at the input α, β).
pub fn reestimate(
    p: &MapProblem<'_>,
    prior: &Prior,
    w: &[f64],
    alpha: &[f64],
    beta: f64,
) -> Result<(Vec<f64>, f64, f64, f64), NetError> {
    let k = w.len();
    let hd = p.hessian_error(w);
    let hm = Mat::<f64>::from_fn(k, k, |i, j| hd[i * k + j]);
    // faer's kernels leave the vector registers' upper halves dirty: clean them for the scalar
    // code (logarithms) that follows on this thread, on the error paths too.
    let eig = hm.self_adjoint_eigen(Side::Lower);
    occam_core::linalg::clean_vector_state();
    let eig = eig.map_err(|_| NetError::Numerical("Hessian eigen".into()))?;
    let (u, s) = (eig.U(), eig.S());
    let ak: Vec<f64> = prior.links.iter().map(|l| alpha[l[0]]).collect();
    // A = β V max(e, 0) Vᵀ + diag(α).
    let a = Mat::<f64>::from_fn(k, k, |i, j| {
        let mut v = 0.0;
        for c in 0..k {
            v += u[(i, c)] * s[c].max(0.0) * u[(j, c)];
        }
        beta * v + if i == j { ak[i] } else { 0.0 }
    });
    let ea = a.self_adjoint_eigen(Side::Lower);
    occam_core::linalg::clean_vector_state();
    let ea = ea.map_err(|_| NetError::Numerical("A eigen".into()))?;
    let (ua, sa) = (ea.U(), ea.S());
    let mut log_det = 0.0;
    for c in 0..k {
        if sa[c] <= 0.0 {
            return Err(NetError::Numerical(
                "Laplace Hessian not positive definite".into(),
            ));
        }
        log_det += sa[c].ln();
    }
    let inv_diag: Vec<f64> = (0..k)
        .map(|i| (0..k).map(|c| ua[(i, c)] * ua[(i, c)] / sa[c]).sum())
        .collect();
    let ed = p.error(w, None);
    let nh = prior.n_hyper();
    let mut gamma = vec![0.0; nh];
    let mut w2 = vec![0.0; nh];
    for (kk, l) in prior.links.iter().enumerate() {
        gamma[l[0]] += 1.0 - alpha[l[0]] * inv_diag[kk];
        w2[l[0]] += w[kk] * w[kk];
    }
    let n = p.t.len() as f64;
    let ew: f64 = ak.iter().zip(w).map(|(a, x)| 0.5 * a * x * x).sum();
    let log_ev = -beta * ed - ew - 0.5 * log_det
        + 0.5 * ak.iter().map(|a| a.ln()).sum::<f64>()
        + 0.5 * n * beta.ln()
        - 0.5 * n * LN_2PI;
    let g_tot: f64 = gamma.iter().sum();
    let new_alpha: Vec<f64> = gamma
        .iter()
        .zip(&w2)
        .zip(alpha)
        .map(|((g, s), a)| if *s > 0.0 && *g > 0.0 { g / s } else { *a })
        .collect();
    let new_beta = ((n - g_tot) / (2.0 * ed)).max(1e-8);
    Ok((new_alpha, new_beta, g_tot, log_ev))
}

/// One run of the evidence procedure.
pub fn fit_evidence(data: &Dataset, opts: &EvidenceOptions) -> Result<EvidenceFit, NetError> {
    if data.n() == 0 {
        return Err(NetError::NoData);
    }
    if opts.prior == PriorKind::Nrd {
        return Err(NetError::Setting {
            name: "prior",
            why: "the evidence procedure here supports single, grouped and ARD priors".into(),
        });
    }
    let arch = Architecture::new(data.d, opts.hidden)?;
    let p = MapProblem {
        arch,
        x: &data.x,
        t: &data.t,
    };
    let prior = Prior::new(opts.prior, &arch, Gamma { a: 1.0, b: 1.0 });
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
    let mut w = init_component(&arch, 1.0, &mut rng);
    w.truncate(arch.n_weights());
    let mut alpha = vec![opts.init_alpha; prior.n_hyper()];
    let mut beta = opts.init_beta;
    let mut gamma = 0.0;
    for _ in 0..opts.cycles {
        let ak: Vec<f64> = prior.links.iter().map(|l| alpha[l[0]]).collect();
        w = p.train(w, &ak, beta, opts.iters_per_cycle);
        let (a, b, g, _) = reestimate(&p, &prior, &w, &alpha, beta)?;
        alpha = a;
        beta = b;
        gamma = g;
    }
    let (_, _, _, log_evidence) = reestimate(&p, &prior, &w, &alpha, beta)?;
    Ok(EvidenceFit {
        arch,
        w,
        prior,
        alpha,
        beta,
        gamma,
        log_evidence,
        seed: opts.seed,
    })
}

/// `restarts` runs with seeds `opts.seed + r` in parallel, sorted by decreasing log evidence
/// (failed runs dropped; an error only if all fail).
pub fn fit_evidence_restarts(
    data: &Dataset,
    opts: &EvidenceOptions,
    restarts: usize,
) -> Result<Vec<EvidenceFit>, NetError> {
    let runs: Vec<_> = (0..restarts.max(1) as u64)
        .into_par_iter()
        .map(|r| {
            fit_evidence(
                data,
                &EvidenceOptions {
                    seed: opts.seed.wrapping_add(r),
                    ..opts.clone()
                },
            )
        })
        .collect();
    let mut ok: Vec<EvidenceFit> = Vec::new();
    let mut err = None;
    for r in runs {
        match r {
            Ok(f) if f.log_evidence.is_finite() => ok.push(f),
            Ok(f) => {
                err = Some(NetError::Numerical(format!(
                    "log evidence {} (seed {})",
                    f.log_evidence, f.seed
                )))
            }
            Err(e) => err = Some(e),
        }
    }
    if ok.is_empty() {
        return Err(err.unwrap_or(NetError::NoData));
    }
    ok.sort_by(|a, b| b.log_evidence.total_cmp(&a.log_evidence));
    Ok(ok)
}

/// The unweighted average of the first `k` fits' predictions (an evidence committee).
pub fn committee_predict(fits: &[EvidenceFit], k: usize, x: &[f64]) -> Vec<f64> {
    let k = k.clamp(1, fits.len().max(1));
    let preds: Vec<Vec<f64>> = fits.iter().take(k).map(|f| f.predict(x)).collect();
    (0..preds.first().map_or(0, |p| p.len()))
        .map(|i| preds.iter().map(|p| p[i]).sum::<f64>() / k as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reestimation_fixed_point_is_stationary_for_the_laplace_evidence() {
        // At fixed w, −½Σαw² − ½ ln|βH + diag α| + ½Σ ln α + (N/2) ln β − βE_D is stationary exactly
        // at α = γ/Σw², β = (N − γ)/(2E_D): iterate the updates, then check both derivatives by FD.
        let x: Vec<f64> = (0..20).map(|i| i as f64 / 10.0 - 1.0).collect();
        let t: Vec<f64> = x
            .iter()
            .map(|v| (2.0 * v).sin() + 0.05 * (7.0 * v).cos())
            .collect();
        let data = Dataset::new(x, 1, t).unwrap();
        for kind in [PriorKind::Single, PriorKind::Grouped] {
            let f = fit_evidence(
                &data,
                &EvidenceOptions {
                    cycles: 3,
                    iters_per_cycle: 300,
                    prior: kind,
                    ..EvidenceOptions::paper(2)
                },
            )
            .unwrap();
            let p = MapProblem {
                arch: f.arch,
                x: &data.x,
                t: &data.t,
            };
            let (mut a, mut b) = (f.alpha.clone(), f.beta);
            for _ in 0..200 {
                let r = reestimate(&p, &f.prior, &f.w, &a, b).unwrap();
                a = r.0;
                b = r.1;
            }
            let ev = |a: &[f64], b: f64| reestimate(&p, &f.prior, &f.w, a, b).unwrap().3;
            let h = 1e-5;
            let db = (ev(&a, b * (1.0 + h)) - ev(&a, b * (1.0 - h))) / (2.0 * h);
            assert!(db.abs() < 1e-4, "{kind:?}: ∂/∂ln β = {db}");
            for j in 0..a.len() {
                let mut up = a.clone();
                let mut dn = a.clone();
                up[j] *= 1.0 + h;
                dn[j] *= 1.0 - h;
                let da = (ev(&up, b) - ev(&dn, b)) / (2.0 * h);
                assert!(da.abs() < 1e-4, "{kind:?}: ∂/∂ln α_{j} = {da}");
            }
            assert!(f.gamma > 0.0 && f.gamma <= f.arch.n_weights() as f64);
        }
    }
}
