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
//!
//! Files, by responsibility: this one holds the driver ([`lower`]) and the per-variable
//! dispatch; `source.rs` the error placement ([`SourceRef`], [`build_error`]); `budget.rs` the
//! state-size limits; `observe.rs` data inputs and observed tables; `slots.rs` a family's slots
//! and compound expressions; `shape.rs` Gammas with a random shape; `chain.rs` chain families;
//! `qblocks.rs` the `q` declarations; `compile.rs` [`compile`].

use std::collections::HashMap;

use occam_core::dist::SlotInput;
use occam_core::prelude::*;
use occam_core::spec::ConstDomain;
use occam_lang::diag::Code;
use occam_lang::ir::{self, Model, Node};
use occam_lang::span::Span;

use crate::data::DataSet;
use crate::error::{Error, Result};

mod budget;
pub mod chain;
mod compile;
mod observe;
mod qblocks;
mod sampled;
mod shape;
mod slots;
mod source;

pub use compile::{compile, Compiled};
pub use source::{build_error, SourceRef};

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
        observe::repeated_missing(model, src, data)?;
    }
    sampled::check(model, src)?;
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
}
