//! # The Occam model language
//!
//! A model file (`*.occam`) declares plates, random variables with their
//! distributions and parents, deterministic expressions, and which variables
//! are observed:
//!
//! ```text
//! plate K = 20
//! plates N, D from data x
//! pi ~ Dirichlet(1) over K
//! mu[K, D] ~ Gaussian(mean = 0, precision = 0.01)
//! gamma[K, D] ~ Gamma(shape = 0.001, rate = 0.001)
//! lambda[N] ~ Categorical(pi)
//! x[N, D] ~ Gaussian(mean = mu[lambda], precision = gamma[lambda])
//! ```
//!
//! [`compile`] turns such a file into a resolved [`ir::Model`]: plain serde
//! data in which names are indices, plate sizes are known and every parent
//! has been checked against the [`catalog`]. The crate knows nothing of the
//! inference engine; a separate lowering step maps the model onto it.
//!
//! The key design choice is that *plates are named and aligned by name*: a
//! parent reference `mu` inside `x[N, D]` shares `mu` across every plate of
//! the child that `mu` is not in, and a plate of the parent that the child is
//! not in must be selected by a Categorical variable (`mu[lambda]`: a
//! mixture). Moving a variable into or out of a plate is then a one-line edit
//! that shares or unshares it, as in VIBES.
//!
//! Errors are values ([`Diagnostics`]) with `file:line:column`, the source
//! line, a caret under the span and a hint; [`Diagnostics::render_plain`] is
//! stable text for tests, [`Diagnostics::render_fancy`] uses `ariadne`.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod ast;
pub mod catalog;
pub mod diag;
pub mod ir;
pub mod lex;
pub mod parse;
mod resolve;
pub mod reuse;
pub mod span;

pub use diag::{Code, Diagnostic, Diagnostics};
pub use ir::Model;
pub use resolve::DataShapes;

/// Parses a model into its syntax tree, without resolving names, so that a
/// graph drawer can work on it. Returns every syntax error found.
pub fn parse(source: &str, file_name: &str) -> Result<ast::File, Diagnostics> {
    let (file, diags) = parse::parse(source);
    if diags.is_empty() {
        Ok(file)
    } else {
        Err(Diagnostics::new(file_name, source, diags))
    }
}

/// Parses and resolves a model. `data_shapes` gives the (rows, columns) of
/// the data attached to the model: it sizes `plates ... from data x`, marks
/// the variables with those names as observed and is checked against them.
///
/// ```
/// use occam_lang::{compile, DataShapes};
///
/// let src = "plate N from data y\n\
///            mu ~ Gaussian(0, 1e-6)\n\
///            tau ~ Gamma(1e-6, 1e-6)\n\
///            y[N] ~ Gaussian(mu, tau)\n";
/// let model = compile(src, "quickstart.occam", &DataShapes::new().with("y", 100, 1)).unwrap();
/// assert_eq!(model.plates[0].size, 100);
/// assert!(model.variable("y").unwrap().observed);
///
/// let err = compile("mu ~ Gausian(0, 1)\n", "bad.occam", &DataShapes::new()).unwrap_err();
/// assert_eq!(
///     err.render_plain(),
///     "error: unknown distribution `Gausian`\n --> bad.occam:1:6\n  |\n\
///      1 | mu ~ Gausian(0, 1)\n  |      ^^^^^^^ not in the catalog\n\
///      \x20 = hint: did you mean `Gaussian`?\n"
/// );
/// ```
pub fn compile(
    source: &str,
    file_name: &str,
    data_shapes: &DataShapes,
) -> Result<Model, Diagnostics> {
    let file = parse(source, file_name)?;
    resolve::resolve(&file, source, data_shapes).map_err(|d| Diagnostics::new(file_name, source, d))
}
