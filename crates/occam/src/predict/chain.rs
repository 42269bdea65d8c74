//! The filtered and k-step-ahead predictive of a chain model (a `MarkovChain` HMM or a
//! `GaussianMarkovChain` linear dynamical system): for every sequence (of the fitted data, or
//! held-out sequences given as new data), at every step t of the data the one-step predictive
//! p(y_t | y_{<t}) and for the K steps past its end the k-step-ahead predictive
//! p(y_{L−1+k} | y_{<L}), of every observed variable over the chain's time plate, with the
//! state's predictive (probabilities, or mean and sd).
//!
//! Three stages, none touching the fitted q:
//! 1. **filter**: the model compiled on the sequences, the parameters at their fitted q, the
//!    chain (and any other node of the sequences) updated to convergence; then the forward
//!    recursion or the Kalman filter with the parameters' posterior means
//!    ([`occam_core::engine::Vmp::chain_forecast`] states exactly which quantities under q).
//! 2. **extend**: the model compiled again with the time plate K steps longer, every observed
//!    variable missing and each sequence's `lengths` K larger; the parameters at their fitted q,
//!    the chain's per-step moments set to the predictive state marginals of stage 1.
//! 3. **emit**: the predictive of every observed entry given its step's state marginal, as for
//!    new rows ([`super::new_rows`]): exact mean and sd for a scalar Gaussian with a constant or
//!    Gamma precision (a mixture over the states for an HMM, E[(cᵀx)²] under the state's
//!    Gaussian for an LDS), quantiles from seeded draws (each step's state drawn from its own
//!    marginal, so draws are not joint paths).

use std::collections::BTreeMap;

use occam_core::prelude::*;
use occam_lang::ir::{ExprOp, Node, PlateSource};

use super::{
    chain_of, load_new_rows, predict_compiled, settle, start_new_rows, targets, PredictOptions,
    Predictive,
};
use crate::data::{format_number, DataSet};
use crate::error::{Error, Result};
use crate::lower::Compiled;
use crate::model::{self, Loaded};

/// One observed variable's predictive along the chain's steps.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ChainTarget {
    /// The variable.
    pub name: String,
    /// Values per step (its plates other than the chain's, and its event dimensions).
    pub cols: usize,
    /// Per sequence: the predictive mean of every step's values, `(length + ahead) × cols`.
    pub mean: Vec<Vec<f64>>,
    /// Per sequence: the standard deviations, in the same layout.
    pub sd: Vec<Vec<f64>>,
    /// Whether `mean` and `sd` are exact (closed form) rather than the draws' moments.
    pub exact: bool,
    /// The quantiles: probability, then per sequence the values in the same layout.
    pub quantiles: Vec<(f64, Vec<Vec<f64>>)>,
}

/// The filtered and k-step-ahead predictive of a chain model (see the module doc).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ChainPredictive {
    /// The chain variable.
    pub chain: String,
    /// Whether it is a discrete chain (states are probabilities) or a Gaussian one.
    pub discrete: bool,
    /// K states, or D state dimensions.
    pub states: usize,
    /// Each sequence's observed length L.
    pub lengths: Vec<usize>,
    /// Steps predicted past each sequence's end.
    pub ahead: usize,
    /// Per sequence, per step (`L + ahead` steps): the state's predictive, K probabilities or
    /// D means then D×D second moments E\[x xᵀ\].
    pub state: Vec<Vec<f64>>,
    /// Every observed variable over the chain's time plate.
    pub targets: Vec<ChainTarget>,
}

/// The filtered and `ahead`-step-ahead predictive of the chain model `fitted` (module doc):
/// of its own sequences when `new` is empty, else of the sequences `new` holds (under the fit's
/// data names; the fitted q is not changed).
pub fn ahead(
    fitted: &Loaded,
    c: &Compiled,
    new: &DataSet,
    ahead: usize,
    opts: &PredictOptions,
) -> Result<ChainPredictive> {
    opts.validate()?;
    let file = &fitted.file_name;
    let zv = chain_of(fitted).ok_or_else(|| {
        Error::Usage(format!(
            "{file}: the model has no MarkovChain or GaussianMarkovChain: --ahead predicts chains"
        ))
    })?;
    let chain = &fitted.model.variables[zv];
    // 1. Filter.
    let data = if new.tables.is_empty() {
        &fitted.data
    } else {
        new
    };
    let loaded = load_new_rows(fitted, data, &BTreeMap::new())?;
    let z_node = |l: &Compiled| l.var_nodes[zv];
    let (mut filt, _, order) = start_new_rows(fitted, c, &loaded, opts.seed, Some(zv))?;
    settle(&loaded, &mut filt, &order, opts)?;
    let state = filt
        .vmp
        .chain_forecast(z_node(&filt), ahead)
        .map_err(|e| match e {
            RunError::Schedule(m) => Error::Usage(format!("{file}: {m}")),
            e => crate::driver::run_error(&loaded, &filt, &e),
        })?;
    let lengths = filt
        .vmp
        .chain_lengths(z_node(&filt))
        .expect("a chain")
        .to_vec();
    // 2. Extend.
    let ext_data = extended_data(&loaded, zv, ahead)?;
    let mut ext_loaded = model::load_source(
        &fitted.path,
        fitted.file_name.clone(),
        fitted.source.clone(),
        None,
        &ext_data,
    )?;
    ext_loaded.warnings.clear();
    let (mut ext, local, _) = start_new_rows(fitted, c, &ext_loaded, opts.seed, Some(zv))?;
    let zn = z_node(&ext);
    ext.vmp
        .set_chain_moments(zn, &state)
        .map_err(|e| Error::Usage(format!("{file}: {e}")))?;
    // 3. Emit: other latent nodes of the sequences are drawn from their prior under q.
    let ancestral: Vec<bool> = local
        .iter()
        .enumerate()
        .map(|(i, &l)| l && i != zn.index())
        .collect();
    let time = *chain.plates.last().expect("a chain has a time plate");
    let over_time: Vec<usize> = targets(&ext_loaded)
        .into_iter()
        .filter(|&v| ext_loaded.model.variables[v].plates.contains(&time))
        .collect();
    if over_time.is_empty() {
        return Err(Error::Usage(format!(
            "{file}: no observed variable is over the chain's time plate `{}`",
            fitted.model.plates[time].name
        )));
    }
    let preds = predict_compiled(&ext_loaded, &mut ext, &over_time, opts, &ancestral)?;
    let targets = over_time
        .iter()
        .zip(preds)
        .map(|(&v, p)| along_steps(&ext_loaded, zv, v, &p, &lengths, ahead))
        .collect::<Result<Vec<_>>>()?;
    let discrete = matches!(&chain.node, Node::Stochastic { distribution, .. }
        if distribution == occam_core::engine::MARKOV_CHAIN.name);
    let states = chain
        .event_plates
        .first()
        .map_or(1, |&k| fitted.model.plates[k].size as usize);
    Ok(ChainPredictive {
        chain: chain.name.clone(),
        discrete,
        states,
        lengths,
        ahead,
        state,
        targets,
    })
}

/// The data of `loaded` with the chain's time plate `ahead` steps longer: every observed
/// variable over it entirely missing, the chain's `lengths` data `ahead` larger.
fn extended_data(loaded: &Loaded, zv: usize, ahead: usize) -> Result<DataSet> {
    let m = &loaded.model;
    let file = &loaded.file_name;
    let chain = &m.variables[zv];
    let time = *chain.plates.last().expect("a chain has a time plate");
    let time_plate = &m.plates[time];
    if matches!(time_plate.source, PlateSource::Fixed) {
        return Err(Error::Usage(format!(
            "{file}: the time plate `{}` has a fixed size; for --ahead size it from the data \
             (`plate {} from data NAME`)",
            time_plate.name, time_plate.name
        )));
    }
    let lengths_data = match &chain.node {
        Node::Stochastic { args, .. } => args.iter().find_map(|a| match &a.value.op {
            ExprOp::Var(r) if a.slot == "lengths" => Some(r.name.clone()),
            _ => None,
        }),
        _ => None,
    };
    let observed = targets(loaded);
    let mut out = DataSet::new();
    for (name, t) in &loaded.data.tables {
        let var = m.variables.iter().position(|v| &v.name == name);
        let over_time = var.is_some_and(|v| m.variables[v].plates.contains(&time));
        if Some(name) == lengths_data.as_ref() {
            let values: Vec<f64> = t.values.iter().map(|&v| v + ahead as f64).collect();
            out.insert_array(name, t.rows, t.cols, values, t.header.clone())?;
        } else if var.is_some_and(|v| observed.contains(&v)) && over_time {
            let v = &m.variables[var.expect("checked")];
            let steps = time_plate.size as usize;
            let (rows, cols) = if v.plates.first() == Some(&time) {
                (t.rows + ahead, t.cols)
            } else {
                (t.rows, t.cols / steps.max(1) * (steps + ahead))
            };
            out.insert_array(name, rows, cols, vec![f64::NAN; rows * cols], None)?;
        } else if over_time {
            return Err(Error::Usage(format!(
                "{file}: data `{name}` is over the time plate `{}`: its values past the end are \
                 unknown, so the chain cannot be predicted ahead",
                time_plate.name
            )));
        } else {
            out.tables.insert(name.clone(), t.clone());
        }
    }
    Ok(out)
}

/// Predictive `p` of variable `v` (of the extended model) cut into sequences and steps of chain
/// `zv`: the first `lengths[s] + ahead` steps of each sequence.
fn along_steps(
    loaded: &Loaded,
    zv: usize,
    v: usize,
    p: &Predictive,
    lengths: &[usize],
    ahead: usize,
) -> Result<ChainTarget> {
    let m = &loaded.model;
    let var = &m.variables[v];
    let chain_plates = &m.variables[zv].plates;
    let (time, seq_plates) = chain_plates.split_last().expect("a time plate");
    if let Some(&missing) = seq_plates.iter().find(|p| !var.plates.contains(p)) {
        return Err(Error::Usage(format!(
            "{}: `{}` is not over the chain's sequence plate `{}`",
            loaded.file_name, var.name, m.plates[missing].name
        )));
    }
    let sizes: Vec<usize> = var
        .plates
        .iter()
        .map(|&q| m.plates[q].size as usize)
        .collect();
    let n_plates: usize = sizes.iter().product();
    let event = p.mean.len() / n_plates.max(1);
    let steps = m.plates[*time].size as usize;
    let cols = n_plates
        / (steps
            * seq_plates
                .iter()
                .map(|&q| m.plates[q].size as usize)
                .product::<usize>())
        .max(1)
        * event;
    let n_seq = lengths.len();
    let mut index: Vec<Vec<usize>> = (0..n_seq)
        .map(|s| vec![usize::MAX; (lengths[s] + ahead) * cols])
        .collect();
    let mut fill = vec![vec![0usize; steps]; n_seq];
    for j in 0..p.mean.len() {
        // Coordinates of entry j: its plates' indices, then the event index.
        let mut rest = j / event;
        let mut coord = vec![0; sizes.len()];
        for (c, &sz) in coord.iter_mut().zip(&sizes).rev() {
            *c = rest % sz;
            rest /= sz;
        }
        let at = |q: usize| coord[var.plates.iter().position(|&x| x == q).expect("a plate")];
        let s = seq_plates
            .iter()
            .fold(0, |acc, &q| acc * m.plates[q].size as usize + at(q));
        let t = at(*time);
        if t < lengths[s] + ahead {
            let k = fill[s][t];
            index[s][t * cols + k] = j;
            fill[s][t] += 1;
        }
    }
    let pick = |x: &[f64]| -> Vec<Vec<f64>> {
        index
            .iter()
            .map(|ix| ix.iter().map(|&j| x[j]).collect())
            .collect()
    };
    Ok(ChainTarget {
        name: var.name.clone(),
        cols,
        mean: pick(&p.mean),
        sd: pick(&p.sd),
        exact: p.exact,
        quantiles: p.quantiles.iter().map(|(q, x)| (*q, pick(x))).collect(),
    })
}

impl ChainPredictive {
    /// The horizon of step t of sequence s: 1 within the data (the one-step predictive), k for
    /// the k-th step past the end.
    pub fn horizon(&self, s: usize, t: usize) -> usize {
        if t < self.lengths[s] {
            1
        } else {
            t - self.lengths[s] + 1
        }
    }

    /// The table as CSV text: `sequence,step,horizon`, then every target's entries' mean, sd and
    /// quantiles (`y_mean`, `y_sd`, `y_q0.025`, …; `y_1_mean`, … for several values per step),
    /// then the state's predictive: `z_p_0`, … (probabilities) or `x_mean_0`, …, `x_sd_0`, ….
    pub fn to_csv(&self) -> String {
        let mut header: Vec<String> = ["sequence", "step", "horizon"].map(String::from).to_vec();
        for t in &self.targets {
            for c in 0..t.cols {
                let name = if t.cols == 1 {
                    t.name.clone()
                } else {
                    format!("{}_{}", t.name, c + 1)
                };
                header.push(format!("{name}_mean"));
                header.push(format!("{name}_sd"));
                for (p, _) in &t.quantiles {
                    header.push(format!("{name}_q{p}"));
                }
            }
        }
        let k = self.states;
        if self.discrete {
            header.extend((0..k).map(|j| format!("{}_p_{j}", self.chain)));
        } else {
            header.extend((0..k).map(|j| format!("{}_mean_{j}", self.chain)));
            header.extend((0..k).map(|j| format!("{}_sd_{j}", self.chain)));
        }
        let mut out = header.join(",");
        out.push('\n');
        let row = if self.discrete { k } else { k + k * k };
        for (s, st) in self.state.iter().enumerate() {
            for step in 0..self.lengths[s] + self.ahead {
                let mut line = vec![
                    s.to_string(),
                    step.to_string(),
                    self.horizon(s, step).to_string(),
                ];
                for t in &self.targets {
                    for c in 0..t.cols {
                        let j = step * t.cols + c;
                        line.push(format_number(t.mean[s][j]));
                        line.push(format_number(t.sd[s][j]));
                        for (_, q) in &t.quantiles {
                            line.push(format_number(q[s][j]));
                        }
                    }
                }
                let u = &st[step * row..(step + 1) * row];
                if self.discrete {
                    line.extend(u.iter().map(|&v| format_number(v)));
                } else {
                    line.extend(u[..k].iter().map(|&v| format_number(v)));
                    line.extend(
                        (0..k).map(|j| {
                            format_number((u[k + j * k + j] - u[j] * u[j]).max(0.0).sqrt())
                        }),
                    );
                }
                out.push_str(&line.join(","));
                out.push('\n');
            }
        }
        out
    }
}
