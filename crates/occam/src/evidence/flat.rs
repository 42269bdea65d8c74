//! The models whose evidence can be estimated beyond the VB bound: a resolved model recognised
//! as rows `N` of observations, each with parameters from constant-hyperparameter priors, either
//! shared by all rows (a one-layer model) or chosen per row by one Categorical index `z[N]` over
//! components `K` (a finite mixture). Every other shape is refused with the reason, which the
//! estimators return as "not applicable".

mod observation;
mod recognise;

pub(crate) use recognise::recognise;

/// A parameter's prior (its hyperparameters are constants).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Prior {
    /// `Gaussian(mean, precision)`.
    Gaussian { mean: f64, precision: f64 },
    /// `Gaussian(mean, kappa * tau)`: with `tau` a Gamma parameter of the same layout, the
    /// Normal–Gamma prior.
    NormalGamma { mean: f64, kappa: f64, tau: usize },
    /// `Gamma(shape, rate)`.
    Gamma { shape: f64, rate: f64 },
    /// `Beta(alpha, beta)`.
    Beta { a: f64, b: f64 },
    /// `Dirichlet(concentration)` over `width` categories.
    Dirichlet { alpha: f64, width: usize },
}

/// One parameter variable: elements laid out component-major (`k * cols + d`).
#[derive(Clone, Debug)]
pub(crate) struct Param {
    /// Variable index in the model.
    pub var: usize,
    /// Its name.
    pub name: String,
    /// Its prior.
    pub prior: Prior,
    /// One element per component (plate `K`)?
    pub by_k: bool,
    /// Elements along the column plate (1 without one).
    pub cols: usize,
}

impl Param {
    /// Values per element (categories for a Dirichlet, else 1).
    pub fn width(&self) -> usize {
        match self.prior {
            Prior::Dirichlet { width, .. } => width,
            _ => 1,
        }
    }

    /// The element read by component `k` and column `d`.
    pub fn element(&self, k: usize, d: usize) -> usize {
        let k = if self.by_k { k } else { 0 };
        let d = if self.cols > 1 { d } else { 0 };
        k * self.cols + d
    }

    /// Free parameters per element (a Dirichlet's weights sum to 1).
    pub fn free(&self) -> usize {
        match self.prior {
            Prior::Dirichlet { width, .. } => width - 1,
            _ => 1,
        }
    }
}

/// A slot of an observation's distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Slot {
    /// A constant.
    Const(f64),
    /// A parameter (index into [`Flat::params`]).
    Param(usize),
}

/// An observation's distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Lik {
    /// `Gaussian(mean, precision)`.
    Gaussian { mean: Slot, precision: Slot },
    /// `Bernoulli(prob)`.
    Bernoulli(Slot),
    /// `Poisson(rate)`.
    Poisson(Slot),
    /// `Categorical(probs)` with values 0..width.
    Categorical(Slot),
}

/// One observed variable, `x[N]` or `x[N, D]`.
#[derive(Clone, Debug)]
pub(crate) struct Obs {
    /// Its name.
    pub name: String,
    /// Its distribution.
    pub lik: Lik,
    /// Columns (1 or the size of `D`).
    pub cols: usize,
    /// Values, row-major, `n * cols`.
    pub values: Vec<f64>,
    /// Whether each value is present (missing values drop out of every estimator).
    pub present: Vec<bool>,
}

/// A recognised model.
#[derive(Clone, Debug)]
pub(crate) struct Flat {
    /// Rows.
    pub n: usize,
    /// Components (1 without a mixture index).
    pub k: usize,
    /// The mixture weights (a Dirichlet parameter) when rows choose a component.
    pub weights: Option<usize>,
    /// The name of the mixture index, when rows choose a component.
    pub index: Option<String>,
    /// The parameters.
    pub params: Vec<Param>,
    /// The observed variables.
    pub obs: Vec<Obs>,
    /// A hidden Markov chain over the components along the columns (module `hmm`), instead of
    /// an index drawn per row.
    pub chain: Option<super::hmm::Chain>,
}

impl Flat {
    /// Free parameters (BIC's d).
    pub fn dimension(&self) -> usize {
        self.params
            .iter()
            .map(|p| p.free() * if p.by_k { self.k } else { 1 } * p.cols)
            .sum()
    }

    /// Elements of parameter `p`.
    pub fn elements(&self, p: usize) -> usize {
        let q = &self.params[p];
        (if q.by_k { self.k } else { 1 }) * q.cols
    }
}
