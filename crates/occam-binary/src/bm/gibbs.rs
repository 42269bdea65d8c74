//! Gibbs sampling for Boltzmann machines, and annealed importance sampling (AIS) for log Z.
//!
//! Gibbs: sequential sweeps, P(s_k = +1 | rest) = 1/(1 + exp(−2 f_k)), f = h + W s, with the fields
//! updated in O(n) per flip. Marginal estimates carry batch-means standard errors (each chain's
//! post-burn-in sweeps are cut into equal batches; SE = sd(batch means)/√(number of batches)).
//! AIS (Neal 2001): β from 0 to 1, one Gibbs sweep per temperature, log w = Σ_k (β_k − β_{k−1}) φ(x_{k−1})
//! with φ(s) = ½ sᵀWs + hᵀs; log Z ≈ c + n ln 2 + ln mean(w). An estimate, not a bound.
//! Chains run in parallel under rayon with per-chain seeds derived from the master seed and are
//! combined in chain order, so results do not depend on the thread count.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use super::error::{BmError, Result};
use super::model::{dot, BoltzmannMachine};
use super::Quality;

/// Gibbs options.
#[derive(Debug, Clone)]
pub struct GibbsOptions {
    /// Independent chains.
    pub chains: usize,
    /// Burn-in sweeps per chain.
    pub burn_in: usize,
    /// Recorded sweeps per chain.
    pub samples: usize,
    /// Batches per chain for batch means (must divide into at least one sweep each).
    pub batches: usize,
    /// Master seed.
    pub seed: u64,
}

impl Default for GibbsOptions {
    fn default() -> Self {
        Self {
            chains: 4,
            burn_in: 1000,
            samples: 20000,
            batches: 20,
            seed: 0,
        }
    }
}

/// Gibbs estimates.
#[derive(Debug, Clone)]
pub struct GibbsResult {
    /// Always [`Quality::Estimate`].
    pub quality: Quality,
    /// Estimated ⟨s_i⟩.
    pub means: Vec<f64>,
    /// Batch-means standard errors of `means`.
    pub means_se: Vec<f64>,
    /// Estimated ⟨s_i s_j⟩ (row-major, diagonal 1).
    pub correlations: Vec<f64>,
    /// Batch-means standard errors of `correlations`.
    pub correlations_se: Vec<f64>,
}

fn chain_seed(seed: u64, c: usize) -> u64 {
    // SplitMix64 of (seed, chain)
    let mut z = seed
        ^ (c as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One sequential Gibbs sweep at inverse temperature β, keeping fields f = h + W s current.
#[inline]
fn sweep(
    bm: &BoltzmannMachine,
    s: &mut [f64],
    f: &mut [f64],
    beta: f64,
    rng: &mut Xoshiro256PlusPlus,
) {
    let n = bm.n();
    let w = bm.weights();
    for k in 0..n {
        let p = occam_core::special::sigmoid(2.0 * beta * f[k]);
        let new = if rng.random::<f64>() < p { 1.0 } else { -1.0 };
        if new != s[k] {
            let d = new - s[k];
            s[k] = new;
            for (fj, wj) in f.iter_mut().zip(&w[k * n..(k + 1) * n]) {
                *fj += d * wj;
            }
        }
    }
}

/// The most Gibbs sweeps per chain (`occam bm logz --samples`): each sweep updates every unit
/// against all the others, so 10⁷ sweeps of a 100-unit machine are already ~10¹¹ operations.
pub const MAX_SAMPLES: usize = 10_000_000;

/// The most numbers the batch means may hold (chains × batches × (n + n²)), 2 GiB.
pub const MAX_BATCH_VALUES: usize = 1 << 28;

/// Gibbs sampling with batch-means standard errors.
pub fn gibbs(bm: &BoltzmannMachine, o: &GibbsOptions) -> Result<GibbsResult> {
    if o.chains == 0 || o.batches == 0 || o.samples < o.batches {
        return Err(BmError::InvalidOption {
            option: "gibbs",
            why: "need chains ≥ 1, batches ≥ 1 and samples ≥ batches".into(),
        });
    }
    if o.samples > MAX_SAMPLES {
        return Err(BmError::InvalidOption {
            option: "gibbs",
            why: format!("must be at most {MAX_SAMPLES} samples, got {}", o.samples),
        });
    }
    let n = bm.n();
    let values = n
        .checked_mul(n)
        .and_then(|v| v.checked_add(n))
        .and_then(|v| v.checked_mul(o.chains))
        .and_then(|v| v.checked_mul(o.batches));
    if values.is_none_or(|v| v > MAX_BATCH_VALUES) {
        return Err(BmError::InvalidOption {
            option: "gibbs",
            why: format!(
                "{} chains × {} batches × ({n} + {n}²) moments of {n} units is more than the limit of {MAX_BATCH_VALUES} numbers",
                o.chains, o.batches
            ),
        });
    }
    let per = o.samples / o.batches;
    let dim = n + n * n;
    // per chain: batch means of [s_i, s_i s_j]
    let chains: Vec<Vec<Vec<f64>>> = (0..o.chains)
        .into_par_iter()
        .map(|c| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(chain_seed(o.seed, c));
            let mut s: Vec<f64> = (0..n)
                .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
                .collect();
            let mut f = vec![0.0; n];
            bm.fields(&s, &mut f);
            for _ in 0..o.burn_in {
                sweep(bm, &mut s, &mut f, 1.0, &mut rng);
            }
            let mut out = Vec::with_capacity(o.batches);
            for _ in 0..o.batches {
                let mut acc = vec![0.0; dim];
                for _ in 0..per {
                    sweep(bm, &mut s, &mut f, 1.0, &mut rng);
                    for i in 0..n {
                        acc[i] += s[i];
                        let row = &mut acc[n + i * n..n + (i + 1) * n];
                        for (a, sj) in row.iter_mut().zip(&s) {
                            *a += s[i] * sj;
                        }
                    }
                }
                acc.iter_mut().for_each(|a| *a /= per as f64);
                out.push(acc);
            }
            out
        })
        .collect();
    let all: Vec<&Vec<f64>> = chains.iter().flatten().collect();
    let b = all.len() as f64;
    let mut mean = vec![0.0; dim];
    for a in &all {
        mean.iter_mut().zip(a.iter()).for_each(|(m, x)| *m += x / b);
    }
    let mut se = vec![0.0; dim];
    if all.len() > 1 {
        for a in &all {
            se.iter_mut()
                .zip(a.iter().zip(&mean))
                .for_each(|(v, (x, m))| *v += (x - m) * (x - m));
        }
        se.iter_mut()
            .for_each(|v| *v = (*v / (b - 1.0)).sqrt() / b.sqrt());
    }
    Ok(GibbsResult {
        quality: Quality::Estimate,
        means: mean[..n].to_vec(),
        means_se: se[..n].to_vec(),
        correlations: mean[n..].to_vec(),
        correlations_se: se[n..].to_vec(),
    })
}

/// AIS options.
#[derive(Debug, Clone)]
pub struct AisOptions {
    /// Number of intermediate temperatures.
    pub temperatures: usize,
    /// Independent runs.
    pub runs: usize,
    /// Master seed.
    pub seed: u64,
}

impl Default for AisOptions {
    fn default() -> Self {
        Self {
            temperatures: 1000,
            runs: 64,
            seed: 0,
        }
    }
}

/// AIS estimate of log Z.
#[derive(Debug, Clone)]
pub struct AisResult {
    /// Estimated log Z.
    pub log_z: f64,
    /// Delta-method standard error of `log_z`.
    pub std_error: f64,
    /// Always [`Quality::Estimate`].
    pub quality: Quality,
}

/// Annealed importance sampling with Gibbs transitions (module doc).
pub fn ais_log_z(bm: &BoltzmannMachine, o: &AisOptions) -> Result<AisResult> {
    if o.temperatures == 0 || o.runs < 2 {
        return Err(BmError::InvalidOption {
            option: "ais",
            why: "need temperatures ≥ 1 and runs ≥ 2".into(),
        });
    }
    let n = bm.n();
    let k = o.temperatures;
    let phi = |s: &[f64], f: &[f64]| -> f64 {
        // ½ sᵀWs + hᵀs = ½ (sᵀ f + hᵀ s) with f = h + W s
        0.5 * (dot(s, f) + dot(bm.thresholds(), s))
    };
    let logw: Vec<f64> = (0..o.runs)
        .into_par_iter()
        .map(|r| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(chain_seed(o.seed ^ 0xA15, r));
            let mut s: Vec<f64> = (0..n)
                .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
                .collect();
            let mut f = vec![0.0; n];
            bm.fields(&s, &mut f);
            let mut lw = 0.0;
            let mut prev_beta = 0.0;
            for t in 1..=k {
                let beta = t as f64 / k as f64;
                lw += (beta - prev_beta) * phi(&s, &f);
                sweep(bm, &mut s, &mut f, beta, &mut rng);
                prev_beta = beta;
            }
            lw
        })
        .collect();
    let mx = logw.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let ws: Vec<f64> = logw.iter().map(|l| (l - mx).exp()).collect();
    let r = ws.len() as f64;
    let mean = ws.iter().sum::<f64>() / r;
    let var = ws.iter().map(|w| (w - mean) * (w - mean)).sum::<f64>() / (r - 1.0);
    Ok(AisResult {
        log_z: bm.offset() + n as f64 * std::f64::consts::LN_2 + mx + mean.ln(),
        std_error: (var / r).sqrt() / mean,
        quality: Quality::Estimate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::exact::exact;

    #[test]
    fn gibbs_agrees_with_exact_within_standard_errors() {
        let bm = crate::bm::sk::sk_network(10, 0.3, 0.8, 9).unwrap();
        let ex = exact(&bm).unwrap();
        let o = GibbsOptions {
            chains: 4,
            burn_in: 200,
            samples: 4000,
            batches: 20,
            seed: 3,
        };
        let g = gibbs(&bm, &o).unwrap();
        assert_eq!(g.quality, Quality::Estimate);
        let mut z2 = 0.0;
        for i in 0..10 {
            assert!(g.means_se[i] > 0.0 && g.means_se[i] < 0.05);
            let z = (g.means[i] - ex.means[i]) / g.means_se[i];
            assert!(z.abs() < 4.5, "unit {i}: z = {z}");
            z2 += z * z;
        }
        // the standard errors are calibrated: Σ z² over 10 units is not wildly off χ²₁₀
        assert!(z2 < 40.0, "sum z^2 = {z2}");
        for (i, j) in [(0, 1), (3, 7), (2, 9)] {
            let z = (g.correlations[i * 10 + j] - ex.correlations[i * 10 + j])
                / g.correlations_se[i * 10 + j];
            assert!(z.abs() < 4.5, "pair {i},{j}: z = {z}");
        }
        // determinism regardless of thread count
        let g1 = occam_core::threads::on_threads(1, || gibbs(&bm, &o).unwrap()).unwrap();
        assert_eq!(g1.means, g.means);
        assert_eq!(g1.correlations_se, g.correlations_se);
    }

    #[test]
    fn ais_estimates_log_z() {
        let bm = crate::bm::sk::sk_network(12, 0.2, 1.0, 4).unwrap();
        let lz = exact(&bm).unwrap().log_z;
        let a = ais_log_z(
            &bm,
            &AisOptions {
                temperatures: 300,
                runs: 32,
                seed: 1,
            },
        )
        .unwrap();
        assert!(a.std_error > 0.0 && a.std_error < 0.1);
        assert!(
            (a.log_z - lz).abs() < 4.0 * a.std_error + 0.02,
            "{} ± {} vs {lz}",
            a.log_z,
            a.std_error
        );
    }
}
