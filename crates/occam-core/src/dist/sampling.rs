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
