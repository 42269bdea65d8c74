//! Gaussian over a d-vector with a diagonal (ARD) precision: x ~ ∏ᵢ N(xᵢ | μᵢ, αᵢ⁻¹), with one
//! scalar Gaussian mean and one Gamma precision per event coordinate (Winn §3.2, Bishop's BPCA).
//!
//! The variable's q is a full multivariate Gaussian (children such as `dot` correlate its
//! coordinates), so u = [x, col(xxᵀ)] and A(φ) are those of `MvGaussian`. The prior is
//! φ = [αᵢ μᵢ, −½ diag(α)], ⟨A⟩ = Σᵢ ½(⟨αᵢ⟩⟨μᵢ²⟩ − ⟨ln αᵢ⟩ + ln 2π). Both slots are stacked over the
//! event plate: the message to μᵢ is [⟨αᵢ⟩⟨xᵢ⟩, −½⟨αᵢ⟩], to αᵢ [−½⟨(xᵢ − μᵢ)²⟩, ½].

use super::gaussian::{message_scalar, prior_scalar};
use super::mv_gaussian::{
    gaussian_vector_mode, gaussian_vector_moments, gaussian_vector_moments_rows,
    gaussian_vector_observe, gaussian_vector_sample, random_gaussian_vector_phi,
};
use super::{Dist, ExpFamily, MvGaussian, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    Arg, ArgError, ArgProblem, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec,
    ValueKind,
};
use crate::Rng;

/// Vector Gaussian with per-coordinate (ARD) precisions.
#[derive(Clone, Debug)]
pub struct GaussianArd {
    /// Dimension d.
    pub d: usize,
}

impl ExpFamily for GaussianArd {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "GaussianARD",
        aliases: &[],
        value: ValueKind::Vector,
        event: EventShape::Vector,
        slots: &[
            SlotSpec {
                name: "mean",
                aliases: &["mu", "location"],
                kinds: &[ValueKind::Real, ValueKind::Vector],
                constant: ConstDomain::Real,
                shape: SlotShape::Elementwise,
                expects: "Gaussian per element of the event plate, a Gaussian vector over it, or a constant",
            },
            SlotSpec {
                name: "precision",
                aliases: &["tau", "alpha", "prec"],
                kinds: &[ValueKind::Positive],
                constant: ConstDomain::Positive,
                shape: SlotShape::Elementwise,
                expects: "Gamma-distributed per element of the event plate (or a product of Gammas, or a constant)",
            },
        ],
        params: &[],
        summary: "vector Gaussian with a diagonal precision (automatic relevance determination)",
    };

    /// A vector mean with a constant precision is the same distribution as an [`MvGaussian`] with
    /// that diagonal precision, which is what it builds (a vector mean with a random diagonal
    /// precision is not conjugate here).
    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        let d = args.event;
        if args.get(0) != Arg::Variable(Some(ValueKind::Vector)) {
            return Ok(GaussianArd { d }.into());
        }
        match args.get(1) {
            Arg::Number(_) => Ok(MvGaussian { d }.into()),
            _ => Err(ArgError {
                slot: Some(1),
                problem: ArgProblem::Unsupported,
                message: format!(
                    "GaussianARD `{}` with a vector mean needs a constant precision",
                    args.var
                ),
                label: "not supported by the engine",
                hint: Some(
                    "use MvGaussian with a Wishart precision, or give the mean per element of the event plate"
                        .into(),
                ),
            }),
        }
    }
    fn free_params(&self) -> usize {
        2 * self.d
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: self.d }
    }
    fn slot_input(&self, slot: usize) -> SlotInput {
        let kind = if slot == 0 {
            MomentKind::Gaussian { d: 1 }
        } else {
            MomentKind::Gamma
        };
        SlotInput {
            kind,
            stack: self.d,
        }
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let d = self.d;
        phi[d..].iter_mut().for_each(|v| *v = 0.0);
        let mut a = 0.0;
        let mut p = [0.0; 2];
        for i in 0..d {
            a += prior_scalar(&pa[0][2 * i..2 * i + 2], &pa[1][2 * i..2 * i + 2], &mut p);
            phi[i] = p[0];
            phi[d + i * d + i] = p[1];
        }
        a
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        gaussian_vector_moments(phi, self.d, u)
    }
    fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        super::gaussian::centred_gaussian(phi, self.d, x, out)
    }
    fn own_term(&self, phi: &[f64], u: &[f64], a: f64) -> f64 {
        super::mv_gaussian::own_vector(phi, self.d, u, a)
    }
    fn moments_rows(
        &self,
        phi: &[f64],
        u: &mut [f64],
        a: &mut [f64],
    ) -> Result<(), (usize, OutOfDomain)> {
        gaussian_vector_moments_rows(phi, self.d, u, a)
    }
    fn finite_values_are_valid(&self) -> bool {
        true
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        gaussian_vector_observe(x, self.d, u)
    }
    fn message_to(&self, slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        let d = self.d;
        for i in 0..d {
            let ui = [u[i], u[d + i * d + i]];
            let (mu, alpha) = (&pa[0][2 * i..2 * i + 2], &pa[1][2 * i..2 * i + 2]);
            message_scalar(slot, &ui, w, mu, alpha, &mut m[2 * i..2 * i + 2]);
        }
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        gaussian_vector_sample(phi, self.d, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        gaussian_vector_mode(phi, self.d, x)
    }
    fn test_instances() -> Vec<Self> {
        vec![GaussianArd { d: 1 }, GaussianArd { d: 3 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        random_gaussian_vector_phi(self.d, rng)
    }
}
