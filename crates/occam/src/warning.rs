//! What a user should know about a fit that nevertheless ran: the engine's warnings (a bound
//! decrease and its size, no convergence) and the model's (data that the model ignores, nothing
//! observed). Typed values; their `Display` is the text the CLI prints.

use serde::Serialize;

/// A warning about a model or a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// From the run loop.
    Run(occam_core::prelude::Warning),
    /// Data named like a variable that the model does not observe, so the fit ignores it.
    DataNotObserved {
        /// The variable.
        variable: String,
        /// Where the model declares it (`file:line:column`).
        location: String,
        /// The data file.
        file: String,
    },
    /// A product of latent factors (`dot`, `@`, `*`) ended identically zero: every factor's mean is
    /// 0, the saddle where zero-mean starts stay (Occam draws one factor at random by default, so
    /// this follows from a model's own `init` or from data the product cannot explain).
    ProductAtZero {
        /// The variable whose definition holds the product, with its place (`file:line:column`).
        variable: String,
        /// Where it is declared.
        location: String,
        /// The product's latent factors.
        factors: Vec<String>,
    },
    /// Restarts ended with very different numbers of mixture components in use (one at most half
    /// of another's).
    UnevenRestarts {
        /// Components in use at the end of each restart.
        components: Vec<usize>,
        /// The first restart's seed (restart r uses seed + r).
        seed: u64,
    },
    /// The model observes nothing: the posterior is the prior.
    NothingObserved {
        /// The model file.
        model: String,
    },
    /// The first column of a data file looks like a row index (an R or pandas export: an empty,
    /// `rownames`-like header, or the values 1..N or 0..N−1), yet it is read as data.
    IndexColumn {
        /// The variable the data are attached to.
        variable: String,
        /// The data file.
        file: String,
        /// The column's header (empty when unnamed or when the file has no header).
        header: String,
        /// Its first and last values.
        first: f64,
        /// Its last value.
        last: f64,
        /// Columns of the file, the index included.
        columns: usize,
    },
    /// Every value of an observed variable is missing: the data inform nothing.
    AllMissing {
        /// The variable.
        variable: String,
        /// The data file.
        file: String,
        /// Number of values, all missing.
        values: usize,
    },
    /// Components (or states) selected by a mixture index or a discrete chain ended identical:
    /// the fit never broke the symmetry between them, so it describes one component K times.
    IdenticalComponents {
        /// The index (mixture index or chain).
        index: String,
        /// The variables whose components are identical.
        selected: Vec<String>,
        /// Number of components.
        components: usize,
    },
    /// The run stopped (converged by the tolerance, or at the iteration limit) while the bound was
    /// still rising at a steady pace: the changes of its last sweeps shrink so slowly that, were
    /// they to go on shrinking at that rate, the bound would still gain `projected` nats (ARD's
    /// slow crawl, a mixture component slowly emptying).
    StillRising {
        /// The bound's change over the last sweep (nats).
        last_change: f64,
        /// The median ratio of successive changes over the last sweeps.
        ratio: f64,
        /// The gain still to come if the changes keep shrinking by `ratio` per sweep
        /// (last_change · ratio / (1 − ratio); infinite for a ratio of 1 or more).
        projected: f64,
    },
    /// Restarts were asked for, but nothing in the model's start depends on the seed (no random
    /// draw, no k-means start), so every restart repeats one fit.
    RestartsIdentical {
        /// Number of restarts.
        restarts: usize,
        /// The bound of that fit.
        bound: f64,
    },
    /// The fit was stopped (a callback, Ctrl-C) during a pruning trial or a further candidate
    /// start: the result is that trial's q, not the best state found so far.
    StoppedInTrial {
        /// The stage it was stopped in (`Pruning`, `Candidate`).
        stage: String,
    },
    /// An importance-sampled node ended with S_eff below the target (its S reached the cap, or every
    /// larger pass failed): its moments and bound term carry a larger Monte Carlo error than asked for.
    SamplesCapped {
        /// The node.
        variable: String,
        /// Its smallest S_eff.
        s_eff: f64,
        /// The S of that element (chosen at its first update: below `cap`, S_eff reached the
        /// target then and fell since).
        samples: usize,
        /// The target S_eff.
        target: f64,
        /// The cap on S.
        cap: usize,
    },
    /// A gated q-block (`q joint(s, x)`) ended with components out of use: a mixture of PCA
    /// empties components from a poor start (one with the loadings at 0 collapses onto one
    /// component) as well as when the data need fewer, and one fit cannot tell which.
    GatedCollapsed {
        /// The block's index variable.
        index: String,
        /// Components in use (expected count ≥ 1).
        in_use: usize,
        /// Components in the model.
        total: usize,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::Run(w) => w.fmt(f),
            Warning::DataNotObserved {
                variable,
                location,
                file,
            } => write!(
                f,
                "{file} holds data for `{variable}`, but `{variable}` ({location}) is latent, so the fit ignores it; add `observe {variable}` to use it"
            ),
            Warning::ProductAtZero {
                variable,
                location,
                factors,
            } => write!(
                f,
                "the product of {} in `{variable}` ({location}) is zero at the end of the fit: every factor's mean is 0, a saddle of the bound that zero-mean starts never leave; start one factor away from zero (`init {} = random`)",
                factors.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(" and "),
                factors.last().map_or("X", String::as_str)
            ),
            Warning::UnevenRestarts { components, seed } => write!(
                f,
                "restarts ended with very different numbers of mixture components in use ({}; restart r uses seed {seed} + r): the result depends on the start, so compare bounds only after enough restarts (--restarts)",
                components
                    .iter()
                    .enumerate()
                    .map(|(r, c)| format!("restart {r}: {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Warning::NothingObserved { model } => write!(
                f,
                "{model} observes nothing (no `observe`, no `from data`): the posterior is the prior"
            ),
            Warning::IndexColumn {
                variable,
                file,
                header,
                first,
                last,
                columns,
            } => {
                let name = if header.is_empty() {
                    "unnamed".to_string()
                } else {
                    format!("`{header}`")
                };
                write!(
                    f,
                    "the first column of {file} ({name}, {first} to {last}) looks like a row index, yet it is read as data of `{variable}` (one of its {columns} columns); remove it from the file, choose the other columns (`--data {variable}=FILE:2-{columns}`), or write it without row names (R `row.names = FALSE`, pandas `index=False`) if it is not a measurement"
                )
            }
            Warning::AllMissing {
                variable,
                file,
                values,
            } => write!(
                f,
                "every one of the {values} values of `{variable}` in {file} is missing: the fit observes none of them, so they inform nothing"
            ),
            Warning::IdenticalComponents {
                index,
                selected,
                components,
            } => write!(
                f,
                "the {components} components of {} selected by `{index}` ended identical: the fit never broke the symmetry between them and describes one component {components} times; start them apart (`init {} = random`) or try other seeds (--restarts)",
                selected.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", "),
                selected.first().map_or("mu", String::as_str)
            ),
            Warning::StillRising {
                last_change,
                ratio,
                projected,
            } => {
                let gain = if projected.is_finite() {
                    format!("about {projected:.3} nats more")
                } else {
                    "without limit".to_string()
                };
                write!(
                    f,
                    "the run stopped while the bound was still rising steadily (last sweep +{last_change:.3e}, each change {ratio:.4} of the one before: {gain} if that goes on); the result may sit on a slow crawl rather than at an optimum: lower --tol, raise --max-iter, or rotate the factors of a product (on by default where they apply)"
                )
            }
            Warning::StoppedInTrial { stage } => write!(
                f,
                "the fit was stopped during a trial ({stage} stage): the result is the trial's state, whose bound is a true lower bound but may be below the best state found before it"
            ),
            Warning::RestartsIdentical { restarts, bound } => write!(
                f,
                "the {restarts} restarts cannot differ: nothing in the model's start depends on the seed, so each repeats one fit (L = {bound}); give a variable a random start (`init NAME = random`) for restarts to explore"
            ),
            Warning::GatedCollapsed {
                index,
                in_use,
                total,
            } => write!(
                f,
                "the gated q-block of `{index}` ends with {in_use} of {total} components in use: a mixture of PCA also empties components when it starts badly (its loadings near 0), so compare bounds over more --restarts, and over fewer components, before reading this as fewer clusters"
            ),
            Warning::SamplesCapped {
                variable,
                s_eff,
                samples,
                target,
                cap,
            } if samples < cap => write!(
                f,
                "the importance sampler of `{variable}` ended with an effective sample size of {s_eff:.0}, below the target {target:.0}: S = {samples} was chosen at its first update (where S_eff reached the target or every larger pass failed) and is kept for the fit; S_eff fell to {s_eff:.0} since, as the posterior moved away from where the proposal was fitted, so its moments and bound term are noisier than asked for"
            ),
            Warning::SamplesCapped {
                variable,
                s_eff,
                target,
                cap,
                ..
            } => write!(
                f,
                "the importance sampler of `{variable}` ended with an effective sample size of {s_eff:.0}, below the target {target:.0}, with S at the cap {cap}: its moments and bound term are noisier than asked for (the proposal fits the posterior poorly)"
            ),
        }
    }
}

impl From<occam_core::prelude::Warning> for Warning {
    fn from(w: occam_core::prelude::Warning) -> Self {
        Warning::Run(w)
    }
}
