//! Inner product of two Gaussian d-vectors X = aᵀb — the building block of PCA, factor analysis
//! and regression means (Winn §2.2.2, §3.2).
//!
//! ⟨X⟩ = ⟨a⟩ᵀ⟨b⟩, ⟨X²⟩ = tr(⟨aaᵀ⟩⟨bbᵀ⟩); message to a: [φ₁⟨b⟩, φ₂ col⟨bbᵀ⟩] (and symmetrically).

use super::Deterministic;
use crate::dist::SlotInput;
use crate::linalg::trace_of_product;
use crate::moments::MomentKind;
use crate::spec::{CallRule, FunctionSpec};

/// Inner product of two d-vectors.
#[derive(Clone, Debug)]
pub struct Dot {
    /// Dimension d.
    pub d: usize,
}

impl Deterministic for Dot {
    const NAME: &'static str = "dot";
    const FUNCTION: Option<FunctionSpec> = Some(FunctionSpec {
        name: "dot",
        operator: None,
        min_args: 2,
        max_args: Some(2),
        summary: "inner product of two vectors over the same event plate",
        rule: CallRule::Operator,
        example: "w over Q ~ GaussianARD(0, 1)\nx[N] over Q ~ GaussianARD(0, 1)\ny[N] ~ Gaussian(mean = dot(w, x), precision = 1)\nobserve y\n",
    });
    const BILINEAR: bool = true;
    fn n_slots(&self) -> usize {
        2
    }
    fn slot_name(&self, s: usize) -> String {
        ["left", "right"][s].to_string()
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: 1 }
    }
    fn slot_input(&self, _s: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: self.d })
    }
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
        let d = self.d;
        u[0] = (0..d).map(|i| pa[0][i] * pa[1][i]).sum();
        u[1] = trace_of_product(&pa[0][d..], &pa[1][d..], d);
    }
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
        let d = self.d;
        let other = pa[1 - s];
        for i in 0..d {
            m[i] = phi[0] * other[i];
        }
        for ij in 0..d * d {
            m[d + ij] = phi[1] * other[d + ij];
        }
    }
    fn test_instances() -> Vec<Self> {
        vec![Dot { d: 1 }, Dot { d: 3 }]
    }
}
