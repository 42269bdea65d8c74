//! Automatic relevance determination read off a fitted model: which columns of a weight matrix
//! the data switched on.
//!
//! An ARD variable is a Gamma vector `alpha[Q]` used as the precision of a `GaussianARD` whose
//! event plate is `Q` (`W[D] over Q ~ GaussianARD(mean = 0, precision = alpha)`, Winn (3.5)).
//! Column q of W has prior variance 1/α_q, so the posterior mean of 1/α (here 1/⟨α_q⟩) measures
//! how much of the data that column explains. The effective dimension counts the columns whose
//! 1/⟨α⟩ exceeds a quarter of the largest (Winn §3.2.2; the thesis words the rule as counting
//! "large α", but a large α switches a column *off*, so the count is over large 1/α, as its
//! Fig. 3.7 shows).

use occam_lang::ir::{ExprOp, Node};
use serde::Serialize;

use crate::lower::Compiled;
use crate::model::Loaded;

/// A column is effective when its relevance 1/⟨α⟩ exceeds this fraction of the largest.
pub const EFFECTIVE_FRACTION: f64 = 0.25;

/// One ARD precision vector of a fitted model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ard {
    /// The Gamma variable (`alpha`).
    pub variable: String,
    /// Its plate, the columns it governs (`Q`).
    pub plate: String,
    /// The GaussianARD variables whose precision it is (`W`).
    pub weights: Vec<String>,
    /// Relevance of each column: 1/⟨α_q⟩, the posterior-mean prior variance scale.
    pub relevance: Vec<f64>,
    /// Whether each column is effective (relevance above a quarter of the largest).
    pub effective: Vec<bool>,
    /// The number of effective columns.
    pub effective_dimension: usize,
    /// For regression weights (a vector `w` over the plate, multiplied by data covariates,
    /// `dot(X, w)`): |⟨w_c⟩| / sd(w_c) for each input c, how many posterior standard deviations
    /// its coefficient lies from zero. Scale-free, unlike 1/⟨α⟩, which carries the input's own
    /// units; the effective dimension's quarter-of-the-largest rule is meant for the columns of a
    /// loading matrix on one scale (BPCA), so it is not printed for regression.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<f64>>,
}

/// Which relevances count as effective: those above [`EFFECTIVE_FRACTION`] of the largest
/// finite one. All false when none is positive and finite.
pub fn effective(relevance: &[f64]) -> Vec<bool> {
    let max = relevance
        .iter()
        .copied()
        .filter(|r| r.is_finite())
        .fold(0.0f64, f64::max);
    relevance
        .iter()
        .map(|&r| max > 0.0 && r.is_finite() && r > EFFECTIVE_FRACTION * max)
        .collect()
}

/// The effective dimension of a set of relevances (see [`effective`]).
pub fn effective_dimension(relevance: &[f64]) -> usize {
    effective(relevance).iter().filter(|&&e| e).count()
}

/// Every ARD precision vector of a fitted model, in model order.
pub fn ard(loaded: &Loaded, c: &Compiled) -> Vec<Ard> {
    let m = &loaded.model;
    let mut out = Vec::new();
    for (v, var) in m.variables.iter().enumerate() {
        let is_gamma =
            matches!(&var.node, Node::Stochastic { distribution, .. } if distribution == "Gamma");
        if !is_gamma || var.observed || var.plates.len() != 1 {
            continue;
        }
        let plate = var.plates[0];
        let weights: Vec<String> = m
            .variables
            .iter()
            .filter(|w| w.event_plates == [plate])
            .filter(|w| match &w.node {
                Node::Stochastic { distribution, args } if distribution == "GaussianARD" => {
                    args.iter().any(|a| {
                        a.slot == "precision"
                            && matches!(&a.value.op, ExprOp::Var(r) if r.var == v && !r.is_mixture())
                    })
                }
                _ => false,
            })
            .map(|w| w.name.clone())
            .collect();
        if weights.is_empty() {
            continue;
        }
        let Some(mean) = c.vmp.mean(c.var_nodes[v]) else {
            continue;
        };
        let relevance: Vec<f64> = mean.iter().map(|a| 1.0 / a).collect();
        let effective = effective(&relevance);
        let inputs = match weights.as_slice() {
            [w] => regression_inputs(loaded, c, w),
            _ => None,
        };
        out.push(Ard {
            inputs,
            variable: var.name.clone(),
            plate: m.plates[plate].name.clone(),
            weights,
            effective_dimension: effective.iter().filter(|&&e| e).count(),
            relevance,
            effective,
        });
    }
    out
}

/// |⟨w_c⟩| / sd(w_c) for each input of the weight vector named `w`, when `w` is a plate-free
/// vector multiplied by a data covariate in some `dot` or `@` (regression); `None` otherwise.
fn regression_inputs(loaded: &Loaded, c: &Compiled, w: &str) -> Option<Vec<f64>> {
    let m = &loaded.model;
    let wv = m.variables.iter().position(|v| v.name == w)?;
    if !m.variables[wv].plates.is_empty() {
        return None;
    }
    let is_data = |e: &occam_lang::ir::Expr| matches!(&e.op, ExprOp::Var(r) if matches!(m.variables[r.var].node, Node::Data));
    let is_w = |e: &occam_lang::ir::Expr| matches!(&e.op, ExprOp::Var(r) if r.var == wv);
    let mut regression = false;
    for v in &m.variables {
        let exprs: Vec<&occam_lang::ir::Expr> = match &v.node {
            Node::Stochastic { args, .. } => args.iter().map(|a| &a.value).collect(),
            Node::Deterministic { expr } => vec![expr],
            Node::Data => Vec::new(),
        };
        for e in exprs {
            e.visit(|e| {
                if let ExprOp::Dot(a, b)
                | ExprOp::MatVec {
                    matrix: a,
                    vector: b,
                } = &e.op
                {
                    regression |= (is_w(a) && is_data(b)) || (is_w(b) && is_data(a));
                }
            });
        }
    }
    if !regression {
        return None;
    }
    let node = c.var_nodes[wv];
    let occam_core::prelude::MomentKind::Gaussian { d } = c.vmp.kind(node) else {
        return None;
    };
    let u = c.vmp.moments(node);
    if u.len() != d + d * d {
        return None;
    }
    Some(
        (0..d)
            .map(|j| {
                let sd = (u[d + j * d + j] - u[j] * u[j]).max(0.0).sqrt();
                u[j].abs() / sd
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarter_of_the_largest_relevance() {
        // Winn Ex. 3.1's pattern: three columns near 1/15, six switched off near 1/1900.
        let r = [0.066, 5e-4, 0.082, 0.076, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4];
        assert_eq!(effective_dimension(&r), 3);
        assert_eq!(effective(&r)[..3], [true, false, true]);
        // Exactly a quarter is not above it; non-finite relevances never count.
        assert_eq!(effective_dimension(&[4.0, 1.0, f64::INFINITY, f64::NAN]), 1);
        assert_eq!(effective_dimension(&[]), 0);
        assert_eq!(effective_dimension(&[0.0, 0.0]), 0);
    }
}
