//! Categorical(y | softmax(η)) with a Gaussian vector of log-odds η over the categories —
//! `y ~ Categorical(softmax_bohning(η))`, and `softmax(η)` for K > 3 — by Böhning's quadratic bound on the log-sum-exp (Böhning 1992,
//! "Multinomial logistic regression algorithm", Ann. Inst. Statist. Math. 44, Lemma: the
//! Hessian of lse is bounded by A = ½(I − 11ᵀ/K) in the Loewner order).
//!
//! The family is the Categorical's in its natural parameter: u = one-hot(y), φ = η,
//! A(η) = lse(η). For every expansion point ψ, by Taylor's theorem with the curvature bound A,
//!
//! lse(η) ≤ lse(ψ) + (η − ψ)ᵀg(ψ) + ½(η − ψ)ᵀA(η − ψ),   g = softmax,
//!
//! so ⟨lse(η)⟩ ≤ lse(ψ) + (m − ψ)ᵀg(ψ) + ½(m − ψ)ᵀA(m − ψ) + ½tr(AΣ) with m = ⟨η⟩ and
//! Σ = ⟨ηηᵀ⟩ − mmᵀ. The ψ-dependent part is the same bound on lse(m) itself, so it is smallest
//! at ψ = m (where it is exact): ⟨A⟩ ≤ lse(m) + ½tr(AΣ). The family takes ψ = m at every use,
//! as the logit families take ξ (see `logistic.rs`): the bound is min over ψ, a true lower bound
//! on the expected log-likelihood, and the messages at fixed ψ are quadratic in η, so conjugate
//! Gaussian messages to u_η = [η, ηηᵀ]: u − w(g(m) − Am) on the mean part and −½wA on the
//! second-moment part (their derivatives at ψ = m, by the envelope theorem).
//!
//! **The gap**, measured for K = 3 against 3-D quadrature (`crates/occam/tests/it/softmax_gap.rs`).
//! Per observation, for η ~ N(m, s²I) the bound exceeds ⟨lse(η)⟩ by 0.015, 0.209 and 1.078 nats at
//! m = 0 and s = 0.3, 1, 2, and by 0.034, 0.370 and 1.469 at m = (2, 0, −2) (never more than ½s²,
//! as ⟨lse⟩ ≥ lse(m)): it grows as s², so it is small once the logits are well determined. On the
//! evidence of 20 draws with counts (10, 6, 4) and θ ~ N(0, I): bound −23.172, the ELBO of the
//! same q with ⟨lse⟩ by quadrature −22.829 (0.343 nats of looseness), log Z −22.721 (0.451 in all).
//! Bouchard's bound (2007; lse(η) ≤ α + Σ_k ln(1 + e^{η_k − α}) with Jaakkola–Jordan on each
//! term), measured in the same test, is looser than this one in 5 of those 6 cases (gaps 0.814,
//! 0.866, 1.136 and 0.546, 0.695, 1.080) and tighter only at m = (2, 0, −2), s = 2.
//!
//! **The posterior sds are understated** ([`BOHNING_SDS`]): the fixed curvature A adds the same
//! precision A ⊗ x xᵀ per observation whatever the data, above the softmax's own expected Hessian
//! (½ against 1/3 on the contrasts at equal probabilities). Measured on multinomial regression
//! (`crates/occam/tests/it/softmax.rs`: 30 points, 2 inputs, 3 classes, one Gaussian q over all
//! the weights, against quadrature of the exact posterior): the weights' sds 8–15% and the class
//! contrasts' sds 28–49% too small, where the quadrature family is within 1.2% and 3.0%. Reports
//! say so for every node whose logits read this family (`Vmp::sds_understated_by`).

use super::{Categorical, Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::special::log_sum_exp;
use crate::Rng;
use rand::Rng as _;

/// What Böhning's bound costs the posterior of the Gaussians in its logits (module docs), as
/// the fit's summary, `occam check` and the JSON report say it.
pub const BOHNING_SDS: &str = "Böhning's bound understates their posterior sds (on 30 points, \
     3 classes, against the exact posterior: sds 8–15% and class-contrast sds 28–49% too small; \
     `softmax` is exact for K ≤ 3)";

/// Categorical(y | softmax(η)) with a Gaussian vector η, by Böhning's bound (module docs); what
/// `y ~ Categorical(softmax_bohning(η))` becomes, and `softmax(η)` for K > 3.
#[derive(Clone, Debug)]
pub struct CategoricalSoftmax {
    /// Number of categories K.
    pub k: usize,
}

impl CategoricalSoftmax {
    fn categorical(&self) -> Categorical {
        Categorical { k: self.k }
    }
    /// A_ij = ½(δ_ij − 1/K).
    fn a(&self, i: usize, j: usize) -> f64 {
        0.5 * (f64::from(u8::from(i == j)) - 1.0 / self.k as f64)
    }
}

impl ExpFamily for CategoricalSoftmax {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "CategoricalSoftmax",
        aliases: &[],
        value: ValueKind::Categorical,
        event: EventShape::Categories,
        slots: &[SlotSpec {
            name: "logits",
            aliases: &["eta"],
            kinds: &[ValueKind::Vector],
            constant: ConstDomain::Real,
            shape: SlotShape::ChildEvent,
            expects: "a Gaussian vector over the categories (or a constant)",
        }],
        params: &[],
        summary: "one of the categories with probabilities softmax(logits): \
                  `Categorical(softmax_bohning(x))`, and `softmax(x)` for K > 3; Böhning bound \
                  (a true lower bound; K = 3 against quadrature: 0.21–0.37 nats below \
                  ⟨ln softmax⟩ per observation at logit sd 1, 0.34 nats below the ELBO on 20 \
                  draws; posterior sds 8–15% and class-contrast sds 28–49% too small on 30 \
                  points)",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(CategoricalSoftmax { k: args.event }.into())
    }
    fn free_params(&self) -> usize {
        self.k - 1
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Categorical { k: self.k }
    }
    fn bound_quality(&self) -> super::BoundQuality {
        super::BoundQuality::LowerBound
    }
    fn slot_input(&self, _slot: usize) -> SlotInput {
        SlotInput::single(MomentKind::Gaussian { d: self.k })
    }
    // ⟨φ⟩ = m; ⟨A⟩ ≤ lse(m) + ½tr(AΣ), Σ = ⟨ηηᵀ⟩ − mmᵀ (module docs).
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let k = self.k;
        let (m, s) = pa[0].split_at(k);
        phi.copy_from_slice(m);
        let mut trace = 0.0;
        for i in 0..k {
            for j in 0..k {
                trace += self.a(i, j) * (s[i * k + j] - m[i] * m[j]);
            }
        }
        log_sum_exp(m) + 0.5 * trace
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        self.categorical().moments(phi, u)
    }
    fn moments_rows(
        &self,
        phi: &[f64],
        u: &mut [f64],
        a: &mut [f64],
    ) -> Result<(), (usize, OutOfDomain)> {
        self.categorical().moments_rows(phi, u, a)
    }
    fn own_term(&self, phi: &[f64], u: &[f64], a: f64) -> f64 {
        self.categorical().own_term(phi, u, a)
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        self.categorical().observe_value(x, u)
    }
    // ∂/∂m and ∂/∂⟨ηηᵀ⟩ of Σ_i w_i[m·u_i − ⟨A⟩] at ψ = m held fixed: u − w(g(m) − Am), −½wA.
    fn message_to(&self, _slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        let k = self.k;
        let mean = &pa[0][..k];
        let lse = log_sum_exp(mean);
        for i in 0..k {
            let am: f64 = (0..k).map(|j| self.a(i, j) * mean[j]).sum();
            m[i] = u[i] - w * ((mean[i] - lse).exp() - am);
            for j in 0..k {
                m[k + i * k + j] = -0.5 * w * self.a(i, j);
            }
        }
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        self.categorical().sample(phi, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        self.categorical().mode(phi, x)
    }
    fn test_instances() -> Vec<Self> {
        vec![CategoricalSoftmax { k: 3 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        (0..self.k)
            .map(|_| 4.0 * rng.random::<f64>() - 2.0)
            .collect()
    }
}
