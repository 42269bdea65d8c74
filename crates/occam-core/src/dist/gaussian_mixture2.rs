//! A two-component Gaussian mixture prior, all five numbers fixed:
//! p(x) = w N(x | m₁, 1/γ₁) + (1 − w) N(x | m₂, 1/γ₂).
//!
//! With Gaussian children, q(x) ∝ p(x) exp(Σ m·[x, x²]) is importance sampled (Winn §4.4,
//! engine `sampled`): the family's `prior` is a Gaussian envelope ([`GaussianMixture2::envelope`])
//! and [`GaussianMixture2::log_ratio`] the log of p over it. The proposal is the mixture of the
//! two components each tilted by the children's Gaussian message, weighted by the tilted
//! components' normalisers ([`SampledPrior::tilted`]). That mixture is exactly q when only
//! Gaussian children read the node, and then its moments and normaliser are taken in closed form
//! ([`SampledPrior::tilted_moments`]) and nothing is sampled: the node's bound term is exact.
//! With Student-t values reading it, q is sampled and reported as the Gaussian with the sampled
//! moments, its term an estimate (the engine decides per node, `engine/sampled`). Observed
//! values are exact.

use super::sampling::{envelope_prior, ln_normal, tilt, Proposal, SampledPrior, Sampling};
use super::{BoundQuality, Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::Rng;
use rand::Rng as _;

/// w N(m₁, 1/γ₁) + (1 − w) N(m₂, 1/γ₂) with fixed numbers.
#[derive(Clone, Debug)]
pub struct GaussianMixture2 {
    /// Weight w of the first component, in (0, 1).
    pub weight: f64,
    /// Means m₁, m₂.
    pub means: [f64; 2],
    /// Precisions γ₁, γ₂.
    pub precisions: [f64; 2],
    /// The importance sampler's settings.
    pub sampling: Sampling,
}

const fn constant(name: &'static str, c: ConstDomain, expects: &'static str) -> SlotSpec {
    SlotSpec {
        name,
        aliases: &[],
        kinds: &[],
        constant: c,
        shape: SlotShape::Scalar,
        expects,
    }
}

impl GaussianMixture2 {
    /// Mean and precision of the proposal envelope: the mixture's mean, and the smallest of the
    /// moment-matched precision, γ₁ and γ₂. No component is wider than the envelope, so
    /// p/envelope is bounded and the importance weights of Winn §4.4 eq. (4.13) have finite
    /// variance; a moment-matched envelope narrower than a component (spike and slab) gives
    /// weights growing like e^{c x²}, of infinite variance.
    pub fn envelope(&self) -> (f64, f64) {
        let w = [self.weight, 1.0 - self.weight];
        let mean: f64 = (0..2).map(|k| w[k] * self.means[k]).sum();
        let second: f64 = (0..2)
            .map(|k| w[k] * (1.0 / self.precisions[k] + self.means[k] * self.means[k]))
            .sum();
        let matched = 1.0 / (second - mean * mean);
        (
            mean,
            matched.min(self.precisions[0]).min(self.precisions[1]),
        )
    }
    /// ln p(x).
    pub fn ln_density(&self, x: f64) -> f64 {
        let a = self.weight.ln() + ln_normal(x, self.means[0], self.precisions[0]);
        let b = (1.0 - self.weight).ln() + ln_normal(x, self.means[1], self.precisions[1]);
        let m = a.max(b);
        m + ((a - m).exp() + (b - m).exp()).ln()
    }
    /// ln p(x) − ln N(x | envelope).
    pub fn log_ratio(&self, x: f64) -> f64 {
        let (m, p) = self.envelope();
        self.ln_density(x) - ln_normal(x, m, p)
    }
}

impl SampledPrior for GaussianMixture2 {
    fn log_ratio(&self, x: f64) -> f64 {
        GaussianMixture2::log_ratio(self, x)
    }
    fn sampling(&self) -> Sampling {
        self.sampling
    }
    /// Σₖ wₖ N(x | mₖ, 1/γₖ) exp(m·[x, x²]) = Σₖ wₖ cₖ N(x | mₖ′, 1/γₖ′) (`tilt`): the mixture of
    /// the tilted components with weights ∝ wₖ cₖ, cₖ = N(m₁/λ; mₖ, 1/γₖ + 1/λ) up to a factor
    /// common to both (λ = −2m₂).
    fn tilted(&self, m: [f64; 2]) -> Option<Proposal> {
        let w = [self.weight, 1.0 - self.weight];
        let mut pieces = [(0.0, 0.0, 0.0, f64::NEG_INFINITY, f64::INFINITY); 2];
        for (k, piece) in pieces.iter_mut().enumerate() {
            let (ln_c, mean, precision) = tilt(self.means[k], self.precisions[k], m)?;
            (piece.0, piece.1, piece.2) = (w[k].ln() + ln_c, mean, precision);
        }
        Proposal::mixture(&pieces)
    }
    /// ln C = ln Σₖ wₖ cₖ (the same pieces as `tilted`, `tilt`'s cₖ exactly, no common factor
    /// dropped), and the tilted mixture's mean and variance.
    fn tilted_moments(&self, m: [f64; 2]) -> Option<(f64, [f64; 2])> {
        let w = [self.weight, 1.0 - self.weight];
        let mut ln_wc = [0.0; 2];
        for (k, l) in ln_wc.iter_mut().enumerate() {
            *l = w[k].ln() + tilt(self.means[k], self.precisions[k], m)?.0;
        }
        let top = ln_wc[0].max(ln_wc[1]);
        let ln_c = top + ((ln_wc[0] - top).exp() + (ln_wc[1] - top).exp()).ln();
        let (mean, var) = self.tilted(m)?.mean_var();
        Some((ln_c, [mean, var])).filter(|(l, _)| l.is_finite())
    }
}

impl ExpFamily for GaussianMixture2 {
    const SPEC: FamilySpec = FamilySpec {
        name: "GaussianMixture2",
        aliases: &["NormalMixture2"],
        value: ValueKind::Real,
        event: EventShape::Scalar,
        slots: &[
            constant(
                "weight",
                ConstDomain::Probability,
                "a number in (0, 1): the first component's weight",
            ),
            constant("mean1", ConstDomain::Real, "a constant"),
            constant("precision1", ConstDomain::Positive, "a positive constant"),
            constant("mean2", ConstDomain::Real, "a constant"),
            constant("precision2", ConstDomain::Positive, "a positive constant"),
        ],
        params: &[],
        summary: "a prior w N(mean1, 1/precision1) + (1 − w) N(mean2, 1/precision2) (all \
                  constants); with only Gaussian children q is the prior tilted by their message, \
                  in closed form (bound term exact); with Student-t values reading it, q is \
                  importance sampled (Winn §4.4) and its bound term is an estimate \
                  (approximate)",
        lowering_target: false,
        observed_only: false,
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(GaussianMixture2 {
            weight: args.number(0)?,
            means: [args.number(1)?, args.number(3)?],
            precisions: [args.number(2)?, args.number(4)?],
            sampling: Sampling::default(),
        }
        .into())
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
    /// The envelope's φ and A.
    fn prior(&self, _pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        envelope_prior(self.envelope(), phi)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        super::gaussian::moments_scalar(phi, u)
    }
    fn own_term(&self, phi: &[f64], _u: &[f64], _a: f64) -> f64 {
        super::gaussian::own_scalar(phi)
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
        Ok(self.log_ratio(x[0]))
    }
    fn message_to(&self, _slot: usize, _u: &[f64], _w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m.iter_mut().for_each(|v| *v = 0.0);
    }
    /// A draw from φ's Gaussian (starts and predictive draws of q).
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        super::Gaussian.sample(phi, rng, x);
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = phi[0] / (-2.0 * phi[1]);
    }
    /// A draw from the mixture prior itself (its constants; it has no parents): the component
    /// (the first with probability `weight`), then its Gaussian.
    fn draw_given_parents(&self, _pa: &[&[f64]], rng: &mut Rng, x: &mut [f64]) -> bool {
        let k = usize::from(rng.random::<f64>() >= self.weight);
        let z: f64 = rand_distr::Distribution::sample(&rand_distr::StandardNormal, rng);
        x[0] = self.means[k] + z / self.precisions[k].sqrt();
        true
    }
    fn bound_quality(&self) -> BoundQuality {
        BoundQuality::Approximate
    }
    fn test_instances() -> Vec<Self> {
        vec![GaussianMixture2 {
            weight: 0.3,
            means: [-2.0, 1.0],
            precisions: [4.0, 1.0],
            sampling: Sampling::default(),
        }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        let prec = 0.2 + 3.0 * rng.random::<f64>();
        let mean = 4.0 * rng.random::<f64>() - 2.0;
        vec![prec * mean, -0.5 * prec]
    }
}
