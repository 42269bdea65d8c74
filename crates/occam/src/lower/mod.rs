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

use occam_core::dist::SlotInput;
use occam_core::graph::MAX_MODEL_VALUES;
use occam_core::prelude::*;
use occam_core::spec::{ConstDomain, ValueKind};
use occam_lang::diag::{Code, Diagnostic};
use occam_lang::ir::{self, Model, Node};
use occam_lang::span::Span;
use occam_lang::Diagnostics;

use crate::data::DataSet;
use crate::error::{Error, Result};

pub mod chain;
mod qblocks;
mod shape;
mod slots;

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
    /// Variables used as a Gamma's random shape, with the constant of their uses (`shape.rs`).
    shape_vars: HashMap<usize, f64>,
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
        shape_vars: shape::shape_uses(model, src)?,
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
    if observe {
        repeated_missing(model, src, data)?;
    }
    for &v in &model.topological_order {
        l.variable(v, data, observe)?;
    }
    l.check_budget()?;
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

/// Winn (2.41) again, now that the data is known: the resolver treats an observed variable as a
/// constant, but a missing cell of it is latent, so `x * x` with `x` observed is rejected here
/// when some cell of `x` is missing (a located error naming both uses).
fn repeated_missing(model: &Model, src: SourceRef<'_>, data: &DataSet) -> Result<()> {
    let latent: Vec<bool> = model
        .variables
        .iter()
        .map(|v| !v.observed || data.tables.get(&v.name).is_some_and(|t| t.has_missing()))
        .collect();
    let with_missing = model
        .variables
        .iter()
        .zip(&latent)
        .any(|(v, &l)| v.observed && l);
    if !with_missing {
        return Ok(());
    }
    let found = occam_lang::reuse::repeated_parents(model, &|v| latent[v]);
    if found.is_empty() {
        return Ok(());
    }
    Err(Error::Model(Box::new(Diagnostics::new(
        src.file, src.text, found,
    ))))
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
    /// The whole model's state within [`MAX_MODEL_VALUES`], checked before compiling allocates
    /// it; the error is placed at the variable owning the largest node.
    fn check_budget(&self) -> Result<()> {
        let (total, largest) = self.g.state_values();
        if total.is_some_and(|t| t <= MAX_MODEL_VALUES) {
            return Ok(());
        }
        let total = total.map_or("more than 2^64".to_string(), |t| t.to_string());
        let Some(node) = largest else {
            return Err(Error::Usage(format!(
                "the model's nodes hold {total} values, more than the limit of {MAX_MODEL_VALUES}"
            )));
        };
        let name = self.g.node_name(node).to_string();
        let v = self.owner.get(&name).copied().unwrap_or(0);
        let var = &self.model.variables[v];
        Err(self.src.error(
            Code::PlateSize,
            var.span,
            format!(
                "the model's variables hold {total} state values, more than the limit of \
                 {MAX_MODEL_VALUES} (8 GiB); the largest is `{}` with {} elements",
                var.name,
                self.g.elements(node)
            ),
            "too large",
            Some("smaller plates, or fewer variables over the largest plates".to_string()),
        ))
    }

    /// Variable `v`'s own state (2 × elements × `len` + elements) within [`MAX_MODEL_VALUES`],
    /// checked before anything of it is allocated.
    fn check_variable_size(&self, v: usize, len: usize) -> Result<()> {
        let var = self.var(v);
        let values = var
            .plates
            .iter()
            .try_fold(1usize, |n, &p| n.checked_mul(self.plate_size(p)))
            .and_then(|n| n.checked_mul(len)?.checked_mul(2)?.checked_add(n));
        if values.is_some_and(|x| x <= MAX_MODEL_VALUES) {
            return Ok(());
        }
        let per_node = var
            .plates
            .iter()
            .try_fold(1usize, |n, &p| n.checked_mul(self.plate_size(p)))
            .and_then(|n| n.checked_mul(len));
        let node_limit = per_node.is_none_or(|x| x > occam_core::graph::MAX_NODE_VALUES);
        let over: Vec<String> = var
            .plates
            .iter()
            .map(|&p| {
                format!(
                    "{} = {}",
                    self.model.plates[p].name, self.model.plates[p].size
                )
            })
            .collect();
        let over = if over.is_empty() {
            String::new()
        } else {
            format!(" over plates {}", over.join(", "))
        };
        if node_limit {
            // The engine's own per-node limit, in its words.
            return Err(self.src.error(
                Code::PlateSize,
                var.span,
                format!(
                    "`{}`:{over} hold more than the limit of {} values in one node",
                    var.name,
                    occam_core::graph::MAX_NODE_VALUES
                ),
                "too large",
                None,
            ));
        }
        Err(self.src.error(
            Code::PlateSize,
            var.span,
            format!(
                "`{}`{over} alone holds {} state values ({len} per element), more than the \
                 limit of {MAX_MODEL_VALUES} (8 GiB)",
                var.name,
                values.map_or("more than 2^64".to_string(), |x| x.to_string())
            ),
            "too large",
            Some("smaller plates (an event plate of D columns costs D² per element for a Wishart or MvGaussian)".to_string()),
        ))
    }

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
