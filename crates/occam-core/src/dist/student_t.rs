//! Student-t observations y ~ t_ν(μ, s) of a Gaussian variable μ, ν and s fixed — a factor with
//! no conjugate form: ln t_ν(y | μ, s) = ln Γ((ν+1)/2) − ln Γ(ν/2) − ½ ln(νπ) − ln s
//! − ((ν+1)/2) ln(1 + (y − μ)²/(ν s²)).
//!
//! Winn §4.4: the non-exponential-family node Z = y is observed and its parent μ is importance
//! sampled (engine `sampled`): the proposal is μ's q without y's message (4.16), the weights
//! ∝ Π t_ν(y | μ⁽ˢ⁾, s) (4.18)–(4.19), and μ adopts the weighted moments (4.20). The family
//! therefore sends μ no message and has no term of its own: its log-density enters μ's
//! sampled term, which is an estimate (`Approximate`). It must be observed; its mean must be a
//! Gaussian variable read directly (the language checks both).

use super::sampling::Sampling;
use super::{BoundQuality, Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, ArgProblem, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::special::ln_gamma;
use crate::Rng;
use rand::Rng as _;
use rand_distr::StandardNormal;

/// Student-t observations with fixed degrees of freedom ν and scale s of a Gaussian mean.
#[derive(Clone, Debug)]
pub struct StudentT {
    /// Degrees of freedom ν > 0.
    pub nu: f64,
    /// Scale s > 0.
    pub scale: f64,
    /// The importance sampler's settings for the mean's update.
    pub sampling: Sampling,
}

impl StudentT {
    /// ln t_ν(y | μ, s).
    pub fn ln_density(&self, y: f64, mu: f64) -> f64 {
        let (nu, s) = (self.nu, self.scale);
        let r = (y - mu) / s;
        ln_gamma(0.5 * (nu + 1.0))
            - ln_gamma(0.5 * nu)
            - 0.5 * (nu * std::f64::consts::PI).ln()
            - s.ln()
            - 0.5 * (nu + 1.0) * (r * r / nu).ln_1p()
    }
}

impl ExpFamily for StudentT {
    const SPEC: FamilySpec = FamilySpec {
        name: "StudentT",
        aliases: &["T"],
        value: ValueKind::Real,
        event: EventShape::Scalar,
        slots: &[
            SlotSpec {
                name: "nu",
                aliases: &["dof", "df"],
                kinds: &[],
                constant: ConstDomain::Positive,
                shape: SlotShape::Scalar,
                expects:
                    "a positive constant (for a random ν write the scale mixture, guide ch. 12)",
            },
            SlotSpec {
                name: "scale",
                aliases: &["s"],
                kinds: &[],
                constant: ConstDomain::Positive,
                shape: SlotShape::Scalar,
                expects: "a positive constant",
            },
            SlotSpec {
                name: "mean",
                aliases: &["mu", "location"],
                kinds: &[ValueKind::Real],
                constant: ConstDomain::Never,
                shape: SlotShape::Scalar,
                expects: "a Gaussian variable",
            },
        ],
        params: &[],
        summary: "observed Student-t values with fixed ν and scale of a Gaussian mean \
                  (`y[N] ~ StudentT(nu = 4, scale = 1, mean = mu)`): the mean is importance \
                  sampled (Winn §4.4), so its bound term is an estimate (approximate)",
        lowering_target: false,
        observed_only: true,
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        let (nu, scale) = (args.number(0)?, args.number(1)?);
        for (s, v) in [(0, nu), (1, scale)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(ArgError {
                    slot: Some(s),
                    problem: ArgProblem::BadConstant,
                    message: format!(
                        "`{}` of `{}` must be a positive number",
                        Self::SPEC.slots[s].name,
                        args.var
                    ),
                    label: "not positive",
                    hint: None,
                });
            }
        }
        Ok(StudentT {
            nu,
            scale,
            sampling: Sampling::default(),
        }
        .into())
    }
    fn free_params(&self) -> usize {
        0
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: 1 }
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: 1 })
    }
    /// No conjugate part: φ = 0, ⟨A⟩ = 0 (the density is in the mean's sampled term).
    fn prior(&self, _pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi.iter_mut().for_each(|p| *p = 0.0);
        0.0
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        super::gaussian::moments_scalar(phi, u)
    }
    fn finite_values_are_valid(&self) -> bool {
        true
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !x[0].is_finite() {
            return Err(ValueError::NotFiniteReal { value: x[0] });
        }
        u[0] = x[0];
        u[1] = x[0] * x[0];
        Ok(0.0)
    }
    /// None: the mean's update samples with this factor's density instead (Winn (4.16)).
    fn message_to(&self, _slot: usize, _u: &[f64], _w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m.iter_mut().for_each(|v| *v = 0.0);
    }
    /// A draw from t_ν(μ, s) with μ the mean of φ's Gaussian (a normal over the square root of
    /// a Gamma(ν/2, ν/2)).
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let mu = phi[0] / (-2.0 * phi[1]);
        let z: f64 = rng.sample(StandardNormal);
        let g = rand_distr::Gamma::new(0.5 * self.nu, 2.0 / self.nu).expect("ν > 0");
        let lam: f64 = rng.sample(g);
        x[0] = mu + self.scale * z / lam.sqrt();
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = phi[0] / (-2.0 * phi[1]);
    }
    /// t_ν(μ, s) at the drawn mean μ (`prior` is 0: the family sends its mean no message): the
    /// draw of `sample` from φ = [μ, −½], whose Gaussian has mean μ.
    fn draw_given_parents(&self, pa: &[&[f64]], rng: &mut Rng, x: &mut [f64]) -> bool {
        self.sample(&[pa[0][0], -0.5], rng, x);
        true
    }
    fn bound_quality(&self) -> BoundQuality {
        BoundQuality::Approximate
    }
    /// None: its moments and messages are not the exponential family's laws (it sends no
    /// message and its term is its parent's); `engine/sampled` tests it against quadrature.
    fn test_instances() -> Vec<Self> {
        Vec::new()
    }
    fn random_phi(&self, _rng: &mut Rng) -> Vec<f64> {
        vec![0.0, -0.5]
    }
}
