//! Lowering of one stochastic variable's slots: each argument becomes a parent — a constant, a
//! reference, a gate for a reference indexed by Categoricals, or a chain of deterministic nodes
//! for a compound expression — and the family is built by its own constructor from them.

use occam_core::dist::{Dist, SlotInput};
use occam_core::prelude::*;
use occam_core::spec::{constant_values, Arg, ArgProblem, Args, ConstDomain, SlotSpec, ValueKind};
use occam_lang::diag::Code;
use occam_lang::ir::{self, ConstValue, Expr, ExprOp, Node, VarRef};
use occam_lang::span::Span;

use super::{Lowering, Use};
use crate::error::{Error, Result};

impl Lowering<'_> {
    pub(super) fn dist_name(&self, v: usize) -> &str {
        match &self.var(v).node {
            Node::Stochastic { distribution, .. } => distribution,
            _ => "data",
        }
    }

    pub(super) fn stochastic(
        &mut self,
        v: usize,
        distribution: &str,
        args: &[ir::Arg],
        plates: &[PlateId],
    ) -> Result<NodeId> {
        let var = self.var(v).clone();
        let d = self.event_size(v);
        let Some(spec) = occam_core::dist::family(distribution) else {
            return Err(self.unsupported(
                var.span,
                format!("the engine has no distribution `{distribution}`"),
                "see `occam check --help` for the supported distributions",
            ));
        };
        let arg = |slot: &str| args.iter().find(|a| a.slot == slot);
        // The family's constructor sees one argument per slot of its spec.
        let given: Vec<Arg> = spec
            .slots
            .iter()
            .map(|s| match arg(s.name).map(|a| &a.value) {
                None => Arg::Missing,
                Some(e) => match e.op {
                    ExprOp::Const(ConstValue::Scalar(x)) => Arg::Number(x),
                    ExprOp::Const(ConstValue::Identity(x)) => Arg::Identity(x),
                    _ => Arg::Variable(e.kind),
                },
            })
            .collect();
        let built = occam_core::dist::build(
            spec.name,
            &Args {
                var: &var.name,
                event: d,
                slots: &given,
                spec,
            },
        );
        let mut dist: Dist = match built {
            Some(Ok(dist)) => dist,
            Some(Err(e)) => {
                let span = e
                    .slot
                    .and_then(|s| arg(spec.slots[s].name))
                    .map_or(var.span, |a| a.value.span);
                let code = match e.problem {
                    ArgProblem::Unsupported => Code::Misuse,
                    ArgProblem::BadConstant => Code::BadConstant,
                };
                return Err(self.src.error(code, span, e.message, e.label, e.hint));
            }
            None => {
                return Err(Error::Run(format!(
                    "internal error: no constructor for the family `{}`",
                    spec.name
                )))
            }
        };
        // A Gamma's random shape (Winn Example 2.1, `shape.rs`): the shape variable's own family,
        // and the child's shape slot reading that variable.
        if let Some(&c) = self.shape_vars.get(&v) {
            dist = self.as_shape_variable(v, dist, c)?;
        }
        let rewritten;
        let args = if matches!(dist, Dist::GammaRandomShape(_) | Dist::GammaTiedShape(_)) {
            let (d, a) = self.random_shape_child(dist, args)?;
            dist = d;
            rewritten = a;
            rewritten.as_slice()
        } else {
            args
        };
        let arg = |slot: &str| args.iter().find(|a| a.slot == slot);
        // This variable alone within the model's state budget, before its slots' constants (a
        // Wishart's D × D rate) are made: an event plate of 30,000 columns allocated 7.2 GB here.
        self.check_variable_size(v, dist.kind().len())?;
        // The built family's parent slots, by name, with the spec slot each comes from.
        let mut slots: Vec<(&ir::Arg, &SlotSpec)> = Vec::new();
        for s in dist.slots() {
            match (arg(s.name), spec.slot(s.name)) {
                (Some(a), Some((_, sp))) => slots.push((a, sp)),
                _ => {
                    return Err(self.src.error(
                        Code::MissingSlot,
                        var.span,
                        format!("`{}` needs an argument for `{}`", var.name, s.name),
                        "missing argument",
                        None,
                    ))
                }
            }
        }
        let mut selectors: Vec<(usize, usize)> = Vec::new();
        let mut parents = Vec::with_capacity(slots.len());
        let event = var.event_plates.first().copied();
        for (s, (a, slot_spec)) in slots.iter().enumerate() {
            let input = dist.slot_input(s);
            let u = Use {
                input,
                stack_plate: if input.stack > 1 { event } else { None },
                slot: &a.slot,
                domain: slot_spec.constant,
            };
            let spec = self.arg(&a.value, u, v, Some(&mut selectors))?;
            parents.push(spec);
        }
        let sel: Vec<(NodeId, PlateId)> = selectors
            .iter()
            .map(|&(c, p)| {
                (
                    self.nodes[c].expect("parents lowered first"),
                    self.plates[p],
                )
            })
            .collect();
        let kind = dist.kind();
        self.has_mixture |= !sel.is_empty();
        let id = self
            .g
            .add_mixture(&var.name, dist, plates, &sel, parents)
            .map_err(|e| self.slot_err(v, args, &e))?;
        self.record(id, &var.name, v, kind, var.plates.clone());
        Ok(id)
    }

    /// The parent spec for expression `e` in a slot; `selectors` is given for a stochastic node's
    /// own slots, where an indexed reference makes the node a mixture.
    pub(super) fn arg(
        &mut self,
        e: &Expr,
        u: Use<'_>,
        owner: usize,
        selectors: Option<&mut Vec<(usize, usize)>>,
    ) -> Result<ParentSpec> {
        let id = match &e.op {
            ExprOp::Const(c) => return self.constant(*c, u, owner, e.span),
            ExprOp::Var(r) if !r.is_mixture() => self.nodes[r.var].expect("parents lowered first"),
            ExprOp::Var(r) => {
                let conflict = selectors.as_ref().is_none_or(|sel| {
                    r.index.iter().any(|pi| {
                        pi.by.as_ref().is_some_and(|c| {
                            sel.iter().any(|&(c2, p2)| p2 == pi.plate && c2 != c.var)
                        })
                    })
                });
                match selectors {
                    Some(sel) if !conflict => {
                        for pi in &r.index {
                            if let Some(c) = &pi.by {
                                if !sel.contains(&(c.var, pi.plate)) {
                                    sel.push((c.var, pi.plate));
                                }
                                self.selector_cats.push(c.var);
                            }
                        }
                        self.nodes[r.var].expect("parents lowered first")
                    }
                    _ => self.gate(r, e, owner, u.slot)?,
                }
            }
            _ => {
                let plates = e.plates.clone();
                self.compound(e, None, owner, &plates, u.slot)?
            }
        };
        self.node_spec(id, u, owner, e.span)
    }

    /// `p(id)`, stacked along the slot's plate when it gathers several elements; a node without
    /// that plate is first replicated over it.
    fn node_spec(
        &mut self,
        id: NodeId,
        u: Use<'_>,
        owner: usize,
        span: Span,
    ) -> Result<ParentSpec> {
        let Some(q) = u.stack_plate else {
            return Ok(p(id));
        };
        let plates = self.node_plates[&id.index()].clone();
        if plates.contains(&q) {
            return Ok(ParentSpec::Stacked(id, self.plates[q]));
        }
        // Replicate over the plate with an identity node.
        let kind = self.kinds[&id.index()];
        let factor: occam_core::factor::Factor = match kind {
            MomentKind::Gaussian { d } => Sum { n: 1, d }.into(),
            MomentKind::Gamma => GammaProduct { n: 1, scale: 1.0 }.into(),
            other => {
                return Err(self.unsupported(
                    span,
                    format!(
                        "cannot repeat a {other} value over plate {}",
                        self.model.plates[q].name
                    ),
                    "put the parent in the event plate",
                ))
            }
        };
        let mut new_plates = plates.clone();
        new_plates.push(q);
        let name = self.aux_name(owner, u.slot);
        let cp = self.core_plates(&new_plates);
        let rid = self
            .g
            .deterministic(&name, factor, &cp, [p(id)])
            .map_err(|e| self.err(owner, Some(span), &e))?;
        self.record(rid, &name, owner, kind, new_plates);
        Ok(ParentSpec::Stacked(rid, self.plates[q]))
    }

    fn constant(&self, c: ConstValue, u: Use<'_>, owner: usize, span: Span) -> Result<ParentSpec> {
        let arg = match c {
            ConstValue::Scalar(x) => Arg::Number(x),
            ConstValue::Identity(x) => Arg::Identity(x),
        };
        match constant_values(u.input.kind, u.domain, arg) {
            Some(values) => Ok(cv(values)),
            None => Err(self.unsupported(
                span,
                format!(
                    "a constant cannot fill slot `{}` of `{}` (it takes {})",
                    u.slot,
                    self.var(owner).name,
                    u.input.kind
                ),
                "use a variable here",
            )),
        }
    }

    /// An indexed reference inside an expression: a chain of `Gate` nodes, one per indexed plate.
    fn gate(&mut self, r: &VarRef, e: &Expr, owner: usize, slot: &str) -> Result<NodeId> {
        let mut cur = self.nodes[r.var].expect("parents lowered first");
        let mut cur_plates = self.node_plates[&cur.index()].clone();
        for pi in &r.index {
            let Some(c) = &pi.by else { continue };
            self.gate_cats.push(c.var);
            let cat = self.nodes[c.var].expect("parents lowered first");
            let k = self.plate_size(pi.plate);
            let kind = self.kinds[&cur.index()];
            let mut plates: Vec<usize> = cur_plates
                .iter()
                .copied()
                .filter(|&p| p != pi.plate)
                .collect();
            for &p in &self.var(c.var).plates {
                if !plates.contains(&p) {
                    plates.push(p);
                }
            }
            let name = self.aux_name(owner, slot);
            let cp = self.core_plates(&plates);
            self.has_mixture = true;
            let id = self
                .g
                .deterministic(
                    &name,
                    Gate { k, of: kind },
                    &cp,
                    [p(cat), ParentSpec::Stacked(cur, self.plates[pi.plate])],
                )
                .map_err(|err| self.err(owner, Some(e.span), &err))?;
            self.record(id, &name, owner, kind, plates.clone());
            cur = id;
            cur_plates = plates;
        }
        Ok(cur)
    }

    /// A deterministic node for a compound expression (or a deterministic variable, `name`).
    pub(super) fn compound(
        &mut self,
        e: &Expr,
        name: Option<String>,
        owner: usize,
        plates: &[usize],
        slot: &str,
    ) -> Result<NodeId> {
        let name = match name {
            Some(n) => n,
            None => self.aux_name(owner, slot),
        };
        let d = e.event.map_or(1, |ev| ev.size as usize);
        let gauss = |d: usize| Use {
            input: SlotInput::single(MomentKind::Gaussian { d }),
            stack_plate: None,
            slot,
            domain: ConstDomain::Real,
        };
        let (factor, parents, kind): (occam_core::factor::Factor, Vec<ParentSpec>, MomentKind) =
            match &e.op {
                ExprOp::Sum(parts) => {
                    let mut ps = Vec::new();
                    for x in parts {
                        ps.push(self.arg(x, gauss(d), owner, None)?);
                    }
                    (
                        Sum { n: ps.len(), d }.into(),
                        ps,
                        MomentKind::Gaussian { d },
                    )
                }
                ExprOp::Product(parts) if e.kind == Some(ValueKind::Positive) => {
                    let mut scale = 1.0;
                    let mut ps = Vec::new();
                    let gam = Use {
                        input: SlotInput::single(MomentKind::Gamma),
                        stack_plate: None,
                        slot,
                        domain: ConstDomain::Real,
                    };
                    for x in parts {
                        match x.op {
                            ExprOp::Const(ConstValue::Scalar(c)) => scale *= c,
                            _ => ps.push(self.arg(x, gam, owner, None)?),
                        }
                    }
                    (
                        GammaProduct { n: ps.len(), scale }.into(),
                        ps,
                        MomentKind::Gamma,
                    )
                }
                ExprOp::Product(parts) => {
                    let mut ps = Vec::new();
                    for x in parts {
                        ps.push(self.arg(x, gauss(1), owner, None)?);
                    }
                    (
                        Product { n: ps.len() }.into(),
                        ps,
                        MomentKind::Gaussian { d: 1 },
                    )
                }
                ExprOp::Dot(a, b) => {
                    let dd = a.event.map_or(1, |ev| ev.size as usize);
                    let pa = self.arg(a, gauss(dd), owner, None)?;
                    let pb = self.arg(b, gauss(dd), owner, None)?;
                    (
                        Dot { d: dd }.into(),
                        vec![pa, pb],
                        MomentKind::Gaussian { d: 1 },
                    )
                }
                ExprOp::MatVec { matrix, vector } => {
                    let rows = d;
                    let cols = vector.event.map_or(1, |ev| ev.size as usize);
                    let row_plate = e.event.and_then(|ev| ev.plate);
                    let pm = self.arg(
                        matrix,
                        Use {
                            input: SlotInput {
                                kind: MomentKind::Gaussian { d: cols },
                                stack: rows,
                            },
                            stack_plate: row_plate,
                            slot,
                            domain: ConstDomain::Real,
                        },
                        owner,
                        None,
                    )?;
                    let pv = self.arg(vector, gauss(cols), owner, None)?;
                    (
                        MatVec { rows, cols }.into(),
                        vec![pm, pv],
                        MomentKind::Gaussian { d: rows },
                    )
                }
                ExprOp::Concat(parts) => {
                    let mut ps = Vec::new();
                    for x in parts {
                        ps.push(self.arg(x, gauss(1), owner, None)?);
                    }
                    (
                        Concat { n: ps.len() }.into(),
                        ps,
                        MomentKind::Gaussian { d: parts.len() },
                    )
                }
                ExprOp::Call { function, args } => {
                    // An elementwise function of the engine's table: its factor from the
                    // arguments' event sizes (a constant takes the value's), its slots in order.
                    let dims: Vec<usize> = args
                        .iter()
                        .map(|x| match x.op {
                            ExprOp::Const(_) => d,
                            _ => x.event.map_or(1, |ev| ev.size as usize),
                        })
                        .collect();
                    let Some(factor) = occam_core::factor::call(function, &dims) else {
                        return Err(self.unsupported(
                            e.span,
                            format!("the engine has no function `{function}` for sizes {dims:?}"),
                            "see `occam help distributions` for the functions",
                        ));
                    };
                    let mut ps = Vec::with_capacity(args.len());
                    for (s, x) in args.iter().enumerate() {
                        let u = Use {
                            input: factor.slot_input(s),
                            stack_plate: None,
                            slot,
                            domain: ConstDomain::Real,
                        };
                        ps.push(self.arg(x, u, owner, None)?);
                    }
                    let kind = factor.kind();
                    (factor, ps, kind)
                }
                ExprOp::Var(r) => {
                    // A deterministic variable that is a plain (possibly indexed) reference.
                    let src = if r.is_mixture() {
                        self.gate(r, e, owner, slot)?
                    } else {
                        self.nodes[r.var].expect("parents lowered first")
                    };
                    let kind = self.kinds[&src.index()];
                    let f: occam_core::factor::Factor = match kind {
                        MomentKind::Gaussian { d } => Sum { n: 1, d }.into(),
                        MomentKind::Gamma => GammaProduct { n: 1, scale: 1.0 }.into(),
                        other => {
                            return Err(self.unsupported(
                                e.span,
                                format!("a deterministic copy of a {other} value"),
                                "use the variable directly",
                            ))
                        }
                    };
                    (f, vec![p(src)], kind)
                }
                ExprOp::Const(_) => {
                    return Err(self.unsupported(
                        e.span,
                        "a constant expression as a variable".into(),
                        "declare constants with `let`",
                    ))
                }
            };
        let cp = self.core_plates(plates);
        let id = self
            .g
            .deterministic(&name, factor, &cp, parents)
            .map_err(|err| self.err(owner, Some(e.span), &err))?;
        self.record(id, &name, owner, kind, plates.to_vec());
        Ok(id)
    }
}
