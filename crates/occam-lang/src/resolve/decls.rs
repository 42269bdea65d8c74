//! First pass: constants, plates and variable declarations (names, plate
//! lists, event plates, distributions and dependencies).

use super::{Resolver, Source, VarEntry};
use crate::ast::{self, Expr, ExprKind, Stmt, VarRhs};
use crate::catalog::{self, EventShape, ValueKind};
use crate::diag::{did_you_mean, nearest, Code, Diagnostic};
use crate::ir::{self, ConstValue, PlateSource, MAX_PLATE_SIZE};
use crate::span::Span;

impl<'f> Resolver<'_, 'f> {
    pub(super) fn declarations(&mut self, file: &'f ast::File) {
        for stmt in &file.statements {
            match stmt {
                Stmt::Const(c) => {
                    let value = self.const_eval(&c.value);
                    if self.declare(&c.name, "constant") {
                        if let Some(value) = value {
                            self.consts.push(ir::Constant {
                                name: c.name.name.clone(),
                                value,
                                span: c.span,
                            });
                        }
                    }
                }
                Stmt::Plates(p) => self.plate_decl(p),
                _ => {}
            }
        }
        for stmt in &file.statements {
            match stmt {
                Stmt::Var(v) => self.var_decl(v),
                Stmt::Observe(o) => {
                    for item in &o.items {
                        if item.plates.is_some() || item.over.is_some() {
                            self.data_decl(item, o.span);
                        }
                    }
                }
                _ => {}
            }
        }
        for v in 0..self.vars.len() {
            if let Source::Decl(d) = self.vars[v].source {
                let mut deps = Vec::new();
                match &d.rhs {
                    VarRhs::Random { args, .. } => {
                        for a in args {
                            self.collect_deps(&a.value, &mut deps);
                        }
                    }
                    VarRhs::Deterministic(e) => self.collect_deps(e, &mut deps),
                }
                self.vars[v].deps = deps;
            }
        }
    }

    fn collect_deps(&self, e: &Expr, out: &mut Vec<(usize, Span)>) {
        match &e.kind {
            ExprKind::Number(_) => {}
            ExprKind::Name { name, indices } => {
                if let Some(v) = self.var_index(&name.name) {
                    out.push((v, name.span));
                }
                for i in indices.iter().flatten() {
                    if let Some(v) = self.var_index(&i.name) {
                        out.push((v, i.span));
                    }
                }
            }
            ExprKind::Call { args, .. } => {
                for a in args {
                    self.collect_deps(&a.value, out);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.collect_deps(lhs, out);
                self.collect_deps(rhs, out);
            }
            ExprKind::Neg(inner) => self.collect_deps(inner, out),
        }
    }

    fn plate_decl(&mut self, p: &ast::PlateDecl) {
        let shape = match &p.from_data {
            Some(data) => {
                let unsized_names: Vec<&str> =
                    p.items.iter().map(|i| i.name.name.as_str()).collect();
                if p.items.len() > 2 {
                    self.error(
                        Diagnostic::new(
                            Code::PlateSize,
                            p.items[2].name.span,
                            format!(
                                "data gives at most 2 plate sizes (rows, columns); got {}",
                                p.items.len()
                            ),
                        )
                        .label("no third axis")
                        .hint("give this plate a fixed size: `plate T = 10`"),
                    );
                }
                match self.data.get(&data.name) {
                    Some(s) => Some(s),
                    None => {
                        let names: Vec<String> = self.data.names().map(String::from).collect();
                        let hint = did_you_mean(&data.name, names.iter().map(String::as_str))
                            .unwrap_or_else(|| {
                                format!(
                                    "attach data `{}`, or give the sizes: `plate {} = 100`",
                                    data.name, unsized_names[0]
                                )
                            });
                        self.error(
                            Diagnostic::new(
                                Code::PlateSize,
                                data.span,
                                format!("no data named `{}` is attached", data.name),
                            )
                            .label(format!(
                                "its shape sets the size of {}",
                                unsized_names.join(", ")
                            ))
                            .hint(hint),
                        );
                        None
                    }
                }
            }
            None => None,
        };
        for (axis, item) in p.items.iter().enumerate() {
            let size = match (&item.size, &p.from_data) {
                (Some(e), None) => self.plate_size(&item.name, e),
                (Some(e), Some(_)) => {
                    self.error(
                        Diagnostic::new(
                            Code::PlateSize,
                            e.span,
                            format!("plate `{}` has both a size and `from data`", item.name.name),
                        )
                        .label("size given here")
                        .hint("declare fixed plates on their own line: `plate K = 20`"),
                    );
                    None
                }
                (None, Some(data)) => shape.and_then(|(rows, cols)| {
                    let size = [rows, cols].get(axis).copied()? as u64;
                    if size == 0 {
                        self.error(
                            Diagnostic::new(
                                Code::PlateSize,
                                data.span,
                                format!(
                                    "data `{}` is empty, so plate `{}` has size 0",
                                    data.name, item.name.name
                                ),
                            )
                            .label(format!("shape {rows} × {cols}")),
                        );
                        return None;
                    }
                    if size > MAX_PLATE_SIZE {
                        self.error(
                            Diagnostic::new(
                                Code::PlateSize,
                                data.span,
                                format!(
                                    "data `{}` gives plate `{}` size {size}, more than the limit of {MAX_PLATE_SIZE} elements",
                                    data.name, item.name.name
                                ),
                            )
                            .label(format!("shape {rows} × {cols}")),
                        );
                        return None;
                    }
                    Some(size)
                }),
                (None, None) => {
                    self.error(
                        Diagnostic::new(
                            Code::PlateSize,
                            item.name.span,
                            format!("plate `{}` has no size", item.name.name),
                        )
                        .label("size missing")
                        .hint(format!(
                            "write `plate {0} = 20`, or `plate {0} from data x` to take it from data",
                            item.name.name
                        )),
                    );
                    None
                }
            };
            if self.declare(&item.name, "plate") {
                let source = match &p.from_data {
                    Some(d) => PlateSource::Data {
                        data: d.name.clone(),
                        axis,
                    },
                    None => PlateSource::Fixed,
                };
                // A plate with a bad size is kept with size 1 so later uses
                // resolve; the error above already fails the compilation.
                self.plates.push(ir::Plate {
                    name: item.name.name.clone(),
                    size: size.unwrap_or(1),
                    source,
                    span: item.name.span,
                });
            }
        }
    }

    fn plate_size(&mut self, name: &ast::Ident, e: &Expr) -> Option<u64> {
        match self.const_eval(e)? {
            ConstValue::Scalar(x) if x >= 1.0 && x.fract() == 0.0 && x <= MAX_PLATE_SIZE as f64 => {
                Some(x as u64)
            }
            ConstValue::Scalar(x) if x >= 1.0 && x.fract() == 0.0 => {
                self.error(
                    Diagnostic::new(
                        Code::PlateSize,
                        e.span,
                        format!(
                            "size of plate `{}` is {x}, more than the limit of {MAX_PLATE_SIZE} elements",
                            name.name
                        ),
                    )
                    .label("too large")
                    .hint("a plate holds at most as many elements as the largest data file (8 GiB of numbers)"),
                );
                None
            }
            c => {
                self.error(
                    Diagnostic::new(
                        Code::PlateSize,
                        e.span,
                        format!(
                            "size of plate `{}` must be a positive integer; got {}",
                            name.name,
                            super::consts::show(c)
                        ),
                    )
                    .label("not a positive integer")
                    .hint(format!("write e.g. `plate {} = 20`", name.name)),
                );
                None
            }
        }
    }

    /// Resolves a plate name in a plate list or `over`.
    pub(super) fn plate_ref(&mut self, id: &ast::Ident) -> Option<usize> {
        if let Some(p) = self.plate_index(&id.name) {
            return Some(p);
        }
        let d = if self.var_index(&id.name).is_some() || self.const_value(&id.name).is_some() {
            Diagnostic::new(Code::Misuse, id.span, format!("`{}` is not a plate", id.name))
                .label("a plate name is needed here")
                .hint("to select a plate element by a Categorical variable, index the parent: `mu[lambda]`")
        } else {
            let plates: Vec<String> = self.plates.iter().map(|p| p.name.clone()).collect();
            Diagnostic::new(
                Code::UnknownName,
                id.span,
                format!("unknown plate `{}`", id.name),
            )
            .label("no such plate")
            .hint(
                did_you_mean(&id.name, plates.iter().map(String::as_str))
                    .unwrap_or_else(|| format!("declare it: `plate {} = 10`", id.name)),
            )
        };
        self.error(d);
        None
    }

    fn plate_list(&mut self, ids: &[ast::Ident]) -> (Vec<usize>, bool) {
        let mut out: Vec<usize> = Vec::new();
        let mut ok = true;
        for (i, id) in ids.iter().enumerate() {
            match self.plate_ref(id) {
                Some(p) if out.contains(&p) => {
                    let first = ids[..i].iter().find(|x| x.name == id.name).map(|x| x.span);
                    let mut d = Diagnostic::new(
                        Code::Duplicate,
                        id.span,
                        format!("plate `{}` is listed twice", id.name),
                    )
                    .label("repeated plate")
                    .hint("a variable is in each plate at most once");
                    if let Some(f) = first {
                        d = d.note(f, "first listed here");
                    }
                    self.error(d);
                    ok = false;
                }
                Some(p) => out.push(p),
                None => ok = false,
            }
        }
        (out, ok)
    }

    /// The event plate named by `over`, if any. A plate may be both a plate
    /// and the event plate of one variable, e.g. a transition table
    /// `A[K] ~ Dirichlet(1) over K` (one row per previous state).
    fn event_ref(&mut self, over: Option<&ast::Ident>) -> (Option<usize>, bool) {
        match over {
            None => (None, true),
            Some(id) => {
                let q = self.plate_ref(id);
                (q, q.is_some())
            }
        }
    }

    fn var_decl(&mut self, d: &'f ast::VarDecl) {
        let declared = self.declare(&d.name, "variable");
        let (plates, ok_plates) = self.plate_list(&d.plates);
        let (event, ok_event) = self.event_ref(d.over.as_ref());
        let mut ok = declared && ok_plates && ok_event;
        let mut dist = None;
        let mut kind = None;
        let mut plates = plates;
        if let VarRhs::Random { dist: name, .. } = &d.rhs {
            let chain = catalog::chain(&name.name);
            match catalog::distribution(&name.name) {
                _ if chain.is_some() => {
                    let spec = chain.expect("checked");
                    dist = Some(spec);
                    kind = Some(spec.value);
                    // The chain's `over` plate is its time plate: the last of its plates.
                    ok &= self.chain_time(d, spec, event, &mut plates);
                }
                Some(spec) => {
                    dist = Some(spec);
                    kind = Some(spec.value);
                    ok &= self.check_event_shape(d, spec, event);
                }
                None => {
                    self.unknown_distribution(name);
                    ok = false;
                }
            }
        }
        if !declared {
            return;
        }
        self.var_ids
            .entry(d.name.name.clone())
            .or_insert(self.vars.len());
        self.vars.push(VarEntry {
            name: d.name.name.clone(),
            name_span: d.name.span,
            span: d.span,
            source: Source::Decl(d),
            plates,
            event: if dist.is_some_and(catalog::is_chain) {
                None
            } else {
                event
            },
            dist,
            kind,
            node: None,
            ok,
            observed: false,
            init: None,
            deps: Vec::new(),
        });
    }

    fn check_event_shape(
        &mut self,
        d: &ast::VarDecl,
        spec: &catalog::DistSpec,
        event: Option<usize>,
    ) -> bool {
        match (spec.event, &d.over) {
            (EventShape::Scalar, Some(q)) => {
                let alt = if spec.value == ValueKind::Real {
                    "use GaussianARD or MvGaussian for a vector, or "
                } else {
                    ""
                };
                self.error(
                    Diagnostic::new(
                        Code::EventMismatch,
                        q.span,
                        format!("{} is scalar and cannot have an event plate", spec.name),
                    )
                    .label("event plate of a scalar")
                    .hint(format!(
                        "{alt}put {} in the plate list: `{}[..., {}]`",
                        q.name, d.name.name, q.name
                    )),
                );
                false
            }
            (EventShape::Vector | EventShape::Matrix, None) if event.is_none() => {
                let example = if spec.value == ValueKind::Simplex {
                    format!("`{} ~ {}(1) over K`", d.name.name, spec.name)
                } else {
                    format!("`{}[N] over Q ~ {}(...)`", d.name.name, spec.name)
                };
                self.error(
                    Diagnostic::new(
                        Code::EventMismatch,
                        d.name.span,
                        format!("{} needs an event plate", spec.name),
                    )
                    .label(format!("`{}` has no `over`", d.name.name))
                    .hint(format!(
                        "name the plate of its {}: {example}",
                        if spec.value == ValueKind::Simplex {
                            "categories"
                        } else {
                            "vector"
                        }
                    )),
                );
                false
            }
            _ => true,
        }
    }

    fn unknown_distribution(&mut self, name: &ast::Ident) {
        let close = nearest(&name.name, catalog::distribution_names());
        let hint = match close.as_slice() {
            [] => format!(
                "known distributions: {}",
                catalog::DISTRIBUTIONS
                    .iter()
                    .chain(catalog::CHAINS)
                    .map(|d| d.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            [one] => format!("did you mean `{one}`?"),
            [first, rest @ ..] => format!(
                "did you mean `{first}`? (also close: {})",
                rest.iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        self.error(
            Diagnostic::new(
                Code::UnknownDistribution,
                name.span,
                format!("unknown distribution `{}`", name.name),
            )
            .label("not in the catalog")
            .hint(hint),
        );
    }

    fn data_decl(&mut self, item: &ast::ObserveItem, span: Span) {
        if !self.declare(&item.name, "data input") {
            return;
        }
        let (plates, ok_plates) = self.plate_list(item.plates.as_deref().unwrap_or(&[]));
        let (event, ok_event) = self.event_ref(item.over.as_ref());
        self.var_ids
            .entry(item.name.name.clone())
            .or_insert(self.vars.len());
        self.vars.push(VarEntry {
            name: item.name.name.clone(),
            name_span: item.name.span,
            span,
            source: Source::Data,
            plates,
            event,
            dist: None,
            kind: Some(if event.is_some() {
                ValueKind::Vector
            } else {
                ValueKind::Real
            }),
            node: Some(ir::Node::Data),
            ok: ok_plates && ok_event,
            observed: true,
            init: None,
            deps: Vec::new(),
        });
    }
}
