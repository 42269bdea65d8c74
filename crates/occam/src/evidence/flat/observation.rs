//! Recognising one observed variable of a [`Flat`] model: its layout over the rows and its
//! likelihood, each slot a constant or a parameter.

use occam_lang::ir::{ConstValue, ExprOp, Node};

use super::recognise::{arg, constant};
use super::{Lik, Obs, Param, Slot};
use crate::evidence::NotApplicable;
use crate::model::Loaded;

/// `c * tau` or `tau`: (c, tau's variable).
pub(super) fn scaled(op: &ExprOp) -> Option<(f64, usize)> {
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

pub(super) fn observation(
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
        values: table.values.to_vec(),
        present: table.present.clone(),
    })
}
