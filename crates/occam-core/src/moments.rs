//! Moment kinds: the message protocol between nodes (Winn §2.1.3, footnote 4).
//!
//! A node's moment vector ⟨u⟩ is what its children receive. Its layout is fixed per kind, so no
//! message ever needs a change of basis. Conjugacy is checked at build time by comparing kinds.

mod value;
pub use value::ValueError;

use std::fmt;

/// The layout of a moment (natural-statistic) vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum MomentKind {
    /// u = [x, col(x xᵀ)] for a d-vector (d = 1: u = [x, x²]).
    Gaussian {
        /// Event dimension.
        d: usize,
    },
    /// u = [x, log x].
    Gamma,
    /// u = [col(Λ), log|Λ|] for a d×d positive-definite matrix.
    Wishart {
        /// Event dimension.
        d: usize,
    },
    /// u = [log p_1, …, log p_k] (k = 2 for a Beta variable: [log p, log(1−p)]).
    Dirichlet {
        /// Number of categories.
        k: usize,
    },
    /// u = [δ(x=1), …, δ(x=k)] (one-hot), so ⟨u⟩ = Q(x = ·).
    Categorical {
        /// Number of categories.
        k: usize,
    },
    /// u = [s, ln a, ln Γ(s), s ln s] of a latent a whose multiple s = c·a is the shape of Gamma
    /// children (Winn Example 2.1, (2.68)); c is a constant of the latent's family (1 for a fixed
    /// value, the shape itself), and the children read s, ln Γ(s) and s ln s only.
    GammaShape,
    /// u = \[x\] for counts and other scalars with no conjugate children (Bernoulli, Binomial,
    /// Poisson, Exponential).
    Scalar,
}

impl MomentKind {
    /// Length of the moment vector.
    pub fn len(self) -> usize {
        match self {
            MomentKind::Gaussian { d } => d + d * d,
            MomentKind::Gamma => 2,
            MomentKind::Wishart { d } => d * d + 1,
            MomentKind::Dirichlet { k } | MomentKind::Categorical { k } => k,
            MomentKind::Scalar => 1,
            MomentKind::GammaShape => 4,
        }
    }

    /// Never true; a moment vector has at least one entry.
    pub fn is_empty(self) -> bool {
        false
    }

    /// Number of values a fixed (observed or constant) value of this kind holds.
    pub fn value_len(self) -> usize {
        match self {
            MomentKind::Gaussian { d } => d,
            MomentKind::Gamma | MomentKind::Scalar | MomentKind::GammaShape => 1,
            MomentKind::Wishart { d } => d * d,
            MomentKind::Dirichlet { k } => k,
            MomentKind::Categorical { .. } => 1,
        }
    }

    /// Moments u(x) of a fixed value x (a constant parent), Winn §2.1.2 (an observed node's u(x) is used directly).
    pub fn fixed_moments(self, x: &[f64]) -> Result<Vec<f64>, ValueError> {
        if x.len() != self.value_len() {
            return Err(ValueError::Count {
                kind: self,
                expected: self.value_len(),
                got: x.len(),
            });
        }
        if let Some(bad) = x.iter().find(|v| !v.is_finite()) {
            return Err(ValueError::NotFinite { value: *bad });
        }
        Ok(match self {
            MomentKind::Gaussian { d } => {
                let mut u = x.to_vec();
                for i in 0..d {
                    for j in 0..d {
                        u.push(x[i] * x[j]);
                    }
                }
                u
            }
            MomentKind::Gamma => {
                if x[0] <= 0.0 {
                    return Err(ValueError::NotPositive { value: x[0] });
                }
                vec![x[0], x[0].ln()]
            }
            MomentKind::Wishart { d } => {
                let chol =
                    crate::linalg::Cholesky::new(x, d).ok_or(ValueError::NotPositiveDefinite)?;
                let mut u = x.to_vec();
                u.push(chol.log_det());
                u
            }
            MomentKind::Dirichlet { .. } => {
                let s: f64 = x.iter().sum();
                if x.iter().any(|&p| p <= 0.0) || (s - 1.0).abs() > 1e-9 {
                    return Err(ValueError::NotOnSimplex);
                }
                x.iter().map(|p| p.ln()).collect()
            }
            MomentKind::Categorical { k } => {
                let c = x[0];
                if c < 0.0 || c.fract() != 0.0 || c >= k as f64 {
                    return Err(ValueError::NotCategoryIndex { value: c, k });
                }
                let mut u = vec![0.0; k];
                u[c as usize] = 1.0;
                u
            }
            MomentKind::Scalar => vec![x[0]],
            MomentKind::GammaShape => {
                if x[0] <= 0.0 {
                    return Err(ValueError::NotPositive { value: x[0] });
                }
                shape_stats(x[0], 1.0).to_vec()
            }
        })
    }
}

/// The statistics of a Gamma shape a read by its children ([`MomentKind::GammaShape`]):
/// u(a) = [s, ln a, ln Γ(s), s ln s] with s = c·a (Winn Example 2.1; module `dist::shape_quad`
/// takes their expectations).
pub fn shape_stats(a: f64, c: f64) -> [f64; 4] {
    let s = c * a;
    [s, a.ln(), crate::special::ln_gamma(s), s * s.ln()]
}

impl fmt::Display for MomentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MomentKind::Gaussian { d: 1 } => write!(f, "Gaussian (scalar)"),
            MomentKind::Gaussian { d } => write!(f, "Gaussian ({d}-vector)"),
            MomentKind::Gamma => write!(f, "Gamma"),
            MomentKind::Wishart { d } => write!(f, "Wishart ({d}×{d})"),
            MomentKind::Dirichlet { k: 2 } => write!(f, "Beta/Dirichlet (2 categories)"),
            MomentKind::Dirichlet { k } => write!(f, "Dirichlet ({k} categories)"),
            MomentKind::Categorical { k } => write!(f, "Categorical ({k} categories)"),
            MomentKind::Scalar => write!(f, "scalar"),
            MomentKind::GammaShape => write!(f, "Gamma shape"),
        }
    }
}
