//! The gate ("pick") function X = ∏ₖ Yₖ^{δ(λ,k)} — Winn §2.2.4, (2.54–2.57).
//!
//! Slot 0 is the Categorical index λ; slot 1 gathers the K candidates Yₖ along a plate. Always
//! valid: ⟨u_X⟩ = Σₖ Q(λ=k)⟨u_{Yₖ}⟩ (2.54). Messages: to Yₖ, Q(λ=k)·φ; to λ, entry k is φ·⟨u_{Yₖ}⟩.
//! Its Q keeps λ and X jointly (2.56–2.57), unlike a mixture node, at K times the storage.

use super::Deterministic;
use crate::dist::SlotInput;
use crate::moments::MomentKind;
use crate::spec::FunctionSpec;

/// Selects one of `k` candidates of kind `of` by a Categorical index.
#[derive(Clone, Debug)]
pub struct Gate {
    /// Number of candidates K.
    pub k: usize,
    /// Moment layout of each candidate (and of the output).
    pub of: MomentKind,
}

impl Deterministic for Gate {
    const NAME: &'static str = "gate";
    // An indexed reference `x[z]` inside an expression lowers to this factor.
    const FUNCTION: Option<FunctionSpec> = None;
    fn n_slots(&self) -> usize {
        2
    }
    fn slot_name(&self, s: usize) -> String {
        ["index", "candidates"][s].to_string()
    }
    fn kind(&self) -> MomentKind {
        self.of
    }
    fn slot_input(&self, s: usize) -> SlotInput {
        if s == 0 {
            SlotInput::single(MomentKind::Categorical { k: self.k })
        } else {
            SlotInput {
                kind: self.of,
                stack: self.k,
            }
        }
    }
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
        let len = self.of.len();
        u.iter_mut().for_each(|v| *v = 0.0);
        for k in 0..self.k {
            let r = pa[0][k];
            for (ui, y) in u.iter_mut().zip(&pa[1][k * len..(k + 1) * len]) {
                *ui += r * y;
            }
        }
    }
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
        let len = self.of.len();
        for k in 0..self.k {
            if s == 0 {
                m[k] = phi
                    .iter()
                    .zip(&pa[1][k * len..(k + 1) * len])
                    .map(|(a, b)| a * b)
                    .sum();
            } else {
                let r = pa[0][k];
                for (mi, p) in m[k * len..(k + 1) * len].iter_mut().zip(phi) {
                    *mi = r * p;
                }
            }
        }
    }
    fn test_instances() -> Vec<Self> {
        vec![
            Gate {
                k: 3,
                of: MomentKind::Gaussian { d: 1 },
            },
            Gate {
                k: 2,
                of: MomentKind::Gamma,
            },
        ]
    }
}
