//! The posterior predictive of a fitted model written in the language: for new rows of its data
//! plates (new files for the covariates, or only a number of rows) and for the missing entries
//! of its own data, the predictive distribution of every observed variable under q —
//! p(y* | data) ≈ ∫ p(y* | θ) q(θ) dθ (Winn §1.8.2) — as mean, standard deviation, quantiles
//! and seeded draws.
//!
//! The fitted q is never changed: prediction runs on a copy of the model compiled for the new
//! rows. Every node outside the new rows (the parameters) keeps the fitted q; latent variables of
//! the new rows (a mixture index, a latent factor) are updated to convergence with the parameters
//! fixed — with the targets missing they are integrated out, so a mixture index of a new row
//! keeps its prior weights ⟨π⟩ and the predictive is the mixture of the components. Means and
//! standard deviations are exact where a closed form exists (a scalar Gaussian whose precision is
//! a constant or a Gamma: [`occam_core::engine::Vmp::gaussian_predictive`]; a Student-t, whose
//! mean is its mean's ⟨μ⟩ and whose variance is Var_q(μ) + s²ν/(ν − 2), infinite for ν ≤ 2:
//! [`occam_core::engine::Vmp::student_t_predictive`]), otherwise the draws' moments; quantiles
//! are the draws' (type 7).

use std::collections::BTreeMap;

use occam_core::engine::QState;
use occam_core::prelude::*;
use occam_lang::ir::{Node, PlateSource};

use crate::data::DataSet;
use crate::error::{Error, Result};
use crate::lower::Compiled;
use crate::model::{self, Loaded};

mod chain;
mod summary;
pub use chain::{ahead, ChainPredictive, ChainTarget};
pub use summary::{quantile, Predictive};

/// How to predict.
#[derive(Clone, Debug)]
pub struct PredictOptions {
    /// Number of draws from the predictive (quantiles and non-Gaussian moments come from them).
    pub draws: usize,
    /// Seed of the draws (and of the start of the new rows' latent variables).
    pub seed: u64,
    /// Probabilities of the reported quantiles, each in (0, 1).
    pub quantiles: Vec<f64>,
    /// Sweeps over the new rows' latent variables at most.
    pub max_iter: usize,
    /// Tolerance on the bound's change per sweep of those sweeps (nats per row).
    pub tol: f64,
}

impl Default for PredictOptions {
    fn default() -> Self {
        PredictOptions {
            draws: 1000,
            seed: 0,
            quantiles: vec![0.025, 0.5, 0.975],
            max_iter: 1000,
            tol: 1e-9,
        }
    }
}

impl PredictOptions {
    /// Checks every field's domain.
    pub fn validate(&self) -> Result<()> {
        if !(1..=10_000_000).contains(&self.draws) {
            return Err(Error::Usage(format!(
                "draws must be between 1 and 10000000, got {}",
                self.draws
            )));
        }
        if let Some(q) = self.quantiles.iter().find(|q| !(**q > 0.0 && **q < 1.0)) {
            return Err(Error::Usage(format!(
                "quantile {q} is not a probability strictly between 0 and 1"
            )));
        }
        Ok(())
    }
}

/// Plates that index the rows of data (axis 0 of a table): the plates of new rows.
fn row_plates(loaded: &Loaded) -> Vec<String> {
    loaded
        .model
        .plates
        .iter()
        .filter(|p| matches!(p.source, PlateSource::Data { axis: 0, .. }))
        .map(|p| p.name.clone())
        .collect()
}

/// The observed (modelled) variables of the model, by index.
fn targets(loaded: &Loaded) -> Vec<usize> {
    loaded
        .model
        .variables
        .iter()
        .enumerate()
        .filter(|(_, v)| v.observed && matches!(v.node, Node::Stochastic { .. }))
        .map(|(i, _)| i)
        .collect()
}

/// The fitted model loaded again for new rows: the covariates from `new`, plates sized from data
/// that `new` does not size from `sizes` (or, if not given there, the fit's sizes), and every
/// observed variable without new data entirely missing.
pub fn load_new_rows(
    fitted: &Loaded,
    new: &DataSet,
    sizes: &BTreeMap<String, u64>,
) -> Result<Loaded> {
    let mut sizes = sizes.clone();
    for p in &fitted.model.plates {
        if let PlateSource::Data { data, .. } = &p.source {
            if !new.tables.contains_key(data) && !sizes.contains_key(&p.name) {
                sizes.insert(p.name.clone(), p.size);
            }
        }
    }
    // Inputs the fit had and the new rows do not give are an error unless they size nothing new.
    let shape = model::load_source_without_data(
        &fitted.path,
        fitted.file_name.clone(),
        fitted.source.clone(),
        new,
        &sizes,
        None,
    )?;
    let mut data = new.clone();
    for &v in &targets(&shape) {
        let var = &shape.model.variables[v];
        if data.tables.contains_key(&var.name) {
            continue;
        }
        let rows = var
            .plates
            .first()
            .map_or(1, |&p| shape.model.plates[p].size as usize);
        let old = fitted.data.tables.get(&var.name).ok_or_else(|| {
            Error::Usage(format!(
                "{}: no data for `{}` in the fit to take its columns from",
                fitted.file_name, var.name
            ))
        })?;
        data.insert_array(
            &var.name,
            rows,
            old.cols,
            vec![f64::NAN; rows * old.cols],
            None,
        )?;
    }
    for (name, t) in &fitted.data.tables {
        let covariate = fitted
            .model
            .variables
            .iter()
            .any(|v| &v.name == name && matches!(v.node, Node::Data));
        if covariate && !data.tables.contains_key(name) {
            let rows_plate = fitted
                .model
                .variables
                .iter()
                .find(|v| &v.name == name)
                .and_then(|v| v.plates.first())
                .map(|&p| fitted.model.plates[p].name.clone());
            if rows_plate.is_some_and(|p| row_plates(fitted).contains(&p)) {
                return Err(Error::Usage(format!(
                    "{}: give the new rows of data `{name}` (--data {name}=FILE; the fit read {})",
                    fitted.file_name, t.file
                )));
            }
            data.tables.insert(name.clone(), t.clone());
        }
    }
    let mut loaded = model::load_source(
        &fitted.path,
        fitted.file_name.clone(),
        fitted.source.clone(),
        None,
        &data,
    )?;
    loaded.warnings.clear();
    Ok(loaded)
}

/// The predictive of every observed variable for new rows (see the module doc): `new` holds the
/// covariates of the new rows; `sizes` gives row counts of plates no new data size
/// (`--plate N=20`). The fitted q is not changed.
pub fn new_rows(
    fitted: &Loaded,
    c: &Compiled,
    new: &DataSet,
    sizes: &BTreeMap<String, u64>,
    opts: &PredictOptions,
) -> Result<Vec<Predictive>> {
    opts.validate()?;
    if let Some(chain) = chain_of(fitted) {
        return Err(Error::Usage(format!(
            "{}: `{}` is a chain: give the number of steps to predict past each sequence's end \
             (--ahead K in `occam predict`, ahead=K in Python)",
            fitted.file_name, fitted.model.variables[chain].name
        )));
    }
    nothing_observed(fitted)?;
    let (loaded, mut fresh, ancestral) = prepare_new_rows(fitted, c, new, sizes, opts)?;
    predict_compiled(&loaded, &mut fresh, &targets(&loaded), opts, &ancestral)
}

/// An error, naming the model's file and its stochastic variables, when it observes none: its
/// predictive for new rows would be empty (before, `--predict-out` then wrote nothing and said
/// nothing).
fn nothing_observed(fitted: &Loaded) -> Result<()> {
    if !targets(fitted).is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = fitted
        .model
        .variables
        .iter()
        .filter(|v| matches!(v.node, Node::Stochastic { .. }))
        .map(|v| v.name.as_str())
        .collect();
    let example = names.last().copied().unwrap_or("y");
    Err(Error::Usage(format!(
        "{}: nothing to predict: the model observes no variable (stochastic: {}); give one its \
         data (--data {example}=FILE) or add a line `observe {example}`",
        fitted.file_name,
        names.join(", ")
    )))
}

/// The model compiled for new rows with the fitted parameters, and which nodes the predictive
/// draws from their prior under q (the new rows' latent nodes when no target is given for them;
/// with some given, those nodes are settled to them instead).
fn prepare_new_rows(
    fitted: &Loaded,
    c: &Compiled,
    new: &DataSet,
    sizes: &BTreeMap<String, u64>,
    opts: &PredictOptions,
) -> Result<(Loaded, Compiled, Vec<bool>)> {
    let loaded = load_new_rows(fitted, new, sizes)?;
    let (mut fresh, local, order) = start_new_rows(fitted, c, &loaded, opts.seed, None)?;
    let given = targets(&loaded)
        .iter()
        .any(|&v| new.tables.contains_key(&loaded.model.variables[v].name));
    let ancestral: Vec<bool> = if given {
        settle(&loaded, &mut fresh, &order, opts)?;
        Vec::new()
    } else {
        local
    };
    Ok((loaded, fresh, ancestral))
}

/// The predictive density of observed variable `name` for new rows (as [`new_rows`] defines
/// them) at `points` (one value of an entry each, back to back): per entry of its rows,
/// `opts.draws` seeded draws' average of the conditional density (module doc of
/// [`occam_core::engine::Vmp::predictive_density`]), `entries × points` values. The fit is not
/// changed.
pub fn density(
    fitted: &Loaded,
    c: &Compiled,
    new: &DataSet,
    sizes: &BTreeMap<String, u64>,
    name: &str,
    points: &[f64],
    opts: &PredictOptions,
) -> Result<Vec<f64>> {
    opts.validate()?;
    let v = targets(fitted)
        .into_iter()
        .find(|&v| fitted.model.variables[v].name == name)
        .ok_or_else(|| {
            Error::Usage(format!(
                "{}: `{name}` is not an observed variable",
                fitted.file_name
            ))
        })?;
    let (loaded, mut fresh, ancestral) = prepare_new_rows(fitted, c, new, sizes, opts)?;
    let node = fresh.var_nodes[v];
    fresh
        .vmp
        .predictive_density(opts.seed, opts.draws, node, &ancestral, points)
        .map_err(|e| match e {
            RunError::Schedule(m) => Error::Usage(format!("{}: {m}", loaded.file_name)),
            e => crate::driver::run_error(&loaded, &fresh, &e),
        })
}

/// The chain variable of a model, if it has one.
fn chain_of(loaded: &Loaded) -> Option<usize> {
    loaded.model.variables.iter().position(|v| {
        matches!(&v.node, Node::Stochastic { distribution, .. }
            if occam_core::engine::chain_family(distribution).is_some())
    })
}

/// `loaded` (the fitted model on other rows) compiled and started: every node outside the row
/// plates (the parameters) at the fitted q of the node of the same name in `c`, the others
/// (the new rows' nodes, and the node of variable `also_local`) at a fresh start. Returns the compiled model, which
/// nodes are local, and those nodes' default update order.
fn start_new_rows(
    fitted: &Loaded,
    c: &Compiled,
    loaded: &Loaded,
    seed: u64,
    also_local: Option<usize>,
) -> Result<(Compiled, Vec<bool>, Vec<NodeId>)> {
    let mut fresh = loaded.compile(true)?;
    let also_local = also_local.map(|v| fresh.var_nodes[v]);
    fresh
        .vmp
        .initialize(seed)
        .map_err(|e| crate::driver::run_error(loaded, &fresh, &e))?;
    let rows = row_plates(loaded);
    let saved = c.vmp.q_state();
    let old_names = c.vmp.names();
    let names: Vec<String> = fresh.vmp.names().iter().map(|n| n.to_string()).collect();
    let ids: Vec<NodeId> = names
        .iter()
        .map(|n| fresh.vmp.node(n).expect("a node of this model"))
        .collect();
    let local: Vec<bool> = ids
        .iter()
        .map(|&id| {
            Some(id) == also_local
                || fresh
                    .vmp
                    .node_plates(id)
                    .iter()
                    .any(|p| rows.iter().any(|r| r == p))
        })
        .collect();
    let state: Vec<Option<QState>> = names
        .iter()
        .zip(&local)
        .map(|(name, &local)| {
            if local {
                return None;
            }
            old_names
                .iter()
                .position(|n| n == name)
                .map(|i| saved[i].clone())
        })
        .collect();
    let unfit = |e: occam_core::error::StateError| {
        Error::Usage(format!(
            "{}: the new data do not fit the fitted parameters: {e}",
            fitted.file_name
        ))
    };
    fresh.vmp.set_q_state(state).map_err(unfit)?;
    // A softmax q-block keeps its joint q over the classes' weights on the logits, a node of the
    // rows' plate that starts afresh: given back from the fitted model, so that the weights are
    // drawn jointly (`Vmp::sample_predictive`), not class by class from their marginals.
    for ((&id, &local), name) in ids.iter().zip(&local).zip(&names) {
        let old = c.vmp.node(name);
        if let (false, Some((joint, gaps))) = (local, old.and_then(|old| c.vmp.joint_q(old))) {
            fresh.vmp.set_joint_q(id, &joint, &gaps).map_err(unfit)?;
        }
    }
    let order: Vec<NodeId> = fresh
        .vmp
        .default_order()
        .into_iter()
        .filter(|id| local[id.index()])
        .collect();
    Ok((fresh, local, order))
}

/// Sweeps over `order` (the new rows' latent nodes) until the bound changes by at most
/// `opts.tol` per row; the other nodes stay as they are.
fn settle(
    loaded: &Loaded,
    c: &mut Compiled,
    order: &[NodeId],
    opts: &PredictOptions,
) -> Result<()> {
    if order.is_empty() {
        return Ok(());
    }
    let scale = c.vmp.plates().iter().map(|p| p.1).max().unwrap_or(1).max(1) as f64;
    let mut last = f64::NEG_INFINITY;
    for _ in 0..opts.max_iter {
        for &id in order {
            c.vmp
                .update(id)
                .map_err(|e| crate::driver::run_error(loaded, c, &e))?;
        }
        let now = c.vmp.bound();
        if (now - last).abs() <= opts.tol * scale {
            break;
        }
        last = now;
    }
    Ok(())
}

/// The predictive of variables `vars` of a compiled model in its current state (consumed: the
/// draws overwrite its moments).
fn predict_compiled(
    loaded: &Loaded,
    c: &mut Compiled,
    vars: &[usize],
    opts: &PredictOptions,
    ancestral: &[bool],
) -> Result<Vec<Predictive>> {
    let nodes: Vec<NodeId> = vars.iter().map(|&v| c.var_nodes[v]).collect();
    // The closed form reads q(z) of a mixture index; drawn from its prior instead, the draws'
    // moments are the predictive's.
    let drawn_latent = (0..ancestral.len()).any(|i| {
        ancestral[i] && {
            let id = c.vmp.node(c.vmp.names()[i]).expect("a node");
            !c.vmp.is_observed(id) && c.vmp.distribution(id).is_some()
        }
    });
    let exact: Vec<Option<Vec<(f64, f64)>>> = nodes
        .iter()
        .map(|&n| {
            (!drawn_latent)
                .then(|| {
                    c.vmp
                        .gaussian_predictive(n)
                        .or_else(|| c.vmp.student_t_predictive(n))
                })
                .flatten()
        })
        .collect();
    let draws = c
        .vmp
        .sample_predictive(opts.seed, opts.draws, &nodes, ancestral)
        .map_err(|e| match e {
            RunError::Schedule(m) => Error::Usage(format!("{}: {m}", loaded.file_name)),
            e => crate::driver::run_error(loaded, c, &e),
        })?;
    Ok(vars
        .iter()
        .zip(draws)
        .zip(exact)
        .map(|((&v, draws), exact)| {
            let var = &loaded.model.variables[v];
            let rows = var
                .plates
                .first()
                .map_or(1, |&p| loaded.model.plates[p].size as usize);
            Predictive::new(&var.name, rows, draws, opts, exact)
        })
        .collect())
}

/// The predictive of the missing entries of every observed variable of a fitted model (its own
/// rows, given what is observed of them), one [`Predictive`] per variable with missing entries:
/// what the report prints in place of an integrated-out entry. The fitted q is not changed.
pub fn missing(loaded: &Loaded, c: &Compiled, opts: &PredictOptions) -> Result<Vec<Predictive>> {
    opts.validate()?;
    let vars: Vec<usize> = targets(loaded)
        .into_iter()
        .filter(|&v| {
            let name = &loaded.model.variables[v].name;
            loaded
                .data
                .tables
                .get(name)
                .is_some_and(|t| t.has_missing())
        })
        .collect();
    if vars.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(chain) = chain_of(loaded) {
        // A chain's q(z_t) is smoothed: its missing entries' predictive is not the filtered one
        // `--ahead` gives, and entries past a sequence's end are not part of the model.
        return Err(Error::Usage(format!(
            "{}: `{}` is a chain: the predictive of its missing entries is not written yet",
            loaded.file_name, loaded.model.variables[chain].name
        )));
    }
    let mut copy = loaded.compile(true)?;
    copy.vmp
        .set_q_state(c.vmp.q_state().into_iter().map(Some).collect())
        .map_err(|e| Error::Run(e.to_string()))?;
    let mut out = predict_compiled(loaded, &mut copy, &vars, opts, &[])?;
    for (p, &v) in out.iter_mut().zip(&vars) {
        p.keep_missing(&loaded.data.tables[&loaded.model.variables[v].name].present);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
