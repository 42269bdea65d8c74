//! Geometric(x | p): the number of failures before the first success in Bernoulli(p) trials,
//! x ∈ {0, 1, 2, …}, P(x) = p (1 − p)^x, with a Beta parent for the success probability p
//! (Beta–Geometric conjugacy, as for the Bernoulli: Winn Table 2.1 extended).
//!
//! u = [x], φ = ⟨ln(1 − p)⟩, f = 0, A(φ) = −ln(1 − e^φ) (φ < 0), ⟨x⟩ = e^φ / (1 − e^φ);
//! prior: ⟨A⟩ = −⟨ln p⟩. Message to p (u = [ln p, ln(1 − p)]): [1, ⟨x⟩] per observation.

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{ArgError, Args, EventShape, FamilySpec, Param, ValueKind};
use crate::Rng;
use rand::Rng as _;

/// Geometric distribution (failures before the first success).
#[derive(Clone, Debug, Default)]
pub struct Geometric;

impl ExpFamily for Geometric {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "Geometric",
        aliases: &[],
        value: ValueKind::Count,
        event: EventShape::Scalar,
        slots: &[super::bernoulli::PROB_SLOT],
        params: &["prob"],
        summary: "number of failures before the first success, success probability `prob`",
    };

    fn from_args(_args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(Geometric.into())
    }
    fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        vec![("prob", Param::Scalar(-phi[0].exp_m1()))]
    }
    fn free_params(&self) -> usize {
        1
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Scalar
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Dirichlet { k: 2 })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        phi[0] = pa[0][1];
        -pa[0][0]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        if !(phi[0] < 0.0) {
            return Err(OutOfDomain(
                "Geometric log failure probability must be negative",
            ));
        }
        // 1 − e^φ without cancellation.
        let p = -phi[0].exp_m1();
        u[0] = phi[0].exp() / p;
        Ok(-p.ln())
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !(x[0] >= 0.0) || x[0].fract() != 0.0 || !x[0].is_finite() {
            return Err(ValueError::NotCount { value: x[0] });
        }
        u[0] = x[0];
        Ok(0.0)
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m[0] = w;
        m[1] = u[0];
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        let p = -phi[0].exp_m1();
        let g = rand_distr::Geometric::new(p).expect("success probability in (0, 1]");
        x[0] = rng.sample(g) as f64;
    }
    fn mode(&self, _phi: &[f64], x: &mut [f64]) {
        x[0] = 0.0;
    }
    fn test_instances() -> Vec<Self> {
        vec![Geometric]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        let p = 0.15 + 0.8 * rng.random::<f64>();
        vec![(1.0 - p).ln()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Beta;
    use crate::engine::RunOptions;
    use crate::graph::{p, Graph};
    use crate::special::ln_beta;

    #[test]
    fn beta_posterior_and_bound_are_exact() {
        // Beta(a, b) prior, n geometric counts: the posterior is Beta(a + n, b + Σx) and the
        // evidence is B(a + n, b + Σx) / B(a, b) — the bound equals it (one conjugate parent).
        let (a, b) = (1.5, 2.5);
        let xs = [0.0, 3.0, 1.0, 0.0, 7.0, 2.0, 1.0];
        let (n, s) = (xs.len() as f64, xs.iter().sum::<f64>());
        let mut g = Graph::new();
        let plate = g.plate("N", xs.len());
        let prob = g.add("p", Beta { alpha: a, beta: b }, &[], []).unwrap();
        let x = g.add("x", Geometric, &[plate], [p(prob)]).unwrap();
        g.observe(x, &xs).unwrap();
        let mut vmp = g.compile().unwrap();
        let fit = vmp.run(&RunOptions::default()).unwrap();
        let phi = vmp.natural(prob);
        assert!((phi[0] - (a + n - 1.0)).abs() < 1e-12, "{phi:?}");
        assert!((phi[1] - (b + s - 1.0)).abs() < 1e-12, "{phi:?}");
        let exact = ln_beta(a + n, b + s) - ln_beta(a, b);
        assert!((fit.bound - exact).abs() < 1e-9, "{} vs {exact}", fit.bound);
    }

    #[test]
    fn moments_match_the_textbook_mean() {
        // ⟨x⟩ = (1 − p)/p.
        let p = 0.3f64;
        let mut u = [0.0];
        let a = Geometric.moments(&[(1.0 - p).ln()], &mut u).unwrap();
        assert!((u[0] - (1.0 - p) / p).abs() < 1e-12);
        assert!((a + p.ln()).abs() < 1e-12);
        assert!(Geometric.moments(&[0.0], &mut u).is_err());
    }
}
