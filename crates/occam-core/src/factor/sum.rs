//! Sum of Gaussian variables X = Σᵢ Yᵢ (scalars or d-vectors) — Winn §2.2.2 (moments and
//! messages derived here from (2.41)–(2.49)).
//!
//! ⟨X⟩ = Σ⟨Yᵢ⟩, ⟨XXᵀ⟩ = Σᵢ⟨YᵢYᵢᵀ⟩ + Σ_{i≠j}⟨Yᵢ⟩⟨Yⱼ⟩ᵀ. With S = Σ_{i≠k} Yᵢ, the message to Y_k is
//! [φ₁ + (Φ₂ + Φ₂ᵀ)⟨S⟩, Φ₂] (scalar: [φ₁ + 2⟨S⟩φ₂, φ₂]).

use super::Deterministic;
use crate::dist::SlotInput;
use crate::moments::MomentKind;
use crate::spec::{CallRule, FunctionSpec};

/// Sum of `n` Gaussian terms of dimension `d`.
#[derive(Clone, Debug)]
pub struct Sum {
    /// Number of terms.
    pub n: usize,
    /// Dimension of each term.
    pub d: usize,
}

impl Deterministic for Sum {
    const NAME: &'static str = "sum";
    const FUNCTION: Option<FunctionSpec> = Some(FunctionSpec {
        name: "sum",
        operator: Some("+"),
        min_args: 1,
        max_args: None,
        summary: "sum of Gaussian scalars (or vectors over one event plate) and constants",
        rule: CallRule::Operator,
        example: "a ~ Gaussian(0, 1)\nb ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mean = sum(a, b), precision = 1)\nobserve y\n",
    });
    fn n_slots(&self) -> usize {
        self.n
    }
    fn slot_name(&self, s: usize) -> String {
        format!("term{}", s + 1)
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: self.d }
    }
    fn slot_input(&self, _s: usize) -> SlotInput {
        SlotInput::single(self.kind())
    }
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
        let d = self.d;
        let (mean, second) = u.split_at_mut(d);
        mean.iter_mut().for_each(|v| *v = 0.0);
        second.iter_mut().for_each(|v| *v = 0.0);
        for y in pa {
            for i in 0..d {
                mean[i] += y[i];
            }
            for ij in 0..d * d {
                second[ij] += y[d + ij] - y[ij / d] * y[ij % d];
            }
        }
        for ij in 0..d * d {
            second[ij] += mean[ij / d] * mean[ij % d];
        }
    }
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
        let d = self.d;
        let mut rest = vec![0.0; d];
        for (i, y) in pa.iter().enumerate() {
            if i != s {
                rest.iter_mut().zip(&y[..d]).for_each(|(r, v)| *r += v);
            }
        }
        for i in 0..d {
            m[i] = phi[i]
                + (0..d)
                    .map(|j| (phi[d + i * d + j] + phi[d + j * d + i]) * rest[j])
                    .sum::<f64>();
        }
        m[d..].copy_from_slice(&phi[d..d + d * d]);
    }
    fn test_instances() -> Vec<Self> {
        vec![Sum { n: 3, d: 1 }, Sum { n: 2, d: 3 }]
    }
}
