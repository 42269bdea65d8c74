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
    /// The model observes nothing: the posterior is the prior.
    NothingObserved {
        /// The model file.
        model: String,
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
            Warning::NothingObserved { model } => write!(
                f,
                "{model} observes nothing (no `observe`, no `from data`): the posterior is the prior"
            ),
        }
    }
}

impl From<occam_core::prelude::Warning> for Warning {
    fn from(w: occam_core::prelude::Warning) -> Self {
        Warning::Run(w)
    }
}
