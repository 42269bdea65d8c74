//! The truncated stick-breaking process over K categories (Ishwaran & James 2001; the variational
//! truncation of Blei & Jordan 2006, "Variational inference for Dirichlet process mixtures",
//! §3–4): v_k ~ Beta(1, α) for k < K, v_K = 1, π_k = v_k ∏_{j<k} (1 − v_j). The Dirichlet
//! process prior of a mixture, truncated at K components.
//!
//! The family is written in the Dirichlet's statistic u = [ln π_1, …, ln π_K] (the moments a
//! Categorical child reads, so no change of basis is needed anywhere), with natural parameters
//! φ ∈ ℝ^K. Expanding ln π_k = ln v_k + Σ_{j<k} ln(1 − v_j),
//!
//!   φ·ln π = Σ_{j<K} [φ_j ln v_j + (Σ_{k>j} φ_k) ln(1 − v_j)],
//!
//! so the member with natural parameters φ has independent sticks v_j ~ Beta(a_j, b_j) with
//! a_j = φ_j + 1, b_j = 1 + Σ_{k>j} φ_k (j < K), and
//!
//!   A(φ) = Σ_{j<K} ln B(a_j, b_j),  ⟨ln π_k⟩ = ⟨ln v_k⟩ + Σ_{j<k} ⟨ln(1 − v_j)⟩ (v_K = 1)
//!
//! (B&J eq. 18's ⟨ln π⟩ is the same sum). The prior Beta(1, α) sticks are φ = (0, …, 0, α − 1)
//! with ⟨A⟩ = −(K − 1)⟨ln α⟩, because Σ_{j<K} ln(1 − v_j) = ln π_K. A Categorical child adds its
//! expected counts N_k to φ_k, which is the update of B&J eq. 19 (their γ_{k,1} = 1 + N_k,
//! γ_{k,2} = α + Σ_{j>k} N_j). α may be a constant or Gamma-distributed: ln p(v | α) is
//! (K − 1) ln α + (α − 1) ln π_K, linear in [α, ln α], so the message to α is
//! [⟨ln π_K⟩, (K − 1)] = [Σ_{j<K} ⟨ln(1 − v_j)⟩, K − 1] (B&J §4, the Gamma prior on α).
//!
//! The density is with respect to Lebesgue measure on the first K − 1 coordinates of the simplex,
//! as the Dirichlet's, so observed probability vectors compare across the two families: the
//! Jacobian of v ↦ π is ∏_{k<K} r_{k−1} with r_k = ∏_{j≤k} (1 − v_j) = Σ_{i>k} π_i, so
//! f(π) = −Σ_{k=2}^{K−1} ln Σ_{i≥k} π_i. `mode` is the sticks' joint mode mapped to π (a stick
//! whose Beta has no interior mode takes its mean, as the Dirichlet's mode does).

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::special::{digamma, ln_beta};
use crate::Rng;
use rand::Rng as _;

/// The truncated stick-breaking process with K categories and a concentration parent.
#[derive(Clone, Debug)]
pub struct StickBreaking {
    /// Number of categories K (the truncation level): K − 1 Beta sticks, the last one v_K = 1.
    pub k: usize,
}

/// The Beta parameters (a_j, b_j), j < K, of the sticks of the member with natural parameters φ:
/// a_j = φ_j + 1, b_j = 1 + Σ_{k>j} φ_k.
pub fn sticks(phi: &[f64]) -> Result<Vec<(f64, f64)>, OutOfDomain> {
    let k = phi.len();
    let mut out = vec![(0.0, 0.0); k.saturating_sub(1)];
    let mut tail = 0.0;
    for j in (0..k.saturating_sub(1)).rev() {
        tail += phi[j + 1];
        let (a, b) = (phi[j] + 1.0, 1.0 + tail);
        if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
            return Err(OutOfDomain(
                "stick-breaking sticks need φ_j + 1 > 0 and 1 + Σ_{k>j} φ_k > 0",
            ));
        }
        out[j] = (a, b);
    }
    Ok(out)
}

/// ⟨ln π⟩ (into `u`) and A(φ) of the member with natural parameters φ.
fn stick_moments(phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
    if phi.iter().any(|p| !p.is_finite()) {
        return Err(OutOfDomain(
            "stick-breaking natural parameters must be finite",
        ));
    }
    let s = sticks(phi)?;
    let (mut a_sum, mut rest) = (0.0, 0.0);
    for (j, &(a, b)) in s.iter().enumerate() {
        let psi_ab = digamma(a + b);
        u[j] = rest + digamma(a) - psi_ab;
        rest += digamma(b) - psi_ab;
        a_sum += ln_beta(a, b);
    }
    u[phi.len() - 1] = rest;
    Ok(a_sum)
}

/// The concentration slot: a Gamma-distributed or positive constant α.
const CONCENTRATION_SLOT: SlotSpec = SlotSpec {
    name: "concentration",
    aliases: &["alpha"],
    kinds: &[ValueKind::Positive],
    constant: ConstDomain::Positive,
    shape: SlotShape::Scalar,
    expects: "Gamma-distributed (or a positive constant)",
};

impl ExpFamily for StickBreaking {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "StickBreaking",
        aliases: &["DirichletProcess"],
        value: ValueKind::Simplex,
        event: EventShape::Vector,
        slots: &[CONCENTRATION_SLOT],
        params: &["stick_a", "stick_b"],
        summary: "truncated stick-breaking (Dirichlet process) prior over probability vectors: \
                  sticks v_k ~ Beta(1, concentration) for k < K, v_K = 1; the categories are \
                  the event plate, in stick order",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(StickBreaking { k: args.event }.into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        // Outside the domain (never for a fitted q) the report shows NaN rather than failing.
        let s = sticks(phi).unwrap_or_else(|_| vec![(f64::NAN, f64::NAN); self.k - 1]);
        vec![
            ("stick_a", Param::Vector(s.iter().map(|p| p.0).collect())),
            ("stick_b", Param::Vector(s.iter().map(|p| p.1).collect())),
        ]
    }
    fn free_params(&self) -> usize {
        self.k
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Dirichlet { k: self.k }
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gamma)
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi.fill(0.0);
        if self.k < 2 {
            return 0.0;
        }
        phi[self.k - 1] = pa[0][0] - 1.0;
        -((self.k - 1) as f64) * pa[0][1]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        stick_moments(phi, u)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        let s: f64 = x.iter().sum();
        if x.iter().any(|p| !(*p > 0.0)) || (s - 1.0).abs() > 1e-9 {
            return Err(ValueError::NotOnSimplex);
        }
        for (ui, p) in u.iter_mut().zip(x) {
            *ui = p.ln();
        }
        // f(π) = −Σ_{k=2}^{K−1} ln r_{k−1}, r_{k−1} = Σ_{i≥k} π_i (tail sums: no cancellation).
        let mut f = 0.0;
        let mut tail = x[x.len() - 1];
        for i in (1..x.len().saturating_sub(1)).rev() {
            tail += x[i];
            f -= tail.ln();
        }
        Ok(f)
    }
    fn expected_base_measure(&self, phi: &[f64], _u: &[f64]) -> f64 {
        // ⟨ln r_{k−1}⟩ = Σ_{j<k} ⟨ln(1 − v_j)⟩.
        let Ok(s) = sticks(phi) else {
            return f64::NAN;
        };
        let (mut f, mut ln_r) = (0.0, 0.0);
        for &(a, b) in s.iter().take(self.k.saturating_sub(2)) {
            ln_r += digamma(b) - digamma(a + b);
            f -= ln_r;
        }
        f
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        // ∂/∂[α, ln α] of Σ_i w_i [(α − 1) u_K + (K − 1) ln α].
        if self.k < 2 {
            m.fill(0.0);
            return;
        }
        m[0] = u[self.k - 1];
        m[1] = (self.k - 1) as f64 * w;
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let s = sticks(phi).expect("sampling needs a valid φ");
        let mut rest = 1.0;
        for (j, &(a, b)) in s.iter().enumerate() {
            let v: f64 = rng.sample(rand_distr::Beta::new(a, b).expect("valid Beta"));
            x[j] = (rest * v).max(1e-300);
            rest *= 1.0 - v;
        }
        x[self.k - 1] = rest.max(1e-300);
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        let s = sticks(phi).expect("the mode needs a valid φ");
        let mut rest = 1.0;
        for (j, &(a, b)) in s.iter().enumerate() {
            let v = if a > 1.0 && b > 1.0 {
                (a - 1.0) / (a + b - 2.0)
            } else {
                a / (a + b)
            };
            x[j] = rest * v;
            rest *= 1.0 - v;
        }
        x[self.k - 1] = rest;
    }
    fn mean(&self, phi: &[f64]) -> Option<Vec<f64>> {
        // E[π_k] = E[v_k] ∏_{j<k} E[1 − v_j]: the sticks are independent.
        let s = sticks(phi).ok()?;
        let mut out = vec![0.0; self.k];
        let mut rest = 1.0;
        for (j, &(a, b)) in s.iter().enumerate() {
            out[j] = rest * a / (a + b);
            rest *= b / (a + b);
        }
        out[self.k - 1] = rest;
        Some(out)
    }
    fn orders_categories(&self) -> bool {
        true
    }
    fn test_instances() -> Vec<Self> {
        vec![StickBreaking { k: 2 }, StickBreaking { k: 5 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        // Counts-like φ_j ≥ −0.8, so every a_j and b_j is positive.
        (0..self.k)
            .map(|_| 4.0 * rng.random::<f64>() - 0.8 / self.k as f64)
            .collect()
    }
}

#[cfg(test)]
#[path = "stick_breaking_tests.rs"]
mod tests;
