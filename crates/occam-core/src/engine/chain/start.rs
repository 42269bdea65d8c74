//! Random starts of a chain (`Init::Random`, `init z = random`): one path per sequence drawn from
//! the chain's prior given its parents' starting moments, and q the chain's exact update with every
//! step pinned to its draw by a pseudo-message (no child has sent one yet).
//!
//! * Discrete chain: a log-potential of [`PIN`] nats on the drawn state of each step. Every other
//!   state's weight underflows to 0, so q is the point mass on the drawn path: a proper q whose
//!   entropy is 0 and whose bound term is ln p(path | parents), like a Categorical's random start.
//! * Gaussian chain: a precision λ I at the drawn state, λ = [`RANDOM_START_SHARPNESS`] times the
//!   step's mean prior precision (1 / variance, averaged over dimensions): q is centred on the draw
//!   with about 10⁻⁶ of the prior's spread, as a Gaussian variable's random start (`init.rs`).
//!
//! The pseudo-messages are not kept: φ (the children's last messages) is zero again afterwards,
//! as after a start from the prior.

use super::*;
use crate::engine::init::RANDOM_START_SHARPNESS;

/// Log-potential pinning a discrete chain's step to its drawn state: e^−800 underflows to 0.
const PIN: f64 = 800.0;

impl Vmp {
    /// Replaces chain node i's q (already its prior start) by a random start (module docs).
    pub(in crate::engine) fn random_chain_start(
        &mut self,
        i: usize,
        rng: &mut Rng,
    ) -> Result<(), RunError> {
        let prior = self.nodes[i].u.clone();
        let x = self.sample_chain(i, rng);
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("random_chain_start on a chain node")
        };
        let (row, steps) = (z.len, ch.steps);
        let mut eta = vec![0.0; z.n * row];
        for (s, &len) in ch.lengths.iter().enumerate() {
            for e in s * steps..s * steps + len {
                let m = &mut eta[e * row..(e + 1) * row];
                match ch.kind {
                    ChainKind::Discrete { .. } => m[x[e] as usize] = PIN,
                    ChainKind::Gaussian { d } => {
                        let u = &prior[e * row..(e + 1) * row];
                        let precision = (0..d)
                            .map(|j| 1.0 / (u[d + j * d + j] - u[j] * u[j]))
                            .sum::<f64>()
                            / d as f64;
                        let lambda = RANDOM_START_SHARPNESS * precision;
                        for j in 0..d {
                            m[j] = lambda * x[e * d + j];
                            m[d + j * d + j] = -0.5 * lambda;
                        }
                    }
                }
            }
        }
        self.update_chain(i, eta)?;
        self.nodes[i].phi.iter_mut().for_each(|p| *p = 0.0);
        Ok(())
    }
}
