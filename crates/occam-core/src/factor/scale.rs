//! Elementwise scaling of a Gaussian by a known value, X = x ∘ c (scalars or d-vectors over one
//! event plate): `scale(x, c)` with c a data column (or vector) or a constant — Winn §2.2.2,
//! moments and messages derived here from (2.41)–(2.49).
//!
//! With x and c independent under q (c known: a point mass), ⟨X⟩ = ⟨x⟩ ∘ ⟨c⟩ and
//! ⟨XXᵀ⟩ = ⟨xxᵀ⟩ ∘ ⟨ccᵀ⟩ (Hadamard products): ψ is linear in each parent's moments, as (2.41)
//! needs. The message to x is ∂(φ·ψ)/∂u_x (2.49): [φ₁ ∘ ⟨c⟩, Φ₂ ∘ ⟨ccᵀ⟩], and to c
//! symmetrically [φ₁ ∘ ⟨x⟩, Φ₂ ∘ ⟨xxᵀ⟩]. A known c keeps X linear in x, so the factor is exact;
//! the language admits only data or a constant as c ([`Fill::Known`]).

use super::Deterministic;
use crate::dist::SlotInput;
use crate::moments::MomentKind;
use crate::spec::{CallRule, Fill, FnParam, FunctionSpec, ValueKind};

/// x ∘ c for Gaussian d-vectors (d = 1: scalars).
#[derive(Clone, Debug)]
pub struct Scale {
    /// Dimension d.
    pub d: usize,
}

const GAUSSIAN: &[ValueKind] = &[ValueKind::Real, ValueKind::Vector];

impl Deterministic for Scale {
    const NAME: &'static str = "scale";
    const FUNCTION: Option<FunctionSpec> = Some(FunctionSpec {
        name: "scale",
        operator: None,
        min_args: 2,
        max_args: Some(2),
        summary: "scale(x, c): a Gaussian scalar or vector x times data c (over the same event \
                  plate) or a constant, element by element",
        rule: CallRule::Elementwise {
            params: &[
                FnParam {
                    name: "x",
                    kinds: GAUSSIAN,
                    fill: Fill::Random,
                },
                FnParam {
                    name: "c",
                    kinds: GAUSSIAN,
                    fill: Fill::Known,
                },
            ],
            like: 0,
        },
        example: "x[N] over Q ~ GaussianARD(0, 1)\n\
                  y[N] over Q ~ GaussianARD(mean = scale(x, 0.5), precision = 1)\nobserve y\n",
    });
    fn n_slots(&self) -> usize {
        2
    }
    fn slot_name(&self, s: usize) -> String {
        ["x", "c"][s].to_string()
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: self.d }
    }
    fn slot_input(&self, _s: usize) -> SlotInput {
        SlotInput::single(self.kind())
    }
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
        let n = self.kind().len();
        for (i, v) in u.iter_mut().enumerate().take(n) {
            *v = pa[0][i] * pa[1][i];
        }
    }
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
        // ∂/∂u_s of Σ_i φ_i u_{x,i} u_{c,i}: the other parent's moments, entry by entry.
        let other = pa[1 - s];
        let n = self.kind().len();
        for (i, v) in m.iter_mut().enumerate().take(n) {
            *v = phi[i] * other[i];
        }
    }
    fn test_instances() -> Vec<Self> {
        vec![Scale { d: 1 }, Scale { d: 3 }]
    }
    fn from_call(dims: &[usize]) -> Option<Self> {
        match *dims {
            [d, e] if d == e && d > 0 => Some(Scale { d }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_a_vector_by_known_values_is_exact() {
        // x with mean m and covariance S; c known: X = diag(c) x has mean c ∘ m and second
        // moment diag(c) (S + m mᵀ) diag(c) = ⟨xxᵀ⟩ ∘ c cᵀ.
        let (m, s) = ([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]]);
        let c = [3.0, -0.5];
        let x: Vec<f64> = m
            .iter()
            .copied()
            .chain((0..4).map(|ij| s[ij / 2][ij % 2] + m[ij / 2] * m[ij % 2]))
            .collect();
        let cu: Vec<f64> = c
            .iter()
            .copied()
            .chain((0..4).map(|ij| c[ij / 2] * c[ij % 2]))
            .collect();
        let mut u = vec![0.0; 6];
        Scale { d: 2 }.moments(&[&x, &cu], &mut u);
        let want_mean = [3.0, 1.0];
        for i in 0..2 {
            assert!((u[i] - want_mean[i]).abs() < 1e-15);
            for j in 0..2 {
                let want = c[i] * c[j] * (s[i][j] + m[i] * m[j]);
                assert!((u[2 + i * 2 + j] - want).abs() < 1e-14, "{i}{j}");
            }
        }
    }

    #[test]
    fn a_call_builds_the_factor_only_for_matching_sizes() {
        assert_eq!(Scale::from_call(&[3, 3]).map(|s| s.d), Some(3));
        assert!(Scale::from_call(&[3, 2]).is_none());
        assert!(Scale::from_call(&[3]).is_none());
    }
}
