//! The resolver: [`ast::File`] to [`ir::Model`]. It binds names, sizes the
//! plates, orders the variables, and checks every parent against the catalog.
//!
//! Passes: declarations (constants, plates, variable names) → dependency
//! graph and cycle check → each variable in topological order (so a
//! Categorical's categories are known before anything is indexed by it) →
//! observations, data shapes and initialisers → joint q-blocks.

mod call;
mod chain_inputs;
mod chains;
mod consts;
mod decls;
mod expr;
mod funcs;
mod link;
mod numpy_matmul;
mod observe;
mod order;
mod qblocks;
mod qgated;
mod slots;

use std::collections::{BTreeMap, HashMap};

use crate::ast;
use crate::catalog::{DistSpec, ValueKind};
use crate::diag::{Code, Diagnostic};
use crate::ir::{self, ConstValue, Init, Node};
use crate::span::{LineIndex, Span};

/// Shapes (rows, columns) of the data attached to a model, by data name.
/// A vector of length n is (n, 1); a scalar is (1, 1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataShapes {
    shapes: BTreeMap<String, (usize, usize)>,
}

impl DataShapes {
    /// No data.
    pub fn new() -> DataShapes {
        DataShapes::default()
    }

    /// Adds (or replaces) data `name` of shape `rows × cols`.
    pub fn with(mut self, name: &str, rows: usize, cols: usize) -> DataShapes {
        self.insert(name, rows, cols);
        self
    }

    /// Adds (or replaces) data `name` of shape `rows × cols`.
    pub fn insert(&mut self, name: &str, rows: usize, cols: usize) {
        self.shapes.insert(name.to_string(), (rows, cols));
    }

    /// The shape of data `name`.
    pub fn get(&self, name: &str) -> Option<(usize, usize)> {
        self.shapes.get(name).copied()
    }

    /// Data names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.shapes.keys().map(String::as_str)
    }
}

/// Where a variable comes from in the source.
#[derive(Clone, Copy)]
enum Source<'f> {
    Decl(&'f ast::VarDecl),
    Data,
}

/// Resolver state for one variable.
struct VarEntry<'f> {
    name: String,
    /// The name's span.
    name_span: Span,
    /// The whole declaration.
    span: Span,
    source: Source<'f>,
    plates: Vec<usize>,
    /// The event plate from `over`, later from a Categorical's probabilities.
    event: Option<usize>,
    dist: Option<&'static DistSpec>,
    kind: Option<ValueKind>,
    node: Option<Node>,
    /// False once an error was reported about this variable: uses of it are
    /// then skipped silently instead of cascading.
    ok: bool,
    observed: bool,
    init: Option<(Init, Span)>,
    /// (parent, where it is referenced).
    deps: Vec<(usize, Span)>,
}

struct Resolver<'a, 'f> {
    data: &'a DataShapes,
    diags: Vec<Diagnostic>,
    consts: Vec<ir::Constant>,
    plates: Vec<ir::Plate>,
    vars: Vec<VarEntry<'f>>,
    /// Index in `vars` of each variable's first declaration (a scan per reference made a chain
    /// of 10⁴ variables quadratic).
    var_ids: HashMap<String, usize>,
    /// Every declared name (constant, plate, variable) and where.
    names: HashMap<String, Span>,
}

/// Names with built-in meaning that cannot be declared.
const BUILTINS: &[&str] = &["identity", "random", "prior"];

/// Resolves a parsed model; `source` is the text it was parsed from.
pub fn resolve(
    file: &ast::File,
    source: &str,
    data: &DataShapes,
) -> Result<ir::Model, Vec<Diagnostic>> {
    let mut r = Resolver {
        data,
        diags: Vec::new(),
        consts: Vec::new(),
        plates: Vec::new(),
        vars: Vec::new(),
        var_ids: HashMap::new(),
        names: HashMap::new(),
    };
    r.declarations(file);
    let order = r.order();
    for &v in &order {
        r.variable(v);
    }
    r.observations(file);
    r.inits(file);
    let q_blocks = r.q_blocks(file);
    if !r.diags.is_empty() {
        let mut d = r.diags;
        d.sort_by_key(|d| d.span.start);
        return Err(d);
    }
    let lines = LineIndex::new(source);
    let latent: Vec<bool> = r.vars.iter().map(|v| !v.observed).collect();
    let variables = r
        .vars
        .into_iter()
        .map(|v| ir::Variable {
            position: lines.line_col(v.span.start),
            name: v.name,
            plates: v.plates,
            event_plates: v.event.into_iter().collect(),
            kind: v.kind.unwrap_or(ValueKind::Real),
            node: v.node.unwrap_or(Node::Data),
            map: matches!(v.source, Source::Decl(d) if d.map.is_some()),
            init: v.init.map(|(i, _)| i),
            observed: v.observed,
            span: v.span,
        })
        .collect();
    let model = ir::Model {
        plates: r.plates,
        constants: r.consts,
        variables,
        topological_order: order,
        q_blocks,
    };
    // Winn (2.41): each latent parent enters a node's expression once. Observed variables are
    // constants here; the lowering repeats the check for those with missing cells.
    let repeats = crate::reuse::repeated_parents(&model, &|v| latent[v]);
    if !repeats.is_empty() {
        return Err(repeats);
    }
    Ok(model)
}

impl Resolver<'_, '_> {
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn plate_index(&self, name: &str) -> Option<usize> {
        self.plates.iter().position(|p| p.name == name)
    }

    fn var_index(&self, name: &str) -> Option<usize> {
        self.var_ids.get(name).copied()
    }

    fn const_value(&self, name: &str) -> Option<ConstValue> {
        self.consts.iter().find(|c| c.name == name).map(|c| c.value)
    }

    /// `K (size 20)`.
    fn plate_desc(&self, p: usize) -> String {
        format!("{} (size {})", self.plates[p].name, self.plates[p].size)
    }

    /// `x[N, D]`, or `x[N] over Q`.
    fn var_desc(&self, v: usize) -> String {
        let e = &self.vars[v];
        let mut s = e.name.clone();
        if !e.plates.is_empty() {
            let names: Vec<&str> = e
                .plates
                .iter()
                .map(|&p| self.plates[p].name.as_str())
                .collect();
            s.push_str(&format!("[{}]", names.join(", ")));
        }
        if let (Some(q), false) = (e.event, e.kind == Some(ValueKind::Categorical)) {
            s.push_str(&format!(" over {}", self.plates[q].name));
        }
        s
    }

    /// "Gamma `tau`", "deterministic `f`", "data `X`".
    fn var_noun(&self, v: usize) -> String {
        let e = &self.vars[v];
        match (e.dist, e.source) {
            (Some(d), _) => format!("{} `{}`", d.name, e.name),
            (None, Source::Data) => format!("data `{}`", e.name),
            (None, Source::Decl(_)) => format!("deterministic `{}`", e.name),
        }
    }

    /// Checks that `name` is free and records it.
    fn declare(&mut self, name: &ast::Ident, what: &str) -> bool {
        if BUILTINS.contains(&name.name.as_str()) {
            self.error(
                Diagnostic::new(
                    Code::Reserved,
                    name.span,
                    format!("`{}` is a built-in name", name.name),
                )
                .label(format!("cannot name a {what}"))
                .hint(format!("built-in names: {}", BUILTINS.join(", "))),
            );
            return false;
        }
        if let Some(&first) = self.names.get(&name.name) {
            self.error(
                Diagnostic::new(
                    Code::Duplicate,
                    name.span,
                    format!("`{}` is declared twice", name.name),
                )
                .label(format!("second declaration, as a {what}"))
                .note(first, "first declared here")
                .hint("rename one of them; plates, constants and variables share one namespace"),
            );
            return false;
        }
        self.names.insert(name.name.clone(), name.span);
        true
    }
}
