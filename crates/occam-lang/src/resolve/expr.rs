//! Expressions on the right-hand side: references with plate alignment and
//! Categorical indexing (mixtures), constants, and deterministic functions.

use super::consts;
use super::Resolver;
use crate::ast::{self, BinOp, ExprKind};
use crate::catalog::{self, ValueKind};
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
    fn allows(&self, p: usize) -> bool {
        self.plates.contains(&p) || self.extra.contains(&p)
    }

    /// `ps` deduplicated, in the order of the context's plates.
    fn ordered(&self, ps: &[usize]) -> Vec<usize> {
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

fn constant(c: ConstValue, span: Span) -> Expr {
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

    fn call(
        &mut self,
        func: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        ctx: &Ctx,
    ) -> Option<Expr> {
        let Some(spec) = catalog::function(&func.name) else {
            let d = if let Some(dist) = catalog::distribution(&func.name) {
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
                .hint(did_you_mean(&func.name, names).unwrap_or_else(|| {
                    format!(
                        "functions: {}",
                        catalog::FUNCTIONS
                            .iter()
                            .map(|f| f.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }))
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
        match spec.name {
            "sum" => self.sum(parts, span, ctx),
            "product" => self.product(parts, span, ctx),
            "dot" => self.dot(parts, span, ctx),
            _ => self.concat(parts, span, ctx),
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

    fn sum(&mut self, parts: Vec<Expr>, span: Span, ctx: &Ctx) -> Option<Expr> {
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
        let plates = Self::union_plates(&randoms, ctx);
        if let Some(c) = folded.filter(|c| *c != ConstValue::Scalar(0.0)) {
            randoms.push(constant(c, span));
        }
        Some(Expr {
            op: ExprOp::Sum(randoms),
            kind,
            plates,
            event,
            span,
        })
    }

    fn product(&mut self, parts: Vec<Expr>, span: Span, ctx: &Ctx) -> Option<Expr> {
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
    fn matvec(&mut self, m: &ast::Expr, x: &ast::Expr, span: Span, ctx: &Ctx) -> Option<Expr> {
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
