//! Concatenation of n scalar Gaussians into an n-vector — Winn §2.2.4 (the message to a part is
//! derived here from (2.48)–(2.49)).
//!
//! ⟨x⟩ᵢ = ⟨Yᵢ⟩; ⟨xxᵀ⟩ᵢⱼ = ⟨Yᵢ⟩⟨Yⱼ⟩ (i ≠ j), ⟨Yᵢ²⟩ (i = j). From φ = [φ₁, Φ₂], the message to Y_k is
//! [φ₁ₖ + Σ_{j≠k}(Φ₂ₖⱼ + Φ₂ⱼₖ)⟨Yⱼ⟩, Φ₂ₖₖ].

use super::Deterministic;
use crate::dist::SlotInput;
use crate::moments::MomentKind;
use crate::spec::{CallRule, FunctionSpec};

/// Concatenation of `n` scalars.
#[derive(Clone, Debug)]
pub struct Concat {
    /// Number of scalars (the output dimension).
    pub n: usize,
}

impl Deterministic for Concat {
    const NAME: &'static str = "concat";
    const FUNCTION: Option<FunctionSpec> = Some(FunctionSpec {
        name: "concat",
        operator: None,
        min_args: 1,
        max_args: None,
        summary: "scalars into a vector",
        rule: CallRule::Operator,
        example: "a ~ Gaussian(0, 1)\nb ~ Gaussian(0, 1)\ny[N] over Q ~ MvGaussian(mean = concat(a, b), precision = identity)\nobserve y\n",
    });
    fn n_slots(&self) -> usize {
        self.n
    }
    fn slot_name(&self, s: usize) -> String {
        format!("element{}", s + 1)
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: self.n }
    }
    fn slot_input(&self, _s: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: 1 })
    }
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            u[i] = pa[i][0];
            for j in 0..n {
                u[n + i * n + j] = if i == j {
                    pa[i][1]
                } else {
                    pa[i][0] * pa[j][0]
                };
            }
        }
    }
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
        let n = self.n;
        let big = |i: usize, j: usize| phi[n + i * n + j];
        m[0] = phi[s]
            + (0..n)
                .filter(|&j| j != s)
                .map(|j| (big(s, j) + big(j, s)) * pa[j][0])
                .sum::<f64>();
        m[1] = big(s, s);
    }
    fn test_instances() -> Vec<Self> {
        vec![Concat { n: 3 }]
    }
}
