//! Deterministic functions and operators: `+`, `*`, `dot`, `@`/`matvec`,
//! `concat`, with constant folding and the kind and event checks of each; every other function
//! of the engine's table is checked by its declaration (`call.rs`).

use super::consts;
use super::expr::{constant, Ctx};
use super::Resolver;
use crate::ast::{self, ExprKind};
use crate::catalog::{self, CallRule, ValueKind};
use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::{ConstValue, Event, Expr, ExprOp};
use crate::span::Span;

impl Resolver<'_, '_> {
    pub(super) fn call(
        &mut self,
        func: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        ctx: &Ctx,
    ) -> Option<Expr> {
        let Some(spec) = catalog::function(&func.name) else {
            let d = if let Some(d) = self.misplaced_link(func) {
                d
            } else if let Some(dist) = catalog::distribution(&func.name) {
                Diagnostic::new(
                    Code::Misuse,
                    func.span,
                    format!("distribution {} inside an expression", dist.name),
                )
                .label("distributions cannot be nested")
                .hint(format!(
                    "declare it as its own variable, `m ~ {}(...)`, and use `m` here",
                    dist.name
                ))
            } else {
                let names = catalog::FUNCTIONS.iter().map(|f| f.name);
                Diagnostic::new(
                    Code::UnknownFunction,
                    func.span,
                    format!("unknown function `{}`", func.name),
                )
                .label("not a deterministic function")
                .hint(match did_you_mean(&func.name, names) {
                    // The near miss keeps the pointer to the guide's list of functions and links.
                    Some(near) => format!(
                        "{near} (every function and link: see {})",
                        super::link::GUIDE
                    ),
                    None => format!(
                        "functions: {}; {} go in a probability or rate slot; see {}",
                        catalog::FUNCTIONS
                            .iter()
                            .map(|f| f.name)
                            .collect::<Vec<_>>()
                            .join(", "),
                        {
                            let links: Vec<String> = catalog::LINKS
                                .iter()
                                .map(|l| format!("`{}`", l.name))
                                .collect();
                            let (last, rest) = links.split_last().expect("links");
                            format!("{} and {last}", rest.join(", "))
                        },
                        super::link::GUIDE
                    ),
                })
            };
            self.error(d);
            return None;
        };
        if let Some(a) = args.iter().find(|a| a.name.is_some()) {
            self.error(
                Diagnostic::new(
                    Code::BadArguments,
                    a.span,
                    format!("`{}` takes positional arguments only", spec.name),
                )
                .label("named argument")
                .hint(spec.summary),
            );
            return None;
        }
        if args.len() < spec.min_args || spec.max_args.is_some_and(|m| args.len() > m) {
            let want = match spec.max_args {
                Some(m) if m == spec.min_args => format!("{m}"),
                Some(m) => format!("{} to {m}", spec.min_args),
                None => format!("at least {}", spec.min_args),
            };
            self.error(
                Diagnostic::new(
                    Code::BadArguments,
                    span,
                    format!(
                        "`{}` takes {want} argument(s); got {}",
                        spec.name,
                        args.len()
                    ),
                )
                .label("wrong number of arguments")
                .hint(spec.summary),
            );
            return None;
        }
        if spec.name == "matvec" {
            return self.matvec(&args[0].value, &args[1].value, span, ctx);
        }
        let mut parts = Vec::with_capacity(args.len());
        let mut ok = true;
        for a in args {
            match self.expr(&a.value, ctx) {
                Some(x) => parts.push(x),
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        match (spec.rule, spec.name) {
            (CallRule::Elementwise { .. }, _) => self.elementwise(spec, parts, span, ctx),
            (CallRule::Operator, "sum") => self.sum(parts, span, ctx),
            (CallRule::Operator, "product") => self.product(parts, span, ctx),
            (CallRule::Operator, "dot") => self.dot(parts, span, ctx),
            (CallRule::Operator, _) => self.concat(parts, span, ctx),
        }
    }

    fn union_plates(parts: &[Expr], ctx: &Ctx) -> Vec<usize> {
        let all: Vec<usize> = parts
            .iter()
            .flat_map(|p| p.plates.iter().copied())
            .collect();
        ctx.ordered(&all)
    }

    fn operand_error(&mut self, e: &Expr, message: String, hint: &str) {
        let got = self.describe(e);
        self.error(
            Diagnostic::new(Code::NonConjugate, e.span, message)
                .label(got)
                .hint(hint),
        );
    }

    pub(super) fn sum(&mut self, parts: Vec<Expr>, span: Span, ctx: &Ctx) -> Option<Expr> {
        let mut flat = Vec::new();
        for p in parts {
            match p.op {
                ExprOp::Sum(inner) => flat.extend(inner),
                _ => flat.push(p),
            }
        }
        let mut folded: Option<ConstValue> = None;
        let mut randoms = Vec::new();
        for p in flat {
            match p.op {
                ExprOp::Const(c) => {
                    folded = match folded {
                        None => Some(c),
                        Some(f) => match consts::add(f, c) {
                            Some(s) => Some(s),
                            None => {
                                self.error(
                                    Diagnostic::new(
                                        Code::Misuse,
                                        span,
                                        "cannot add a number to `identity`",
                                    )
                                    .label("matrix plus scalar")
                                    .hint("scale the identity instead: `identity * 1e-3`"),
                                );
                                return None;
                            }
                        },
                    }
                }
                _ => randoms.push(p),
            }
        }
        if randoms.is_empty() {
            return folded.map(|c| constant(c, span));
        }
        let kind = randoms[0].kind;
        let mut event = None;
        for r in &randoms {
            if !matches!(r.kind, Some(ValueKind::Real | ValueKind::Vector)) || r.kind != kind {
                let got = self.describe(r);
                self.operand_error(
                    r,
                    format!("`+` adds Gaussian scalars or Gaussian vectors of one kind; got {got}"),
                    "sums are of Gaussian variables (conjugate to a Gaussian mean) and constants",
                );
                return None;
            }
            if let Some(ev) = r.event {
                match event {
                    None => event = Some(ev),
                    Some(e0) if !self.same_event(e0, ev) => {
                        self.error(
                            Diagnostic::new(
                                Code::EventMismatch,
                                r.span,
                                format!(
                                    "event plate mismatch in `+`: {} and {}",
                                    self.event_desc(e0),
                                    self.event_desc(ev)
                                ),
                            )
                            .label(format!("over {}", self.event_desc(ev)))
                            .hint("vectors are added elementwise over the same event plate"),
                        );
                        return None;
                    }
                    Some(_) => {}
                }
            }
        }
        if let Some(ConstValue::Identity(_)) = folded {
            self.error(
                Diagnostic::new(Code::Misuse, span, "cannot add `identity` to a variable")
                    .label("matrix in a sum")
                    .hint("`identity` is only a precision or Wishart rate"),
            );
            return None;
        }
        let mut randoms = crate::reuse::collect_terms(randoms);
        let plates = Self::union_plates(&randoms, ctx);
        if let Some(c) = folded.filter(|c| *c != ConstValue::Scalar(0.0)) {
            randoms.push(constant(c, span));
        }
        if let [only] = randoms.as_mut_slice() {
            // `a + a` collected to `2 * a`: the sum is that one term.
            only.span = span;
            return randoms.pop();
        }
        Some(Expr {
            op: ExprOp::Sum(randoms),
            kind,
            plates,
            event,
            span,
        })
    }

    pub(super) fn product(&mut self, parts: Vec<Expr>, span: Span, ctx: &Ctx) -> Option<Expr> {
        let mut flat = Vec::new();
        for p in parts {
            match p.op {
                ExprOp::Product(inner) => flat.extend(inner),
                _ => flat.push(p),
            }
        }
        let mut folded: Option<ConstValue> = None;
        let mut randoms = Vec::new();
        for p in flat {
            match p.op {
                ExprOp::Const(c) => folded = Some(folded.map_or(c, |f| consts::mul(f, c))),
                _ => randoms.push(p),
            }
        }
        if randoms.is_empty() {
            return folded.map(|c| constant(c, span));
        }
        let kind = randoms[0].kind;
        for r in &randoms {
            if r.event.is_some() {
                let got = self.describe(r);
                self.operand_error(
                    r,
                    format!("`*` multiplies scalars; got {got}"),
                    "use dot(a, b) for the inner product of two vectors",
                );
                return None;
            }
            if !matches!(r.kind, Some(ValueKind::Real | ValueKind::Positive)) || r.kind != kind {
                let got = self.describe(r);
                self.operand_error(
                    r,
                    format!("`*` multiplies Gaussians, or Gammas (a precision), not a mix; got {got}"),
                    "a product is of Gaussian scalars, or of Gamma variables with a positive constant factor",
                );
                return None;
            }
        }
        match folded {
            Some(ConstValue::Identity(_)) => {
                self.error(
                    Diagnostic::new(
                        Code::Misuse,
                        span,
                        "cannot multiply `identity` by a variable",
                    )
                    .label("matrix times variable")
                    .hint("scale the identity by a number: `identity * 1e-3`"),
                );
                return None;
            }
            Some(ConstValue::Scalar(c)) if kind == Some(ValueKind::Positive) && c <= 0.0 => {
                self.error(
                    Diagnostic::new(
                        Code::BadConstant,
                        span,
                        format!("a product of Gammas needs a positive constant factor; got {c}"),
                    )
                    .label("factor not positive")
                    .hint("a precision must stay positive"),
                );
                return None;
            }
            _ => {}
        }
        let plates = Self::union_plates(&randoms, ctx);
        if let Some(c) = folded.filter(|c| *c != ConstValue::Scalar(1.0)) {
            randoms.push(constant(c, span));
        }
        Some(Expr {
            op: ExprOp::Product(randoms),
            kind,
            plates,
            event: None,
            span,
        })
    }

    fn dot(&mut self, mut parts: Vec<Expr>, span: Span, ctx: &Ctx) -> Option<Expr> {
        for p in &parts {
            if p.kind != Some(ValueKind::Vector) {
                let got = self.describe(p);
                self.operand_error(
                    p,
                    format!("dot() takes two Gaussian vectors; got {got}"),
                    "declare vectors with an event plate: `w over Q ~ GaussianARD(0, 1)`",
                );
                return None;
            }
        }
        let (a, b) = (parts[0].event?, parts[1].event?);
        if !self.same_event(a, b) {
            self.error(
                Diagnostic::new(
                    Code::EventMismatch,
                    span,
                    format!(
                        "event plate mismatch in dot(): {} and {}",
                        self.event_desc(a),
                        self.event_desc(b)
                    ),
                )
                .label("vectors of different event plates")
                .note(parts[0].span, format!("over {}", self.event_desc(a)))
                .note(parts[1].span, format!("over {}", self.event_desc(b)))
                .hint("dot() needs both vectors over the same event plate"),
            );
            return None;
        }
        let plates = Self::union_plates(&parts, ctx);
        let b = parts.pop()?;
        let a = parts.pop()?;
        Some(Expr {
            op: ExprOp::Dot(Box::new(a), Box::new(b)),
            kind: Some(ValueKind::Real),
            plates,
            event: None,
            span,
        })
    }

    fn concat(&mut self, parts: Vec<Expr>, span: Span, ctx: &Ctx) -> Option<Expr> {
        for p in &parts {
            let scalar = p.event.is_none() && matches!(p.kind, None | Some(ValueKind::Real));
            if !scalar || matches!(p.op, ExprOp::Const(ConstValue::Identity(_))) {
                let got = self.describe(p);
                self.operand_error(
                    p,
                    format!("concat() takes Gaussian scalars and numbers; got {got}"),
                    "concat(a, b, ...) builds a vector from scalars",
                );
                return None;
            }
        }
        let plates = Self::union_plates(&parts, ctx);
        let size = parts.len() as u64;
        Some(Expr {
            op: ExprOp::Concat(parts),
            kind: Some(ValueKind::Vector),
            plates,
            event: Some(Event { plate: None, size }),
            span,
        })
    }

    /// `W @ x`: `W` is a vector variable whose last plate holds the rows; that
    /// plate becomes the result's event plate.
    pub(super) fn matvec(
        &mut self,
        m: &ast::Expr,
        x: &ast::Expr,
        span: Span,
        ctx: &Ctx,
    ) -> Option<Expr> {
        let row = match &m.kind {
            ExprKind::Name { name, .. } => self.var_index(&name.name).and_then(|v| {
                let e = &self.vars[v];
                (e.kind == Some(ValueKind::Vector))
                    .then(|| e.plates.last().copied())
                    .flatten()
            }),
            _ => None,
        };
        let Some(row) = row else {
            // A table of numbers `X[N, D]` times a vector: the regression written as in NumPy.
            // Say how Occam writes it instead of reporting plate D as a stray plate.
            if let Some(hint) = self.table_times_vector(m, x, ctx) {
                return hint;
            }
            // Resolve for its own errors first, then explain the shape.
            let got = self.expr(m, ctx).map(|e| self.describe(&e));
            if let Some(got) = got {
                self.error(
                    Diagnostic::new(Code::NonConjugate, m.span, format!("`@` needs a matrix: rows of a Gaussian vector in a plate; got {got}"))
                        .label("not a matrix")
                        .hint("declare the rows as `W[D] over Q ~ GaussianARD(0, alpha)`; `W @ x` is then over D"),
                );
            }
            return None;
        };
        if ctx.plates.contains(&row) {
            self.error(
                Diagnostic::new(
                    Code::Misuse,
                    m.span,
                    format!(
                        "row plate {} of the matrix is also a plate of `{}`",
                        self.plate_desc(row),
                        ctx.owner
                    ),
                )
                .label("rows would be both replicated and stacked")
                .hint("for one row per plate element use dot(W[D], x); `W @ x` makes the rows an event plate"),
            );
            return None;
        }
        let mut inner = ctx.clone();
        inner.extra.push(row);
        let a = self.expr(m, &inner);
        let b = self.expr(x, ctx);
        let (a, b) = (a?, b?);
        if b.kind != Some(ValueKind::Vector) {
            let got = self.describe(&b);
            self.operand_error(
                &b,
                format!("`@` multiplies a matrix by a Gaussian vector; got {got}"),
                "declare `x[N] over Q ~ GaussianARD(0, 1)`",
            );
            return None;
        }
        let (ea, eb) = (a.event?, b.event?);
        if !self.same_event(ea, eb) {
            self.error(
                Diagnostic::new(
                    Code::EventMismatch,
                    span,
                    format!(
                        "event plate mismatch in `@`: matrix columns over {}, vector over {}",
                        self.event_desc(ea),
                        self.event_desc(eb)
                    ),
                )
                .label("columns and vector differ")
                .hint("the matrix rows and the vector need the same event plate"),
            );
            return None;
        }
        let plates: Vec<usize> = Self::union_plates(&[a.clone(), b.clone()], ctx)
            .into_iter()
            .filter(|&p| p != row)
            .collect();
        Some(Expr {
            op: ExprOp::MatVec {
                matrix: Box::new(a),
                vector: Box::new(b),
            },
            kind: Some(ValueKind::Vector),
            plates,
            event: Some(Event {
                plate: Some(row),
                size: self.plates[row].size,
            }),
            span,
        })
    }
}
