//! The NumPy-style product `X @ w` on a table of numbers `X[N, D]`: a located error that says how
//! Occam writes the regression (rows as vectors over D, `dot`, the weights as one vector), instead
//! of reporting the column plate as a stray plate.

use super::expr::Ctx;
use super::Resolver;
use crate::ast::{self, ExprKind};
use crate::catalog::ValueKind;
use crate::diag::{Code, Diagnostic};
use crate::ir::Expr;

impl Resolver<'_, '_> {
    /// `X @ w` with `X` a table of scalars `X[N, D]` whose column plate D is not the owner's:
    /// the located error that says to declare the rows as vectors (`data X[N] over D`) and to
    /// write `dot(X[N], w)`; `None` when `m` is not such a table (then `matvec` explains).
    pub(super) fn table_times_vector(
        &mut self,
        m: &ast::Expr,
        x: &ast::Expr,
        ctx: &Ctx,
    ) -> Option<Option<Expr>> {
        let ExprKind::Name {
            name,
            indices: None,
        } = &m.kind
        else {
            return None;
        };
        let v = self.var_index(&name.name)?;
        let e = &self.vars[v];
        if e.kind == Some(ValueKind::Vector) || e.plates.len() < 2 {
            return None;
        }
        let &col = e.plates.last()?;
        if ctx.allows(col) {
            return None;
        }
        let rows: Vec<String> = e.plates[..e.plates.len() - 1]
            .iter()
            .map(|&q| self.plates[q].name.clone())
            .collect();
        let (cname, rows) = (self.plates[col].name.clone(), rows.join(", "));
        let (vector, scalar_per_column) = match &x.kind {
            ExprKind::Name { name, .. } => (
                name.name.clone(),
                self.var_index(&name.name)
                    .is_some_and(|w| self.vars[w].plates.contains(&col)),
            ),
            _ => ("w".to_string(), false),
        };
        // `w[D] ~ ...` is a scalar per column; `dot` needs one vector over D.
        let vector_decl = if scalar_per_column {
            format!(", with `{vector} over {}` declared as one vector (e.g. `{vector} over {} ~ GaussianARD(0, 1)`) instead of `{vector}[{}]`", self.plates[col].name, self.plates[col].name, self.plates[col].name)
        } else {
            String::new()
        };
        let data = if matches!(self.vars[v].source, super::Source::Data) {
            "data "
        } else {
            ""
        };
        let (desc, declared) = (self.var_desc(v), self.vars[v].name_span);
        self.error(
            Diagnostic::new(
                Code::PlateMismatch,
                m.span,
                format!(
                    "`{n} @ {vector}`: `{n}` is a table of numbers over {rows} and {cname}, not a matrix of vectors",
                    n = name.name
                ),
            )
            .label(format!("`{desc}` varies over {cname}"))
            .note(declared, format!("`{}` declared here", name.name))
            .hint(format!(
                "for one row of `{n}` per element of {rows}, declare `{data}{n}[{rows}] over {cname}` and write `dot({n}[{rows}], {vector})`{vector_decl}",
                n = name.name
            )),
        );
        Some(None)
    }
}
