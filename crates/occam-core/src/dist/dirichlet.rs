//! Dirichlet(p | α) with constant concentration α (no conjugate prior exists, Winn Table 2.1) —
//! Winn (A.19–A.22), with the normaliser's missing ln restored: (A.21) prints Σ Γ(uᵢ) for
//! Σ ln Γ(uᵢ) (see docs/seed-corrections.md).
//!
//! u = [ln p₁, …, ln p_K], φ = α − 1, f = 0, A(φ) = Σ ln Γ(φᵢ + 1) − ln Γ(Σ(φᵢ + 1)),
//! ⟨ln pᵢ⟩ = ψ(αᵢ) − ψ(Σα).

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec, ValueKind,
};
use crate::special::{digamma, ln_gamma};
use crate::Rng;
use rand::Rng as _;

/// Dirichlet distribution with a constant concentration vector.
#[derive(Clone, Debug)]
pub struct Dirichlet {
    /// Concentration α (all positive); its length is the number of categories.
    pub concentration: Vec<f64>,
}

/// A(φ) and u for a Dirichlet with α = φ + 1.
pub(crate) fn dirichlet_moments(phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
    if phi.iter().any(|p| !(p + 1.0 > 0.0) || !p.is_finite()) {
        return Err(OutOfDomain("Dirichlet concentrations must be positive"));
    }
    let total: f64 = phi.iter().map(|p| p + 1.0).sum();
    let psi_total = digamma(total);
    let mut a = -ln_gamma(total);
    for (ui, p) in u.iter_mut().zip(phi) {
        *ui = digamma(p + 1.0) - psi_total;
        a += ln_gamma(p + 1.0);
    }
    Ok(a)
}

/// ⟨A⟩ of the prior with concentration α, written φ = α − 1.
pub(crate) fn dirichlet_prior(alpha: &[f64], phi: &mut [f64]) -> f64 {
    let mut a = -ln_gamma(alpha.iter().sum());
    for (p, al) in phi.iter_mut().zip(alpha) {
        *p = al - 1.0;
        a += ln_gamma(*al);
    }
    a
}

pub(crate) fn dirichlet_observe(x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
    let s: f64 = x.iter().sum();
    if x.iter().any(|p| !(*p > 0.0)) || (s - 1.0).abs() > 1e-9 {
        return Err(ValueError::NotOnSimplex);
    }
    for (ui, p) in u.iter_mut().zip(x) {
        *ui = p.ln();
    }
    Ok(0.0)
}

/// φ of the Dirichlet with φ's total concentration α₀ = Σ(φᵢ + 1) and mean `p`: αᵢ = α₀ pᵢ, so
/// the spread about the mean is φ's ([`ExpFamily::centred_at`]). False where `p` has an entry
/// that is not positive (a draw that underflowed): no Dirichlet has that mean.
pub(crate) fn dirichlet_centred(phi: &[f64], p: &[f64], out: &mut [f64]) -> bool {
    let total: f64 = phi.iter().map(|v| v + 1.0).sum();
    for (o, &pi) in out.iter_mut().zip(p) {
        let alpha = total * pi;
        if !(alpha > 0.0 && alpha.is_finite()) {
            return false;
        }
        *o = alpha - 1.0;
    }
    true
}

pub(crate) fn dirichlet_sample(phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
    let mut s = 0.0;
    for (xi, p) in x.iter_mut().zip(phi) {
        let g = rand_distr::Gamma::new(p + 1.0, 1.0).expect("positive concentration");
        *xi = rng.sample(g).max(1e-300);
        s += *xi;
    }
    x.iter_mut().for_each(|v| *v /= s);
}

pub(crate) fn dirichlet_mode(phi: &[f64], x: &mut [f64]) {
    // (αᵢ − 1)/(Σα − K) when every αᵢ > 1; otherwise the mode is on the boundary: use the mean.
    let all_above_one = phi.iter().all(|p| *p > 0.0);
    let s: f64 = if all_above_one {
        phi.iter().sum()
    } else {
        phi.iter().map(|p| p + 1.0).sum()
    };
    for (xi, p) in x.iter_mut().zip(phi) {
        *xi = if all_above_one { p / s } else { (p + 1.0) / s };
    }
}

/// The concentration α = φ + 1 of the member with natural parameters φ, as reported.
pub(crate) fn usual_concentration(phi: &[f64]) -> Vec<(&'static str, Param)> {
    vec![(
        "concentration",
        Param::Vector(phi.iter().map(|v| v + 1.0).collect()),
    )]
}

impl ExpFamily for Dirichlet {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Dirichlet",
        aliases: &[],
        value: ValueKind::Simplex,
        event: EventShape::Vector,
        slots: &[SlotSpec {
            name: "concentration",
            aliases: &["alpha"],
            kinds: &[],
            constant: ConstDomain::Positive,
            shape: SlotShape::Elementwise,
            expects: "a positive constant",
        }],
        params: &["concentration"],
        summary: "Dirichlet over probability vectors; the categories are the event plate",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        let c = args.number(0)?;
        Ok(Dirichlet {
            concentration: vec![c; args.event],
        }
        .into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        usual_concentration(phi)
    }
    fn free_params(&self) -> usize {
        self.concentration.len()
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Dirichlet {
            k: self.concentration.len(),
        }
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        unreachable!("Dirichlet has no parent slots")
    }
    fn prior(&self, _pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        dirichlet_prior(&self.concentration, phi)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        dirichlet_moments(phi, u)
    }
    fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        dirichlet_centred(phi, x, out)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        dirichlet_observe(x, u)
    }
    fn message_to(&self, _slot: usize, _u: &[f64], _w: f64, _pa: &[&[f64]], _m: &mut [f64]) {
        unreachable!("Dirichlet has no parent slots")
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        dirichlet_sample(phi, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        dirichlet_mode(phi, x)
    }
    fn test_instances() -> Vec<Self> {
        vec![Dirichlet {
            concentration: vec![1.0, 2.0, 0.5, 1e-3],
        }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        self.concentration
            .iter()
            .map(|_| 0.1 + 4.0 * rng.random::<f64>() - 1.0)
            .collect()
    }
}
