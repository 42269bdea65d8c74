//! Ready-made models that peers ship as examples, built from the ordinary [`Graph`] API.

use crate::dist::{Categorical, Dirichlet, Gamma, Gaussian, GaussianArd, MvGaussian, Wishart};
use crate::error::BuildError;
use crate::factor::Dot;
use crate::graph::{c as p_const, cv, p, Graph, NodeId};
use crate::moments::MomentKind;

/// Bayesian Gaussian mixture with full precisions (BayesPy's `gmm` example; Winn §2.4 with
/// Wishart precisions): α ~ Dirichlet(c·1_K), z_n ~ Categorical(α), μ_k ~ N(0, (τ I)⁻¹),
/// Λ_k ~ Wishart(ν, s I) (E\[Λ\] = ν (s I)⁻¹), y_n ~ N(μ_{z_n}, Λ_{z_n}⁻¹), with a mean-field q.
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
/// // Six 2-D points: 0, 1 and 4 near the origin, 2, 3 and 5 near (5, 5). Points 0 and 1 end up
/// // in the same component (Q(z = ·) is two numbers per point), point 2 in the other.
/// let r = vmp.moments(gmm.z);
/// assert!((r[0] - r[2]).abs() < 1e-6);
/// assert!((r[0] - r[4]).abs() > 0.99);
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

/// Bayesian linear regression (BayesPy's regression example with C covariates): B ~ N(0, (β I)⁻¹)
/// with a full-covariance q (GaussianARD over a C-vector), τ ~ Gamma(a, b), y_n ~ N(x_nᵀ B, τ⁻¹) with
/// observed covariates x_n; q(B) q(τ).
///
/// ```
/// use occam_core::prelude::*;
/// use occam_core::models::LinearRegression;
/// let x = [1.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 3.0];
/// let y = [1.0, 3.1, 4.9, 7.0];
/// let mut g = Graph::new();
/// let m = LinearRegression::new().add(&mut g, &x[..], 2, &y, None).unwrap();
/// let mut vmp = g.compile().unwrap();
/// vmp.run(&RunOptions::default()).unwrap();
/// let b = vmp.mean(m.b).unwrap();
/// assert!((b[0] - 1.0).abs() < 0.1 && (b[1] - 2.0).abs() < 0.1);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LinearRegression {
    /// Prior precision β of every coefficient.
    pub coefficient_precision: f64,
    /// Shape a of the noise precision's Gamma prior.
    pub noise_shape: f64,
    /// Rate b of the noise precision's Gamma prior.
    pub noise_rate: f64,
}

/// The nodes of a [`LinearRegression`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearRegressionNodes {
    /// Covariates X over plate N (a constant).
    pub x: NodeId,
    /// Coefficients B (a C-vector).
    pub b: NodeId,
    /// Noise precision τ.
    pub tau: NodeId,
    /// The observations y over plate N.
    pub y: NodeId,
}

impl Default for LinearRegression {
    fn default() -> Self {
        Self::new()
    }
}

impl LinearRegression {
    /// BayesPy's example priors: β = 10⁻⁶, a = b = 10⁻³.
    pub fn new() -> Self {
        LinearRegression {
            coefficient_precision: 1e-6,
            noise_shape: 1e-3,
            noise_rate: 1e-3,
        }
    }

    /// Adds the model to `g` with plate `N` (rows of `x`, `c` covariates each, row-major; taken
    /// by value, see [`Graph::constant_values`]) and observes `y` (with `mask[n] == false` for a
    /// missing observation).
    pub fn add(
        &self,
        g: &mut Graph,
        x: impl Into<Vec<f64>>,
        c: usize,
        y: &[f64],
        mask: Option<&[bool]>,
    ) -> Result<LinearRegressionNodes, BuildError> {
        let n = g.try_plate("N", y.len())?;
        let xs = g.constant_values("X", MomentKind::Gaussian { d: c }, &[n], x.into())?;
        let prior = [p_const(0.0), p_const(self.coefficient_precision)];
        let b = g.add("B", GaussianArd { d: c }, &[], prior)?;
        let shape = self.noise_shape;
        let tau = g.add("tau", Gamma { shape }, &[], [p_const(self.noise_rate)])?;
        let f = g.deterministic("F", Dot { d: c }, &[n], [p(xs), p(b)])?;
        let y_node = g.add("y", Gaussian, &[n], [p(f), p(tau)])?;
        g.observe_masked(y_node, y, mask)?;
        Ok(LinearRegressionNodes {
            x: xs,
            b,
            tau,
            y: y_node,
        })
    }
}

/// Bayesian PCA (BayesPy's PCA example; Bishop 1999): α_q ~ Gamma(a, b) per latent dimension,
/// W_d ~ N(0, diag(α)⁻¹) (rows of the loading matrix, ARD on its columns), X_n ~ N(0, I),
/// τ ~ Gamma(a, b), y_dn ~ N(W_dᵀ X_n, τ⁻¹); q(α) q(W) q(X) q(τ) with full-covariance rows.
///
/// ```
/// use occam_core::prelude::*;
/// use occam_core::models::Pca;
/// let y: Vec<f64> = (0..4 * 30).map(|i| ((i % 4) as f64 - 1.5) * ((i / 4) as f64 * 0.3).sin()).collect();
/// let mut g = Graph::new();
/// let m = Pca::new(2).add(&mut g, &y, 4, None).unwrap();
/// g.initialize(m.x, Init::Random);
/// let mut vmp = g.compile().unwrap();
/// let fit = vmp.run(&RunOptions { max_iter: 50, ..Default::default() }).unwrap();
/// assert!(fit.bound_trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Pca {
    /// Latent dimension Q.
    pub q: usize,
    /// Shape and rate of the Gamma priors of α and τ.
    pub gamma_prior: (f64, f64),
}

/// The nodes of a [`Pca`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcaNodes {
    /// ARD precisions α over plate Q.
    pub alpha: NodeId,
    /// Loading rows W over plate D (Q-vectors).
    pub w: NodeId,
    /// Latent vectors X over plate N (Q-vectors).
    pub x: NodeId,
    /// Noise precision τ.
    pub tau: NodeId,
    /// The data y over plates D, N.
    pub y: NodeId,
}

impl Pca {
    /// Latent dimension `q` with BayesPy's example priors a = b = 10⁻⁵.
    pub fn new(q: usize) -> Self {
        Pca {
            q,
            gamma_prior: (1e-5, 1e-5),
        }
    }

    /// Adds the model to `g` with plates `D` (`d` rows of `y`), `N` (its columns) and `Q`, and
    /// observes `y` (row-major D × N; `mask` false where missing).
    pub fn add(
        &self,
        g: &mut Graph,
        y: &[f64],
        d: usize,
        mask: Option<&[bool]>,
    ) -> Result<PcaNodes, BuildError> {
        self.add_values(g, y.to_vec(), d, mask)
    }

    /// [`Pca::add`] taking `y` over as the model's data (no copy, see [`Graph::observe_values`]).
    pub fn add_values(
        &self,
        g: &mut Graph,
        y: Vec<f64>,
        d: usize,
        mask: Option<&[bool]>,
    ) -> Result<PcaNodes, BuildError> {
        let dp = g.try_plate("D", d)?;
        let np = g.try_plate("N", y.len() / d.max(1))?;
        let qp = g.try_plate("Q", self.q)?;
        let (shape, rate) = self.gamma_prior;
        let alpha = g.add("alpha", Gamma { shape }, &[qp], [p_const(rate)])?;
        let ard = GaussianArd { d: self.q };
        let w = g.add("W", ard.clone(), &[dp], [p_const(0.0), p(alpha)])?;
        let x = g.add("X", ard, &[np], [p_const(0.0), p_const(1.0)])?;
        let tau = g.add("tau", Gamma { shape }, &[], [p_const(rate)])?;
        let f = g.deterministic("F", Dot { d: self.q }, &[dp, np], [p(w), p(x)])?;
        let y_node = g.add("y", Gaussian, &[dp, np], [p(f), p(tau)])?;
        g.observe_values(y_node, y, mask)?;
        Ok(PcaNodes {
            alpha,
            w,
            x,
            tau,
            y: y_node,
        })
    }
}
