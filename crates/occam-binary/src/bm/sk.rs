//! The Sherrington–Kirkpatrick ensemble and the Leisink–Kappen Fig. 4 reproduction.
//!
//! Thresholds θ^i ~ N(0, σ₁²), couplings θ^{ij} ~ N(0, (σ₂/√N)²) (Leisink & Kappen §5.1: "weights
//! drawn from N(μ = 0, σ = σ₂/√N)", a standard deviation). For each network the three
//! bounds B_mf ≤ B_tm ≤ B_to ≤ log Z are computed and the relative improvements (43)
//!   η_{x→y} = (B_y − B_x)/(log Z − B_x)
//! averaged per σ₂.

use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use super::error::{BmError, Result};
use super::exact::exact_log_z;
use super::mf::{mean_field, MeanFieldOptions};
use super::model::BoltzmannMachine;
use super::tap::{tap, TapOptions};
use super::third_order::{third_order_from, ThirdOrderOptions};

/// Draws one SK network (module doc), deterministic in `seed`.
pub fn sk_network(n: usize, sigma1: f64, sigma2: f64, seed: u64) -> Result<BoltzmannMachine> {
    if !(sigma1 >= 0.0 && sigma2 >= 0.0 && sigma1.is_finite() && sigma2.is_finite()) {
        return Err(BmError::InvalidOption {
            option: "sigma",
            why: "σ₁, σ₂ must be finite and ≥ 0".into(),
        });
    }
    if n == 0 {
        return Err(BmError::InvalidOption {
            option: "n",
            why: "need at least one unit".into(),
        });
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let nw = Normal::new(0.0, sigma2 / (n as f64).sqrt()).map_err(|e| BmError::InvalidOption {
        option: "sigma2",
        why: e.to_string(),
    })?;
    let nh = Normal::new(0.0, sigma1).map_err(|e| BmError::InvalidOption {
        option: "sigma1",
        why: e.to_string(),
    })?;
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..i {
            let v = nw.sample(&mut rng);
            w[i * n + j] = v;
            w[j * n + i] = v;
        }
    }
    let h = (0..n).map(|_| nh.sample(&mut rng)).collect();
    BoltzmannMachine::new(w, h, 0.0)
}

/// Options of the SK reproduction.
#[derive(Debug, Clone, Serialize)]
pub struct SkOptions {
    /// Units N (paper: 20).
    pub n: usize,
    /// Threshold standard deviation σ₁ (paper Fig. 3/4: 0.1).
    pub sigma1: f64,
    /// The σ₂ values.
    pub sigma2: Vec<f64>,
    /// Networks per σ₂ (paper: 20 for Fig. 4).
    pub networks: usize,
    /// Master seed; network k of σ₂-index s uses seed + 1000·s + k.
    pub seed: u64,
    /// Also compute TAP at its own fixed point.
    pub with_tap: bool,
}

impl Default for SkOptions {
    fn default() -> Self {
        Self {
            n: 20,
            sigma1: 0.1,
            sigma2: vec![0.25, 0.5, 0.75, 1.0, 1.5, 2.0],
            networks: 20,
            seed: 1,
            with_tap: true,
        }
    }
}

/// One network's numbers.
#[derive(Debug, Clone, Serialize)]
pub struct SkNetwork {
    /// σ₂.
    pub sigma2: f64,
    /// Seed of the network.
    pub seed: u64,
    /// Exact log Z.
    pub log_z: f64,
    /// Mean-field bound.
    pub b_mf: f64,
    /// Third order at the mean-field μ.
    pub b_tm: f64,
    /// Third order, μ optimised.
    pub b_to: f64,
    /// TAP (not a bound), if requested.
    pub tap: Option<f64>,
    /// η_{mf→tm}.
    pub eta_mf_tm: f64,
    /// η_{tm→to}.
    pub eta_tm_to: f64,
}

/// Per-σ₂ averages.
#[derive(Debug, Clone, Serialize)]
pub struct SkRow {
    /// σ₂.
    pub sigma2: f64,
    /// Mean η_{mf→tm}.
    pub eta_mf_tm: f64,
    /// Mean η_{tm→to}.
    pub eta_tm_to: f64,
    /// Mean log Z − B_mf.
    pub gap_mf: f64,
    /// Mean log Z − B_tm.
    pub gap_tm: f64,
    /// Mean log Z − B_to.
    pub gap_to: f64,
    /// Mean TAP − log Z.
    pub tap_minus_log_z: Option<f64>,
    /// B_mf ≤ B_tm ≤ B_to ≤ log Z held on every network.
    pub ordered: bool,
}

/// The whole reproduction.
#[derive(Debug, Clone, Serialize)]
pub struct SkReport {
    /// Options used.
    pub options: SkOptions,
    /// Per-σ₂ rows.
    pub rows: Vec<SkRow>,
    /// Every network.
    pub networks: Vec<SkNetwork>,
}

fn eta(bx: f64, by: f64, lz: f64) -> f64 {
    let d = lz - bx;
    if d <= 0.0 {
        0.0
    } else {
        (by - bx) / d
    }
}

/// Runs the SK reproduction (Leisink & Kappen §5.1, Fig. 4).
pub fn sk_reproduction(o: &SkOptions) -> Result<SkReport> {
    if o.networks == 0 {
        return Err(BmError::InvalidOption {
            option: "networks",
            why: "must be ≥ 1".into(),
        });
    }
    let mut rows = Vec::new();
    let mut nets = Vec::new();
    for (s, &sigma2) in o.sigma2.iter().enumerate() {
        let mut acc = [0.0f64; 5];
        let mut tap_acc = 0.0;
        let mut ordered = true;
        for k in 0..o.networks {
            let seed = o.seed.wrapping_add(1000 * s as u64 + k as u64);
            let bm = sk_network(o.n, o.sigma1, sigma2, seed)?;
            let lz = exact_log_z(&bm)?;
            let mfo = MeanFieldOptions {
                seed,
                ..Default::default()
            };
            let mf = mean_field(&bm, &mfo)?;
            let tm = third_order_from(
                &bm,
                &mf.fields,
                mf.log_z,
                &ThirdOrderOptions {
                    optimise: false,
                    ..Default::default()
                },
            );
            let to = third_order_from(&bm, &mf.fields, mf.log_z, &ThirdOrderOptions::default());
            let tp = if o.with_tap {
                Some(
                    tap(
                        &bm,
                        &TapOptions {
                            mean_field: mfo,
                            ..Default::default()
                        },
                    )?
                    .log_z,
                )
            } else {
                None
            };
            ordered &= mf.log_z <= tm.log_z && tm.log_z <= to.log_z && to.log_z <= lz;
            let rec = SkNetwork {
                sigma2,
                seed,
                log_z: lz,
                b_mf: mf.log_z,
                b_tm: tm.log_z,
                b_to: to.log_z,
                tap: tp,
                eta_mf_tm: eta(mf.log_z, tm.log_z, lz),
                eta_tm_to: eta(tm.log_z, to.log_z, lz),
            };
            acc[0] += rec.eta_mf_tm;
            acc[1] += rec.eta_tm_to;
            acc[2] += lz - mf.log_z;
            acc[3] += lz - tm.log_z;
            acc[4] += lz - to.log_z;
            tap_acc += tp.map_or(0.0, |t| t - lz);
            nets.push(rec);
        }
        let k = o.networks as f64;
        rows.push(SkRow {
            sigma2,
            eta_mf_tm: acc[0] / k,
            eta_tm_to: acc[1] / k,
            gap_mf: acc[2] / k,
            gap_tm: acc[3] / k,
            gap_to: acc[4] / k,
            tap_minus_log_z: o.with_tap.then_some(tap_acc / k),
            ordered,
        });
    }
    Ok(SkReport {
        options: o.clone(),
        rows,
        networks: nets,
    })
}
