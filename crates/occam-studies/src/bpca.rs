//! Bayesian PCA (Winn §3.2, Bishop's ARD prior on the columns of W) fitted by the generic VMP
//! engine from a model in the language, and the effective-dimension study of Winn Fig. 3.3.
//!
//! The model is Winn (3.5)–(3.8): t_n = W x_n + μ + ε, x_n ~ N(0, I_q), columns w_i of W with
//! precision α_i ~ Γ(10⁻³, 10⁻³), μ ~ N(0, 10⁻³ I), noise precision τ ~ Γ(10⁻³, 10⁻³), and
//! q = d − 1, the largest latent dimension. Its text is [`model_source`]; the same model is
//! `examples/bpca/bpca.occam` for 10-D data.

use occam::data::DataSet;
use occam::error::{Error, Result};
use occam::latent::ard::{self, Ard};
use occam::latent::mbpca::{self, Priors};
use occam::latent::synth::{self, Matrix};
use occam::{Fitted, Model, Settings};
use occam_report::figure::{Figure, Reference, Series};

/// The BPCA model text for `q` latent dimensions (data `y`, N × D).
pub fn model_source(q: usize) -> String {
    format!(
        "# Bayesian PCA with ARD on the columns of W (Winn (3.5)-(3.8)).
plates N, D from data y
plate Q = {q}
alpha[Q] ~ Gamma(shape = 1e-3, rate = 1e-3)
W[D] over Q ~ GaussianARD(mean = 0, precision = alpha)
X[N] over Q ~ GaussianARD(mean = 0, precision = 1)
mu[D] ~ Gaussian(mean = 0, precision = 1e-3)
tau ~ Gamma(shape = 1e-3, rate = 1e-3)
y[N, D] ~ Gaussian(mean = dot(W[D], X[N]) + mu[D], precision = tau)
init X = random(scale = 1, seed = 7)
"
    )
}

/// What a BPCA fit reports.
pub struct BpcaFit {
    /// The fitted model.
    pub fitted: Fitted,
    /// The ARD summary of `alpha`.
    pub ard: Ard,
    /// The inferred noise standard deviation, 1/√⟨τ⟩.
    pub noise_std: f64,
}

/// Fits BPCA with q = d − 1 to the rows of `x`.
pub fn fit(x: &Matrix, settings: &Settings) -> Result<BpcaFit> {
    if x.cols < 2 || x.rows < 2 {
        return Err(Error::Usage(format!(
            "Bayesian PCA needs at least 2 points in at least 2 dimensions, got {} × {}",
            x.rows, x.cols
        )));
    }
    let mut data = DataSet::new();
    data.insert_array("y", x.rows, x.cols, x.values.clone(), None)?;
    let model = Model::from_source("bpca.occam", &model_source(x.cols - 1), &data)?;
    let fitted = model.fit(settings)?;
    let ard = ard::ard(fitted.loaded(), fitted.compiled())
        .into_iter()
        .next()
        .ok_or_else(|| Error::Run("Bayesian PCA: no ARD variable found".into()))?;
    let tau = fitted
        .posterior("tau")?
        .param("mean")
        .map(|p| p.values[0])
        .ok_or_else(|| Error::Run("Bayesian PCA: no posterior mean of tau".into()))?;
    Ok(BpcaFit {
        fitted,
        ard,
        noise_std: 1.0 / tau.sqrt(),
    })
}

/// One point of the effective-dimension curve.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DimensionPoint {
    /// Number of data points.
    pub n: usize,
    /// Effective dimension of each data set.
    pub dimensions: Vec<usize>,
    /// Their mean.
    pub mean: f64,
}

/// Winn Fig. 3.3: the mean effective dimension of BPCA over `sets` data sets of each size in
/// `ns` (10-D, per-axis standard deviations 1.0, 0.9, …, 0.1). Data set s of size n is drawn
/// from seed `seed + s` (the first n points of a common draw, so the curve is paired in N).
///
/// Each fit is the one-component mixture of [`mbpca`], which is this same model with the same
/// factorisation (its converged bound equals the engine's, `tests/it/mbpca.rs`), started from the
/// principal axes rather than at random, so no restarts are needed.
pub fn dimension_curve(ns: &[usize], sets: usize, seed: u64) -> Result<Vec<DimensionPoint>> {
    let most = ns.iter().copied().max().unwrap_or(0);
    let draws: Vec<Matrix> = (0..sets as u64)
        .map(|s| synth::winn_fig33(most, seed + s))
        .collect();
    ns.iter()
        .map(|&n| {
            let dimensions = draws
                .iter()
                .zip(0u64..)
                .map(|(full, s)| {
                    let x = Matrix {
                        rows: n,
                        cols: full.cols,
                        values: full.values[..n * full.cols].to_vec(),
                    };
                    let mut m = mbpca::initialise(&x, 1, x.cols - 1, Priors::default(), s)?;
                    m.run(&x, 5000, 1e-9)?;
                    Ok(ard::effective_dimension(&m.relevance()))
                })
                .collect::<Result<Vec<usize>>>()?;
            let mean = dimensions.iter().sum::<usize>() as f64 / sets.max(1) as f64;
            Ok(DimensionPoint {
                n,
                dimensions,
                mean,
            })
        })
        .collect()
}

/// The curve as a line chart (SVG text), with the largest possible dimension q = 9 marked.
pub fn dimension_figure(curve: &[DimensionPoint]) -> String {
    let sets = curve.first().map_or(0, |p| p.dimensions.len());
    occam_report::figure::line_chart(&Figure {
        title: format!("Bayesian PCA: effective dimension against N (mean of {sets} data sets)"),
        x_label: "number of data points N".into(),
        y_label: "effective dimension".into(),
        series: vec![Series::new(
            "BPCA, 1/α above ¼ of the largest",
            curve.iter().map(|p| (p.n as f64, p.mean)).collect(),
        )],
        references: vec![Reference {
            label: "q = d − 1 = 9".into(),
            y: 9.0,
        }],
    })
}
