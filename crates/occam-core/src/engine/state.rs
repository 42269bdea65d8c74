//! A compiled model's q as plain data, to save a fit and start another run from it: every node's
//! natural parameters φ, moments u and log-partition A (the restart snapshot of
//! `driver::snapshot`, public), and putting one back with its lengths checked.

use super::*;

/// One node's q as plain arrays (the restart snapshot's `NodeState`, public): φ, u = ∂A/∂φ and
/// A(φ) of every element, in the node's own layout. Compact forms (a shared covariance, a fused
/// mixture index's q(z) without φ) are kept as the engine keeps them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QState {
    /// φ of every element.
    pub phi: Vec<f64>,
    /// u of every element.
    pub u: Vec<f64>,
    /// A(φ) of latent elements; f(x) of observed ones.
    pub a: Vec<f64>,
}

impl From<NodeState> for QState {
    fn from(s: NodeState) -> QState {
        QState {
            phi: s.phi,
            u: s.u,
            a: s.a,
        }
    }
}

impl Vmp {
    /// Every node's q, in node order (the restart snapshot).
    pub fn q_state(&self) -> Vec<QState> {
        self.snapshot().into_iter().map(QState::from).collect()
    }

    /// Puts back q saved by [`Vmp::q_state`] from a model of the same structure (the same model
    /// and data shapes): `None` keeps a node's current state. The model then counts as
    /// initialised, so a run with one restart continues from this state (a warm start). An
    /// error names the first node whose arrays have other lengths than its current ones (another
    /// model or other data); nothing is changed then.
    pub fn set_q_state(&mut self, state: Vec<Option<QState>>) -> Result<(), StateError> {
        if state.len() != self.nodes.len() {
            return Err(StateError::NodeCount {
                saved: state.len(),
                model: self.nodes.len(),
            });
        }
        let current = self.snapshot();
        for (i, (s, c)) in state.iter().zip(&current).enumerate() {
            if let Some(s) = s {
                let same =
                    s.phi.len() == c.phi.len() && s.u.len() == c.u.len() && s.a.len() == c.a.len();
                // A Gaussian node that keeps its rows' means and one shared covariance (the
                // linear kernel's shared form) is saved in that form; a fresh model holds it per
                // element until its first update (and a model in which it cannot take that
                // form, e.g. with missing data below it, gets it expanded per element below).
                let n = &self.nodes[i];
                let shared = matches!(n.kind, MomentKind::Gaussian { d }
                        if s.u.len() == n.n * d + d * d && n.n >= 2)
                    && s.phi.len() == s.u.len()
                    && s.a.len() == c.a.len();
                // An importance-sampled node keeps its sampled terms, S, S_eff, key, plans and
                // moment variances after A (module `sampled`) once started; a file saved before
                // the plans existed has 4n + 1 (read with the plans unset).
                let sampled = matches!(self.block_of(i), Some(super::qblock::Block::Sampled(_)))
                    && s.phi.len() == c.phi.len()
                    && s.u.len() == c.u.len()
                    && super::sampled::saved_a_fits(s.a.len(), n.n);
                // A gated block's W keeps one covariance per component (`gated_linear`).
                let grouped = self
                    .gated_w_state_fits(i, [s.phi.len(), s.u.len(), s.a.len()])
                    .unwrap_or(false);
                // A fused mixture index updated as whole blocks keeps no φ (formed on request
                // from u and A, `Node::natural_on_request`), while a fresh model holds φ until
                // its first update: the saved empty φ is put back and formed on request.
                let on_request = s.u.len() == c.u.len()
                    && s.a.len() == c.a.len()
                    && n.forms_natural_for(&s.phi, &s.u);
                // The logits of a softmax q-block keep the block's joint q in φ and its groups'
                // entropy gaps in A once updated (module `softmax_joint`); a fresh model holds
                // them per row until then.
                let kept = self.softmax_joint_of(i).is_some_and(|b| {
                    s.phi.len() == b.kept_len() && s.u.len() == c.u.len() && s.a.len() == b.groups
                });
                let fits = same || shared || sampled || grouped || on_request || kept;
                if !fits {
                    return Err(StateError::Sizes {
                        node: self.nodes[i].name.clone(),
                        saved: [s.phi.len(), s.u.len(), s.a.len()],
                        model: [c.phi.len(), c.u.len(), c.a.len()],
                    });
                }
                let finite = |v: &[f64]| v.iter().all(|x| !x.is_nan());
                if !(finite(&s.phi) && finite(&s.u) && finite(&s.a)) {
                    return Err(StateError::NaN {
                        node: self.nodes[i].name.clone(),
                    });
                }
            }
        }
        let merged: Vec<NodeState> = state
            .into_iter()
            .zip(current)
            .enumerate()
            .map(|(i, (s, c))| match s {
                Some(s) => NodeState {
                    phi: s.phi,
                    u: s.u,
                    a: match self.block_of(i) {
                        Some(super::qblock::Block::Sampled(_)) => {
                            super::sampled::upgrade_saved_a(s.a, self.nodes[i].n)
                        }
                        _ => s.a,
                    },
                },
                None => c,
            })
            .collect();
        self.restore(merged);
        for i in 0..self.nodes.len() {
            if self.shared[i].is_none() {
                self.unshare(i);
            }
        }
        // Deterministic nodes read the restored moments.
        for i in 0..self.nodes.len() {
            if matches!(self.nodes[i].body, Body::Deterministic(_)) {
                self.refresh(i);
            }
        }
        self.initialized = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    fn model() -> Vmp {
        let mut g = Graph::new();
        let n = g.plate("N", 5);
        let mu = g.add("mu", Gaussian, &[], [c(0.0), c(1e-2)]).unwrap();
        let tau = g.add("tau", Gamma { shape: 1.0 }, &[], [c(1.0)]).unwrap();
        let x = g.add("x", Gaussian, &[n], [p(mu), p(tau)]).unwrap();
        g.observe(x, &[1.0, 2.0, 0.5, 1.5, 3.0]).unwrap();
        g.compile().unwrap()
    }

    #[test]
    fn saved_q_restarts_where_it_stopped() {
        let mut a = model();
        let opts = RunOptions::default();
        let fit = a.run(&opts).unwrap();
        let mut b = model();
        b.set_q_state(a.q_state().into_iter().map(Some).collect())
            .unwrap();
        assert_eq!(b.q_state(), a.q_state());
        assert!((b.bound() - fit.bound).abs() < 1e-9 * fit.bound.abs());
        // The warm start is already converged: one sweep, then the stop.
        let again = b.run(&opts).unwrap();
        assert!(again.bound_trace.len() <= 2, "{:?}", again.bound_trace);
        // Another shape is refused, naming the node.
        let mut bad = a.q_state();
        bad[0].u.push(0.0);
        let e = b
            .set_q_state(bad.into_iter().map(Some).collect())
            .unwrap_err();
        assert!(e.to_string().contains("node `mu`"), "{e}");
    }
}
