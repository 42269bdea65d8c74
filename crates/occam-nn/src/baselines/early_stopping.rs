//! Early stopping (committee paper §4.2, Weigend et al. 1990): `validation` points drawn at random
//! from the training set are held out; the network is trained by least squares (no penalty) and the
//! weights with the lowest validation error seen are kept; the best of several networks by
//! validation error is reported.

use super::map::MapProblem;
use crate::bnn::network::{Architecture, NetError};
use crate::bnn::vb::init_component;
use crate::data::Dataset;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Settings of early stopping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlyStoppingOptions {
    /// Hidden units.
    pub hidden: usize,
    /// Held-out points (committee paper: 22 of the sunspot training set).
    pub validation: usize,
    /// Networks trained (committee paper: 10).
    pub networks: usize,
    /// Maximum optimiser iterations.
    pub max_iters: usize,
    /// Iterations between validation checks.
    pub check_every: usize,
    /// Seed of the split and the initial weights.
    pub seed: u64,
}

/// The selected network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlyStoppingFit {
    /// The network.
    pub arch: Architecture,
    /// Weights at the validation minimum.
    pub w: Vec<f64>,
    /// Validation mean squared error there.
    pub validation_mse: f64,
    /// Iterations at which it was reached.
    pub iters: usize,
}

impl EarlyStoppingFit {
    /// Network outputs.
    pub fn predict(&self, x: &[f64]) -> Vec<f64> {
        MapProblem {
            arch: self.arch,
            x,
            t: &[],
        }
        .predict(&self.w, x)
    }
}

/// Trains `opts.networks` networks on one random split and returns the best by validation error.
pub fn early_stopping(
    data: &Dataset,
    opts: &EarlyStoppingOptions,
) -> Result<EarlyStoppingFit, NetError> {
    if opts.validation == 0 || opts.validation >= data.n() || opts.check_every == 0 {
        return Err(NetError::Setting {
            name: "validation",
            why: format!("need 0 < validation < {} and check_every > 0", data.n()),
        });
    }
    let arch = Architecture::new(data.d, opts.hidden)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
    let mut idx: Vec<usize> = (0..data.n()).collect();
    idx.shuffle(&mut rng);
    let (val_idx, train_idx) = idx.split_at(opts.validation);
    let (val, train) = (data.select(val_idx), data.select(train_idx));
    let fits: Vec<EarlyStoppingFit> = (0..opts.networks.max(1) as u64)
        .into_par_iter()
        .map(|r| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed.wrapping_add(1000 + r));
            let mut w = init_component(&arch, 1.0, &mut rng);
            w.truncate(arch.n_weights());
            let p = MapProblem {
                arch,
                x: &train.x,
                t: &train.t,
            };
            let pv = MapProblem {
                arch,
                x: &val.x,
                t: &val.t,
            };
            let zeros = vec![0.0; w.len()];
            let mut best = EarlyStoppingFit {
                arch,
                w: w.clone(),
                validation_mse: 2.0 * pv.error(&w, None) / val.n() as f64,
                iters: 0,
            };
            let mut it = 0;
            while it < opts.max_iters {
                w = p.train(w, &zeros, 1.0, opts.check_every);
                it += opts.check_every;
                let v = 2.0 * pv.error(&w, None) / val.n() as f64;
                if v < best.validation_mse {
                    best = EarlyStoppingFit {
                        arch,
                        w: w.clone(),
                        validation_mse: v,
                        iters: it,
                    };
                }
            }
            best
        })
        .collect();
    fits.into_iter()
        .min_by(|a, b| a.validation_mse.total_cmp(&b.validation_mse))
        .ok_or(NetError::NoData)
}
