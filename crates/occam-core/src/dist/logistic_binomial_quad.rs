//! Binomial(y | n, σ(η)) with a constant number of trials and a Gaussian log-odds η:
//! `y ~ Binomial(n, sigmoid(η))` by default, its bound term n times the quadrature expectation
//! of [`super::logistic_quad`] (the exact ⟨A⟩ = n E[softplus(η)]), messages n times its gradient,
//! f(y) = ln C(n, y) as the Binomial's.

use super::logistic::LOGIT_SLOT;
use super::logistic_quad::{trials_message, trials_prior};
use super::{BoundQuality, Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::Rng;
use rand::Rng as _;

/// Binomial(y | n, σ(η)) with a constant number of trials and a Gaussian log-odds η, the exact
/// expected log-likelihood by quadrature (module docs); what `y ~ Binomial(n, sigmoid(η))`
/// becomes.
#[derive(Clone, Debug)]
pub struct BinomialLogitQuad {
    /// Number of trials n.
    pub trials: u32,
}

impl ExpFamily for BinomialLogitQuad {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "BinomialLogitQuad",
        aliases: &[],
        value: ValueKind::Count,
        event: EventShape::Scalar,
        slots: &[
            SlotSpec {
                name: "trials",
                aliases: &["n"],
                kinds: &[],
                constant: ConstDomain::Count,
                shape: SlotShape::Scalar,
                expects: "a non-negative integer constant",
            },
            LOGIT_SLOT,
        ],
        params: &[],
        summary: "successes in `trials` draws with probability sigmoid(logit): \
                  `Binomial(n, sigmoid(x))`; ⟨ln p⟩ by quadrature (exact), non-conjugate update",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(BinomialLogitQuad {
            trials: args.number(0)? as u32,
        }
        .into())
    }
    fn free_params(&self) -> usize {
        1
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Scalar
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: 1 })
    }
    fn non_conjugate(&self) -> bool {
        true
    }
    fn bound_quality(&self) -> BoundQuality {
        BoundQuality::Exact
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        trials_prior(self.trials as f64, pa, phi)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        self.binomial().moments(phi, u)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        self.binomial().observe_value(x, u)
    }
    // As BernoulliLogitQuad's, n times the per-trial term.
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        trials_message(self.trials as f64, u, w, pa, m)
    }
    fn expected_base_measure(&self, phi: &[f64], u: &[f64]) -> f64 {
        self.binomial().expected_base_measure(phi, u)
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        self.binomial().sample(phi, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        self.binomial().mode(phi, x)
    }
    fn test_instances() -> Vec<Self> {
        vec![BinomialLogitQuad { trials: 5 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![6.0 * rng.random::<f64>() - 3.0]
    }
}

impl BinomialLogitQuad {
    fn binomial(&self) -> super::Binomial {
        super::Binomial {
            trials: self.trials,
        }
    }
}
