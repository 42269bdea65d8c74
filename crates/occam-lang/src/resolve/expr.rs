//! Expressions on the right-hand side: references with plate alignment and
//! Categorical indexing (mixtures), and constants. Functions and operators
//! are in `funcs.rs`.

use super::consts;
use super::Resolver;
use crate::ast::{self, BinOp, ExprKind};
use crate::catalog::ValueKind;
use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::{CategoricalIndex, ConstValue, Event, Expr, ExprOp, PlateIndex, VarRef};
use crate::span::Span;

/// Where an expression is resolved: the variable it belongs to and the plates
/// a parent may vary over.
#[derive(Clone)]
pub(super) struct Ctx {
    /// `x[N, D]`, for messages.
    pub owner: String,
    /// The owner's plates.
    pub plates: Vec<usize>,
    /// Further plates allowed, e.g. the owner's event plate in an elementwise
    /// slot, or the row plate of a matrix in `matvec`.
    pub extra: Vec<usize>,
}

impl Ctx {
    pub(super) fn allows(&self, p: usize) -> bool {
        self.plates.contains(&p) || self.extra.contains(&p)
    }

    /// `ps` deduplicated, in the order of the context's plates.
    pub(super) fn ordered(&self, ps: &[usize]) -> Vec<usize> {
        self.plates
            .iter()
            .chain(&self.extra)
            .copied()
            .filter(|p| ps.contains(p))
            .fold(Vec::new(), |mut acc, p| {
                if !acc.contains(&p) {
                    acc.push(p);
                }
                acc
            })
    }
}

pub(super) fn constant(c: ConstValue, span: Span) -> Expr {
    Expr {
        op: ExprOp::Const(c),
        kind: None,
        plates: Vec::new(),
        event: None,
        span,
    }
}

impl Resolver<'_, '_> {
    /// Resolves `e` in `ctx`; `None` after reporting an error.
    pub(super) fn expr(&mut self, e: &ast::Expr, ctx: &Ctx) -> Option<Expr> {
        match &e.kind {
            ExprKind::Number(v) => Some(constant(ConstValue::Scalar(*v), e.span)),
            ExprKind::Neg(inner) => {
                let x = self.expr(inner, ctx)?;
                match x.op {
                    ExprOp::Const(c) => Some(constant(consts::neg(c), e.span)),
                    _ => {
                        self.error(
                            Diagnostic::new(Code::Misuse, e.span, "only constants can be negated")
                                .label("negated variable")
                                .hint("multiply by a constant instead: `-1 * x`"),
                        );
                        None
                    }
                }
            }
            ExprKind::Name { name, indices } => self.name(name, indices.as_deref(), e.span, ctx),
            ExprKind::Binary { op, lhs, rhs } => {
                if *op == BinOp::MatMul {
                    return self.matvec(lhs, rhs, e.span, ctx);
                }
                let a = self.expr(lhs, ctx);
                let b = self.expr(rhs, ctx);
                let parts = vec![a?, b?];
                match op {
                    BinOp::Add => self.sum(parts, e.span, ctx),
                    _ => self.product(parts, e.span, ctx),
                }
            }
            ExprKind::Call { func, args } => self.call(func, args, e.span, ctx),
        }
    }

    fn name(
        &mut self,
        name: &ast::Ident,
        indices: Option<&[ast::Ident]>,
        span: Span,
        ctx: &Ctx,
    ) -> Option<Expr> {
        if let Some(v) = self.var_index(&name.name) {
            return self.var_ref(v, name, indices.unwrap_or(&[]), span, ctx);
        }
        if indices.is_none() {
            if let Some(c) = self.const_value(&name.name) {
                return Some(constant(c, span));
            }
            if name.name == "identity" {
                return Some(constant(ConstValue::Identity(1.0), span));
            }
        }
        let d = if self.plate_index(&name.name).is_some() {
            Diagnostic::new(
                Code::Misuse,
                name.span,
                format!("`{}` is a plate, not a value", name.name),
            )
            .label("plate used as a value")
            .hint("plates appear in plate lists `x[N]`, after `over`, or as indices `mu[K]`")
        } else if self.const_value(&name.name).is_some() || name.name == "identity" {
            Diagnostic::new(
                Code::Misuse,
                span,
                format!("constant `{}` cannot be indexed", name.name),
            )
            .label("indexed constant")
            .hint("constants are broadcast over every plate")
        } else {
            let candidates: Vec<String> = self
                .vars
                .iter()
                .map(|v| v.name.clone())
                .chain(self.consts.iter().map(|c| c.name.clone()))
                .collect();
            Diagnostic::new(
                Code::UnknownName,
                name.span,
                format!("unknown variable `{}`", name.name),
            )
            .label("not declared")
            .hint(
                did_you_mean(&name.name, candidates.iter().map(String::as_str)).unwrap_or_else(
                    || format!("declare it, e.g. `{} ~ Gaussian(0, 1)`", name.name),
                ),
            )
        };
        self.error(d);
        None
    }

    /// A reference to variable `v`: the leading plates as indexed, the rest
    /// aligned with the same plates of the context.
    pub(super) fn var_ref(
        &mut self,
        v: usize,
        name: &ast::Ident,
        idx: &[ast::Ident],
        span: Span,
        ctx: &Ctx,
    ) -> Option<Expr> {
        if !self.vars[v].ok || self.vars[v].kind.is_none() {
            return None;
        }
        let plates = self.vars[v].plates.clone();
        if idx.len() > plates.len() {
            let names: Vec<&str> = plates
                .iter()
                .map(|&p| self.plates[p].name.as_str())
                .collect();
            self.error(
                Diagnostic::new(
                    Code::PlateMismatch,
                    span,
                    format!(
                        "`{}` has {} plate{} but {} indices are given",
                        name.name,
                        plates.len(),
                        if plates.len() == 1 { "" } else { "s" },
                        idx.len()
                    ),
                )
                .label("too many indices")
                .note(
                    self.vars[v].name_span,
                    format!("declared as `{}`", self.var_desc(v)),
                )
                .hint(format!(
                    "indices select the leading plates in order: `{}[{}]`",
                    name.name,
                    names.join(", ")
                )),
            );
            return None;
        }
        let mut index = Vec::with_capacity(plates.len());
        let mut used = Vec::new();
        let mut ok = true;
        for (pos, &p) in plates.iter().enumerate() {
            match idx.get(pos) {
                None => {
                    if ctx.allows(p) {
                        used.push(p);
                        index.push(PlateIndex { plate: p, by: None });
                    } else {
                        self.outside_plate(v, p, span, ctx);
                        ok = false;
                    }
                }
                Some(id) => match self.index(v, pos, p, id, ctx) {
                    Some((pi, ps)) => {
                        used.extend(ps);
                        index.push(pi);
                    }
                    None => ok = false,
                },
            }
        }
        if !ok {
            return None;
        }
        let e = &self.vars[v];
        Some(Expr {
            op: ExprOp::Var(VarRef {
                var: v,
                name: e.name.clone(),
                index,
            }),
            kind: e.kind,
            plates: ctx.ordered(&used),
            event: e.event.map(|q| Event {
                plate: Some(q),
                size: self.plates[q].size,
            }),
            span,
        })
    }

    /// The parent's plate `p` is neither in the child nor indexed.
    fn outside_plate(&mut self, v: usize, p: usize, span: Span, ctx: &Ctx) {
        let name = self.vars[v].name.clone();
        let pname = self.plates[p].name.clone();
        let example = self
            .vars
            .iter()
            .find(|c| {
                c.ok && c.kind == Some(ValueKind::Categorical)
                    && c.event == Some(p)
                    && c.plates.iter().all(|&q| ctx.allows(q))
            })
            .map(|c| c.name.clone());
        let hint = match example {
            Some(c) => {
                let pos = self.vars[v]
                    .plates
                    .iter()
                    .position(|&q| q == p)
                    .unwrap_or(0);
                let lead: Vec<String> = self.vars[v].plates[..pos]
                    .iter()
                    .map(|&q| self.plates[q].name.clone())
                    .chain(std::iter::once(c))
                    .collect();
                format!(
                    "select an element of {pname} with a Categorical (a mixture): `{name}[{}]`, or take `{name}` out of plate {pname}",
                    lead.join(", ")
                )
            }
            None => format!(
                "take `{name}` out of plate {pname}, or put `{}` in it",
                ctx.owner.split('[').next().unwrap_or("")
            ),
        };
        self.error(
            Diagnostic::new(
                Code::PlateMismatch,
                span,
                format!(
                    "plate mismatch: `{name}` is in plate {}, which `{}` is not in",
                    self.plate_desc(p),
                    ctx.owner
                ),
            )
            .label(format!("`{}` varies over {pname}", self.var_desc(v)))
            .note(self.vars[v].name_span, format!("`{name}` declared here"))
            .hint(hint),
        );
    }

    /// Index `id` at position `pos` (plate `p`) of variable `v`.
    fn index(
        &mut self,
        v: usize,
        pos: usize,
        p: usize,
        id: &ast::Ident,
        ctx: &Ctx,
    ) -> Option<(PlateIndex, Vec<usize>)> {
        let vname = self.vars[v].name.clone();
        if let Some(q) = self.plate_index(&id.name) {
            if q != p {
                self.error(
                    Diagnostic::new(
                        Code::PlateMismatch,
                        id.span,
                        format!(
                            "plate mismatch: index {} is for plate {} of `{vname}`, which is {}",
                            self.plate_desc(q),
                            pos + 1,
                            self.plate_desc(p)
                        ),
                    )
                    .label(format!(
                        "expected {} or a Categorical over it",
                        self.plates[p].name
                    ))
                    .note(
                        self.vars[v].name_span,
                        format!("declared as `{}`", self.var_desc(v)),
                    )
                    .hint("indices follow the order of the variable's plate list"),
                );
                return None;
            }
            if !ctx.allows(p) {
                self.outside_plate(v, p, id.span, ctx);
                return None;
            }
            return Some((PlateIndex { plate: p, by: None }, vec![p]));
        }
        let Some(c) = self.var_index(&id.name) else {
            let candidates: Vec<String> = self
                .plates
                .iter()
                .map(|p| p.name.clone())
                .chain(
                    self.vars
                        .iter()
                        .filter(|v| v.kind == Some(ValueKind::Categorical))
                        .map(|v| v.name.clone()),
                )
                .collect();
            self.error(
                Diagnostic::new(
                    Code::UnknownName,
                    id.span,
                    format!("unknown index `{}`", id.name),
                )
                .label("not a plate or a variable")
                .hint(
                    did_you_mean(&id.name, candidates.iter().map(String::as_str)).unwrap_or_else(
                        || {
                            format!(
                                "index plate {} by its name or by a Categorical over it",
                                self.plates[p].name
                            )
                        },
                    ),
                ),
            );
            return None;
        };
        if !self.vars[c].ok {
            return None;
        }
        if self.vars[c].kind != Some(ValueKind::Categorical) {
            let noun = self.var_noun(c);
            self.error(
                Diagnostic::new(
                    Code::NotCategorical,
                    id.span,
                    format!("{noun} cannot index plate {} of `{vname}`", self.plates[p].name),
                )
                .label(format!("`{}` is {}, not Categorical", id.name, self.vars[c].kind.map_or("unknown", |k| k.describe())))
                .note(self.vars[c].name_span, format!("`{}` declared here", id.name))
                .hint(format!(
                    "a plate is selected by a Categorical over it (a mixture): `z[N] ~ Categorical(p)` with `p ~ Dirichlet(1) over {}`",
                    self.plates[p].name
                )),
            );
            return None;
        }
        let cats = self.vars[c].event?;
        if cats != p {
            self.error(
                Diagnostic::new(
                    Code::PlateMismatch,
                    id.span,
                    format!(
                        "plate mismatch: `{}` takes values in {}, but plate {} of `{vname}` is {}",
                        id.name,
                        self.plate_desc(cats),
                        pos + 1,
                        self.plate_desc(p)
                    ),
                )
                .label(format!("categories {}", self.plates[cats].name))
                .note(
                    self.vars[v].name_span,
                    format!("declared as `{}`", self.var_desc(v)),
                )
                .hint("the Categorical's probabilities must be over the plate it selects"),
            );
            return None;
        }
        let cplates = self.vars[c].plates.clone();
        for &q in &cplates {
            if !ctx.allows(q) {
                self.outside_plate(c, q, id.span, ctx);
                return None;
            }
        }
        let by = CategoricalIndex {
            var: c,
            name: id.name.clone(),
        };
        Some((
            PlateIndex {
                plate: p,
                by: Some(by),
            },
            cplates,
        ))
    }

    /// A short description of a resolved expression for messages.
    pub(super) fn describe(&self, e: &Expr) -> String {
        let kind = e.kind.map_or("constant", |k| k.describe());
        match &e.op {
            ExprOp::Const(c) => format!("the constant {}", consts::show(*c)),
            ExprOp::Var(r) => self.var_noun(r.var),
            ExprOp::Sum(_) => format!("a sum ({kind})"),
            ExprOp::Product(_) => format!("a product ({kind})"),
            ExprOp::Dot(..) => "a dot product (real-valued)".to_string(),
            ExprOp::MatVec { .. } => "a matrix-vector product (a real vector)".to_string(),
            ExprOp::Concat(_) => "a concatenation (a real vector)".to_string(),
            ExprOp::Call { function, .. } => format!("a value of {function}() ({kind})"),
        }
    }

    /// "Q (size 9)" or "an unnamed dimension of size 3".
    pub(super) fn event_desc(&self, ev: Event) -> String {
        match ev.plate {
            Some(q) => self.plate_desc(q),
            None => format!("an unnamed dimension of size {}", ev.size),
        }
    }

    /// Whether two event dimensions line up (same plate, or a `concat` of the same length).
    pub(super) fn same_event(&self, a: Event, b: Event) -> bool {
        match (a.plate, b.plate) {
            (Some(p), Some(q)) => p == q,
            _ => a.size == b.size,
        }
    }
}
