//! A Gaussian prior truncated to [lower, upper], all four numbers fixed:
//! p(x) = N(x | m, 1/γ) 1[lower ≤ x ≤ upper] / Z, Z = Φ(√γ(upper − m)) − Φ(√γ(lower − m)).
//!
//! With Gaussian children, q(x) ∝ p(x) exp(Σ m·[x, x²]) is importance sampled (Winn §4.4,
//! engine `sampled`): the family's `prior` is the untruncated Gaussian (the proposal's
//! envelope) and [`TruncatedGaussian::log_ratio`] the log of p over it, which every sample's
//! weight carries. The proposal is the Gaussian tilted by the children's message, truncated to
//! [lower, upper] and drawn by its inverse CDF ([`SampledPrior::tilted`]). That is exactly q when
//! only Gaussian children read the node, and then its moments and normaliser are taken in closed
//! form ([`SampledPrior::tilted_moments`]) and nothing is sampled: the node's bound term is exact.
//! With Student-t values reading it, q is sampled and reported as the Gaussian with the sampled
//! moments, its term an estimate (the engine decides per node, `engine/sampled`). Observed values
//! are exact.

use super::sampling::{envelope_prior, ln_mass, ln_normal, tilt, Proposal, SampledPrior, Sampling};
use super::{BoundQuality, Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, ArgProblem, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::Rng;
use rand::Rng as _;

/// A Gaussian N(mean, 1/precision) truncated to [lower, upper].
#[derive(Clone, Debug)]
pub struct TruncatedGaussian {
    /// Mean of the untruncated Gaussian.
    pub mean: f64,
    /// Precision of the untruncated Gaussian.
    pub precision: f64,
    /// Lower end of the support.
    pub lower: f64,
    /// Upper end of the support.
    pub upper: f64,
    /// The importance sampler's settings.
    pub sampling: Sampling,
}

const fn constant(
    name: &'static str,
    aliases: &'static [&'static str],
    c: ConstDomain,
    expects: &'static str,
) -> SlotSpec {
    SlotSpec {
        name,
        aliases,
        kinds: &[],
        constant: c,
        shape: SlotShape::Scalar,
        expects,
    }
}

impl TruncatedGaussian {
    /// ln Z, the untruncated Gaussian's mass on [lower, upper] (from the tail nearer the mean's
    /// far side, so that a support deep in one tail keeps its digits).
    pub fn ln_mass(&self) -> f64 {
        ln_mass(self.mean, self.precision, self.lower, self.upper)
    }
    /// ln p(x) − ln N(x | mean, 1/precision): −ln Z inside the support, −∞ outside.
    pub fn log_ratio(&self, x: f64) -> f64 {
        if (self.lower..=self.upper).contains(&x) {
            -self.ln_mass()
        } else {
            f64::NEG_INFINITY
        }
    }
    /// ln p(x).
    pub fn ln_density(&self, x: f64) -> f64 {
        ln_normal(x, self.mean, self.precision) + self.log_ratio(x)
    }
}

impl TruncatedGaussian {
    /// The envelope's mean and precision: the untruncated Gaussian.
    pub fn envelope(&self) -> (f64, f64) {
        (self.mean, self.precision)
    }
}

impl SampledPrior for TruncatedGaussian {
    fn log_ratio(&self, x: f64) -> f64 {
        TruncatedGaussian::log_ratio(self, x)
    }
    fn sampling(&self) -> Sampling {
        self.sampling
    }
    /// N(x | m, 1/γ) exp(m·[x, x²]) on [lower, upper] is N(x | m′, 1/γ′) there, up to a factor
    /// (`tilt`); None when its mass there underflows.
    fn tilted(&self, m: [f64; 2]) -> Option<Proposal> {
        let (_, mean, precision) = tilt(self.mean, self.precision, m)?;
        Proposal::mixture(&[(0.0, mean, precision, self.lower, self.upper)])
    }
    /// ∫ N(x | m, 1/γ) 1[lower ≤ x ≤ upper] exp(m·[x, x²]) dx / Z = c Z′/Z (`tilt`'s c; Z′ the
    /// tilted Gaussian's mass on the interval), and the tilted truncated Gaussian's mean and
    /// variance.
    fn tilted_moments(&self, m: [f64; 2]) -> Option<(f64, [f64; 2])> {
        let (ln_c, mean, precision) = tilt(self.mean, self.precision, m)?;
        let ln_c = ln_c + ln_mass(mean, precision, self.lower, self.upper) - self.ln_mass();
        ln_c.is_finite().then(|| {
            let (mean, var) =
                super::sampling::truncated_mean_var(mean, precision, self.lower, self.upper);
            (ln_c, [mean, var])
        })
    }
}

impl ExpFamily for TruncatedGaussian {
    const SPEC: FamilySpec = FamilySpec {
        name: "TruncatedGaussian",
        aliases: &["TruncatedNormal"],
        value: ValueKind::Real,
        event: EventShape::Scalar,
        slots: &[
            constant("mean", &["mu", "location"], ConstDomain::Real, "a constant"),
            constant(
                "precision",
                &["tau", "prec"],
                ConstDomain::Positive,
                "a positive constant",
            ),
            constant("lower", &["lo"], ConstDomain::Real, "a constant"),
            constant(
                "upper",
                &["hi"],
                ConstDomain::Real,
                "a constant above `lower`",
            ),
        ],
        params: &[],
        summary: "a Gaussian prior truncated to [lower, upper] (all four constants); with \
                  only Gaussian children q is the prior tilted by their message, in closed form \
                  (bound term exact); with Student-t values reading it, q is importance sampled \
                  (Winn §4.4) and its bound term is an estimate (approximate)",
        lowering_target: false,
        observed_only: false,
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        let t = TruncatedGaussian {
            mean: args.number(0)?,
            precision: args.number(1)?,
            lower: args.number(2)?,
            upper: args.number(3)?,
            sampling: Sampling::default(),
        };
        if !(t.upper > t.lower) || !t.ln_mass().is_finite() {
            return Err(ArgError {
                slot: Some(3),
                problem: ArgProblem::BadConstant,
                message: format!(
                    "`{}` has no mass on [{}, {}]: `upper` must be above `lower`, within about 37 sds of the mean",
                    args.var, t.lower, t.upper
                ),
                label: "empty support",
                hint: None,
            });
        }
        Ok(t.into())
    }
    fn free_params(&self) -> usize {
        2
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: 1 }
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: 1 })
    }
    /// The envelope: the untruncated Gaussian's φ and A.
    fn prior(&self, _pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        envelope_prior((self.mean, self.precision), phi)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        super::gaussian::moments_scalar(phi, u)
    }
    fn own_term(&self, phi: &[f64], _u: &[f64], _a: f64) -> f64 {
        super::gaussian::own_scalar(phi)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !(self.lower..=self.upper).contains(&x[0]) {
            return Err(ValueError::OutsideSupport {
                value: x[0],
                support: "the truncation interval",
            });
        }
        u[0] = x[0];
        u[1] = x[0] * x[0];
        Ok(self.log_ratio(x[0]))
    }
    fn message_to(&self, _slot: usize, _u: &[f64], _w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m.iter_mut().for_each(|v| *v = 0.0);
    }
    /// A draw from φ's Gaussian (q is carried as that Gaussian, module docs).
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        super::Gaussian.sample(phi, rng, x);
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = (phi[0] / (-2.0 * phi[1])).clamp(self.lower, self.upper);
    }
    /// A draw from the truncated prior itself (its constants; it has no parents), by the inverse
    /// CDF on the interval.
    fn draw_given_parents(&self, _pa: &[&[f64]], rng: &mut Rng, x: &mut [f64]) -> bool {
        let sd = self.precision.sqrt().recip();
        x[0] = super::truncated_draw(self.mean, sd, self.lower, self.upper, rng.random());
        true
    }
    fn bound_quality(&self) -> BoundQuality {
        BoundQuality::Approximate
    }
    /// None: its q is carried as a Gaussian, whose draws leave the support that `observe`
    /// checks; the Gaussian's laws are the Gaussian's, and the sampled q is tested against
    /// quadrature (`engine/sampled`, crates/occam/tests/it/sampled.rs).
    fn test_instances() -> Vec<Self> {
        Vec::new()
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        let prec = 0.2 + 3.0 * rng.random::<f64>();
        let mean = 4.0 * rng.random::<f64>() - 2.0;
        vec![prec * mean, -0.5 * prec]
    }
}
