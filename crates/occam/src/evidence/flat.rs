//! The models whose evidence can be estimated beyond the VB bound: a resolved model recognised
//! as rows `N` of observations, each with parameters from constant-hyperparameter priors, either
//! shared by all rows (a one-layer model) or chosen per row by one Categorical index `z[N]` over
//! components `K` (a finite mixture). Every other shape is refused with the reason, which the
//! estimators return as "not applicable".

use super::NotApplicable;
use occam_lang::ir::{ConstValue, Expr, ExprOp, Model, Node};

use crate::model::Loaded;

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

fn constant(e: &Expr) -> Option<f64> {
    match e.op {
        ExprOp::Const(ConstValue::Scalar(x)) => Some(x),
        _ => None,
    }
}

fn arg<'a>(args: &'a [occam_lang::ir::Arg], slot: &str) -> Option<&'a Expr> {
    args.iter().find(|a| a.slot == slot).map(|a| &a.value)
}

/// Recognises `loaded` as a [`Flat`] model, or says why it is not one.
pub(crate) fn recognise(loaded: &Loaded) -> Result<Flat, NotApplicable> {
    let m = &loaded.model;
    if !m.q_blocks.is_empty() {
        return Err(NotApplicable::Model("the model has joint q-blocks"));
    }
    let observed: Vec<usize> = (0..m.variables.len())
        .filter(|&v| m.variables[v].observed)
        .collect();
    if observed.is_empty() {
        return Err(NotApplicable::Model("the model observes nothing"));
    }
    // Rows: the first plate of the observed variables.
    let rows = match m.variables[observed[0]].plates.first() {
        Some(&p) => p,
        None => {
            return Err(NotApplicable::Model(
                "an observed variable has no plate of rows",
            ))
        }
    };
    let n = m.plates[rows].size as usize;
    // The mixture index, if any: a latent Categorical over the rows.
    let mut index: Option<(usize, usize, usize)> = None; // (z, weights var, K plate)
    let mut chain: Option<(usize, usize)> = None; // (transition var, time plate)
    for (v, var) in m.variables.iter().enumerate() {
        if var.observed || var.map {
            if var.map {
                return Err(NotApplicable::variable(
                    &var.name,
                    "is a point estimate (map)",
                ));
            }
            continue;
        }
        match &var.node {
            Node::Stochastic { distribution, .. } if distribution == "MarkovChain" => {
                if index.is_some() {
                    return Err(NotApplicable::Model(
                        "more than one latent Categorical index",
                    ));
                }
                let (initial, transition, kp, time) = super::hmm::recognise(m, v, rows)?;
                index = Some((v, initial, kp));
                chain = Some((transition, time));
            }
            Node::Stochastic { distribution, args } if distribution == "Categorical" => {
                if index.is_some() {
                    return Err(NotApplicable::Model(
                        "more than one latent Categorical index",
                    ));
                }
                if var.plates != [rows] {
                    return Err(NotApplicable::variable(
                        &var.name,
                        "is not indexed by the rows alone",
                    ));
                }
                let w = match arg(args, "probs").map(|e| &e.op) {
                    Some(ExprOp::Var(r)) if r.index.is_empty() => r.var,
                    _ => {
                        return Err(NotApplicable::variable(
                            &var.name,
                            "does not read one weight vector",
                        ))
                    }
                };
                let kp = match var.event_plates.first() {
                    Some(&p) => p,
                    None => {
                        return Err(NotApplicable::variable(
                            &var.name,
                            "has no plate of components",
                        ))
                    }
                };
                index = Some((v, w, kp));
            }
            Node::Stochastic { .. } => {}
            Node::Deterministic { .. } => {
                return Err(NotApplicable::variable(&var.name, "is deterministic"));
            }
            Node::Data => return Err(NotApplicable::variable(&var.name, "is a data input")),
        }
    }
    let kplate = index.map(|(_, _, p)| p);
    let k = kplate.map_or(1, |p| m.plates[p].size as usize);
    // Parameters: every other latent variable.
    let mut params: Vec<Param> = Vec::new();
    let mut pending_ng: Vec<(usize, usize)> = Vec::new(); // (param, tau variable)
    for (v, var) in m.variables.iter().enumerate() {
        if var.observed || Some(v) == index.map(|i| i.0) {
            continue;
        }
        let Node::Stochastic { distribution, args } = &var.node else {
            continue;
        };
        let (by_k, cols) = layout(m, &var.plates, kplate).ok_or_else(|| {
            NotApplicable::part(&var.name, "plates other than components and columns")
        })?;
        let c = |s: &str| arg(args, s).and_then(constant);
        let prior = match distribution.as_str() {
            "Gaussian" => {
                let mean =
                    c("mean").ok_or_else(|| NotApplicable::part(&var.name, "a latent mean"))?;
                match arg(args, "precision").map(|e| (&e.op, constant(e))) {
                    Some((_, Some(p))) => Prior::Gaussian { mean, precision: p },
                    Some((op, None)) => {
                        let (kappa, tau) = scaled(op).ok_or_else(|| {
                            NotApplicable::part(&var.name, "a precision other than c * tau")
                        })?;
                        pending_ng.push((params.len(), tau));
                        Prior::NormalGamma {
                            mean,
                            kappa,
                            tau: usize::MAX,
                        }
                    }
                    None => return Err(NotApplicable::part(&var.name, "no precision")),
                }
            }
            "Gamma" => Prior::Gamma {
                shape: c("shape")
                    .ok_or_else(|| NotApplicable::part(&var.name, "a latent shape"))?,
                rate: c("rate").ok_or_else(|| NotApplicable::part(&var.name, "a latent rate"))?,
            },
            "Beta" => Prior::Beta {
                a: c("alpha").ok_or_else(|| NotApplicable::part(&var.name, "a latent alpha"))?,
                b: c("beta").ok_or_else(|| NotApplicable::part(&var.name, "a latent beta"))?,
            },
            "Dirichlet" => {
                let width = match var.event_plates.first() {
                    Some(&p) => m.plates[p].size as usize,
                    None => return Err(NotApplicable::part(&var.name, "no event plate")),
                };
                Prior::Dirichlet {
                    alpha: c("concentration")
                        .ok_or_else(|| NotApplicable::part(&var.name, "a vector concentration"))?,
                    width,
                }
            }
            other => {
                return Err(NotApplicable::part(
                    &var.name,
                    format!("a {other} parameter"),
                ))
            }
        };
        params.push(Param {
            var: v,
            name: var.name.clone(),
            prior,
            by_k,
            cols,
        });
    }
    for (p, tau_var) in pending_ng {
        let t = params
            .iter()
            .position(|q| q.var == tau_var)
            .ok_or(NotApplicable::Model(
                "a Gaussian precision reads a non-parameter",
            ))?;
        let same = params[t].by_k == params[p].by_k && params[t].cols == params[p].cols;
        if !matches!(params[t].prior, Prior::Gamma { .. }) || !same {
            return Err(NotApplicable::part(
                &params[p].name,
                "its precision is not a Gamma of the same plates",
            ));
        }
        if let Prior::NormalGamma { tau, .. } = &mut params[p].prior {
            *tau = t;
        }
    }
    let weights = match index {
        Some(_) if chain.is_some() => None,
        Some((_, w, _)) => {
            let p = params
                .iter()
                .position(|q| q.var == w)
                .ok_or(NotApplicable::Model("weights"))?;
            let ok = matches!(params[p].prior, Prior::Dirichlet { width, .. } if width == k);
            if !ok || params[p].by_k || params[p].cols != 1 {
                return Err(NotApplicable::Model(
                    "the mixture weights are not one Dirichlet over the components",
                ));
            }
            Some(p)
        }
        None => None,
    };
    let mut obs = Vec::new();
    for &v in &observed {
        obs.push(observation(
            loaded,
            v,
            rows,
            kplate,
            index.map(|i| i.0),
            &params,
        )?);
    }
    let chain = match (chain, index) {
        (Some((a, time)), Some((_, p0, _))) => Some(super::hmm::Chain::new(
            &params,
            &obs,
            p0,
            a,
            k,
            m.plates[time].size as usize,
        )?),
        _ => None,
    };
    Ok(Flat {
        n,
        k,
        weights,
        index: index.map(|i| m.variables[i.0].name.clone()),
        params,
        obs,
        chain,
    })
}

/// `(by components, columns)` of a parameter with plates `plates`.
fn layout(m: &Model, plates: &[usize], kplate: Option<usize>) -> Option<(bool, usize)> {
    let size = |p: usize| m.plates[p].size as usize;
    match plates {
        [] => Some((false, 1)),
        [a] if Some(*a) == kplate => Some((true, 1)),
        [a] => Some((false, size(*a))),
        [a, b] if Some(*a) == kplate && Some(*b) != kplate => Some((true, size(*b))),
        _ => None,
    }
}

/// `c * tau` or `tau`: (c, tau's variable).
fn scaled(op: &ExprOp) -> Option<(f64, usize)> {
    match op {
        ExprOp::Var(r) => Some((1.0, r.var)),
        ExprOp::Product(xs) if xs.len() == 2 => match (&xs[0].op, &xs[1].op) {
            (ExprOp::Const(ConstValue::Scalar(c)), ExprOp::Var(r))
            | (ExprOp::Var(r), ExprOp::Const(ConstValue::Scalar(c))) => Some((*c, r.var)),
            _ => None,
        },
        _ => None,
    }
}

fn observation(
    loaded: &Loaded,
    v: usize,
    rows: usize,
    kplate: Option<usize>,
    z: Option<usize>,
    params: &[Param],
) -> Result<Obs, NotApplicable> {
    let m = &loaded.model;
    let var = &m.variables[v];
    let Node::Stochastic { distribution, args } = &var.node else {
        return Err(NotApplicable::variable(
            &var.name,
            "is observed but not random",
        ));
    };
    if var.plates.first() != Some(&rows) || var.plates.len() > 2 {
        return Err(NotApplicable::variable(
            &var.name,
            "is not laid out as rows [N] or [N, D]",
        ));
    }
    let cols = var.plates.get(1).map_or(1, |&p| m.plates[p].size as usize);
    let colplate = var.plates.get(1).copied();
    let slot = |name: &str| -> Result<Slot, NotApplicable> {
        let e =
            arg(args, name).ok_or_else(|| NotApplicable::part(&var.name, format!("no {name}")))?;
        if let Some(c) = constant(e) {
            return Ok(Slot::Const(c));
        }
        let ExprOp::Var(r) = &e.op else {
            return Err(NotApplicable::part(
                &var.name,
                format!("{name} is an expression"),
            ));
        };
        let p = params
            .iter()
            .position(|q| q.var == r.var)
            .ok_or_else(|| NotApplicable::part(&var.name, format!("{name} reads `{}`", r.name)))?;
        for ix in &r.index {
            let ok = if Some(ix.plate) == kplate {
                ix.by.as_ref().map(|b| b.var) == z
            } else {
                ix.by.is_none() && Some(ix.plate) == colplate
            };
            if !ok {
                return Err(NotApplicable::part(
                    &var.name,
                    format!("`{}` is indexed otherwise", r.name),
                ));
            }
        }
        let q = &params[p];
        if q.by_k && !r.index.iter().any(|i| i.by.is_some()) || q.cols > 1 && q.cols != cols {
            return Err(NotApplicable::part(
                &var.name,
                format!("`{}` is indexed otherwise", r.name),
            ));
        }
        Ok(Slot::Param(p))
    };
    let lik = match distribution.as_str() {
        "Gaussian" => Lik::Gaussian {
            mean: slot("mean")?,
            precision: slot("precision")?,
        },
        "Bernoulli" => Lik::Bernoulli(slot("prob")?),
        "Poisson" => Lik::Poisson(slot("rate")?),
        "Categorical" => Lik::Categorical(slot("probs")?),
        other => {
            return Err(NotApplicable::part(
                &var.name,
                format!("a {other} observation"),
            ))
        }
    };
    let table = loaded
        .data
        .tables
        .get(&var.name)
        .ok_or_else(|| NotApplicable::part(&var.name, "no data attached"))?;
    if table.values.len() != m.plates[rows].size as usize * cols {
        return Err(NotApplicable::part(&var.name, "data of another shape"));
    }
    for (i, (&x, &ok)) in table.values.iter().zip(&table.present).enumerate() {
        let fine = match lik {
            Lik::Gaussian { .. } => x.is_finite(),
            Lik::Bernoulli(_) => x == 0.0 || x == 1.0,
            Lik::Poisson(_) => x >= 0.0 && x.fract() == 0.0,
            Lik::Categorical(Slot::Param(p)) => {
                x >= 0.0 && x.fract() == 0.0 && (x as usize) < params[p].width()
            }
            Lik::Categorical(Slot::Const(_)) => false,
        };
        if ok && !fine {
            return Err(NotApplicable::Value {
                var: var.name.clone(),
                row: i / cols + 1,
                why: format!("is outside the support of its {distribution}"),
                value: x,
            });
        }
    }
    Ok(Obs {
        name: var.name.clone(),
        lik,
        cols,
        values: table.values.clone(),
        present: table.present.clone(),
    })
}
