//! Calls of the engine's elementwise functions (`CallRule::Elementwise`), checked against the
//! function's own declaration: no function is named here, so a new one needs no code in the
//! language.

use super::expr::Ctx;
use super::{Resolver, Source};
use crate::catalog::{CallRule, Fill, FnParam, FunctionSpec, ValueKind};
use crate::diag::{Code, Diagnostic};
use crate::ir::{ConstValue, Event, Expr, ExprOp};
use crate::span::Span;

/// "real-valued or a real vector".
fn kinds_phrase(kinds: &[ValueKind]) -> String {
    let words: Vec<&str> = kinds.iter().map(|k| k.describe()).collect();
    words.join(" or ")
}

impl Resolver<'_, '_> {
    /// `spec(parts...)` for an elementwise function; `parts` are resolved and as many as its
    /// parameters (the caller checked the arity).
    pub(super) fn elementwise(
        &mut self,
        spec: &FunctionSpec,
        parts: Vec<Expr>,
        span: Span,
        ctx: &Ctx,
    ) -> Option<Expr> {
        let CallRule::Elementwise { params, like } = spec.rule else {
            return None;
        };
        for (p, e) in params.iter().zip(&parts) {
            if let Some(message) = self.param_problem(spec, p, e) {
                let label = match p.fill {
                    Fill::Known => "not a known value",
                    Fill::Random => "not accepted here",
                };
                self.error(
                    Diagnostic::new(Code::NonConjugate, e.span, message)
                        .label(label)
                        .hint(spec.summary),
                );
                return None;
            }
        }
        let event = parts[like].event;
        for (p, e) in params.iter().zip(&parts) {
            if matches!(e.op, ExprOp::Const(_)) {
                continue;
            }
            let same = match (event, e.event) {
                (None, None) => true,
                (Some(a), Some(b)) => self.same_event(a, b),
                _ => false,
            };
            if !same {
                let desc = |r: &Self, ev: Option<Event>| {
                    ev.map_or("a scalar".to_string(), |ev| {
                        format!("over {}", r.event_desc(ev))
                    })
                };
                self.error(
                    Diagnostic::new(
                        Code::EventMismatch,
                        e.span,
                        format!(
                            "event plate mismatch in {}(): `{}` is {}, `{}` {}",
                            spec.name,
                            params[like].name,
                            desc(self, event),
                            p.name,
                            desc(self, e.event)
                        ),
                    )
                    .label(desc(self, e.event))
                    .hint(format!(
                        "{}() works element by element over one event plate",
                        spec.name
                    )),
                );
                return None;
            }
        }
        let all: Vec<usize> = parts
            .iter()
            .flat_map(|p| p.plates.iter().copied())
            .collect();
        Some(Expr {
            kind: parts[like].kind,
            plates: ctx.ordered(&all),
            event,
            op: ExprOp::Call {
                function: spec.name.to_string(),
                args: parts,
            },
            span,
        })
    }

    /// Why `e` cannot be argument `p` of `spec`, if it cannot.
    fn param_problem(&self, spec: &FunctionSpec, p: &FnParam, e: &Expr) -> Option<String> {
        let head = format!("argument `{}` of {}()", p.name, spec.name);
        let kinds = kinds_phrase(p.kinds);
        let kind_ok = e.kind.is_some_and(|k| p.kinds.contains(&k));
        let why = match (&e.op, p.fill) {
            (ExprOp::Const(ConstValue::Scalar(_)), Fill::Known) => return None,
            (ExprOp::Const(_), Fill::Known) => format!("must be data or a number ({kinds})"),
            (ExprOp::Const(_), Fill::Random) => format!("must be a random variable ({kinds})"),
            (op, Fill::Known) => {
                let data = matches!(op, ExprOp::Var(r)
                    if !r.is_mixture() && matches!(self.vars[r.var].source, Source::Data));
                if data && kind_ok {
                    return None;
                }
                format!("must be data or a number, a known value ({kinds})")
            }
            (_, Fill::Random) if kind_ok => return None,
            (_, Fill::Random) => format!("must be {kinds}"),
        };
        Some(format!("{head} {why}; got {}", self.describe(e)))
    }
}
