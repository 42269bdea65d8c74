//! Last pass: which variables are observed, whether attached data fits them,
//! and initialisers.

use super::{Resolver, Source};
use crate::ast::{self, ExprKind, Stmt};
use crate::catalog::ValueKind;
use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::{ConstValue, Init, PlateSource};
use crate::span::Span;

impl Resolver<'_, '_> {
    fn unknown_variable(&mut self, id: &ast::Ident, what: &str) {
        let names: Vec<String> = self.vars.iter().map(|v| v.name.clone()).collect();
        self.error(
            Diagnostic::new(
                Code::UnknownName,
                id.span,
                format!("unknown variable `{}`", id.name),
            )
            .label(format!("cannot {what} it"))
            .hint(
                did_you_mean(&id.name, names.iter().map(String::as_str)).unwrap_or_else(|| {
                    format!("declare it first, e.g. `{}[N] ~ Gaussian(0, 1)`", id.name)
                }),
            ),
        );
    }

    pub(super) fn observations(&mut self, file: &ast::File) {
        for stmt in &file.statements {
            let Stmt::Observe(o) = stmt else { continue };
            for item in &o.items {
                if item.plates.is_some() || item.over.is_some() {
                    continue;
                }
                match self.var_index(&item.name.name) {
                    Some(v) => self.mark_observed(v, item.name.span),
                    None => self.unknown_variable(&item.name, "observe"),
                }
            }
        }
        for v in 0..self.vars.len() {
            if let Some(shape) = self.data.get(&self.vars[v].name) {
                let span = self.vars[v].name_span;
                self.mark_observed(v, span);
                self.check_shape(v, shape);
            }
        }
    }

    fn mark_observed(&mut self, v: usize, span: Span) {
        let e = &self.vars[v];
        if matches!(e.source, Source::Decl(_)) && e.dist.is_none() && e.ok {
            let name = e.name.clone();
            self.error(
                Diagnostic::new(Code::Misuse, span, format!("deterministic `{name}` cannot be observed"))
                    .label("observed here")
                    .note(self.vars[v].name_span, "declared as a deterministic expression here")
                    .hint("observe a random variable instead, e.g. `y ~ Gaussian(mean = f, precision = tau)`"),
            );
            return;
        }
        self.vars[v].observed = true;
    }

    /// Data of shape rows × cols must cover the plates then the event plates.
    fn check_shape(&mut self, v: usize, (rows, cols): (usize, usize)) {
        let e = &self.vars[v];
        if !e.ok {
            return;
        }
        // A Categorical is observed as category indices, a matrix as its
        // square: the event plate contributes no axis, or two.
        let event_axes = match e.kind {
            Some(ValueKind::Categorical) => 0,
            Some(ValueKind::Matrix) => 2,
            _ => 1,
        };
        let dims: Vec<usize> = e
            .plates
            .iter()
            .copied()
            .chain(
                e.event
                    .into_iter()
                    .flat_map(|q| (0..event_axes).map(move |_| q)),
            )
            .collect();
        let sizes: Vec<u64> = dims.iter().map(|&p| self.plates[p].size).collect();
        let fits = match sizes.as_slice() {
            [] => rows == 1 && cols == 1,
            [n] => (rows as u64 == *n && cols == 1) || (rows == 1 && cols as u64 == *n),
            [n, m] => rows as u64 == *n && cols as u64 == *m,
            [n, rest @ ..] => {
                rows as u64 == *n
                    && cols as u64 == rest.iter().fold(1u64, |a, &b| a.saturating_mul(b))
            }
        };
        if fits {
            return;
        }
        let want = match sizes.as_slice() {
            [] => "1 × 1".to_string(),
            [n] => format!("{n} × 1"),
            [n, rest @ ..] => format!(
                "{n} × {}",
                rest.iter().fold(1u64, |a, &b| a.saturating_mul(b))
            ),
        };
        let named: Vec<String> = dims.iter().map(|&p| self.plate_desc(p)).collect();
        // The data's rows and columns swapped (a row vector where a column is expected).
        // When the first plate is sized by these data's own rows, its size says nothing about
        // the data's intent: a 1 × 4 row for `y[N]` (N from the rows, so 1) is a transposed
        // column exactly when the columns do not match the other axes and the rows do.
        let rows_size_first = dims.first().is_some_and(|&p| {
            matches!(&self.plates[p].source, PlateSource::Data { data, axis: 0 } if *data == e.name)
        });
        let rest_size = sizes.iter().skip(1).fold(1u64, |a, &b| a.saturating_mul(b));
        let transposed = match sizes.as_slice() {
            [_] if rows_size_first => rows == 1 && cols > 1,
            [_, ..] if rows_size_first => rows as u64 == rest_size && cols as u64 != rest_size,
            [n, m] => rows as u64 == *m && cols as u64 == *n,
            [n, rest @ ..] if !rest.is_empty() => cols as u64 == *n && rows as u64 == rest_size,
            _ => false,
        };
        let hint = if transposed && rows_size_first {
            format!(
                "the data are {rows} × {cols} and {} takes its size from their rows: did you mean to transpose them to {cols} × {rows}? (rows are the first plate's elements)",
                self.plates[dims[0]].name
            )
        } else if transposed {
            format!(
                "the data are {rows} × {cols} and `{}` needs {want}: did you mean to transpose them? (rows are the first plate's elements)",
                e.name
            )
        } else {
            "check the plates of the variable against the data".to_string()
        };
        let d = Diagnostic::new(
            Code::DataShape,
            e.name_span,
            format!(
                "data `{}` has shape {rows} × {cols} but `{}` needs {want}",
                e.name,
                self.var_desc(v)
            ),
        )
        .label(if named.is_empty() {
            "a scalar".to_string()
        } else {
            format!("over {}", named.join(", "))
        })
        .hint(hint);
        self.error(d);
    }

    pub(super) fn inits(&mut self, file: &ast::File) {
        for stmt in &file.statements {
            let Stmt::Init(i) = stmt else { continue };
            let Some(v) = self.var_index(&i.name.name) else {
                self.unknown_variable(&i.name, "initialise");
                continue;
            };
            let Some(init) = self.init_value(&i.value) else {
                continue;
            };
            if let Some((_, first)) = self.vars[v].init {
                self.error(
                    Diagnostic::new(
                        Code::Duplicate,
                        i.span,
                        format!("`{}` is initialised twice", i.name.name),
                    )
                    .label("second initialiser")
                    .note(first, "first initialiser here")
                    .hint("keep one `init` line per variable"),
                );
                continue;
            }
            self.vars[v].init = Some((init, i.span));
        }
    }

    fn init_value(&mut self, e: &ast::Expr) -> Option<Init> {
        let bad = |span: Span, why: &str| {
            Diagnostic::new(Code::Misuse, span, format!("unknown initialiser: {why}"))
                .label("not an initialiser")
                .hint("use `prior`, `random`, `random(scale = 1, seed = 0)` or a number")
        };
        match &e.kind {
            ExprKind::Name {
                name,
                indices: None,
            } if name.name == "prior" => Some(Init::Prior),
            ExprKind::Name {
                name,
                indices: None,
            } if name.name == "random" => Some(Init::Random {
                scale: None,
                seed: None,
            }),
            ExprKind::Call { func, args } if func.name == "random" => {
                let (mut scale, mut seed) = (None, None);
                for a in args {
                    let value = self.const_eval(&a.value)?;
                    let x = match value {
                        ConstValue::Scalar(x) => x,
                        ConstValue::Identity(_) => {
                            self.error(bad(a.span, "`identity` is not a number"));
                            return None;
                        }
                    };
                    match a.name.as_ref().map(|n| n.name.as_str()) {
                        Some("scale") | None if x > 0.0 && scale.is_none() => scale = Some(x),
                        Some("seed") if x >= 0.0 && x.fract() == 0.0 && x < 1.8e19 => {
                            seed = Some(x as u64)
                        }
                        _ => {
                            self.error(bad(
                                a.span,
                                "random() takes `scale` > 0 and an integer `seed` ≥ 0",
                            ));
                            return None;
                        }
                    }
                }
                Some(Init::Random { scale, seed })
            }
            ExprKind::Name { .. } | ExprKind::Call { .. } if !is_constant_name(self, e) => {
                self.error(bad(e.span, "expected `prior`, `random` or a number"));
                None
            }
            _ => match self.const_eval(e)? {
                ConstValue::Scalar(x) => Some(Init::Value(x)),
                ConstValue::Identity(_) => {
                    self.error(bad(e.span, "`identity` is not a number"));
                    None
                }
            },
        }
    }
}

fn is_constant_name(r: &Resolver<'_, '_>, e: &ast::Expr) -> bool {
    matches!(&e.kind, ExprKind::Name { name, indices: None } if r.const_value(&name.name).is_some())
}
