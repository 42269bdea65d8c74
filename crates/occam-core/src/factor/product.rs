//! Product of scalar Gaussian variables X = ∏ᵢ Yᵢ — Winn §2.2.2 (moments and messages derived
//! here from (2.41)–(2.49)).
//!
//! ⟨X⟩ = ∏⟨Yᵢ⟩, ⟨X²⟩ = ∏⟨Yᵢ²⟩ (valid because the Yᵢ are independent under Q); the message to Y_k is
//! [φ₁ ∏_{i≠k}⟨Yᵢ⟩, φ₂ ∏_{i≠k}⟨Yᵢ²⟩]. A constant factor is a constant parent.

use super::Deterministic;
use crate::dist::SlotInput;
use crate::moments::MomentKind;
use crate::spec::{CallRule, FunctionSpec};

/// Product of `n` scalar Gaussian terms.
#[derive(Clone, Debug)]
pub struct Product {
    /// Number of factors.
    pub n: usize,
}

impl Deterministic for Product {
    const NAME: &'static str = "product";
    const FUNCTION: Option<FunctionSpec> = Some(FunctionSpec {
        name: "product",
        operator: Some("*"),
        min_args: 1,
        max_args: None,
        summary: "product of Gaussian scalars, or of Gammas (a precision), with constant factors",
        rule: CallRule::Operator,
        example: "a ~ Gaussian(1, 1)\nb ~ Gaussian(1, 1)\ny[N] ~ Gaussian(mean = product(a, b), precision = 1)\nobserve y\n",
    });
    const BILINEAR: bool = true;
    fn n_slots(&self) -> usize {
        self.n
    }
    fn slot_name(&self, s: usize) -> String {
        format!("factor{}", s + 1)
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: 1 }
    }
    fn slot_input(&self, _s: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: 1 })
    }
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
        u[0] = pa.iter().map(|y| y[0]).product();
        u[1] = pa.iter().map(|y| y[1]).product();
    }
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
        let others = |k: usize| {
            pa.iter()
                .enumerate()
                .filter(|(i, _)| *i != s)
                .map(|(_, y)| y[k])
                .product::<f64>()
        };
        m[0] = phi[0] * others(0);
        m[1] = phi[1] * others(1);
    }
    fn test_instances() -> Vec<Self> {
        vec![Product { n: 2 }, Product { n: 3 }]
    }
}
