//! Estimates of the log evidence ln p(D | m) of a fitted model beyond the VB bound, each labelled
//! with what it is ([`Kind`]: exact, lower bound, estimate ± standard error, asymptotic) and what
//! it cost (seconds):
//!
//! | method | what | applies to |
//! |---|---|---|
//! | `vb` | the VB bound L (Winn (1.8): ln p(D) − KL(q ‖ p)) | every model |
//! | `vbsym` | L + ln(K!/Π m_g!): the bound corrected for the K! relabelled modes of a mixture (module `relabel`) | mixtures |
//! | `exact` | closed form of a one-layer conjugate model; all K^N assignments of a small mixture (module `exact`) | recognised models |
//! | `laplace` | F(η*) + (d/2) ln 2π − ½ ln \|A\| at the MAP in unconstrained coordinates (module `laplace`), + ln K!/Π m_g! for a mixture | recognised models |
//! | `bic` | ln p(D \| θ̂) − (d/2) ln N at q's mean θ̂ (Sahani, "BIC") | recognised models |
//! | `cs` | Cheeseman–Stutz from q's expected statistics (module `cs`; a chain's from forward–backward at q's mean, module `hmm_cs`) | recognised conjugate models |
//! | `is` | importance sampling from the widened, relabelling-symmetric q (module `importance`) | recognised models |
//! | `ais` | annealed importance sampling from the prior along the collapsed power posteriors, Hamiltonian and re-seeding transitions (module `ais_hmc`; `Options::ais_moves` = Gibbs: module `ais`, a mixture's chains from q, module `ais_q`) | recognised (semi-)conjugate models |
//! | `cv` | K-fold cross-validation: Σ_i ln p(x_i \| other folds) under q (module `cv`); not ln p(D) | recognised models |
//!
//! "Recognised" is module `flat`: rows of observations whose parameters have constant-hyperparameter
//! priors (Gaussian, Normal–Gamma, Gamma, Beta, Dirichlet), shared by every row or chosen per
//! row by one Categorical index. A method that does not apply returns
//! [`Evidence::NotApplicable`] with the reason, never an error.

mod ais;
mod ais_chain;
mod ais_draw;
mod ais_hmc;
mod ais_q;
#[cfg(test)]
mod ais_q_tests;
mod ais_run;
mod average;
mod average_rows;
mod collapsed;
#[cfg(test)]
mod collapsed_tests;
mod conjugate;
mod cs;
mod cv;
mod density;
mod estimate;
mod exact;
mod flat;
mod hmm;
mod hmm_cs;
mod hmm_exact;
#[cfg(test)]
mod hmm_tests;
mod importance;
#[cfg(test)]
mod importance_tests;
mod laplace;
#[cfg(test)]
mod laplace_tests;
mod margin;
mod not_applicable;
mod permanent;
mod proposal;
mod qdensity;
mod relabel;
mod sweep;
mod table;
mod unconstrained;

pub use average::average;
pub use average_rows::{average_rows, Averaged};
pub use estimate::{estimate, free_parameters};
pub use margin::{margins, Margin, WEAK_NATS};
pub use not_applicable::NotApplicable;
pub use sweep::{fit_swept, WarmStart};
pub use table::{compare_evidence, set_probabilities, weights, EvidenceRow};

use crate::error::{Error, Result};
use crate::fitted::Fitted;

/// An evidence estimator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// The VB bound.
    Vb,
    /// The VB bound plus the mixture relabelling count.
    VbSym,
    /// Exact: closed form or enumeration.
    Exact,
    /// Laplace's approximation at the MAP.
    Laplace,
    /// The Bayesian information criterion.
    Bic,
    /// Cheeseman–Stutz.
    Cs,
    /// Importance sampling.
    Is,
    /// Annealed importance sampling.
    Ais,
    /// K-fold cross-validation (held-out log predictive density; not an evidence).
    Cv,
}

impl Method {
    /// Every method, in table order.
    pub const ALL: [Method; 9] = [
        Method::Vb,
        Method::VbSym,
        Method::Exact,
        Method::Laplace,
        Method::Bic,
        Method::Cs,
        Method::Is,
        Method::Ais,
        Method::Cv,
    ];

    /// The name on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Method::Vb => "vb",
            Method::VbSym => "vbsym",
            Method::Exact => "exact",
            Method::Laplace => "laplace",
            Method::Bic => "bic",
            Method::Cs => "cs",
            Method::Is => "is",
            Method::Ais => "ais",
            Method::Cv => "cv",
        }
    }

    /// The method named `s`.
    pub fn parse(s: &str) -> Result<Method> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| {
                Error::Usage(format!(
                    "method: unknown `{s}` (methods: {})",
                    Method::ALL.map(Method::name).join(", ")
                ))
            })
    }
}

/// What an estimate is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The log evidence itself (to rounding).
    Exact,
    /// A lower bound on it.
    LowerBound,
    /// `vb`'s bound when some of its terms are importance-sampled estimates (Student-t
    /// observations, truncated-Gaussian and two-component mixture priors): an estimate of the
    /// ELBO, neither equal to it nor guaranteed below ln p(D).
    Approximate,
    /// A lower bound when the mixture's relabelled modes are separated.
    SeparatedBound,
    /// A random estimate with a standard error.
    Estimate,
    /// Correct up to O(1) as the data grow.
    Asymptotic,
    /// Correct up to O(1/N) as the data grow (a Gaussian at the mode: Laplace).
    SecondOrder,
    /// Not ln p(D): Σ_i ln p(x_i | the other folds), cross-validation's estimate of N times the
    /// expected log predictive density of a new row, ± its standard error across rows.
    HeldOut,
}

impl Kind {
    /// Whether an estimate of this kind is (a bound on or an estimate of) ln p(D | m), so that a
    /// softmax of it gives posterior model probabilities; a held-out score is not. An
    /// approximate bound estimates the ELBO, so it ranks, but [`compare_evidence`] ranks it
    /// beside bounds of other kinds only with `mixed_bounds`.
    pub fn is_log_evidence(self) -> bool {
        self != Kind::HeldOut
    }

    /// How tables print it.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Exact => "exact",
            Kind::LowerBound => "lower bound",
            Kind::Approximate => "approximate (IS)",
            Kind::SeparatedBound => "bound if separated",
            Kind::Estimate => "estimate",
            Kind::Asymptotic => "asymptotic",
            Kind::SecondOrder => "asymptotic O(1/N)",
            Kind::HeldOut => "held-out, not ln p",
        }
    }
}

/// One estimate of ln p(D | m).
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The method.
    pub method: Method,
    /// What it is.
    pub kind: Kind,
    /// ln p(D | m), nats.
    pub log_evidence: f64,
    /// Standard error of `log_evidence` (sampling methods).
    pub se: Option<f64>,
    /// Effective sample size (sampling methods).
    pub ess: Option<f64>,
    /// Seconds it took (for `vb`, the fit).
    pub seconds: f64,
    /// What it assumed or used.
    pub note: String,
    /// A sampling estimate whose weights are carried by too few draws or chains (importance
    /// sampling: ESS < [`RELIABLE_ESS`]; AIS: ESS below a quarter of the chains): its standard
    /// error understates the error.
    pub unreliable: bool,
}

/// An estimate, or why the method does not apply.
#[derive(Clone, Debug, PartialEq)]
pub enum Evidence {
    /// The estimate.
    Estimate(Estimate),
    /// The method does not apply.
    NotApplicable {
        /// The method.
        method: Method,
        /// Why.
        reason: String,
    },
}

/// The word that marks each flag in an unreliable estimate's note.
const UNRELIABLE: &str = "UNRELIABLE";

/// Below this effective sample size an importance-sampling estimate is flagged unreliable: q is
/// far from the posterior and the standard error understates the error.
pub const RELIABLE_ESS: f64 = 100.0;

impl Evidence {
    /// Whether the estimate is a sampling estimate flagged [`Estimate::unreliable`].
    pub fn unreliable(&self) -> bool {
        matches!(self, Evidence::Estimate(e) if e.unreliable)
    }

    /// The estimate's ln p(D | m), if any.
    pub fn value(&self) -> Option<f64> {
        match self {
            Evidence::Estimate(e) => Some(e.log_evidence),
            Evidence::NotApplicable { .. } => None,
        }
    }

    /// The method.
    pub fn method(&self) -> Method {
        match self {
            Evidence::Estimate(e) => e.method,
            Evidence::NotApplicable { method, .. } => *method,
        }
    }
}

/// The transitions of annealed importance sampling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AisMoves {
    /// [`AisMoves::Hmc`] when every Gamma shape and every Beta or Dirichlet concentration of the
    /// priors is at least 1, else [`AisMoves::Gibbs`]: a shape a < 1 puts prior mass at
    /// ln τ → −∞ (ln G(a) ≈ ln U / a), draws from which Hamiltonian moves do not bring back
    /// within the schedule (the VIBES tutorial's Gamma(0.001, 0.001): −6170.8 at K = 1 against
    /// `is`'s −2636.6), while Gibbs draws each parameter from its conditional in one step.
    #[default]
    Auto,
    /// Hamiltonian moves on the unconstrained parameters with the mixture index summed out, and
    /// re-seeding of a component from its prior (module `ais_hmc`).
    Hmc,
    /// Gibbs sweeps over the mixture index (a chain's state paths, by forward filtering,
    /// backward sampling: module `ais_chain`) and each conjugate parameter (module `ais`).
    Gibbs,
}

impl AisMoves {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            AisMoves::Auto => "auto",
            AisMoves::Hmc => "hmc",
            AisMoves::Gibbs => "gibbs",
        }
    }

    /// The moves named `s`.
    pub fn parse(s: &str) -> Result<AisMoves> {
        match s.trim() {
            "auto" => Ok(AisMoves::Auto),
            "hmc" => Ok(AisMoves::Hmc),
            "gibbs" => Ok(AisMoves::Gibbs),
            _ => Err(Error::Usage(format!(
                "ais moves: unknown `{s}` (auto, hmc, gibbs)"
            ))),
        }
    }
}

/// Options of the estimators.
#[derive(Clone, Debug)]
pub struct Options {
    /// Importance-sampling draws.
    pub samples: usize,
    /// Seed of the draws.
    pub seed: u64,
    /// Variance inflation of the proposal over q (≥ 1).
    pub widen: f64,
    /// Largest number of assignments `exact` enumerates.
    pub max_assignments: u64,
    /// The prior's share of the importance-sampling proposal (defensive sampling, in [0, 1)).
    pub defensive: f64,
    /// Temperatures of annealed importance sampling (Gibbs sweeps per chain).
    pub temperatures: usize,
    /// Chains of annealed importance sampling.
    pub chains: usize,
    /// The transitions of annealed importance sampling.
    pub ais_moves: AisMoves,
    /// Folds of cross-validation.
    pub folds: usize,
    /// Settings of cross-validation's fits on K − 1 folds (`None`: the defaults with `seed`);
    /// [`compare_evidence`] passes the comparison's own.
    pub refit: Option<crate::driver::Settings>,
    /// Whether [`compare_evidence`] ranks the bounds (`vb`, `vbsym`) of fits whose bounds are of
    /// different kinds (exact, lower bound, approximate); refused otherwise
    /// ([`crate::check_kinds`], `--mixed-bounds`).
    pub mixed_bounds: bool,
    /// The plate the models of a sweep differ in (`compare --plate`): [`compare_evidence`] fits
    /// each size after a smaller one from a warm start too and keeps the higher bound (module
    /// `sweep`).
    pub plate: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            samples: 20_000,
            seed: 0,
            widen: 2.0,
            max_assignments: 1 << 22,
            defensive: 0.1,
            temperatures: 1000,
            chains: 64,
            ais_moves: AisMoves::Auto,
            folds: 5,
            refit: None,
            mixed_bounds: false,
            plate: None,
        }
    }
}

impl Options {
    /// Checks the domains.
    pub fn validate(&self) -> Result<()> {
        if self.samples < 2 {
            return Err(Error::Usage("samples: give at least 2".into()));
        }
        if !(self.widen >= 1.0 && self.widen.is_finite()) {
            return Err(Error::Usage("widen: give a finite number ≥ 1".into()));
        }
        if !(0.0..1.0).contains(&self.defensive) {
            return Err(Error::Usage("defensive: give a share in [0, 1)".into()));
        }
        if !(1..=1_000_000).contains(&self.temperatures) {
            return Err(Error::Usage("temperatures: give 1 to 1000000".into()));
        }
        if !(2..=1_000_000).contains(&self.chains) {
            return Err(Error::Usage("chains: give 2 to 1000000".into()));
        }
        if self.folds < 2 {
            return Err(Error::Usage("folds: give at least 2".into()));
        }
        Ok(())
    }
}
