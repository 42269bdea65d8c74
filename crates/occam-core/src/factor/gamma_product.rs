//! Scaled product of Gamma variables as a precision, X = c ∏ᵢ Yᵢ — Winn (2.44–2.45).
//!
//! ⟨X⟩ = c∏⟨Yᵢ⟩, ⟨ln X⟩ = ln c + Σ⟨ln Yᵢ⟩; message to Y_k: [φ₁ c ∏_{i≠k}⟨Yᵢ⟩, φ₂].
//! (A *sum* of Gammas has no such form and is rejected: ⟨ln ΣYᵢ⟩ is not multilinear.)

use super::Deterministic;
use crate::dist::SlotInput;
use crate::moments::MomentKind;
use crate::spec::FunctionSpec;

/// c times the product of `n` Gamma variables.
#[derive(Clone, Debug)]
pub struct GammaProduct {
    /// Number of Gamma factors.
    pub n: usize,
    /// Positive constant c.
    pub scale: f64,
}

impl Deterministic for GammaProduct {
    const NAME: &'static str = "gamma_product";
    // The language's `product` (operator `*`) of positive values lowers to this factor; the
    // function is declared once, by `Product`.
    const FUNCTION: Option<FunctionSpec> = None;
    fn n_slots(&self) -> usize {
        self.n
    }
    fn slot_name(&self, s: usize) -> String {
        format!("factor{}", s + 1)
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gamma
    }
    fn slot_input(&self, _s: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gamma)
    }
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
        u[0] = self.scale * pa.iter().map(|y| y[0]).product::<f64>();
        u[1] = self.scale.ln() + pa.iter().map(|y| y[1]).sum::<f64>();
    }
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
        let others: f64 = pa
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != s)
            .map(|(_, y)| y[0])
            .product();
        m[0] = phi[0] * self.scale * others;
        m[1] = phi[1];
    }
    fn test_instances() -> Vec<Self> {
        vec![GammaProduct { n: 2, scale: 1.5 }]
    }
}
