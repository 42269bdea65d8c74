//! Gammas with a random shape (Winn Example 2.1): `x ~ Gamma(a, b)` and the Student-t scale
//! mixture `lam ~ Gamma(nu * 0.5, nu * 0.5)`.
//!
//! The shape's variable `a` (a `Gamma` or `Exponential`) becomes the family `ShapeGamma`, whose
//! moments [s, ln a, ln Γ(s), s ln s] (s = c·a) are what its Gamma children read, and whose q is
//! taken by quadrature. That needs, for each such variable, the one constant c of every use,
//! found here before lowering ([`shape_uses`]); a Gamma child then reads the variable itself in
//! its shape slot (the factor c lives in `ShapeGamma`). A child whose rate is the same variable,
//! `Gamma(c a, k' a)`, is `GammaTiedShape` with rate k·s, k = k'/c: its two slots are one
//! variable, so treating them as two independent parents (⟨s⟩⟨ln b⟩ for ⟨s ln b⟩) would give a
//! "bound" that is not one — the rule of `occam_lang::reuse`, met here by the tied family whose
//! term is linear in u(a). Any other use of a shape variable is a located error: its q is not a
//! Gamma.

use std::collections::HashMap;

use occam_core::dist::{Dist, GammaTiedShape, ShapeGamma};
use occam_lang::diag::Code;
use occam_lang::ir::{self, ConstValue, Expr, ExprOp, Model, Node, VarRef};

use super::{Lowering, SourceRef};
use crate::error::{Error, Result};

/// `r` or `r * c` (a reference to an unselected variable, times a positive constant).
fn scaled_ref(e: &Expr) -> Option<(&VarRef, f64)> {
    match &e.op {
        ExprOp::Var(r) if !r.is_mixture() => Some((r, 1.0)),
        ExprOp::Product(parts) => match parts.as_slice() {
            // `1 * a`: the resolver folds the factor 1 away.
            [x] => match &x.op {
                ExprOp::Var(r) if !r.is_mixture() => Some((r, 1.0)),
                _ => None,
            },
            [x, c] => match (&x.op, &c.op) {
                (ExprOp::Var(r), ExprOp::Const(ConstValue::Scalar(c)))
                    if !r.is_mixture() && *c > 0.0 =>
                {
                    Some((r, *c))
                }
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// A Gamma child whose shape may be random (as written, or one of its random-shape forms).
fn is_gamma(distribution: &str) -> bool {
    occam_core::dist::family(distribution)
        .is_some_and(|f| matches!(f.name, "Gamma" | "GammaRandomShape" | "GammaTiedShape"))
}

fn arg<'a>(args: &'a [ir::Arg], slot: &str) -> Option<&'a ir::Arg> {
    args.iter().find(|a| a.slot == slot)
}

/// Every variable used as a Gamma's random shape, with its constant c (module docs); a located
/// error for a shape that is not a multiple of a `Gamma`/`Exponential` variable, for two uses
/// with different constants, and for any other use of such a variable.
pub(super) fn shape_uses(model: &Model, src: SourceRef<'_>) -> Result<HashMap<usize, f64>> {
    let mut uses: HashMap<usize, (f64, &Expr)> = HashMap::new();
    for var in &model.variables {
        let Node::Stochastic { distribution, args } = &var.node else {
            continue;
        };
        if !is_gamma(distribution) {
            continue;
        }
        let Some(shape) = arg(args, "shape").map(|a| &a.value) else {
            continue;
        };
        if matches!(shape.op, ExprOp::Const(_)) {
            continue;
        }
        let bad = |msg: String| {
            src.error(
                Code::Misuse,
                shape.span,
                msg,
                "random shape",
                Some(
                    "a Gamma's shape may be a constant, a `Gamma` or `Exponential` variable, \
                     or such a variable times a positive constant (`nu * 0.5`)"
                        .into(),
                ),
            )
        };
        let Some((r, c)) = scaled_ref(shape) else {
            return Err(bad(format!(
                "the shape of `{}` is neither a constant nor a multiple of one variable",
                var.name
            )));
        };
        let target = &model.variables[r.var];
        let ok = matches!(&target.node, Node::Stochastic { distribution, .. }
            if matches!(occam_core::dist::family(distribution).map(|f| f.name),
                        Some("Gamma" | "Exponential" | "ShapeGamma")));
        if !ok {
            return Err(bad(format!(
                "the shape of `{}` is `{}`, which is not a `Gamma` or `Exponential` variable",
                var.name, r.name
            )));
        }
        if let Some((c0, _)) = uses.get(&r.var) {
            if (c0 - c).abs() > 1e-12 * c0.abs() {
                return Err(src.error(
                    Code::Misuse,
                    shape.span,
                    format!(
                        "`{}` is a Gamma shape times {c0} in another Gamma and times {c} here",
                        r.name,
                    ),
                    "a second scale",
                    Some("use one multiple of a shape variable in every Gamma".into()),
                ));
            }
        }
        uses.entry(r.var).or_insert((c, shape));
    }
    // Any other reference to a shape variable.
    for var in &model.variables {
        let (shape_expr, rate_expr, others): (Option<&Expr>, Option<&Expr>, Vec<&Expr>) = match &var
            .node
        {
            Node::Stochastic { distribution, args } if is_gamma(distribution) => (
                arg(args, "shape").map(|a| &a.value),
                arg(args, "rate").map(|a| &a.value),
                Vec::new(),
            ),
            Node::Stochastic { args, .. } => (None, None, args.iter().map(|a| &a.value).collect()),
            Node::Deterministic { expr } => (None, None, vec![expr]),
            Node::Data => (None, None, Vec::new()),
        };
        // A rate that is the child's own shape variable is the tied form.
        let tied_rate = match (shape_expr.and_then(scaled_ref), rate_expr) {
            (Some((s, _)), Some(r)) => scaled_ref(r).is_some_and(|(r, _)| r.var == s.var),
            _ => false,
        };
        let mut check: Vec<&Expr> = others;
        if !tied_rate {
            check.extend(rate_expr);
        }
        for e in check {
            if let Some(r) = first_ref(e, &|v| uses.contains_key(&v)) {
                return Err(src.error(
                    Code::Misuse,
                    e.span,
                    format!(
                        "`{}` is a Gamma's shape, so its posterior is not a Gamma and it can \
                         only be the shape of Gammas (and the rate of the same Gamma)",
                        r.name
                    ),
                    "used as a value here",
                    Some("give this use its own variable".into()),
                ));
            }
        }
    }
    Ok(uses.into_iter().map(|(v, (c, _))| (v, c)).collect())
}

/// The first reference in `e` to a variable `pick` accepts.
fn first_ref<'a>(e: &'a Expr, pick: &dyn Fn(usize) -> bool) -> Option<&'a VarRef> {
    match &e.op {
        ExprOp::Var(r) if pick(r.var) => Some(r),
        op => op.operands().find_map(|x| first_ref(x, pick)),
    }
}

impl Lowering<'_> {
    /// The family of a `Gamma`/`Exponential` variable used as a shape with constant c.
    pub(super) fn as_shape_variable(&self, v: usize, dist: Dist, c: f64) -> Result<Dist> {
        let alpha = match dist {
            Dist::Gamma(g) => g.shape,
            Dist::ShapeGamma(g) => g.alpha,
            Dist::Exponential(_) => 1.0,
            _ => {
                let var = self.var(v);
                return Err(self.unsupported(
                    var.span,
                    format!(
                        "`{}` is a Gamma's shape and needs a constant shape of its own",
                        var.name
                    ),
                    "a shape's prior is `Gamma(constant, rate)` or `Exponential(rate)`",
                ));
            }
        };
        Ok(ShapeGamma { alpha, scale: c }.into())
    }

    /// A Gamma child with a random shape: its arguments with the shape slot reading the shape
    /// variable itself, and the tied family when the rate is the same variable (module docs).
    pub(super) fn random_shape_child(
        &self,
        dist: Dist,
        args: &[ir::Arg],
    ) -> Result<(Dist, Vec<ir::Arg>)> {
        let shape = arg(args, "shape").expect("a random shape");
        let Some((r, c)) = scaled_ref(&shape.value) else {
            return Err(Error::Run(
                "internal error: a random shape that is not a scaled reference".into(),
            ));
        };
        let mut plain = shape.clone();
        plain.value = Expr {
            op: ExprOp::Var(r.clone()),
            ..shape.value.clone()
        };
        if let Dist::GammaTiedShape(_) = dist {
            return Ok((dist, vec![plain]));
        }
        let rate = arg(args, "rate");
        if let Some((k_prime, _)) = rate
            .and_then(|a| scaled_ref(&a.value))
            .filter(|(rr, _)| rr.var == r.var)
            .map(|(_, k)| (k, ()))
        {
            let tied = GammaTiedShape {
                rate_factor: k_prime / c,
            };
            return Ok((tied.into(), vec![plain]));
        }
        let mut out: Vec<ir::Arg> = args.iter().filter(|a| a.slot != "shape").cloned().collect();
        out.insert(0, plain);
        Ok((dist, out))
    }
}
