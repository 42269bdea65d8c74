//! The gated linear-Gaussian q-block's builder: which nodes share q(x_n, s_n) (the block itself is
//! compiled and solved in `engine/gated_linear`).

use super::*;
use crate::network::GatedRole;

impl Graph {
    /// Declares q(x_n, s_n) joint over a mixture index `s[N]` and the latent vectors `x[N, K]` it
    /// gates: `y[N, D]` is a mixture over s of Gaussians with one precision τ and means
    /// `mean[N, K, D] = dot(W[K, D], x[N, K])` plus `μ[K, D]` (a mixture of Bayesian PCA, Winn
    /// §3.3). The q-block keeps q(x_n, s_n = k) = r_nk N(x_nk | m_nk, Σ_k), the "pick" form of
    /// Winn §2.2.3, where a factorised q(x) q(s) loses the dependence of x_n on its component;
    /// solved by `engine/gated_linear`. `latent` must be read by one `dot` only, that dot by
    /// one sum only, and that sum by the mixture `y` gated by `index` only. Checked fully when
    /// compiling (plates in the order above, x's prior N(0, I), y fully observed).
    ///
    /// ```
    /// use occam_core::prelude::*;
    /// let mut g = Graph::new();
    /// let (n, k, d) = (g.plate("N", 4), g.plate("K", 2), g.plate("D", 2));
    /// let pi = g.add("pi", Dirichlet { concentration: vec![1.0; 2] }, &[], []).unwrap();
    /// let s = g.add("s", Categorical { k: 2 }, &[n], [p(pi)]).unwrap();
    /// let w = g.add("W", GaussianArd { d: 1 }, &[k, d], [c(0.0), c(1.0)]).unwrap();
    /// let x = g.add("x", GaussianArd { d: 1 }, &[n, k], [c(0.0), c(1.0)]).unwrap();
    /// let f = g.deterministic("f", Dot { d: 1 }, &[n, k, d], [p(w), p(x)]).unwrap();
    /// let mu = g.add("mu", Gaussian, &[k, d], [c(0.0), c(1e-2)]).unwrap();
    /// let mean = g.deterministic("mean", Sum { n: 2, d: 1 }, &[n, k, d], [p(f), p(mu)]).unwrap();
    /// let tau = g.add("tau", Gamma { shape: 1.0 }, &[], [c(1.0)]).unwrap();
    /// let y = g.add_mixture("y", Gaussian, &[n, d], &[(s, k)], [p(mean), p(tau)]).unwrap();
    /// g.observe(y, &[0.0, 0.1, 0.2, 0.1, 3.0, 3.1, 2.9, 3.0]).unwrap();
    /// g.gated_q(s, x).unwrap();
    /// let mut vmp = g.compile().unwrap();
    /// let fit = vmp.run(&RunOptions::default()).unwrap();
    /// assert!(fit.bound_trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
    /// ```
    pub fn gated_q(&mut self, index: NodeId, latent: NodeId) -> Result<(), BuildError> {
        let shape = |node: &str, what: &str| BuildError::Shape {
            node: node.into(),
            what: format!("in a gated q-block: {what}"),
        };
        let (s, x) = (index.0, latent.0);
        let (sn, xn) = (&self.nodes[s], &self.nodes[x]);
        if !matches!(sn.body, Body::Stochastic(Dist::Categorical(_))) {
            return Err(shape(&sn.name, "the index must be a Categorical node"));
        }
        if !matches!(xn.body, Body::Stochastic(_))
            || !matches!(xn.kind, MomentKind::Gaussian { .. })
        {
            return Err(shape(&xn.name, "the latent node must be a Gaussian vector"));
        }
        for node in [sn, xn] {
            if node.block.is_some() || node.gated.is_some() || node.map {
                return Err(shape(&node.name, "is MAP or already in another q-block"));
            }
        }
        let only_child = |i: usize| match self.nodes[i].children[..] {
            [(c, Role::Slot(_))] => Some(c),
            _ => None,
        };
        let f = only_child(x)
            .filter(|&f| matches!(self.nodes[f].body, Body::Deterministic(Factor::Dot(_))));
        let Some(f) = f else {
            return Err(shape(
                &xn.name,
                "the latent node must be read by one `dot` only",
            ));
        };
        let mean = only_child(f)
            .filter(|&m| matches!(self.nodes[m].body, Body::Deterministic(Factor::Sum(_))));
        let Some(mean) = mean else {
            return Err(shape(
                &self.nodes[f].name,
                "the dot must be read by one sum only",
            ));
        };
        let y = match self.nodes[mean].children[..] {
            [(y, Role::Slot(0))] => Some(y),
            _ => None,
        }
        .filter(|&y| {
            let yn = &self.nodes[y];
            matches!(yn.body, Body::Stochastic(Dist::Gaussian(_)))
                && yn.selectors.len() == 1
                && yn.selectors[0].node == s
        });
        let Some(y) = y else {
            return Err(shape(
                &self.nodes[mean].name,
                "the sum must be the mean of one Gaussian mixture gated by the index, only",
            ));
        };
        if self.nodes[s].children != [(y, Role::Selector(0))] {
            return Err(shape(
                &self.nodes[s].name,
                "the index must gate that mixture only",
            ));
        }
        for (i, role) in [
            (s, GatedRole::Index),
            (x, GatedRole::Latent),
            (f, GatedRole::Product),
            (mean, GatedRole::Mean),
            (y, GatedRole::Data),
        ] {
            self.nodes[i].gated = Some(role);
        }
        Ok(())
    }
}
