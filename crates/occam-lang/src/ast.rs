//! The syntax tree, as written, with spans. Produced by [`crate::parse()`];
//! names are not yet resolved, so a graph drawer can use it on broken models.

use serde::{Deserialize, Serialize};

use crate::span::Span;

/// A name and where it is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// A whole model file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct File {
    /// Statements in source order.
    pub statements: Vec<Stmt>,
}

/// One statement (one line, or several when parentheses wrap).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Stmt {
    /// `plate K = 20`, `plates N, D from data x`.
    Plates(PlateDecl),
    /// `let a0 = 0.001` or `const a0 = 0.001`.
    Const(ConstDecl),
    /// `observe x, y` or `data x`.
    Observe(ObserveDecl),
    /// `init mu = random(scale = 1)`.
    Init(InitDecl),
    /// `x[N] over Q ~ Dist(...) map` or `f[N] = expr`.
    Var(VarDecl),
    /// `q joint(a, b, c)`: variables that share one q-block.
    Q(QDecl),
}

/// `plate K = 20, T = 5` or `plates N, D from data x`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlateDecl {
    /// The plates, each with an explicit size or none (size from data).
    pub items: Vec<PlateItem>,
    /// `from data NAME`: the data whose shape gives the unsized plates.
    pub from_data: Option<Ident>,
    /// The whole statement.
    pub span: Span,
}

/// One plate in a [`PlateDecl`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlateItem {
    /// The plate's name.
    pub name: Ident,
    /// `= size`, a constant expression.
    pub size: Option<Expr>,
}

/// `let NAME = expr`: a named constant (hyper-parameter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConstDecl {
    /// The constant's name.
    pub name: Ident,
    /// Its value, a constant expression.
    pub value: Expr,
    /// The whole statement.
    pub span: Span,
}

/// `observe x, y` / `data x`: these variables are observed; `data X[N] over C`
/// declares an observed input (covariate) that has no distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObserveDecl {
    /// The observed variables.
    pub items: Vec<ObserveItem>,
    /// The whole statement.
    pub span: Span,
}

/// One name in an [`ObserveDecl`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObserveItem {
    /// The variable.
    pub name: Ident,
    /// `[N, D]`: present when this declares a data input.
    pub plates: Option<Vec<Ident>>,
    /// `over C`: the event plate of a vector data input.
    pub over: Option<Ident>,
}

/// `init NAME = prior | random | random(scale = s, seed = n) | constant`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitDecl {
    /// The variable to initialise.
    pub name: Ident,
    /// The initialiser, interpreted by the resolver.
    pub value: Expr,
    /// The whole statement.
    pub span: Span,
}

/// `q joint(a, b, c)`: the named variables share one q-block, a joint q that keeps the
/// dependencies among them (a tree-structured q, Winn §5.3–5.6) instead of factorising.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QDecl {
    /// The members, in the order written.
    pub members: Vec<Ident>,
    /// The whole statement.
    pub span: Span,
}

/// A variable declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VarDecl {
    /// The variable's name.
    pub name: Ident,
    /// `[P1, P2]`: the plates it is replicated over (factorised in q).
    pub plates: Vec<Ident>,
    /// `over Q`: the event plate of a vector value (joint in q), written
    /// before `~`/`=` or after the distribution call.
    pub over: Option<Ident>,
    /// The distribution or deterministic expression.
    pub rhs: VarRhs,
    /// Where the trailing `map` keyword is, if present.
    pub map: Option<Span>,
    /// The whole statement.
    pub span: Span,
}

/// Right-hand side of a variable declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum VarRhs {
    /// `~ Dist(args)`.
    Random {
        /// The distribution name as written.
        dist: Ident,
        /// The arguments, positional or `slot = value`.
        args: Vec<Arg>,
    },
    /// `= expr`.
    Deterministic(Expr),
}

/// A call argument: `value` or `slot = value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arg {
    /// The slot name, when given.
    pub name: Option<Ident>,
    /// The value.
    pub value: Expr,
    /// The whole argument.
    pub span: Span,
}

/// An expression with its span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// The kinds of expressions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    /// A numeric literal.
    Number(f64),
    /// A name, optionally indexed: `mu`, `mu[lambda, D]`.
    Name {
        /// The referenced name.
        name: Ident,
        /// `[i, j]`: plate names or Categorical variables, for the leading plates.
        indices: Option<Vec<Ident>>,
    },
    /// A function call: `dot(a, b)`, `random(scale = 1)`, or a misplaced distribution.
    Call {
        /// The function name.
        func: Ident,
        /// Its arguments.
        args: Vec<Arg>,
    },
    /// `lhs op rhs`.
    Binary {
        /// The operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `-e`.
    Neg(Box<Expr>),
}

/// Binary operators, `*` and `@` binding tighter than `+`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    /// `+`: sum.
    Add,
    /// `*`: product.
    Mul,
    /// `@`: matrix–vector product, same as `matvec(a, b)`.
    MatMul,
}
