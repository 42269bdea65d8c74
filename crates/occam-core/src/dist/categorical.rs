//! Categorical (discrete) x ∈ {0, …, K−1} with probabilities p — Winn (A.15–A.18).
//!
//! u = one-hot(x), φ = ⟨ln p⟩, f = 0, A(φ) = ln Σ exp φ (so ⟨A⟩ of the prior is 0), ⟨u⟩ = softmax φ.
//! Conjugate parent: a Dirichlet for p; the message to it is ⟨u⟩ (Winn (1.92)). A conditional
//! probability table is a Categorical whose p is indexed by other Categoricals (a mixture node).

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::special::{log_sum_exp, softmax_rows};
use crate::Rng;
use rand::Rng as _;

/// Categorical distribution over K categories.
#[derive(Clone, Debug)]
pub struct Categorical {
    /// Number of categories K.
    pub k: usize,
}

const DOMAIN: &str = "Categorical log-probabilities must be finite or −∞, not all −∞";

impl ExpFamily for Categorical {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Categorical",
        aliases: &["Discrete"],
        value: ValueKind::Categorical,
        event: EventShape::Categories,
        slots: &[SlotSpec {
            name: "probs",
            aliases: &["p", "probabilities", "weights"],
            kinds: &[ValueKind::Simplex],
            constant: ConstDomain::Positive,
            shape: SlotShape::ChildEvent,
            expects: "Dirichlet-distributed over the categories, e.g. a table row `A[z_prev]` (or a constant)",
        }],
        params: &[],
        summary: "one of the categories of its event plate",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(Categorical { k: args.event }.into())
    }
    fn free_params(&self) -> usize {
        self.k - 1
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Categorical { k: self.k }
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Dirichlet { k: self.k })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi.copy_from_slice(pa[0]);
        // ⟨A⟩ = ⟨ln Σ p⟩ = 0.
        0.0
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        let mut a = [0.0];
        self.moments_rows(phi, u, &mut a).map_err(|(_, e)| e)?;
        Ok(a[0])
    }
    fn moments_rows(
        &self,
        phi: &[f64],
        u: &mut [f64],
        a: &mut [f64],
    ) -> Result<(), (usize, OutOfDomain)> {
        softmax_rows(phi, self.k, u, a).map_err(|r| (r, OutOfDomain(DOMAIN)))
    }
    /// A − φ·u = −Σ_i u_i ln u_i, with the terms of a category of probability 0 counted as 0:
    /// under a constant prior that excludes category i, φ_i = −∞ and u_i = 0 (0 ln 0 = 0), where
    /// the plain product is NaN.
    fn own_term(&self, phi: &[f64], u: &[f64], a: f64) -> f64 {
        a - phi
            .iter()
            .zip(u)
            .map(|(&p, &v)| if v == 0.0 { 0.0 } else { p * v })
            .sum::<f64>()
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        let c = x[0];
        if !(c >= 0.0) || c.fract() != 0.0 || c >= self.k as f64 {
            return Err(ValueError::NotCategory {
                value: c,
                last: self.k - 1,
            });
        }
        u.iter_mut().for_each(|v| *v = 0.0);
        u[c as usize] = 1.0;
        Ok(0.0)
    }
    /// The point mass on the drawn category itself: φ = ln one-hot(x) (−∞ off the draw, in the
    /// family's domain), whose entropy is exactly 0 (`own_term` counts 0 ln 0 as 0). A discrete
    /// point mass is a proper q, so Winn §2.5.1's random start needs no centring here.
    fn centred_at(&self, _phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        let c = x[0] as usize;
        out.iter_mut().for_each(|v| *v = f64::NEG_INFINITY);
        out[c] = 0.0;
        true
    }
    fn message_to(&self, _slot: usize, u: &[f64], _w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m.copy_from_slice(u);
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let a = log_sum_exp(phi);
        let r: f64 = rng.random();
        let mut c = 0.0;
        for (k, p) in phi.iter().enumerate() {
            c += (p - a).exp();
            if r < c {
                x[0] = k as f64;
                return;
            }
        }
        x[0] = (self.k - 1) as f64;
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        let best = (0..self.k).fold(0, |b, k| if phi[k] > phi[b] { k } else { b });
        x[0] = best as f64;
    }
    fn test_instances() -> Vec<Self> {
        vec![Categorical { k: 4 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        (0..self.k)
            .map(|_| 4.0 * rng.random::<f64>() - 2.0)
            .collect()
    }
}
