//! NegativeBinomial(x | r, p): the number of failures before the r-th success in Bernoulli(p)
//! trials (r > 0 a constant, real r allowed: the Gamma–Poisson mixture), x ∈ {0, 1, 2, …},
//! P(x) = Γ(x + r) / (Γ(r) x!) · p^r (1 − p)^x — overdispersed counts. The success probability p
//! has a Beta parent (conjugate as for the Binomial).
//!
//! u = [x], φ = ⟨ln(1 − p)⟩, f(x) = ln Γ(x + r) − ln Γ(r) − ln x!, A(φ) = −r ln(1 − e^φ) (φ < 0),
//! ⟨x⟩ = r e^φ / (1 − e^φ); prior: ⟨A⟩ = −r ⟨ln p⟩. Message to p (u = [ln p, ln(1 − p)]):
//! [r, ⟨x⟩] per observation.

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, ArgProblem, Args, ConstDomain, EventShape, FamilySpec, Param, SlotShape, SlotSpec,
    ValueKind,
};
use crate::special::ln_gamma;
use crate::Rng;
use rand::Rng as _;

/// Negative binomial distribution with a constant number of successes r.
#[derive(Clone, Debug)]
pub struct NegativeBinomial {
    /// Number of successes r > 0.
    pub successes: f64,
}

impl NegativeBinomial {
    /// f(x) = ln Γ(x + r) − ln Γ(r) − ln x!.
    fn base_measure(&self, x: f64) -> f64 {
        let r = self.successes;
        ln_gamma(x + r) - ln_gamma(r) - ln_gamma(x + 1.0)
    }
}

impl ExpFamily for NegativeBinomial {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "NegativeBinomial",
        aliases: &[],
        value: ValueKind::Count,
        event: EventShape::Scalar,
        slots: &[
            SlotSpec {
                name: "successes",
                aliases: &["r", "n"],
                kinds: &[],
                constant: ConstDomain::Positive,
                shape: SlotShape::Scalar,
                expects: "a positive constant",
            },
            super::bernoulli::PROB_SLOT,
        ],
        params: &["prob"],
        summary: "number of failures before the `successes`-th success (overdispersed counts)",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        let r = args.number(0)?;
        if !(r > 0.0 && r.is_finite()) {
            return Err(ArgError {
                slot: Some(0),
                problem: ArgProblem::BadConstant,
                message: format!(
                    "NegativeBinomial `{}` needs a positive number of successes; got {r}",
                    args.var
                ),
                label: "out of range",
                hint: None,
            });
        }
        Ok(NegativeBinomial { successes: r }.into())
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
        -self.successes * pa[0][0]
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        if !(phi[0] < 0.0) {
            return Err(OutOfDomain(
                "NegativeBinomial log failure probability must be negative",
            ));
        }
        // 1 − e^φ without cancellation.
        let p = -phi[0].exp_m1();
        u[0] = self.successes * phi[0].exp() / p;
        Ok(-self.successes * p.ln())
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        if !(x[0] >= 0.0) || x[0].fract() != 0.0 || !x[0].is_finite() {
            return Err(ValueError::NotCount { value: x[0] });
        }
        u[0] = x[0];
        Ok(self.base_measure(x[0]))
    }
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, _pa: &[&[f64]], m: &mut [f64]) {
        m[0] = self.successes * w;
        m[1] = u[0];
    }
    fn expected_base_measure(&self, phi: &[f64], u: &[f64]) -> f64 {
        // Σ P(x) f(x), summed past the mean until the terms are negligible (they decay like
        // e^{φx} x^{r−1}).
        let ln_norm = self.successes * (-phi[0].exp_m1()).ln();
        let mean = u[0];
        let mut s = 0.0;
        let mut x = 0.0f64;
        loop {
            let f = self.base_measure(x);
            let p = (f + ln_norm + x * phi[0]).exp();
            s += p * f;
            if (x > mean && p * (1.0 + f.abs()) < 1e-18) || x > 1e8 {
                return s;
            }
            x += 1.0;
        }
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        // Gamma–Poisson mixture: λ ~ Gamma(r, scale (1 − p)/p), x ~ Poisson(λ).
        let q = phi[0].exp();
        let scale = q / -phi[0].exp_m1();
        let g = rand_distr::Gamma::new(self.successes, scale).expect("valid Gamma");
        let lambda: f64 = rng.sample(g);
        x[0] = if lambda > 0.0 {
            rng.sample(rand_distr::Poisson::new(lambda).expect("positive rate"))
        } else {
            0.0
        };
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        let r = self.successes;
        x[0] = if r > 1.0 {
            ((r - 1.0) * phi[0].exp() / -phi[0].exp_m1()).floor()
        } else {
            0.0
        };
    }
    fn test_instances() -> Vec<Self> {
        vec![
            NegativeBinomial { successes: 1.0 },
            NegativeBinomial { successes: 3.5 },
        ]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        let p = 0.2 + 0.75 * rng.random::<f64>();
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
        // Beta(a, b) prior, n counts with r successes each: the posterior is
        // Beta(a + n r, b + Σx) and the evidence is Π_i C(x_i) · B(a + n r, b + Σx) / B(a, b)
        // with C(x) = Γ(x + r) / (Γ(r) x!) — the bound equals it (one conjugate parent).
        let (a, b, r) = (2.0, 1.5, 2.5);
        let xs = [0.0, 4.0, 9.0, 1.0, 2.0, 0.0, 6.0, 3.0];
        let (n, s) = (xs.len() as f64, xs.iter().sum::<f64>());
        let nb = NegativeBinomial { successes: r };
        let mut g = Graph::new();
        let plate = g.plate("N", xs.len());
        let prob = g.add("p", Beta { alpha: a, beta: b }, &[], []).unwrap();
        let x = g.add("x", nb.clone(), &[plate], [p(prob)]).unwrap();
        g.observe(x, &xs).unwrap();
        let mut vmp = g.compile().unwrap();
        let fit = vmp.run(&RunOptions::default()).unwrap();
        let phi = vmp.natural(prob);
        assert!((phi[0] - (a + n * r - 1.0)).abs() < 1e-12, "{phi:?}");
        assert!((phi[1] - (b + s - 1.0)).abs() < 1e-12, "{phi:?}");
        let log_c: f64 = xs
            .iter()
            .map(|&x| ln_gamma(x + r) - ln_gamma(r) - ln_gamma(x + 1.0))
            .sum();
        let exact = log_c + ln_beta(a + n * r, b + s) - ln_beta(a, b);
        assert!((fit.bound - exact).abs() < 1e-9, "{} vs {exact}", fit.bound);
    }

    #[test]
    fn moments_and_base_measure_match_the_textbook() {
        // ⟨x⟩ = r (1 − p) / p; ⟨f⟩ against a direct sum of the pmf; the pmf sums to 1.
        let (r, p) = (3.5f64, 0.4f64);
        let nb = NegativeBinomial { successes: r };
        let phi = [(1.0 - p).ln()];
        let mut u = [0.0];
        nb.moments(&phi, &mut u).unwrap();
        assert!((u[0] - r * (1.0 - p) / p).abs() < 1e-12);
        let pmf = |x: f64| (nb.base_measure(x) + r * p.ln() + x * (1.0 - p).ln()).exp();
        let (mut total, mut ef) = (0.0, 0.0);
        for x in 0..2000 {
            total += pmf(x as f64);
            ef += pmf(x as f64) * nb.base_measure(x as f64);
        }
        assert!((total - 1.0).abs() < 1e-12);
        assert!((nb.expected_base_measure(&phi, &u) - ef).abs() < 1e-10);
        // r = 1 is the Geometric: f = 0.
        let one = NegativeBinomial { successes: 1.0 };
        assert!(one.base_measure(7.0).abs() < 1e-12);
    }
}
