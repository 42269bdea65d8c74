//! Importance sampling of the evidence (Sahani, "Sampling Approximations"): with θ_s drawn from
//! the proposal Q ([`super::proposal`]), p(D) ≈ (1/S) Σ_s p(D | θ_s) p(θ_s) / Q(θ_s), computed by
//! log-sum-exp. The standard error of ln p̂(D) is the delta method's sd(w) / (√S · mean(w)); the
//! effective sample size is (Σ w)² / Σ w². Draws come in blocks of [`BLOCK`], block b from its
//! own generator seeded by (seed, b), so the estimate does not depend on the thread count.
//!
//! The work per draw: ln p(D | θ) over N rows × K components (module `density`, each
//! component's constants once per draw), ln p(θ) once, and for a mixture the proposal's K × K
//! matrix of factor densities (module `qdensity`) and its permanent over the K! relabellings
//! (module `permanent`: K 2^(K−1) multiply-adds, hence at most K = 12 components).

use rand::rngs::StdRng;
use rand::SeedableRng;
use rayon::prelude::*;

use super::density::{log_lik, log_prior};
use super::flat::Flat;
use super::proposal::Proposal;

/// Draws per generator.
pub(crate) const BLOCK: usize = 256;

/// An importance-sampling estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sampled {
    /// ln p̂(D).
    pub log_z: f64,
    /// Its standard error (delta method).
    pub se: f64,
    /// Effective sample size.
    pub ess: f64,
}

/// The seed of block `b` (SplitMix64 of the pair).
pub(crate) fn block_seed(seed: u64, b: u64) -> u64 {
    let mut z = seed ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The estimate from `samples` draws.
pub(crate) fn importance(flat: &Flat, q: &Proposal, samples: usize, seed: u64) -> Sampled {
    let blocks = samples.div_ceil(BLOCK);
    let ln_w: Vec<f64> = (0..blocks)
        .into_par_iter()
        .map(|b| {
            let mut rng = StdRng::seed_from_u64(block_seed(seed, b as u64));
            let n = BLOCK.min(samples - b * BLOCK);
            (0..n)
                .map(|_| {
                    let theta = q.sample(flat, &mut rng);
                    let prior = log_prior(flat, &theta);
                    let w = log_lik(flat, &theta) + prior - q.ln_pdf(flat, &theta, prior);
                    if w.is_nan() {
                        f64::NEG_INFINITY
                    } else {
                        w
                    }
                })
                .collect::<Vec<f64>>()
        })
        .collect::<Vec<_>>()
        .concat();
    summarise(&ln_w)
}

/// Estimate, standard error and effective sample size from log-weights.
pub(crate) fn summarise(ln_w: &[f64]) -> Sampled {
    let s = ln_w.len() as f64;
    let max = ln_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = ln_w.iter().map(|x| (x - max).exp()).collect();
    let sum: f64 = w.iter().sum();
    let mean = sum / s;
    let var = w.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (s - 1.0).max(1.0);
    Sampled {
        log_z: max + mean.ln(),
        se: (var / s).sqrt() / mean,
        ess: sum * sum / w.iter().map(|x| x * x).sum::<f64>(),
    }
}
