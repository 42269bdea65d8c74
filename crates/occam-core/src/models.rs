//! Ready-made models that peers ship as examples, built from the ordinary [`Graph`] API.

use crate::dist::{Categorical, Dirichlet, MvGaussian, Wishart};
use crate::error::BuildError;
use crate::graph::{cv, p, Graph, NodeId};

/// Bayesian Gaussian mixture with full precisions (BayesPy's `gmm` example; Winn §2.4 with
/// Wishart precisions): α ~ Dirichlet(c·1_K), z_n ~ Categorical(α), μ_k ~ N(0, (τ I)⁻¹),
/// Λ_k ~ Wishart(ν, s I) (E[Λ] = ν (s I)⁻¹), y_n ~ N(μ_{z_n}, Λ_{z_n}⁻¹), with a mean-field q.
///
/// ```
/// use occam_core::prelude::*;
/// use occam_core::models::GaussianMixture;
/// let y = [0.1, 0.0, -0.2, 0.1, 5.0, 5.2, 5.1, 4.9, 0.0, 0.3, 5.3, 5.0];
/// let mut g = Graph::new();
/// let gmm = GaussianMixture::new(2).add(&mut g, &y, 2).unwrap();
/// let mut vmp = g.compile().unwrap();
/// let fit = vmp.run(&RunOptions::default()).unwrap();
/// assert!(fit.bound.is_finite());
/// // Points 0 and 2 (both near 0) end up in the same component.
/// let r = vmp.moments(gmm.z);
/// assert!((r[0] - r[4]).abs() < 1e-6);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianMixture {
    /// Number of components K.
    pub k: usize,
    /// Dirichlet concentration c of every weight.
    pub weight_concentration: f64,
    /// Precision τ of the means' prior.
    pub mean_precision: f64,
    /// Wishart degrees of freedom ν; `None`: the dimension D.
    pub wishart_dof: Option<f64>,
    /// Wishart scale s: the prior's precision matrix parameter is s I.
    pub wishart_scale: f64,
}

/// The nodes of a [`GaussianMixture`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GaussianMixtureNodes {
    /// Mixture weights α (Dirichlet).
    pub alpha: NodeId,
    /// Assignments z over plate N (Categorical).
    pub z: NodeId,
    /// Component means μ over plate K.
    pub mu: NodeId,
    /// Component precisions Λ over plate K.
    pub lambda: NodeId,
    /// The observed data y over plate N.
    pub y: NodeId,
}

impl GaussianMixture {
    /// K components with BayesPy's example priors: c = 10⁻⁵, τ = 10⁻⁵, ν = D, s = 10⁻⁵.
    pub fn new(k: usize) -> Self {
        GaussianMixture {
            k,
            weight_concentration: 1e-5,
            mean_precision: 1e-5,
            wishart_dof: None,
            wishart_scale: 1e-5,
        }
    }

    /// Adds the model to `g` with plates `N` (rows of `y`) and `K`, and observes `y` (row-major,
    /// `d` values per point).
    pub fn add(
        &self,
        g: &mut Graph,
        y: &[f64],
        d: usize,
    ) -> Result<GaussianMixtureNodes, BuildError> {
        let n = g.try_plate("N", y.len() / d.max(1))?;
        let kp = g.try_plate("K", self.k)?;
        let scaled_identity = |s: f64| {
            (0..d * d)
                .map(|i| if i % (d + 1) == 0 { s } else { 0.0 })
                .collect::<Vec<f64>>()
        };
        let concentration = vec![self.weight_concentration; self.k];
        let alpha = g.add("alpha", Dirichlet { concentration }, &[], [])?;
        let z = g.add("z", Categorical { k: self.k }, &[n], [p(alpha)])?;
        let mean_prior = [cv(vec![0.0; d]), cv(scaled_identity(self.mean_precision))];
        let mu = g.add("mu", MvGaussian { d }, &[kp], mean_prior)?;
        let dof = self.wishart_dof.unwrap_or(d as f64);
        let lambda = g.add(
            "Lambda",
            Wishart { d, dof },
            &[kp],
            [cv(scaled_identity(self.wishart_scale))],
        )?;
        let components = [p(mu), p(lambda)];
        let y_node = g.add_mixture("y", MvGaussian { d }, &[n], &[(z, kp)], components)?;
        g.observe(y_node, y)?;
        Ok(GaussianMixtureNodes {
            alpha,
            z,
            mu,
            lambda,
            y: y_node,
        })
    }
}
