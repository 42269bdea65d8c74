//! Beta(p | α, β) with constant α, β: the two-category Dirichlet (Winn (A.19–A.22) with K = 2).
//!
//! u = [ln p, ln(1 − p)], φ = [α − 1, β − 1]; children (Bernoulli, Binomial) read these moments.

use super::dirichlet::{
    dirichlet_mode, dirichlet_moments, dirichlet_observe, dirichlet_prior, dirichlet_sample,
};
use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::Rng;
use rand::Rng as _;

/// Beta distribution with constant shape parameters.
#[derive(Clone, Debug)]
pub struct Beta {
    /// α > 0 (pseudo-count of ones).
    pub alpha: f64,
    /// β > 0 (pseudo-count of zeros).
    pub beta: f64,
}

impl ExpFamily for Beta {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Beta",
        aliases: &[],
        value: ValueKind::Probability,
        event: EventShape::Scalar,
        slots: &[
            SlotSpec {
                name: "alpha",
                aliases: &["a"],
                kinds: &[],
                constant: ConstDomain::Positive,
                shape: SlotShape::Scalar,
                expects: "a positive constant",
            },
            SlotSpec {
                name: "beta",
                aliases: &["b"],
                kinds: &[],
                constant: ConstDomain::Positive,
                shape: SlotShape::Scalar,
                expects: "a positive constant",
            },
        ],
        params: &["concentration"],
        summary: "Beta over probabilities",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(Beta {
            alpha: args.number(0)?,
            beta: args.number(1)?,
        }
        .into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        super::dirichlet::usual_concentration(phi)
    }
    fn free_params(&self) -> usize {
        2
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Dirichlet { k: 2 }
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        unreachable!("Beta has no parent slots")
    }
    fn value_len(&self) -> usize {
        1
    }
    fn prior(&self, _pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        dirichlet_prior(&[self.alpha, self.beta], phi)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        dirichlet_moments(phi, u)
    }
    fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        super::dirichlet::dirichlet_centred(phi, &[x[0], 1.0 - x[0]], out)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        // A Beta value is one probability p; store [p, 1 − p].
        dirichlet_observe(&[x[0], 1.0 - x[0]], u)
    }
    fn message_to(&self, _slot: usize, _u: &[f64], _w: f64, _pa: &[&[f64]], _m: &mut [f64]) {
        unreachable!("Beta has no parent slots")
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let mut p = [0.0; 2];
        dirichlet_sample(phi, rng, &mut p);
        x[0] = p[0];
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        let mut p = [0.0; 2];
        dirichlet_mode(phi, &mut p);
        x[0] = p[0];
    }
    fn test_instances() -> Vec<Self> {
        vec![Beta {
            alpha: 0.5,
            beta: 0.5,
        }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![
            4.0 * rng.random::<f64>() - 0.9,
            4.0 * rng.random::<f64>() - 0.9,
        ]
    }
}
