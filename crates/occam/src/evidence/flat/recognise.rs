//! Recognising a resolved model as a [`Flat`] one: its rows, its parameters and their priors,
//! the mixture index or chain, and its observations (module `observation`).

use occam_lang::ir::{ConstValue, Expr, ExprOp, Model, Node};

use super::observation::{observation, scaled};
use super::{Flat, Param, Prior};
use crate::evidence::NotApplicable;
use crate::model::Loaded;

pub(super) fn constant(e: &Expr) -> Option<f64> {
    match e.op {
        ExprOp::Const(ConstValue::Scalar(x)) => Some(x),
        _ => None,
    }
}

pub(super) fn arg<'a>(args: &'a [occam_lang::ir::Arg], slot: &str) -> Option<&'a Expr> {
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
                let (initial, transition, kp, time) = crate::evidence::hmm::recognise(m, v, rows)?;
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
        (Some((a, time)), Some((_, p0, _))) => Some(crate::evidence::hmm::Chain::new(
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
