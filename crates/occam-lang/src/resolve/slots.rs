//! Second pass, per variable in dependency order: arguments to slots, and the
//! kind, shape and constant checks against the catalog.

use super::expr::Ctx;
use super::{consts, Resolver, Source};
use crate::ast::{self, VarRhs};
use crate::catalog::{self, ConstDomain, DistSpec, EventShape, SlotShape, SlotSpec, ValueKind};
use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::{Arg, ConstValue, Event, Expr, ExprOp, Node};

impl Resolver<'_, '_> {
    /// Resolves the right-hand side of variable `v`.
    pub(super) fn variable(&mut self, v: usize) {
        if !self.vars[v].ok {
            return;
        }
        let Source::Decl(d) = self.vars[v].source else {
            return;
        };
        let ctx = Ctx {
            owner: self.var_desc(v),
            plates: self.vars[v].plates.clone(),
            extra: Vec::new(),
        };
        let node = match (&d.rhs, self.vars[v].dist) {
            (VarRhs::Random { dist, args }, Some(spec)) if self.is_chain_decl(v) => {
                self.chain(v, spec, dist, args, ctx)
            }
            (VarRhs::Random { dist, args }, Some(spec)) => {
                self.stochastic(v, spec, dist, args, ctx)
            }
            (VarRhs::Deterministic(e), _) => self.deterministic(v, d, e, &ctx),
            _ => None,
        };
        match node {
            Some(n) => self.vars[v].node = Some(n),
            None => self.vars[v].ok = false,
        }
    }

    fn deterministic(
        &mut self,
        v: usize,
        d: &ast::VarDecl,
        e: &ast::Expr,
        ctx: &Ctx,
    ) -> Option<Node> {
        let x = self.expr(e, ctx)?;
        let Some(kind) = x.kind else {
            self.error(
                Diagnostic::new(
                    Code::Misuse,
                    e.span,
                    format!("`{}` is a constant expression", d.name.name),
                )
                .label("no variable here")
                .hint(format!(
                    "declare constants with `let {} = ...`",
                    d.name.name
                )),
            );
            return None;
        };
        match (self.vars[v].event, x.event) {
            (Some(q), Some(ev))
                if !self.same_event(
                    Event {
                        plate: Some(q),
                        size: self.plates[q].size,
                    },
                    ev,
                ) =>
            {
                self.error(
                    Diagnostic::new(
                        Code::EventMismatch,
                        e.span,
                        format!(
                            "`{}` is declared over {} but its expression is over {}",
                            d.name.name,
                            self.plate_desc(q),
                            self.event_desc(ev)
                        ),
                    )
                    .label(format!("over {}", self.event_desc(ev)))
                    .hint("make the event plates agree"),
                );
                return None;
            }
            (Some(q), None) => {
                self.error(
                    Diagnostic::new(
                        Code::EventMismatch,
                        e.span,
                        format!(
                            "`{}` is declared over {} but its expression is scalar",
                            d.name.name,
                            self.plate_desc(q)
                        ),
                    )
                    .label("scalar")
                    .hint("drop `over`, or build a vector with concat(...)"),
                );
                return None;
            }
            (None, Some(Event { plate: Some(q), .. })) => self.vars[v].event = Some(q),
            (None, Some(ev)) => {
                self.error(
                    Diagnostic::new(
                        Code::EventMismatch,
                        d.name.span,
                        format!("name the event plate of `{}`", d.name.name),
                    )
                    .label(format!("a vector over {}", self.event_desc(ev)))
                    .hint(format!(
                        "declare a plate of that size and write `{} over C = ...`",
                        d.name.name
                    )),
                );
                return None;
            }
            _ => {}
        }
        self.vars[v].kind = Some(kind);
        Some(Node::Deterministic { expr: x })
    }

    fn stochastic(
        &mut self,
        v: usize,
        spec: &'static DistSpec,
        dist: &ast::Ident,
        args: &[ast::Arg],
        ctx: Ctx,
    ) -> Option<Node> {
        // `Bernoulli(sigmoid(x))` is `BernoulliLogit(x)` (module `link`).
        let linked = self.link(spec, args).ok()?;
        let (spec, args) = match &linked {
            Some((target, args)) => {
                self.vars[v].dist = Some(target);
                (*target, args.as_slice())
            }
            None => (spec, args),
        };
        let filled = self.assign_slots(spec, dist, args)?;
        let mut resolved: Vec<Option<Expr>> = Vec::with_capacity(spec.slots.len());
        for (slot, arg) in spec.slots.iter().zip(&filled) {
            let mut c = ctx.clone();
            if slot.shape == SlotShape::Elementwise {
                c.extra.extend(self.vars[v].event);
            }
            resolved.push(self.expr(&arg.value, &c));
        }
        // A Categorical's categories come from its probabilities when not given.
        if spec.event == EventShape::Categories && self.vars[v].event.is_none() {
            match resolved.first().and_then(|e| e.as_ref()) {
                Some(Expr {
                    event: Some(Event { plate: Some(q), .. }),
                    ..
                }) => self.vars[v].event = Some(*q),
                Some(e) => {
                    let span = e.span;
                    self.error(
                        Diagnostic::new(
                            Code::EventMismatch,
                            span,
                            format!("the categories of `{}` are unknown", self.vars[v].name),
                        )
                        .label("probabilities without a category plate")
                        .hint(format!(
                            "name them: `{} ~ Categorical(...) over K`",
                            self.vars[v].name
                        )),
                    );
                    return None;
                }
                None => return None,
            }
        }
        let mut out = Vec::with_capacity(spec.slots.len());
        let mut ok = true;
        for (slot, e) in spec.slots.iter().zip(resolved) {
            match e {
                Some(e) if self.check_slot(v, spec, slot, &e) => out.push(Arg {
                    slot: slot.name.to_string(),
                    value: e,
                }),
                _ => ok = false,
            }
        }
        ok.then(|| Node::Stochastic {
            distribution: spec.name.to_string(),
            args: out,
        })
    }

    /// Matches positional and named arguments to slots.
    pub(super) fn assign_slots<'x>(
        &mut self,
        spec: &DistSpec,
        dist: &ast::Ident,
        args: &'x [ast::Arg],
    ) -> Option<Vec<&'x ast::Arg>> {
        let mut filled: Vec<Option<&ast::Arg>> = vec![None; spec.slots.len()];
        let mut named_seen = false;
        let mut ok = true;
        let slots_list = spec
            .slots
            .iter()
            .map(SlotSpec::signature)
            .collect::<Vec<_>>()
            .join(", ");
        for (i, a) in args.iter().enumerate() {
            match &a.name {
                Some(n) => {
                    named_seen = true;
                    match spec.slot(&n.name) {
                        Some((k, _)) if filled[k].is_some() => {
                            self.error(
                                Diagnostic::new(
                                    Code::BadArguments,
                                    n.span,
                                    format!(
                                        "slot `{}` of {} is given twice",
                                        spec.slots[k].name, spec.name
                                    ),
                                )
                                .label("second value")
                                .hint(format!(
                                    "slots of {}, aliases in parentheses",
                                    spec.signature()
                                )),
                            );
                            ok = false;
                        }
                        Some((k, _)) => filled[k] = Some(a),
                        None => {
                            let names = spec.slots.iter().flat_map(|s| {
                                std::iter::once(s.name).chain(s.aliases.iter().copied())
                            });
                            let near = did_you_mean(&n.name, names)
                                .map(|s| format!("{s} "))
                                .unwrap_or_default();
                            self.error(
                                Diagnostic::new(
                                    Code::UnknownSlot,
                                    n.span,
                                    format!("{} has no slot `{}`", spec.name, n.name),
                                )
                                .label("unknown slot")
                                .hint(format!("{near}valid slots: {slots_list}")),
                            );
                            ok = false;
                        }
                    }
                }
                None if named_seen => {
                    self.error(
                        Diagnostic::new(
                            Code::BadArguments,
                            a.span,
                            "positional argument after a named one",
                        )
                        .label("positional")
                        .hint(format!(
                            "positional arguments come first, in slot order: {}",
                            spec.signature()
                        )),
                    );
                    ok = false;
                }
                None if i >= spec.slots.len() => {
                    self.error(
                        Diagnostic::new(
                            Code::BadArguments,
                            a.span,
                            format!(
                                "{} takes {} argument(s); got {}",
                                spec.name,
                                spec.slots.len(),
                                args.len()
                            ),
                        )
                        .label("extra argument")
                        .hint(format!("slots: {slots_list}")),
                    );
                    ok = false;
                }
                None => filled[i] = Some(a),
            }
        }
        if !ok {
            return None;
        }
        let missing: Vec<&str> = spec
            .slots
            .iter()
            .zip(&filled)
            .filter(|(_, f)| f.is_none())
            .map(|(s, _)| s.name)
            .collect();
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ");
            self.error(
                Diagnostic::new(
                    Code::MissingSlot,
                    dist.span,
                    format!("missing argument {list} of {}", spec.name),
                )
                .label(format!("missing {list}"))
                .hint(format!(
                    "slots of {}, aliases in parentheses",
                    spec.signature()
                )),
            );
            return None;
        }
        Some(filled.into_iter().flatten().collect())
    }

    /// Conjugacy, constant domain and event shape of one filled slot.
    pub(super) fn check_slot(
        &mut self,
        v: usize,
        spec: &DistSpec,
        slot: &SlotSpec,
        e: &Expr,
    ) -> bool {
        let what = format!("{} of {}", slot.name, spec.name);
        match (e.kind, &e.op) {
            (None, ExprOp::Const(c)) => {
                if !slot.takes_constant() {
                    let got = self.describe(e);
                    self.error(
                        Diagnostic::new(
                            Code::NonConjugate,
                            e.span,
                            format!("{what} must be {}; got {got}", slot.expects),
                        )
                        .label("a constant is not allowed here")
                        .hint(format!(
                            "declare a variable: {}",
                            catalog::producers(slot.kinds).join(" or ")
                        )),
                    );
                    return false;
                }
                if !in_domain(*c, slot.constant) {
                    self.error(
                        Diagnostic::new(
                            Code::BadConstant,
                            e.span,
                            format!(
                                "{what} must be {}; got {}",
                                slot.constant.describe(),
                                consts::show(*c)
                            ),
                        )
                        .label("out of range")
                        .hint(format!("{what} must be {}", slot.expects)),
                    );
                    return false;
                }
                true
            }
            (None, _) => true,
            (Some(kind), _) => {
                // A vector where a scalar Gaussian is expected is a shape error.
                let vector_for_scalar =
                    kind == ValueKind::Vector && slot.kinds.contains(&ValueKind::Real);
                // A data input over the categories where probabilities are expected is a known
                // probability table (`data P[K] over C`, each row summing to 1).
                if let (ValueKind::Vector | ValueKind::Simplex, ExprOp::Var(r)) = (kind, &e.op) {
                    if slot.kinds.contains(&ValueKind::Simplex)
                        && matches!(self.vars[r.var].source, Source::Data)
                    {
                        self.vars[r.var].kind = Some(ValueKind::Simplex);
                        return self.check_event(v, spec, slot, e, &what);
                    }
                }
                if !slot.kinds.contains(&kind) && !vector_for_scalar {
                    let got = self.describe(e);
                    let hint = if slot.takes_variable() {
                        let mut h = format!(
                            "conjugate parents here: {}",
                            catalog::producers(slot.kinds).join(", ")
                        );
                        if slot.takes_constant() {
                            h.push_str(", or a constant");
                        }
                        h
                    } else {
                        format!(
                            "this slot takes only a constant ({})",
                            slot.constant.describe()
                        )
                    };
                    self.error(
                        Diagnostic::new(
                            Code::NonConjugate,
                            e.span,
                            format!("{what} must be {}; got {got}", slot.expects),
                        )
                        .label(if slot.takes_variable() {
                            "not conjugate here"
                        } else {
                            "must be a constant"
                        })
                        .hint(hint),
                    );
                    return false;
                }
                self.check_event(v, spec, slot, e, &what)
            }
        }
    }

    fn check_event(
        &mut self,
        v: usize,
        spec: &DistSpec,
        slot: &SlotSpec,
        e: &Expr,
        what: &str,
    ) -> bool {
        let child = self.vars[v].event.map(|q| Event {
            plate: Some(q),
            size: self.plates[q].size,
        });
        let bad = match (slot.shape, e.event, child) {
            (SlotShape::Scalar, Some(ev), _) => Some(format!(
                "takes a scalar; got {} over {}",
                self.describe(e),
                self.event_desc(ev)
            )),
            (SlotShape::Elementwise | SlotShape::ChildEvent, Some(ev), Some(c))
                if !self.same_event(ev, c) =>
            {
                Some(format!(
                    "must be over the event plate {} of `{}`; got {} over {}",
                    self.event_desc(c),
                    self.vars[v].name,
                    self.describe(e),
                    self.event_desc(ev)
                ))
            }
            (SlotShape::ChildEvent, None, Some(c)) => Some(format!(
                "must be over the event plate {} of `{}`; got {}",
                self.event_desc(c),
                self.vars[v].name,
                self.describe(e)
            )),
            _ => None,
        };
        let Some(msg) = bad else { return true };
        let hint = if slot.shape == SlotShape::Scalar && spec.value == ValueKind::Real {
            "reduce a vector with dot(a, b), or use GaussianARD or MvGaussian for a vector child"
                .to_string()
        } else {
            "the parent and the child need the same event plate".to_string()
        };
        self.error(
            Diagnostic::new(
                Code::EventMismatch,
                e.span,
                format!("event plate mismatch: {what} {msg}"),
            )
            .label("wrong event plate")
            .hint(hint),
        );
        false
    }
}

fn in_domain(c: ConstValue, d: ConstDomain) -> bool {
    match (c, d) {
        (_, ConstDomain::Never) => false,
        (ConstValue::Identity(x), ConstDomain::Matrix) => x > 0.0,
        (ConstValue::Identity(_), _) => false,
        (ConstValue::Scalar(x), ConstDomain::Real) => x.is_finite(),
        (ConstValue::Scalar(x), ConstDomain::Positive | ConstDomain::Matrix) => {
            x > 0.0 && x.is_finite()
        }
        (ConstValue::Scalar(x), ConstDomain::Probability) => (0.0..=1.0).contains(&x),
        (ConstValue::Scalar(x), ConstDomain::Count) => {
            x >= 0.0 && x.fract() == 0.0 && x.is_finite()
        }
    }
}
