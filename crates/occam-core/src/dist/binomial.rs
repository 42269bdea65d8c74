//! Binomial(x | n, p) with a constant number of trials n and a Beta parent for p.
//!
//! u = [x], φ = ⟨ln p⟩ − ⟨ln(1 − p)⟩, f(x) = ln C(n, x), A(φ) = n ln(1 + e^φ)
//! (prior: ⟨A⟩ = −n⟨ln(1 − p)⟩), ⟨x⟩ = n σ(φ). Message to p: [⟨x⟩, n − ⟨x⟩].

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::special::{ln_binomial, sigmoid, softplus};
use crate::Rng;
use rand::Rng as _;

/// Binomial distribution with a fixed number of trials.
#[derive(Clone, Debug)]
pub struct Binomial {
    /// Number of trials n.
    pub trials: u32,
}

impl ExpFamily for Binomial {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Binomial",
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
            super::bernoulli::PROB_SLOT,
        ],
        params: &[],
        summary: "number of successes in `trials` Bernoulli draws",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(Binomial {
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
        SlotInput::single(MomentKind::Dirichlet { k: 2 })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi[0] = pa[0][0] - pa[0][1];
        -(self.trials as f64) * pa[0][1]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        if phi[0].is_nan() {
            return Err(OutOfDomain("Binomial log-odds is NaN"));
        }
        let n = self.trials as f64;
        u[0] = n * sigmoid(phi[0]);
        Ok(n * softplus(phi[0]))
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        let n = self.trials as f64;
        if !(x[0] >= 0.0 && x[0] <= n) || x[0].fract() != 0.0 {
            return Err(ValueError::NotCountUpTo {
                value: x[0],
                trials: self.trials,
            });
        }
        u[0] = x[0];
        Ok(ln_binomial(n, x[0]))
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m[0] = u[0];
        m[1] = self.trials as f64 * w - u[0];
    }
    fn expected_base_measure(&self, phi: &[f64], _u: &[f64]) -> f64 {
        let n = self.trials as f64;
        let (lp, lq) = (-softplus(-phi[0]), -softplus(phi[0]));
        (0..=self.trials)
            .map(|x| {
                let x = x as f64;
                let lb = ln_binomial(n, x);
                (lb + x * lp + (n - x) * lq).exp() * lb
            })
            .sum()
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let b =
            rand_distr::Binomial::new(self.trials as u64, sigmoid(phi[0])).expect("p in [0, 1]");
        x[0] = rng.sample(b) as f64;
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        x[0] = ((self.trials as f64 + 1.0) * sigmoid(phi[0]))
            .floor()
            .min(self.trials as f64);
    }
    fn test_instances() -> Vec<Self> {
        vec![Binomial { trials: 7 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        vec![6.0 * rng.random::<f64>() - 3.0]
    }
}
