//! Lowering: the language's resolved IR ([`occam_lang::Model`]) onto the core's [`Graph`].
//!
//! * Every IR plate becomes a core plate of the same name; parents align by plate name in both.
//! * A stochastic variable becomes one core node; a slot filled directly by a reference indexed by
//!   Categoricals (`mu[lambda]`) makes it a mixture (`add_mixture`, one selector per indexed plate,
//!   several selectors = a conditional probability table).
//! * Compound expressions become deterministic nodes named `var.slot`, `var.slot.1`, ...
//!   (`Sum`, `Product`/`GammaProduct`, `Dot`, `MatVec`, `Concat`); an indexed reference inside an
//!   expression becomes a `Gate` node. A scalar variable used where a slot gathers one value per
//!   event-plate element (GaussianARD's precision `tau` without the plate) is replicated over the
//!   plate by an identity node (`Sum` of one term, or `GammaProduct` of one factor).
//! * `data X[N] over C` becomes a constant node holding the covariates.
//! * `q joint(a, b, c)` becomes [`Graph::joint_q`] over the members and the observed evidence
//!   that reads several of them (`lower/qblocks.rs`).
//! * A stochastic variable's family is built by the family's own constructor (`from_args` in its
//!   file in `occam-core`) from its constants; no family is named here. The constructor may build
//!   an equal family (a `GaussianARD` with a vector mean and a constant precision is an
//!   `MvGaussian` with that diagonal precision).
//!
//! Every core build error is mapped back to the variable (and, when the slot is known, the
//! argument) it came from, so it prints as `file:line:column` with a caret.

use std::collections::HashMap;

use occam_core::dist::{Dist, SlotInput};
use occam_core::prelude::*;
use occam_core::spec::{constant_values, Arg, ArgProblem, Args, ConstDomain, SlotSpec, ValueKind};
use occam_lang::diag::{Code, Diagnostic};
use occam_lang::ir::{self, ConstValue, Expr, ExprOp, Model, Node, VarRef};
use occam_lang::span::Span;
use occam_lang::Diagnostics;

use crate::data::DataSet;
use crate::error::{Error, Result};

pub mod chain;
mod qblocks;

/// What the lowering produced: the graph and the map between core nodes and model variables.
pub struct Lowered {
    /// The core graph, ready to compile.
    pub graph: Graph,
    /// Core node of each IR variable (by IR index).
    pub var_nodes: Vec<NodeId>,
    /// IR variable that each core node (by name) belongs to; auxiliary nodes belong to the
    /// variable whose expression created them.
    pub owner: HashMap<String, usize>,
    /// Whether some node is a mixture or gate (so component pruning can apply).
    pub has_mixture: bool,
}

/// Model text and name, for diagnostics.
#[derive(Clone, Copy)]
pub struct SourceRef<'a> {
    /// The file name printed in locations.
    pub file: &'a str,
    /// The model text.
    pub text: &'a str,
}

impl SourceRef<'_> {
    /// A model error at `span`.
    pub fn error(
        &self,
        code: Code,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
        hint: Option<String>,
    ) -> Error {
        let d = Diagnostic::new(code, span, message)
            .label(label)
            .maybe_hint(hint);
        Error::Model(Box::new(Diagnostics::new(self.file, self.text, vec![d])))
    }
}

/// Maps a core build error to the model place of variable `v` (or argument `arg_span`).
pub fn build_error(
    src: SourceRef<'_>,
    model: &Model,
    v: usize,
    arg_span: Option<Span>,
    err: &BuildError,
) -> Error {
    let var = &model.variables[v];
    let (code, label, hint) = match err {
        BuildError::Conjugacy { .. } => (
            Code::NonConjugate,
            "not conjugate in the engine",
            Some(
                "the engine needs the parent's moments to match the slot (Winn Table 2.1)"
                    .to_string(),
            ),
        ),
        BuildError::PlateMismatch { .. } => (
            Code::PlateMismatch,
            "plate mismatch",
            Some(
                "a parent's plates must be the child's plates, or selected by a Categorical"
                    .to_string(),
            ),
        ),
        BuildError::Shape { .. } => (Code::EventMismatch, "rejected by the engine", None),
        BuildError::Value { .. } => (Code::BadConstant, "invalid value", None),
        BuildError::UnknownName { .. } | BuildError::Duplicate { .. } => {
            (Code::Misuse, "rejected by the engine", None)
        }
    };
    src.error(
        code,
        arg_span.unwrap_or(var.span),
        format!("`{}`: {err}", var.name),
        label,
        hint,
    )
}

struct Lowering<'a> {
    model: &'a Model,
    src: SourceRef<'a>,
    g: Graph,
    plates: Vec<PlateId>,
    nodes: Vec<Option<NodeId>>,
    kinds: HashMap<usize, MomentKind>,
    /// IR plate indices of each core node (by node index).
    node_plates: HashMap<usize, Vec<usize>>,
    owner: HashMap<String, usize>,
    /// Counter for auxiliary node names, per owner.
    aux: HashMap<usize, usize>,
    has_mixture: bool,
    /// Categorical variables used as mixture selectors, and as gate indices.
    selector_cats: Vec<usize>,
    gate_cats: Vec<usize>,
}

/// Lowers `model`; observed variables get their tables from `data` when `observe` is true.
pub fn lower(model: &Model, src: SourceRef<'_>, data: &DataSet, observe: bool) -> Result<Lowered> {
    let mut l = Lowering {
        model,
        src,
        g: Graph::new(),
        plates: Vec::new(),
        nodes: vec![None; model.variables.len()],
        kinds: HashMap::new(),
        node_plates: HashMap::new(),
        owner: HashMap::new(),
        aux: HashMap::new(),
        has_mixture: false,
        selector_cats: Vec::new(),
        gate_cats: Vec::new(),
    };
    for p in &model.plates {
        let size = usize::try_from(p.size).map_err(|_| {
            src.error(
                Code::PlateSize,
                p.span,
                format!("plate `{}` is too large ({})", p.name, p.size),
                "too large",
                None,
            )
        })?;
        let id = l.g.try_plate(&p.name, size).map_err(|e| {
            src.error(
                Code::PlateSize,
                p.span,
                e.to_string(),
                "invalid plate",
                None,
            )
        })?;
        l.plates.push(id);
    }
    for &v in &model.topological_order {
        l.variable(v, data, observe)?;
    }
    // The engine seeds mixture indices by k-means++ only through mixture children; an index used
    // only inside expressions (a gate) would start symmetric, so it starts from a random draw.
    for &c in &l.gate_cats {
        if !l.selector_cats.contains(&c) && model.variables[c].init.is_none() {
            if let Some(id) = l.nodes[c] {
                l.g.initialize(id, Init::Random);
            }
        }
    }
    l.q_blocks()?;
    let var_nodes = l
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            n.ok_or_else(|| {
                Error::Run(format!(
                    "internal error: variable `{}` was not lowered",
                    model.variables[i].name
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Lowered {
        graph: l.g,
        var_nodes,
        owner: l.owner,
        has_mixture: l.has_mixture,
    })
}

/// Where an expression is used: the slot it fills and how constants convert.
#[derive(Clone, Copy)]
struct Use<'s> {
    input: SlotInput,
    /// The plate a stacked slot gathers along (the child's event plate, or a matrix's row plate).
    stack_plate: Option<usize>,
    /// Slot name, for auxiliary node names.
    slot: &'s str,
    /// Which constants the slot accepts (how a constant becomes the parent's values:
    /// [`occam_core::spec::constant_values`]).
    domain: ConstDomain,
}

impl Lowering<'_> {
    fn var(&self, v: usize) -> &ir::Variable {
        &self.model.variables[v]
    }

    fn plate_size(&self, p: usize) -> usize {
        self.model.plates[p].size as usize
    }

    fn core_plates(&self, ps: &[usize]) -> Vec<PlateId> {
        ps.iter().map(|&p| self.plates[p]).collect()
    }

    fn record(
        &mut self,
        id: NodeId,
        name: &str,
        owner: usize,
        kind: MomentKind,
        plates: Vec<usize>,
    ) {
        self.kinds.insert(id.index(), kind);
        self.node_plates.insert(id.index(), plates);
        self.owner.insert(name.to_string(), owner);
    }

    fn aux_name(&mut self, owner: usize, slot: &str) -> String {
        let n = self.aux.entry(owner).or_insert(0);
        *n += 1;
        let base = &self.model.variables[owner].name;
        if *n == 1 {
            format!("{base}.{slot}")
        } else {
            format!("{base}.{slot}.{}", *n - 1)
        }
    }

    fn err(&self, v: usize, span: Option<Span>, e: &BuildError) -> Error {
        build_error(self.src, self.model, v, span, e)
    }

    /// A build error of variable `v`, placed at the argument of the slot it names (a conjugacy
    /// error) or at the variable.
    fn slot_err(&self, v: usize, args: &[ir::Arg], e: &BuildError) -> Error {
        let span = match e {
            BuildError::Conjugacy { slot, .. } => {
                args.iter().find(|a| &a.slot == slot).map(|a| a.value.span)
            }
            _ => None,
        };
        self.err(v, span, e)
    }

    fn unsupported(&self, span: Span, message: String, hint: &str) -> Error {
        self.src.error(
            Code::Misuse,
            span,
            message,
            "not supported by the engine",
            Some(hint.to_string()),
        )
    }

    fn event_size(&self, v: usize) -> usize {
        self.var(v)
            .event_plates
            .first()
            .map_or(1, |&q| self.plate_size(q))
    }

    fn variable(&mut self, v: usize, data: &DataSet, observe: bool) -> Result<()> {
        let var = self.var(v).clone();
        let plates = self.core_plates(&var.plates);
        let id = match &var.node {
            Node::Data => self.data_input(v, data)?,
            Node::Deterministic { expr } => {
                let id = self.compound(expr, Some(var.name.clone()), v, &var.plates, "value")?;
                return {
                    self.nodes[v] = Some(id);
                    Ok(())
                };
            }
            Node::Stochastic { distribution, args }
                if occam_core::engine::chain_family(distribution).is_some() =>
            {
                let spec = occam_core::engine::chain_family(distribution).expect("checked");
                self.chain(v, spec, args, data)?
            }
            Node::Stochastic { distribution, args } => {
                let id = self.stochastic(v, distribution, args, &plates)?;
                if var.map {
                    self.g.set_map(id);
                }
                match var.init {
                    None => {}
                    Some(ir::Init::Prior) => self.g.initialize(id, Init::Prior),
                    Some(ir::Init::Random { .. }) => self.g.initialize(id, Init::Random),
                    Some(ir::Init::Value(x)) => {
                        let kind = self.kinds[&id.index()];
                        let one =
                            kind.fixed_moments(&vec![x; kind.value_len()])
                                .map_err(|why| {
                                    self.src.error(
                                        Code::BadConstant,
                                        var.span,
                                        format!("initial value {x} of `{}`: {why}", var.name),
                                        "invalid initial value",
                                        None,
                                    )
                                })?;
                        let n = self.g.elements(id);
                        self.g.initialize(id, Init::Moments(one.repeat(n)));
                    }
                }
                if observe && var.observed {
                    self.observe(v, id, data)?;
                }
                id
            }
        };
        self.nodes[v] = Some(id);
        Ok(())
    }

    fn data_input(&mut self, v: usize, data: &DataSet) -> Result<NodeId> {
        let var = self.var(v).clone();
        let Some(t) = data.tables.get(&var.name) else {
            return Err(self.src.error(
                Code::DataShape,
                var.span,
                format!("no data for the data input `{}`", var.name),
                "needs data",
                Some(format!(
                    "pass --data {n}=FILE, or put {n}.csv next to the model",
                    n = var.name
                )),
            ));
        };
        if let Some(i) = t.present.iter().position(|p| !p) {
            return Err(t.error_at(
                i,
                format!("data input `{}` cannot have missing values", var.name),
            ));
        }
        let kind = match var.kind {
            // A known probability table (used where probabilities are expected).
            ValueKind::Simplex => MomentKind::Dirichlet {
                k: self.event_size(v),
            },
            ValueKind::Vector => MomentKind::Gaussian {
                d: self.event_size(v),
            },
            _ => MomentKind::Gaussian { d: 1 },
        };
        let plates = self.core_plates(&var.plates);
        let id = self
            .g
            .constant(&var.name, kind, &plates, &t.values)
            .map_err(|e| match &e {
                BuildError::Value { element, why, .. } => {
                    t.error_at(element * kind.value_len(), why.clone())
                }
                _ => self.err(v, None, &e),
            })?;
        self.record(id, &var.name, v, kind, var.plates.clone());
        Ok(id)
    }

    fn observe(&mut self, v: usize, id: NodeId, data: &DataSet) -> Result<()> {
        let var = self.var(v).clone();
        let Some(t) = data.tables.get(&var.name) else {
            return Err(self.src.error(
                Code::DataShape,
                var.span,
                format!("`{}` is observed but no data is attached", var.name),
                "needs data",
                Some(format!(
                    "pass --data {n}=FILE, or put {n}.csv next to the model",
                    n = var.name
                )),
            ));
        };
        let n = self.g.elements(id);
        if n == 0 || t.values.len() % n != 0 {
            return Err(Error::DataFile {
                file: t.file.clone(),
                message: format!(
                    "{} values cannot be split over the {n} elements of `{}`",
                    t.values.len(),
                    var.name
                ),
            });
        }
        let vlen = t.values.len() / n;
        let mask: Option<Vec<bool>> = t.has_missing().then(|| {
            t.present
                .chunks(vlen)
                .map(|c| c.iter().all(|&p| p))
                .collect()
        });
        self.g
            .observe_masked(id, &t.values, mask.as_deref())
            .map_err(|e| match &e {
                BuildError::Value { element, why, .. } => t.error_at(
                    element * vlen,
                    format!(
                        "invalid value for `{}` ({}): {why}",
                        var.name,
                        self.dist_name(v)
                    ),
                ),
                _ => self.err(v, None, &e),
            })
    }

    fn dist_name(&self, v: usize) -> &str {
        match &self.var(v).node {
            Node::Stochastic { distribution, .. } => distribution,
            _ => "data",
        }
    }

    fn stochastic(
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
        let dist: Dist = match built {
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
    fn arg(
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
    fn compound(
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

/// A compiled model with its node map.
pub struct Compiled {
    /// The engine.
    pub vmp: Vmp,
    /// Core node of each IR variable.
    pub var_nodes: Vec<NodeId>,
    /// IR variable owning each core node, by node name.
    pub owner: HashMap<String, usize>,
    /// Whether component pruning can apply.
    pub has_mixture: bool,
}

/// Compiles the graph, mapping a build error to the variable that owns the node it names.
pub fn compile(lowered: Lowered, model: &Model, src: SourceRef<'_>) -> Result<Compiled> {
    let Lowered {
        graph,
        var_nodes,
        owner,
        has_mixture,
    } = lowered;
    match graph.compile() {
        Ok(vmp) => Ok(Compiled {
            vmp,
            var_nodes,
            owner,
            has_mixture,
        }),
        Err(e) => {
            let node = match &e {
                BuildError::Conjugacy { node, .. }
                | BuildError::PlateMismatch { node, .. }
                | BuildError::Shape { node, .. }
                | BuildError::Value { node, .. } => Some(node.clone()),
                _ => None,
            };
            match node.and_then(|n| owner.get(&n).copied()) {
                Some(v) => Err(build_error(src, model, v, None, &e)),
                None => Err(Error::Usage(e.to_string())),
            }
        }
    }
}
