//! Where a lowering error points: the model text ([`SourceRef`]) and the mapping of a core
//! [`BuildError`] to the variable (and argument) it came from.

use occam_core::prelude::*;
use occam_lang::diag::{Code, Diagnostic};
use occam_lang::ir::Model;
use occam_lang::span::Span;
use occam_lang::Diagnostics;

use crate::error::Error;

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
