//! The front door: [`Model`] (a model file or text with its data), and [`Model::fit`] returning
//! a [`Fitted`] model (bound, trace, per-node terms, every variable's posterior); comparing
//! several is [`compare`](crate::compare()). What a fit looks like (JSON, text, drawings,
//! `check`) is crate `occam-report`'s: it reads these results.

use std::path::Path;
use std::sync::Arc;

use occam_core::prelude::Observer;

use crate::data::DataSet;
use crate::driver::{self, Outcome, Settings};
use crate::error::{Error, Result};
use crate::lower::Compiled;
use crate::model::{self, Loaded};
use crate::posterior::{self, Posterior};

/// A model resolved against its data, ready to fit (cheap to clone).
#[derive(Clone)]
pub struct Model {
    loaded: Arc<Loaded>,
}

impl Model {
    /// Reads a model file; data come from `data` and, for observed names without data,
    /// `NAME.csv` next to the model.
    pub fn from_file(path: impl AsRef<Path>, data: &DataSet) -> Result<Model> {
        let path = path.as_ref();
        if !path.is_file() {
            return Err(Error::io(path, "no such model file"));
        }
        Ok(Model {
            loaded: Arc::new(model::load(path, data)?),
        })
    }

    /// A model from source text; `name` is what diagnostics print as the file name.
    pub fn from_source(name: &str, source: &str, data: &DataSet) -> Result<Model> {
        Ok(Model {
            loaded: Arc::new(model::load_source(
                Path::new(name),
                name.to_string(),
                source.to_string(),
                None,
                data,
            )?),
        })
    }

    /// The text `source` in place of the model file at `path` (an edited copy): diagnostics
    /// name `path`, and data come from `data` and `NAME.csv` next to `path`, as for
    /// [`Model::from_file`].
    pub fn from_edited(path: impl AsRef<Path>, source: &str, data: &DataSet) -> Result<Model> {
        let path = path.as_ref();
        let dir = path.parent().unwrap_or(Path::new("."));
        Ok(Model {
            loaded: Arc::new(model::load_source(
                path,
                path.display().to_string(),
                source.to_string(),
                Some(dir),
                data,
            )?),
        })
    }

    /// The loaded model (source, resolved model, attached data).
    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// The model's name as diagnostics print it.
    pub fn name(&self) -> &str {
        &self.loaded.file_name
    }

    /// The same model with plate `plate` (declared with a fixed size, `plate K = 3`) of size
    /// `size`: the text is re-resolved with the size replaced, against the same data. Named
    /// `FILE[PLATE=SIZE]`. Used by the plate sweep of `compare`.
    pub fn with_plate(&self, plate: &str, size: u64) -> Result<Model> {
        let l = &self.loaded;
        let ast = occam_lang::parse(&l.source, &l.file_name)?;
        let span = ast
            .statements
            .iter()
            .filter_map(|s| match s {
                occam_lang::ast::Stmt::Plates(p) => Some(&p.items),
                _ => None,
            })
            .flatten()
            .find(|i| i.name.name == plate)
            .map(|i| i.size.as_ref().map(|e| e.span));
        let span = match span {
            Some(Some(s)) => s,
            Some(None) => {
                return Err(Error::Usage(format!(
                    "plate: `{plate}` takes its size from data in {}; sweep a plate declared \
                     with a size (`plate {plate} = 3`)",
                    l.file_name
                )))
            }
            None => {
                return Err(Error::Usage(format!(
                    "plate: {} declares no plate `{plate}`",
                    l.file_name
                )))
            }
        };
        if size == 0 {
            return Err(Error::Usage("plate: sizes start at 1".into()));
        }
        let source = format!("{}{size}{}", &l.source[..span.start], &l.source[span.end..]);
        let name = format!("{}[{plate}={size}]", l.file_name);
        Ok(Model {
            loaded: Arc::new(model::load_source(&l.path, name, source, None, &l.data)?),
        })
    }

    /// The same model text against other data (re-resolved: plates sized from data take the
    /// new sizes). Cross-validation fits it on subsets of the rows.
    pub fn with_data(&self, data: &DataSet) -> Result<Model> {
        let l = &self.loaded;
        Ok(Model {
            loaded: Arc::new(model::load_source(
                &l.path,
                l.file_name.clone(),
                l.source.clone(),
                None,
                data,
            )?),
        })
    }

    /// Compiles and fits the model, calling `observer` after every sweep.
    pub fn fit_observed(&self, settings: &Settings, observer: &mut dyn Observer) -> Result<Fitted> {
        settings.validate()?;
        let mut compiled = self.loaded.compile(true)?;
        let outcome = driver::fit(&self.loaded, &mut compiled, settings, observer)?;
        Ok(Fitted {
            loaded: self.loaded.clone(),
            compiled,
            outcome,
        })
    }

    /// As [`Model::fit_observed`], but a fit the observer stops is returned, not lost: its
    /// `outcome.stop.reason` is [`crate::StopReason::Interrupted`] (see
    /// [`driver::fit_keeping_partial`]). Python's callbacks use it.
    pub fn fit_observed_keeping_partial(
        &self,
        settings: &Settings,
        observer: &mut dyn Observer,
    ) -> Result<Fitted> {
        settings.validate()?;
        let mut compiled = self.loaded.compile(true)?;
        let outcome = driver::fit_keeping_partial(&self.loaded, &mut compiled, settings, observer)?;
        Ok(Fitted {
            loaded: self.loaded.clone(),
            compiled,
            outcome,
        })
    }

    /// Fits the model starting from a saved fit's q (a warm start, `occam fit --init-from`):
    /// the first restart continues from the saved state (no random start); further restarts
    /// start afresh. The saved nodes must have this model's sizes (same model, data of the same
    /// shapes), else an error naming the node.
    pub fn fit_from(
        &self,
        settings: &Settings,
        saved: &crate::saved::SavedFit,
        observer: &mut dyn Observer,
    ) -> Result<Fitted> {
        settings.validate()?;
        let mut compiled = self.loaded.compile(true)?;
        let names: Vec<String> = compiled.vmp.names().iter().map(|n| n.to_string()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        compiled.vmp.set_q_state(saved.q_for(&names)).map_err(|e| {
            Error::Usage(format!(
                "{}: the saved fit of {} does not fit this model: {e}",
                self.loaded.file_name, saved.model_file
            ))
        })?;
        let outcome = driver::fit(&self.loaded, &mut compiled, settings, observer)?;
        Ok(Fitted {
            loaded: self.loaded.clone(),
            compiled,
            outcome,
        })
    }

    /// Fits the model with one more candidate start, the warm start of a plate sweep (module
    /// `evidence::sweep`): the variables `starts` (IR index, moments of every element) started
    /// from the given moments and every other as in the default start, run after the default
    /// fit's own candidate starts where `when` holds for the best of them, and kept by the
    /// engine's rule for candidate starts ([`occam_core::engine::Vmp::offer_start`]) when its
    /// converged bound passes theirs by the stopping tolerance in nats (`Settings::tol` per
    /// observed value). What it did is the outcome's `offered`.
    pub(crate) fn fit_offered(
        &self,
        settings: &Settings,
        starts: &[(usize, Vec<f64>)],
        when: fn(&occam_core::engine::Vmp) -> bool,
        observer: &mut dyn Observer,
    ) -> Result<Fitted> {
        settings.validate()?;
        let mut compiled = self.loaded.compile(true)?;
        let margin = settings.tol * compiled.vmp.observed_values().max(1) as f64;
        let starts = starts
            .iter()
            .map(|(v, u)| {
                let node = compiled.var_nodes[*v];
                (node, occam_core::prelude::Init::Moments(u.clone()))
            })
            .collect();
        compiled.vmp.offer_start(occam_core::engine::OfferedStart {
            starts,
            margin,
            when,
        });
        let outcome = driver::fit(&self.loaded, &mut compiled, settings, observer)?;
        Ok(Fitted {
            loaded: self.loaded.clone(),
            compiled,
            outcome,
        })
    }

    /// Compiles and fits the model.
    pub fn fit(&self, settings: &Settings) -> Result<Fitted> {
        self.fit_observed(settings, &mut ())
    }
}

/// A fitted model: the outcome of the run and the posterior state.
pub struct Fitted {
    loaded: Arc<Loaded>,
    compiled: Compiled,
    outcome: Outcome,
}

impl Fitted {
    /// The fitted model of a saved fit: the model text on the saved data, with the saved q (the
    /// outcome's bound, sweeps, seed and convergence as saved, the per-node terms recomputed, no
    /// trace or warnings).
    pub fn from_saved(saved: &crate::saved::SavedFit) -> Result<Fitted> {
        let model = Model::from_source(&saved.model_file, &saved.source, &saved.data_set()?)?;
        let mut compiled = model.loaded.compile(true)?;
        let names: Vec<String> = compiled.vmp.names().iter().map(|n| n.to_string()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        if let Some(n) = names
            .iter()
            .find(|n| !saved.nodes.iter().any(|s| s.name == **n))
        {
            return Err(Error::Usage(format!(
                "saved fit of {}: node `{n}` of the model is not in the file (damaged fit file)",
                saved.model_file
            )));
        }
        compiled
            .vmp
            .set_q_state(saved.q_for(&names))
            .map_err(|e| Error::Usage(format!("saved fit of {}: {e}", saved.model_file)))?;
        let node_bounds = names
            .iter()
            .map(|n| n.to_string())
            .zip(compiled.vmp.node_bounds())
            .collect();
        let (bound_quality, node_qualities) = crate::quality::qualities(&compiled);
        let outcome = Outcome {
            bound: saved.bound,
            iterations: saved.iterations,
            converged: saved.converged,
            stop: occam_core::prelude::Stop {
                reason: if saved.converged {
                    occam_core::prelude::StopReason::Converged
                } else {
                    occam_core::prelude::StopReason::MaxIter
                },
                change_per_value: None,
                tol: 0.0,
                observed_values: 1,
                max_iter: saved.iterations,
            },
            bound_trace: Vec::new(),
            prune_start: None,
            restart_bounds: vec![saved.bound],
            restart_components: Vec::new(),
            components: Vec::new(),
            best_restart: 0,
            seed: saved.seed,
            warnings: Vec::new(),
            node_bounds,
            bound_quality,
            node_qualities,
            sampled: crate::sampled::reports(&compiled),
            prune_trials: 0,
            prune_screen: None,
            offered: None,
            rotated: None,
        };
        Ok(Fitted {
            loaded: model.loaded,
            compiled,
            outcome,
        })
    }

    /// The fit as a saved fit (see [`crate::saved`]).
    pub fn saved(&self) -> crate::saved::SavedFit {
        crate::saved::SavedFit::of(&self.loaded, &self.compiled, &self.outcome)
    }

    /// The final lower bound on the log evidence (nats).
    pub fn bound(&self) -> f64 {
        self.outcome.bound
    }

    /// The run's outcome: bound trace, restarts, warnings, per-node bound terms.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// The loaded model.
    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// The model that was fitted (to fit it again, or on other data).
    pub fn model(&self) -> Model {
        Model {
            loaded: self.loaded.clone(),
        }
    }

    /// The compiled engine in its fitted state.
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    /// The posterior of variable `name`, or an error listing the variables.
    pub fn posterior(&self, name: &str) -> Result<Posterior> {
        let m = &self.loaded.model;
        let v = m
            .variables
            .iter()
            .position(|v| v.name == name)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "{}: no variable named `{name}` (variables: {})",
                    self.loaded.file_name,
                    m.variables
                        .iter()
                        .map(|v| v.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        Ok(posterior::of(&self.loaded, &self.compiled, v))
    }

    /// The posterior of every variable, in model order.
    pub fn posteriors(&self) -> Vec<Posterior> {
        (0..self.loaded.model.variables.len())
            .map(|v| posterior::of(&self.loaded, &self.compiled, v))
            .collect()
    }

    /// The posterior predictive of every observed variable for new rows: `new` holds the new
    /// rows' covariates, `sizes` row counts of plates no new data size (see [`crate::predict`]).
    /// The fit is not changed.
    pub fn predict(
        &self,
        new: &DataSet,
        sizes: &std::collections::BTreeMap<String, u64>,
        opts: &crate::predict::PredictOptions,
    ) -> Result<Vec<crate::predict::Predictive>> {
        crate::predict::new_rows(&self.loaded, &self.compiled, new, sizes, opts)
    }

    /// The predictive density of observed variable `name` for new rows at `points` (see
    /// [`crate::predict::density`]). The fit is not changed.
    pub fn predictive_density(
        &self,
        new: &DataSet,
        sizes: &std::collections::BTreeMap<String, u64>,
        name: &str,
        points: &[f64],
        opts: &crate::predict::PredictOptions,
    ) -> Result<Vec<f64>> {
        crate::predict::density(&self.loaded, &self.compiled, new, sizes, name, points, opts)
    }

    /// The filtered and `ahead`-step-ahead predictive of a chain model, of its own sequences
    /// (`new` empty) or of held-out ones (see [`crate::predict::ahead`]). The fit is not changed.
    pub fn predict_ahead(
        &self,
        new: &DataSet,
        ahead: usize,
        opts: &crate::predict::PredictOptions,
    ) -> Result<crate::predict::ChainPredictive> {
        crate::predict::ahead(&self.loaded, &self.compiled, new, ahead, opts)
    }

    /// The posterior predictive of the missing entries of the fitted data (see
    /// [`crate::predict::missing`]).
    pub fn predict_missing(
        &self,
        opts: &crate::predict::PredictOptions,
    ) -> Result<Vec<crate::predict::Predictive>> {
        crate::predict::missing(&self.loaded, &self.compiled, opts)
    }

    /// The per-step report of chain variable `name` (state marginals and Viterbi path, or
    /// smoothed means and standard deviations), with the sizes of its sequence plates; an error
    /// if it is not a chain.
    pub fn chain(&self, name: &str) -> Result<(crate::chains::ChainReport, Vec<usize>)> {
        let m = &self.loaded.model;
        let v = m.variables.iter().position(|v| v.name == name);
        let report = v.and_then(|v| crate::chains::chain(&self.loaded, &self.compiled, v));
        match (v, report) {
            (Some(v), Some(r)) => {
                let plates = &m.variables[v].plates;
                let seq = plates[..plates.len() - 1]
                    .iter()
                    .map(|&p| m.plates[p].size as usize)
                    .collect();
                Ok((r, seq))
            }
            _ => {
                let chains: Vec<&str> = m
                    .variables
                    .iter()
                    .filter(|v| {
                        matches!(&v.node, occam_lang::ir::Node::Stochastic { distribution, .. }
                            if occam_core::engine::chain_family(distribution).is_some())
                    })
                    .map(|v| v.name.as_str())
                    .collect();
                Err(Error::Usage(format!(
                    "{}: `{name}` is not a chain (chains: {})",
                    self.loaded.file_name,
                    if chains.is_empty() {
                        "none".to_string()
                    } else {
                        chains.join(", ")
                    }
                )))
            }
        }
    }
}
