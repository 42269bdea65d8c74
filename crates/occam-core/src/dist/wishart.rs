//! Wishart(Λ | ν, R) over d×d precision matrices, with degrees of freedom ν (a constant) and a rate
//! matrix R, so that ⟨Λ⟩ = ν R⁻¹ (R is BayesPy's V and Gamma's rate for d = 1).
//!
//! Density |Λ|^{(ν−d−1)/2} exp(−½ tr(RΛ)) |R/2|^{ν/2} / Γ_d(ν/2): u = [col(Λ), ln|Λ|],
//! φ = [−½ col(R), (ν−d−1)/2], f = 0, and with S = −mat(φ₁), ν = 2φ₂ + d + 1:
//! A(φ) = ln Γ_d(ν/2) − (ν/2) ln|S|; ⟨Λ⟩ = (ν/2) S⁻¹, ⟨ln|Λ|⟩ = Σᵢ ψ((ν+1−i)/2) − ln|S|.
//! (In the shape–rate form |B|^a |Λ|^{a−(d+1)/2} e^{−tr(BΛ)}/Γ_d(a): a = ν/2, B = R/2; Winn names
//! the Wishart only as the conjugate prior of a precision matrix.) The rate may have a Wishart
//! parent: message
//! [−½ col⟨Λ⟩, ν/2].

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::linalg::{chol_inverse_into, chol_log_det, cholesky_into, with_scratch, Cholesky};
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, ArgProblem, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec,
    ValueKind,
};
use crate::special::{ln_multigamma, ln_multigamma_and_digamma};
use crate::Rng;
use rand::Rng as _;
use rand_distr::StandardNormal;

/// Wishart distribution over d×d matrices with constant degrees of freedom and a rate parent.
#[derive(Clone, Debug)]
pub struct Wishart {
    /// Dimension d.
    pub d: usize,
    /// Degrees of freedom ν > d − 1.
    pub dof: f64,
}

/// ν = 2φ₂ + d + 1 of the member with natural parameters φ.
fn dof(phi: &[f64], d: usize) -> Result<f64, OutOfDomain> {
    let nu = 2.0 * phi[d * d] + d as f64 + 1.0;
    if !(nu > d as f64 - 1.0) {
        return Err(OutOfDomain("Wishart degrees of freedom must exceed d − 1"));
    }
    Ok(nu)
}

const NOT_POSITIVE_DEFINITE: OutOfDomain = OutOfDomain("Wishart rate must be positive definite");

/// (ν, Cholesky of S = R/2) of the member with natural parameters φ.
fn dof_and_scale(phi: &[f64], d: usize) -> Result<(f64, Cholesky), OutOfDomain> {
    let nu = dof(phi, d)?;
    let s: Vec<f64> = phi[..d * d].iter().map(|v| -v).collect();
    let chol = Cholesky::new(&s, d).ok_or(NOT_POSITIVE_DEFINITE)?;
    Ok((nu, chol))
}

impl ExpFamily for Wishart {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Wishart",
        aliases: &[],
        value: ValueKind::Matrix,
        event: EventShape::Matrix,
        slots: &[
            SlotSpec {
                name: "dof",
                aliases: &["nu"],
                kinds: &[],
                constant: ConstDomain::Positive,
                shape: SlotShape::Scalar,
                expects: "a positive constant",
            },
            SlotSpec {
                name: "rate",
                aliases: &["scale_inverse", "V"],
                kinds: &[ValueKind::Matrix],
                constant: ConstDomain::Matrix,
                shape: SlotShape::ChildEvent,
                expects: "Wishart-distributed over the same event plate (or a constant such as `identity * 1e-5`)",
            },
        ],
        params: &["dof", "rate"],
        summary: "Wishart over precision matrices, E[Λ] = dof · rate⁻¹",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        let d = args.event;
        let dof = args.number(0)?;
        if dof <= d as f64 - 1.0 {
            return Err(ArgError {
                slot: Some(0),
                problem: ArgProblem::BadConstant,
                message: format!(
                    "Wishart `{}` over a {d}-dimensional event plate needs dof > {}; got {dof}",
                    args.var,
                    d - 1
                ),
                label: "degrees of freedom too small",
                hint: Some(format!("use dof ≥ {d}")),
            });
        }
        Ok(Wishart { d, dof }.into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        let d = self.d;
        vec![
            ("dof", Param::Scalar(2.0 * phi[d * d] + d as f64 + 1.0)),
            (
                "rate",
                Param::Matrix(
                    (0..d)
                        .map(|i| phi[i * d..(i + 1) * d].iter().map(|v| -2.0 * v).collect())
                        .collect(),
                ),
            ),
        ]
    }
    fn free_params(&self) -> usize {
        1 + self.d * (self.d + 1) / 2
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Wishart { d: self.d }
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Wishart { d: self.d })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let (d, r) = (self.d, pa[0]);
        for i in 0..d * d {
            phi[i] = -0.5 * r[i];
        }
        phi[d * d] = 0.5 * (self.dof - d as f64 - 1.0);
        ln_multigamma(self.dof / 2.0, d)
            - 0.5 * self.dof * (r[d * d] - d as f64 * std::f64::consts::LN_2)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        // The factor of S = −mat(φ₁) and the inverse's scratch in this thread's buffer: one
        // call per component per update, allocating nothing.
        let d = self.d;
        let nu = dof(phi, d)?;
        let ln_det_s = with_scratch(2 * d * d, |buf| {
            let (l, work) = buf.split_at_mut(d * d);
            if !cholesky_into(&phi[..d * d], -1.0, d, l) {
                return Err(NOT_POSITIVE_DEFINITE);
            }
            chol_inverse_into(l, d, &mut u[..d * d], work);
            Ok(chol_log_det(l, d))
        })?;
        u[..d * d].iter_mut().for_each(|v| *v *= nu / 2.0);
        let (ln_g, psi) = ln_multigamma_and_digamma(nu / 2.0, d);
        u[d * d] = psi - ln_det_s;
        Ok(ln_g - nu / 2.0 * ln_det_s)
    }
    /// The Wishart with φ's degrees of freedom ν and mean x: S = (ν/2) x⁻¹, φ₁ = −col(S).
    fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        let d = self.d;
        let (Ok(nu), Some(chol)) = (dof(phi, d), Cholesky::new(&x[..d * d], d)) else {
            return false;
        };
        chol.inverse_into(&mut out[..d * d]);
        out[..d * d].iter_mut().for_each(|v| *v *= -nu / 2.0);
        out[d * d..].copy_from_slice(&phi[d * d..]);
        out.iter().all(|v| v.is_finite())
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        let d = self.d;
        if x.iter().any(|v| !v.is_finite()) {
            return Err(ValueError::MatrixNotFinite);
        }
        let chol = Cholesky::new(x, d).ok_or(ValueError::NotPositiveDefinite)?;
        u[..d * d].copy_from_slice(x);
        u[d * d] = chol.log_det();
        Ok(0.0)
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        let d = self.d;
        for i in 0..d * d {
            m[i] = -0.5 * u[i];
        }
        m[d * d] = 0.5 * self.dof * w;
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        // Bartlett: Λ = L A Aᵀ Lᵀ with L Lᵀ = (2S)⁻¹ = R⁻¹, A lower triangular,
        // A_ii = √χ²(ν − i), A_ij ~ N(0, 1) below the diagonal.
        let d = self.d;
        let (nu, chol) = dof_and_scale(phi, d).expect("sampling needs a valid φ");
        let mut cov = vec![0.0; d * d];
        chol.inverse_into(&mut cov);
        cov.iter_mut().for_each(|v| *v *= 0.5);
        let l = Cholesky::new(&cov, d).expect("inverse of a positive-definite matrix");
        let mut a = vec![0.0; d * d];
        for i in 0..d {
            let chi2 = rand_distr::Gamma::new((nu - i as f64) / 2.0, 2.0).expect("dof > d − 1");
            a[i * d + i] = rng.sample(chi2).sqrt();
            for j in 0..i {
                a[i * d + j] = rng.sample(StandardNormal);
            }
        }
        // B = L A, column by column.
        let mut b = vec![0.0; d * d];
        let mut col = vec![0.0; d];
        let mut out = vec![0.0; d];
        for j in 0..d {
            for i in 0..d {
                col[i] = a[i * d + j];
            }
            l.lower_times(&col, &mut out);
            for i in 0..d {
                b[i * d + j] = out[i];
            }
        }
        for i in 0..d {
            for j in 0..d {
                x[i * d + j] = (0..d).map(|k| b[i * d + k] * b[j * d + k]).sum();
            }
        }
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        let d = self.d;
        let (nu, chol) = dof_and_scale(phi, d).expect("mode needs a valid φ");
        chol.inverse_into(x);
        // (ν − d − 1) R⁻¹ = (ν − d − 1)/2 · S⁻¹, floored so the mode stays positive definite.
        let c = ((nu - d as f64 - 1.0) / 2.0).max(1e-10);
        x[..d * d].iter_mut().for_each(|v| *v *= c);
    }
    fn test_instances() -> Vec<Self> {
        vec![Wishart { d: 1, dof: 2.0 }, Wishart { d: 3, dof: 4.5 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        let d = self.d;
        let s = crate::linalg::random_spd(rng, d);
        let mut phi: Vec<f64> = s.iter().map(|v| -v).collect();
        phi.push(0.5 * (d as f64 - 1.0 + 0.5 + 4.0 * rng.random::<f64>() - d as f64 - 1.0) + 0.5);
        phi
    }
}
