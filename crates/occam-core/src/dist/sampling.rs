//! What the importance-sampled families share (Winn §4.4, (4.13)–(4.21)): the sampling settings
//! of a node and the Gaussian that every such q is reported as.
//!
//! A node whose q has a factor outside the exponential family — a truncated or two-component
//! mixture prior ([`super::TruncatedGaussian`], [`super::GaussianMixture2`]) or Student-t
//! observations of its value ([`super::StudentT`]) — is updated by importance sampling in the
//! engine (`engine/sampled`). Its q is carried as the Gaussian with the sampled moments (Winn
//! (4.20): "the parent adopts this as its moment vector"), so every family here has the scalar
//! Gaussian's moments and natural parameters; what differs is the prior's Gaussian envelope
//! (`prior`) and the log-ratio of the true prior density to it, which the sampler adds to each
//! sample's log-weight.
//!
//! The priors also give the sampler its proposal ([`SampledPrior::tilted`]): the prior times the
//! children's Gaussian message exp(m·[x, x²]) is, for a mixture prior, the mixture of its
//! components each tilted by the message (weights: the tilted components' normalisers) and, for
//! a truncated prior, the tilted Gaussian truncated to the interval. Without Student-t
//! likelihoods that is q itself, and its moments and normaliser are closed form
//! ([`SampledPrior::tilted_moments`]): the engine then samples nothing. With them it is the
//! proposal, and the likelihoods weight the draws (4.18).

mod proposal;

pub(crate) use proposal::{ln_mass, truncated_draw, truncated_mean_var, Proposal};

/// Settings of an importance-sampled node: S, the S_eff it aims at, the largest S it may use
/// and the seed of its draws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// S, the samples of the first pass (Winn used 100; we start higher and adapt).
    pub samples: usize,
    /// The effective sample size S_eff = 1/Σw² the update aims at: S is doubled until S_eff
    /// reaches it or S reaches `cap`.
    pub target: f64,
    /// The largest S (a warning is reported when S_eff is still below `target` there).
    pub cap: usize,
    /// The seed of the draws (with the node and element: the same seed gives the same bits).
    pub seed: u64,
}

impl Default for Sampling {
    /// S = 1000, S_eff ≥ 250 (Winn's S_eff > S/4 criterion on the first pass), S ≤ 64 000, seed 0.
    fn default() -> Self {
        Sampling {
            samples: 1000,
            target: 250.0,
            cap: 64_000,
            seed: 0,
        }
    }
}

/// ln N(x | m, 1/p) for precision p.
pub(crate) fn ln_normal(x: f64, m: f64, p: f64) -> f64 {
    0.5 * (p.ln() - crate::special::LN_2PI - p * (x - m) * (x - m))
}

/// A prior over a scalar that the engine importance-samples (Winn §4.4): a Gaussian envelope
/// (the family's `prior`), the log of the density over it, the sampler's settings, and the
/// proposal for the prior tilted by a Gaussian message (module docs).
pub(crate) trait SampledPrior: Sync {
    /// ln p(x) − ln N(x | envelope).
    fn log_ratio(&self, x: f64) -> f64;
    /// The sampler's settings.
    fn sampling(&self) -> Sampling;
    /// The distribution ∝ p(x) exp(m·[x, x²]) for a Gaussian message m (m = 0: the prior), as a
    /// proposal drawn from exactly; None when it has no representable form (then the engine
    /// proposes Winn's single Gaussian (4.16)).
    fn tilted(&self, m: [f64; 2]) -> Option<Proposal>;
    /// q ∝ p(x) exp(m·[x, x²]) in closed form: (ln C, [mean, variance]) with
    /// C = ∫ p(x) exp(m·[x, x²]) dx and q's mean and variance (the tilted proposal's,
    /// [`Proposal::mean_var`], the variance formed without ⟨x²⟩ − ⟨x⟩²); None when it has no
    /// representable form (then the engine samples).
    fn tilted_moments(&self, m: [f64; 2]) -> Option<(f64, [f64; 2])>;
}

impl super::Dist {
    /// The family as an importance-sampled prior, if it is one.
    pub(crate) fn sampled_prior(&self) -> Option<&dyn SampledPrior> {
        match self {
            super::Dist::TruncatedGaussian(t) => Some(t),
            super::Dist::GaussianMixture2(m) => Some(m),
            _ => None,
        }
    }
}

/// φ and A of a Gaussian envelope N(mean, 1/precision): the `prior` of every family here.
pub(crate) fn envelope_prior((mean, precision): (f64, f64), phi: &mut [f64]) -> f64 {
    super::gaussian::prior_scalar(&[mean, mean * mean], &[precision, precision.ln()], phi)
}

/// N(x | mean, 1/precision) times exp(m·[x, x²]) is c · N(x | mean', 1/precision') with
/// precision' = precision − 2m₂, mean' = (precision · mean + m₁)/precision' and
/// ln c = ½(precision' mean'² − precision mean²) + ½ ln(precision/precision'); returns
/// (ln c, mean', precision'), None when precision' is not positive.
pub(crate) fn tilt(mean: f64, precision: f64, m: [f64; 2]) -> Option<(f64, f64, f64)> {
    let p = precision - 2.0 * m[1];
    if !(p > 0.0) || !p.is_finite() {
        return None;
    }
    let h = precision * mean + m[0];
    let mu = h / p;
    let ln_c = 0.5 * (h * mu - precision * mean * mean) + 0.5 * (precision / p).ln();
    ln_c.is_finite().then_some((ln_c, mu, p))
}
