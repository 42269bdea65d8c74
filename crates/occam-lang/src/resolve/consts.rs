//! Constant expressions: `let` values, plate sizes and initial values.

use super::Resolver;
use crate::ast::{BinOp, Expr, ExprKind};
use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::ConstValue;

/// `a + b` of two constants, if defined.
pub(super) fn add(a: ConstValue, b: ConstValue) -> Option<ConstValue> {
    match (a, b) {
        (ConstValue::Scalar(x), ConstValue::Scalar(y)) => Some(ConstValue::Scalar(x + y)),
        (ConstValue::Identity(x), ConstValue::Identity(y)) => Some(ConstValue::Identity(x + y)),
        _ => None,
    }
}

/// `a * b` of two constants.
pub(super) fn mul(a: ConstValue, b: ConstValue) -> ConstValue {
    match (a, b) {
        (ConstValue::Scalar(x), ConstValue::Scalar(y)) => ConstValue::Scalar(x * y),
        (ConstValue::Identity(x), ConstValue::Scalar(y))
        | (ConstValue::Scalar(x), ConstValue::Identity(y))
        | (ConstValue::Identity(x), ConstValue::Identity(y)) => ConstValue::Identity(x * y),
    }
}

/// `-a`.
pub(super) fn neg(a: ConstValue) -> ConstValue {
    mul(a, ConstValue::Scalar(-1.0))
}

/// Rendering for messages: `-3`, `identity * 0.5`.
pub(super) fn show(c: ConstValue) -> String {
    match c {
        ConstValue::Scalar(x) => format!("{x}"),
        ConstValue::Identity(1.0) => "identity".to_string(),
        ConstValue::Identity(x) => format!("identity * {x}"),
    }
}

impl Resolver<'_, '_> {
    /// Evaluates a constant expression, reporting why it is not one.
    pub(super) fn const_eval(&mut self, e: &Expr) -> Option<ConstValue> {
        match &e.kind {
            ExprKind::Number(v) => Some(ConstValue::Scalar(*v)),
            ExprKind::Neg(inner) => self.const_eval(inner).map(neg),
            ExprKind::Name {
                name,
                indices: None,
            } => {
                if let Some(c) = self.const_value(&name.name) {
                    return Some(c);
                }
                if name.name == "identity" {
                    return Some(ConstValue::Identity(1.0));
                }
                let d = if self.var_index(&name.name).is_some()
                    || self.plate_index(&name.name).is_some()
                {
                    Diagnostic::new(
                        Code::Misuse,
                        name.span,
                        format!("`{}` is not a constant", name.name),
                    )
                    .label("a constant is needed here")
                    .hint("constants are numbers, `identity` and names declared with `let`, declared before use")
                } else {
                    let consts: Vec<String> = self.consts.iter().map(|c| c.name.clone()).collect();
                    Diagnostic::new(
                        Code::UnknownName,
                        name.span,
                        format!("unknown constant `{}`", name.name),
                    )
                    .label("not declared before this point")
                    .maybe_hint(did_you_mean(&name.name, consts.iter().map(String::as_str)))
                };
                self.error(d);
                None
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.const_eval(lhs);
                let b = self.const_eval(rhs);
                let (a, b) = (a?, b?);
                match op {
                    BinOp::Mul => Some(mul(a, b)),
                    BinOp::Add => {
                        let r = add(a, b);
                        if r.is_none() {
                            self.error(
                                Diagnostic::new(
                                    Code::Misuse,
                                    e.span,
                                    "cannot add a number to `identity`",
                                )
                                .label("matrix plus scalar")
                                .hint("scale the identity instead: `identity * 1e-3`"),
                            );
                        }
                        r
                    }
                    BinOp::MatMul => {
                        self.error(
                            Diagnostic::new(
                                Code::Misuse,
                                e.span,
                                "`@` needs a matrix variable and a vector variable",
                            )
                            .label("constants cannot be multiplied with `@`"),
                        );
                        None
                    }
                }
            }
            ExprKind::Name {
                name,
                indices: Some(_),
            } => {
                self.error(
                    Diagnostic::new(
                        Code::Misuse,
                        e.span,
                        format!("`{}[...]` is not a constant", name.name),
                    )
                    .label("a constant is needed here")
                    .hint("constants are numbers, `identity` and names declared with `let`"),
                );
                None
            }
            ExprKind::Call { func, .. } => {
                self.error(
                    Diagnostic::new(
                        Code::Misuse,
                        e.span,
                        format!("`{}(...)` is not a constant", func.name),
                    )
                    .label("a constant is needed here")
                    .hint("constants are numbers, `identity` and names declared with `let`"),
                );
                None
            }
        }
    }
}
