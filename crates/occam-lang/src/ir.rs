//! The resolved model: plain serde data with every name replaced by an index,
//! every plate size known and every parent checked against the catalog.
//! A separate lowering step turns it into the core's graph.

use serde::{Deserialize, Serialize};

use crate::catalog::ValueKind;
use crate::span::{LineCol, Span};

/// A resolved model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// Plates, in declaration order; referenced by index.
    pub plates: Vec<Plate>,
    /// Named constants (`let`), already folded into the expressions that use them.
    pub constants: Vec<Constant>,
    /// Variables in declaration order; referenced by index.
    pub variables: Vec<Variable>,
    /// Variable indices with every parent before its children.
    pub topological_order: Vec<usize>,
    /// Joint q-blocks (`q joint(...)`), in source order.
    #[serde(default)]
    pub q_blocks: Vec<QBlock>,
}

/// `q joint(a, b, c)`: Categorical variables whose q is one joint distribution (a tree-structured
/// q, Winn §5.3–5.6), solved exactly by a junction tree inside the VMP loop; scalar Gaussians
/// read by one `concat`; or a mixture index and the vectors it gates ([`QKind::Gated`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QBlock {
    /// The latent members as written (variable indices).
    pub members: Vec<usize>,
    /// Observed Categorical variables that read two or more members: their evidence is a factor
    /// over several members, so it enters the block's joint q rather than arriving as a message
    /// (added by the resolver, not written by the user).
    pub evidence: Vec<usize>,
    /// Where the block is declared.
    pub span: Span,
    /// Which structure the block has.
    #[serde(default)]
    pub kind: QKind,
}

/// The structure of a q-block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum QKind {
    /// A joint q over Categoricals (a junction tree) or over scalar Gaussians read by one
    /// `concat` (one full-covariance Gaussian per element).
    #[default]
    Joint,
    /// `q joint(s, x)` over a mixture index `s` and the Gaussian vectors `x` it gates through
    /// `dot(W, x) + mu` (a mixture of Bayesian PCA, Winn §3.3): q(x_n, s_n = k) =
    /// r_nk N(x_nk | m_nk, Σ_k), the core's gated linear block. `members` is `[s, x]` in that
    /// order, whatever order they were written in.
    Gated,
}

impl Model {
    /// The variable named `name`.
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// Index of the plate named `name`.
    pub fn plate_index(&self, name: &str) -> Option<usize> {
        self.plates.iter().position(|p| p.name == name)
    }

    /// Names of plates given by index, for display and tests.
    pub fn plate_names(&self, plates: &[usize]) -> Vec<&str> {
        plates
            .iter()
            .map(|&p| self.plates[p].name.as_str())
            .collect()
    }

    /// Indices of the variables that variable `v` depends on (its parents,
    /// including Categorical indices), sorted and without repeats: the edges
    /// of the graphical model.
    pub fn parents(&self, v: usize) -> Vec<usize> {
        let mut out = Vec::new();
        match &self.variables[v].node {
            Node::Stochastic { args, .. } => {
                for a in args {
                    a.value.collect_vars(&mut out);
                }
            }
            Node::Deterministic { expr } => expr.collect_vars(&mut out),
            Node::Data => {}
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The largest plate size (2³⁰ elements: as many numbers as the largest data file holds,
/// 8 GiB). A larger fixed size, `--plate` size or data-sized plate is a located error.
pub const MAX_PLATE_SIZE: u64 = 1 << 30;

/// A plate: an index set a variable is replicated over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plate {
    /// Its name.
    pub name: String,
    /// Number of elements.
    pub size: u64,
    /// Where the size came from.
    pub source: PlateSource,
    /// Where it is declared.
    pub span: Span,
}

/// Where a plate's size came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlateSource {
    /// Written in the model.
    Fixed,
    /// An axis (0 = rows, 1 = columns) of the shape of attached data.
    Data {
        /// The data name.
        data: String,
        /// The axis.
        axis: usize,
    },
}

/// A named constant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Constant {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: ConstValue,
    /// Where it is declared.
    pub span: Span,
}

/// A constant value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ConstValue {
    /// A number, broadcast over plates and event plates.
    Scalar(f64),
    /// `identity * c`: c times the identity matrix of the event plate.
    Identity(f64),
}

/// A variable: random (with a distribution), deterministic, or data input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Plates it is replicated over (factorised in q), as plate indices. For a chain
    /// (`MarkovChain`, `GaussianMarkovChain`) the last plate is its time plate (the `over` of its
    /// declaration, joint in q) and the others are the sequences.
    pub plates: Vec<usize>,
    /// Event plates of a vector or matrix value (joint in q); for a
    /// Categorical, the plate of its categories; for a chain, its states (K) or
    /// state vector (D).
    pub event_plates: Vec<usize>,
    /// Kind of value it holds.
    pub kind: ValueKind,
    /// How it is defined.
    pub node: Node,
    /// Point estimate (MAP) instead of a full posterior.
    pub map: bool,
    /// Initialisation of q, when the model gives one (`None`: the engine's default start).
    pub init: Option<Init>,
    /// Data with its name is attached or it is declared observed.
    pub observed: bool,
    /// Where it is declared.
    pub span: Span,
    /// Line and column of `span.start`.
    pub position: LineCol,
}

/// How a variable is defined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Node {
    /// `x ~ Dist(...)`.
    Stochastic {
        /// Canonical catalog name of the distribution.
        distribution: String,
        /// One argument per slot, in catalog order; a chain may end with a `lengths` argument.
        args: Vec<Arg>,
    },
    /// `f = expr`.
    Deterministic {
        /// The expression.
        expr: Expr,
    },
    /// `data X[N] over C`: an observed input with no distribution (a covariate).
    Data,
}

/// A filled slot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arg {
    /// Canonical slot name.
    pub slot: String,
    /// Its value.
    pub value: Expr,
}

/// A resolved expression with its kind and plates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    /// The operation.
    pub op: ExprOp,
    /// Kind of the value; `None` for a constant.
    pub kind: Option<ValueKind>,
    /// Plates the value varies over (a subset of the enclosing variable's
    /// plates, plus its event plate for elementwise slots).
    pub plates: Vec<usize>,
    /// The event dimension, if the value is a vector or matrix.
    pub event: Option<Event>,
    /// Where it is written.
    pub span: Span,
}

impl Expr {
    /// Calls `f` on this expression and every sub-expression (pre-order), without recursion.
    pub fn visit<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            f(e);
            stack.extend(e.op.operands().rev());
        }
    }

    /// Pushes every variable referenced in this expression, including the
    /// Categorical variables that index plates.
    pub fn collect_vars(&self, out: &mut Vec<usize>) {
        self.visit(|e| {
            if let ExprOp::Var(r) = &e.op {
                out.push(r.var);
                out.extend(r.index.iter().filter_map(|i| i.by.as_ref().map(|c| c.var)));
            }
        });
    }
}

/// The event dimension of a vector value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// The event plate, or `None` for an unnamed `concat(...)` vector.
    pub plate: Option<usize>,
    /// Its length.
    pub size: u64,
}

/// The operation at an expression node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ExprOp {
    /// A constant (literal, `let` name or `identity`, folded).
    Const(ConstValue),
    /// A reference to a variable, with how each of its plates is indexed.
    Var(VarRef),
    /// Sum of the operands.
    Sum(Vec<Expr>),
    /// Product of the operands.
    Product(Vec<Expr>),
    /// Inner product of two vectors over the same event plate.
    Dot(Box<Expr>, Box<Expr>),
    /// Matrix–vector product: the matrix's last plate becomes the event plate.
    MatVec {
        /// Rows of the matrix: a vector variable in the row plate.
        matrix: Box<Expr>,
        /// The vector.
        vector: Box<Expr>,
    },
    /// Scalars into a vector.
    Concat(Vec<Expr>),
    /// A call of an elementwise function of the engine's table (`occam_core::factor::functions`,
    /// rule `Elementwise`), its arguments in the function's parameter order.
    Call {
        /// The function's name.
        function: String,
        /// Its arguments.
        args: Vec<Expr>,
    },
}

/// The operands of an expression node, in order.
pub type Operands<'a> = std::iter::Chain<std::slice::Iter<'a, Expr>, std::slice::Iter<'a, Expr>>;

impl ExprOp {
    /// The sub-expressions this node combines, in order (none for a constant or a reference):
    /// the one walk over expressions, so that a new function adds no arm anywhere.
    pub fn operands(&self) -> Operands<'_> {
        let none: &[Expr] = &[];
        match self {
            ExprOp::Const(_) | ExprOp::Var(_) => none.iter().chain(none),
            ExprOp::Sum(xs)
            | ExprOp::Product(xs)
            | ExprOp::Concat(xs)
            | ExprOp::Call { args: xs, .. } => xs.iter().chain(none),
            ExprOp::Dot(a, b)
            | ExprOp::MatVec {
                matrix: a,
                vector: b,
            } => std::slice::from_ref(a.as_ref())
                .iter()
                .chain(std::slice::from_ref(b.as_ref())),
        }
    }
}

/// A reference to a variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VarRef {
    /// Index into [`Model::variables`].
    pub var: usize,
    /// Its name.
    pub name: String,
    /// One entry per plate of the referenced variable, in its plate order.
    pub index: Vec<PlateIndex>,
}

impl VarRef {
    /// Whether any plate is selected by a Categorical (a mixture).
    pub fn is_mixture(&self) -> bool {
        self.index.iter().any(|i| i.by.is_some())
    }
}

/// How one plate of a referenced variable is indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlateIndex {
    /// The plate of the referenced variable.
    pub plate: usize,
    /// `None`: aligned with the same plate of the child (shared element-wise).
    /// `Some`: selected by the value of a Categorical variable (mixture/gate).
    pub by: Option<CategoricalIndex>,
}

/// A Categorical variable selecting an element of a plate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoricalIndex {
    /// Index into [`Model::variables`].
    pub var: usize,
    /// Its name.
    pub name: String,
}

/// Initialisation of a variable's q.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Init {
    /// From the prior (the default).
    Prior,
    /// A random draw.
    Random {
        /// Spread of the draw, if given.
        scale: Option<f64>,
        /// Seed, if given.
        seed: Option<u64>,
    },
    /// q concentrated near this value.
    Value(f64),
}
