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
        // The prior's moments are read before drawing (the draw works in the node's arrays).
        let prior = self.nodes[i].q.u.clone();
        let x = self.sample_chain(i, rng);
        self.pin_chain(i, &x, |_| true, &prior)
    }

    /// Whether discrete chain `i`, left at its default start (its prior), would start every state
    /// alike: it selects the components of a mixture child (`y ~ Gaussian(mu[z], tau[z])`), and
    /// none of that child's latent parents starts away from its prior by the model's own `init`
    /// and is updated after the chain in the default order (`init mu = random` breaks the
    /// symmetry itself, and is kept as the model states it).
    ///
    /// A parent with its own `init` that the default order updates before the chain — the two
    /// both start informatively ([`Vmp::default_order`]: the later node last), so a parent
    /// declared before the chain — reads the chain's symmetric q in its first update and forgets
    /// its start: every state would stay alike (issue 25, `init B = random` with `B` before `z`).
    /// Such a parent does not count, and the chain takes its own start.
    pub(in crate::engine) fn chain_is_symmetric(&self, i: usize) -> bool {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            return false;
        };
        if !matches!(ch.kind, ChainKind::Discrete { .. }) {
            return false;
        }
        let mut selects = false;
        for &(c, role) in &z.children {
            if !matches!(role, Role::Selector(_)) {
                continue;
            }
            selects = true;
            let started = self.nodes[c].parents.iter().any(|e| match e.source {
                Source::Node(p) => {
                    p > i
                        && matches!(
                            self.nodes[p].init,
                            Some(Init::Random | Init::Moments(_) | Init::Natural(_))
                        )
                }
                _ => false,
            });
            if started {
                return false;
            }
        }
        selects
    }

    /// The default start of a discrete chain that selects the components of an observed mixture
    /// child read step by step (`y[S, T] ~ Gaussian(mu[z], ...)`): k-means over the child's observed
    /// values ([`crate::kmeans`], seeded by `rng`, as a mixture index's k-means++ start) and q
    /// pinned to the labels at those steps (steps whose value is missing are left free). Returns
    /// whether there was such a child.
    pub(in crate::engine) fn kmeans_chain_start(
        &mut self,
        i: usize,
        rng: &mut Rng,
    ) -> Result<bool, RunError> {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            return Ok(false);
        };
        let ChainKind::Discrete { k } = ch.kind else {
            return Ok(false);
        };
        let found = z.children.iter().find_map(|&(c, role)| match role {
            Role::Selector(m)
                if self.nodes[c].n == z.n
                    && self.nodes[c].selectors[m].rule.is_identity(z.n)
                    && !self.nodes[c].data.is_empty() =>
            {
                Some(c)
            }
            _ => None,
        });
        let Some(c) = found else {
            return Ok(false);
        };
        let child = &self.nodes[c];
        let vlen = child.data.len() / child.n;
        let steps: Vec<usize> = (0..child.n).filter(|&e| child.is_observed(e)).collect();
        if steps.is_empty() {
            return Ok(false);
        }
        let mut features = Vec::with_capacity(steps.len() * vlen);
        for &e in &steps {
            features.extend_from_slice(&child.data[e * vlen..(e + 1) * vlen]);
        }
        let labels = crate::kmeans::kmeans(&features, steps.len(), vlen, k, rng);
        let mut path = vec![0u32; z.n];
        let mut pinned = vec![false; z.n];
        for (&e, &l) in steps.iter().zip(&labels) {
            path[e] = l as u32;
            pinned[e] = true;
        }
        let x: Vec<f64> = path.iter().map(|&l| f64::from(l)).collect();
        let prior = self.nodes[i].q.u.clone();
        self.pin_chain(i, &x, |e| pinned[e], &prior)?;
        Ok(true)
    }

    /// Chain node i's q given its parents' current moments with each step `e` for which `pin(e)`
    /// holds pinned to `x` (a state for a discrete chain, a vector for a Gaussian one) by a
    /// pseudo-message (module docs), `prior` its moments at the prior start; φ is zero afterwards.
    fn pin_chain(
        &mut self,
        i: usize,
        x: &[f64],
        pin: impl Fn(usize) -> bool,
        prior: &[f64],
    ) -> Result<(), RunError> {
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("random_chain_start on a chain node")
        };
        let (row, steps) = (z.len, ch.steps);
        let mut eta = vec![0.0; z.n * row];
        for (s, &len) in ch.lengths.iter().enumerate() {
            for e in (s * steps..s * steps + len).filter(|&e| pin(e)) {
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
        self.nodes[i].q.phi.iter_mut().for_each(|p| *p = 0.0);
        Ok(())
    }
}
