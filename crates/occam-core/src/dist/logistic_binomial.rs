//! Binomial(y | n, σ(η)) with a constant number of trials and a Gaussian log-odds η:
//! `y ~ Binomial(n, sigmoid(η))`, by n times the Jaakkola–Jordan bound of one trial (see
//! [`super::logistic`]): ⟨A⟩ ≤ n[⟨η⟩/2 − ln σ(ξ) + ξ/2 + λ(ξ)(⟨η²⟩ − ξ²)] at ξ² = ⟨η²⟩, messages
//! [y − n/2, −nλ(ξ)] to u_η = [η, η²]; f(y) = ln C(n, y) as the Binomial's.

use super::logistic::{softplus_bound, LOGIT_SLOT};
use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::Rng;
use rand::Rng as _;

/// Binomial(y | n, σ(η)) with a constant number of trials and a Gaussian log-odds η, by the
/// Jaakkola–Jordan bound (module docs); what `y ~ Binomial(n, sigmoid(η))` becomes.
#[derive(Clone, Debug)]
pub struct BinomialLogit {
    /// Number of trials n.
    pub trials: u32,
}

impl ExpFamily for BinomialLogit {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "BinomialLogit",
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
                  `Binomial(n, sigmoid_jj(x))`; Jaakkola–Jordan bound (a true lower bound)",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(BinomialLogit {
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
    fn bound_quality(&self) -> super::BoundQuality {
        super::BoundQuality::LowerBound
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: 1 })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi[0] = pa[0][0];
        self.trials as f64 * softplus_bound(pa[0]).0
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        self.binomial().moments(phi, u)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        self.binomial().observe_value(x, u)
    }
    // As BernoulliLogit's, n times the per-trial bound: y − nw/2 and −nwλ(ξ).
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        let n = self.trials as f64;
        let (_, lambda) = softplus_bound(pa[0]);
        m[0] = u[0] - 0.5 * n * w;
        m[1] = -n * w * lambda;
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
        vec![BinomialLogit { trials: 5 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![6.0 * rng.random::<f64>() - 3.0]
    }
}

impl BinomialLogit {
    fn binomial(&self) -> super::Binomial {
        super::Binomial {
            trials: self.trials,
        }
    }
}
