//! Ancestral sampling from the prior: every stochastic node drawn given its parents' draws.

use super::init::{moments, sample};
use super::*;

impl Vmp {
    /// Ancestral sampling from the generative model (data are ignored): every stochastic node is drawn
    /// from its conditional given its parents' drawn values, in topological order; deterministic
    /// nodes are evaluated on them. Returns the drawn values of every node (empty for deterministic
    /// and constant nodes), row-major over its plates. Leaves each node's moments at u(draw).
    pub fn sample_prior(&mut self, seed: u64) -> Result<Vec<Vec<f64>>, RunError> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut draws = Vec::with_capacity(self.nodes.len());
        for i in 0..self.nodes.len() {
            let dist = match &self.nodes[i].body {
                Body::Stochastic(d) => d.clone(),
                Body::Deterministic(_) => {
                    match self.linear[i].clone().filter(|l| l.f == i) {
                        // The child's prior needs F's moments here: form them from the draws.
                        Some(lin) => self.nodes[i].q.u = lin.f_moments(&self.nodes),
                        None => self.refresh(i),
                    }
                    draws.push(Vec::new());
                    continue;
                }
                Body::Constant => {
                    draws.push(Vec::new());
                    continue;
                }
                Body::Chain(_) => {
                    let x = self.sample_chain(i, &mut rng);
                    draws.push(x);
                    continue;
                }
            };
            self.unshare(i);
            let node = &self.nodes[i];
            let (n, len, vlen) = (node.n, node.len, value_len(&dist));
            let mut phi = vec![0.0; len];
            let mut tmp = vec![0.0; len];
            let mut buf = Vec::new();
            let mut x = vec![0.0; n * vlen];
            let mut u = vec![0.0; n * len];
            for e in 0..n {
                let xe = &mut x[e * vlen..(e + 1) * vlen];
                // The family's own draw given the drawn parents, where it is not `sample` from
                // `prior` (`ExpFamily::draw_given_parents`).
                if !dist_draw_given(&dist, &self.nodes, node, e, &mut rng, xe) {
                    dist_prior_of(&dist, &self.nodes, node, e, &mut phi, &mut tmp, &mut buf);
                    if moments(&dist, &phi, &mut tmp).is_err() {
                        return Err(self.numerical(
                            i,
                            e,
                            "the prior given the drawn parents is improper".into(),
                        ));
                    }
                    sample(&dist, &phi, &mut rng, xe);
                }
                observe(
                    &dist,
                    &x[e * vlen..(e + 1) * vlen],
                    &mut u[e * len..(e + 1) * len],
                )
                .map_err(|w| self.numerical(i, e, w.to_string()))?;
            }
            self.nodes[i].q.u = u;
            self.changed(i);
            draws.push(x);
        }
        Ok(draws)
    }
}
