//! Compiler diagnostics: an error with a primary span, secondary labels and a
//! hint, rendered either as plain text (stable, compared in tests) or with
//! colours and box drawing through `ariadne`.

use std::fmt;

use crate::span::{line_col, Span};

/// What kind of problem a [`Diagnostic`] reports; stable for tools and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// A character or number the lexer cannot read.
    Lex,
    /// The token stream does not follow the grammar.
    Syntax,
    /// A name that is not a declared variable, constant or plate.
    UnknownName,
    /// A distribution that is not in the catalog.
    UnknownDistribution,
    /// A deterministic function that is not in the catalog.
    UnknownFunction,
    /// An argument name that is not a slot of the distribution.
    UnknownSlot,
    /// A required slot was given no argument.
    MissingSlot,
    /// A slot was given two arguments, or too many positional ones.
    BadArguments,
    /// A name declared twice.
    Duplicate,
    /// A reserved word used as a name.
    Reserved,
    /// A plate size that is not a positive integer, or unknown data.
    PlateSize,
    /// Plates of a parent and of its child do not line up.
    PlateMismatch,
    /// Event plates (vector dimensions) do not line up.
    EventMismatch,
    /// A plate indexed by something that is not a Categorical variable.
    NotCategorical,
    /// A parent whose kind is not conjugate for the slot it fills.
    NonConjugate,
    /// A constant outside the domain of its slot.
    BadConstant,
    /// The variables depend on each other in a cycle.
    Cycle,
    /// Attached data whose shape disagrees with the variable.
    DataShape,
    /// A construct used where it has no meaning (a plate as a value, ...).
    Misuse,
    /// A latent variable that enters one node's expression twice (`a * a`, `dot(x, x)`, or
    /// again through a deterministic variable): not multilinear, Winn (2.41).
    RepeatedParent,
}

/// A secondary location with a short message, e.g. "K declared here".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What is there.
    pub message: String,
}

/// One error, with the place it was found and a hint how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The kind of problem.
    pub code: Code,
    /// One-line reason, without location.
    pub message: String,
    /// The primary location, underlined with carets.
    pub span: Span,
    /// Text printed after the carets (may be empty).
    pub label: String,
    /// Secondary locations.
    pub notes: Vec<Label>,
    /// How to fix it (nearest name, valid slots, ...).
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with no label text, notes or hint yet.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            span,
            label: String::new(),
            notes: Vec::new(),
            hint: None,
        }
    }

    /// Sets the text printed after the carets.
    pub fn label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    /// Adds a secondary location.
    pub fn note(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.notes.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Sets the hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the hint if there is one.
    pub fn maybe_hint(mut self, hint: Option<String>) -> Diagnostic {
        if hint.is_some() {
            self.hint = hint;
        }
        self
    }
}

/// All diagnostics of one compilation, with the source they point into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics {
    /// Name of the model file, printed in locations.
    pub file_name: String,
    /// The full source text.
    pub source: String,
    /// The diagnostics, in source order of discovery.
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Wraps diagnostics found in `source`.
    pub fn new(file_name: &str, source: &str, items: Vec<Diagnostic>) -> Diagnostics {
        Diagnostics {
            file_name: file_name.to_string(),
            source: source.to_string(),
            items,
        }
    }

    /// `file:line:column` of a diagnostic's primary span.
    pub fn location(&self, d: &Diagnostic) -> String {
        let lc = line_col(&self.source, d.span.start);
        format!("{}:{}:{}", self.file_name, lc.line, lc.column)
    }

    /// Plain-text rendering: stable, without colours, compared in tests.
    ///
    /// ```text
    /// error: unknown distribution `Gausian`
    ///  --> m.occam:1:6
    ///   |
    /// 1 | mu ~ Gausian(0, 1)
    ///   |      ^^^^^^^ not in the catalog
    ///   = hint: did you mean `Gaussian`?
    /// ```
    ///
    /// Bounded whatever the input: at most [`MAX_RENDERED`] diagnostics are shown (then a count of
    /// the rest), a source line is echoed as at most [`MAX_ECHO`] characters around the span
    /// (elided ends marked `…`), and messages, labels and hints are clipped to [`MAX_MESSAGE`]
    /// characters.
    pub fn render_plain(&self) -> String {
        let mut out = String::new();
        for (i, d) in self.items.iter().take(MAX_RENDERED).enumerate() {
            if i > 0 {
                out.push('\n');
            }
            self.render_one(d, &mut out);
        }
        if self.items.len() > MAX_RENDERED {
            out.push_str(&format!(
                "\n... and {} more error(s) not shown\n",
                self.items.len() - MAX_RENDERED
            ));
        }
        out
    }

    fn render_one(&self, d: &Diagnostic, out: &mut String) {
        let width = std::iter::once(d.span)
            .chain(d.notes.iter().map(|n| n.span))
            .map(|s| line_col(&self.source, s.start).line.to_string().len())
            .max()
            .unwrap_or(1);
        let pad = " ".repeat(width);
        out.push_str(&format!("error: {}\n", clip(&d.message, MAX_MESSAGE)));
        out.push_str(&format!(
            "{pad}--> {}\n",
            clip(&self.location(d), MAX_MESSAGE)
        ));
        self.snippet(d.span, '^', &clip(&d.label, MAX_MESSAGE), &pad, out);
        for n in d.notes.iter().take(MAX_RENDERED) {
            self.snippet(n.span, '-', &clip(&n.message, MAX_MESSAGE), &pad, out);
        }
        if let Some(h) = &d.hint {
            out.push_str(&format!("{pad} = hint: {}\n", clip(h, MAX_MESSAGE)));
        }
    }

    fn snippet(&self, span: Span, mark: char, label: &str, pad: &str, out: &mut String) {
        let lc = line_col(&self.source, span.start);
        let line_text = self.source.lines().nth(lc.line - 1).unwrap_or("");
        let line_text: String = line_text
            .chars()
            .map(|c| if c == '\t' { ' ' } else { c })
            .collect();
        let line_len = line_text.chars().count();
        let end = line_col(&self.source, span.end.max(span.start));
        let span_chars = if end.line == lc.line {
            end.column.saturating_sub(lc.column)
        } else {
            (line_len + 1).saturating_sub(lc.column)
        };
        // A long line is echoed as a window of MAX_ECHO characters starting a little before the
        // span, with `…` marking the elided ends; the carets move with it.
        let (shown, offset) = if line_len > MAX_ECHO {
            let first = (lc.column - 1)
                .saturating_sub(MAX_ECHO / 4)
                .min(line_len - MAX_ECHO);
            let mut w: String = line_text.chars().skip(first).take(MAX_ECHO).collect();
            let mut offset = first;
            if first > 0 {
                w.insert(0, '…');
                offset = first - 1;
            }
            if first + MAX_ECHO < line_len {
                w.push('…');
            }
            (w, offset)
        } else {
            (line_text, 0)
        };
        let caret_col = (lc.column - 1).saturating_sub(offset);
        let room = shown.chars().count().saturating_sub(caret_col) + 1;
        let marks = mark.to_string().repeat(span_chars.clamp(1, room.max(1)));
        out.push_str(&format!("{pad} |\n"));
        out.push_str(&format!("{:>w$} | {}\n", lc.line, shown, w = pad.len()));
        let mut under = format!("{pad} | {}{}", " ".repeat(caret_col), marks);
        if !label.is_empty() {
            under.push(' ');
            under.push_str(label);
        }
        out.push_str(under.trim_end());
        out.push('\n');
    }

    /// Rendering with box drawing (and ANSI colours if `color`), by `ariadne`; the plain rendering
    /// when a line it would echo is longer than [`MAX_ECHO`] characters, or there are more than
    /// [`MAX_RENDERED`] diagnostics (ariadne echoes whole lines).
    pub fn render_fancy(&self, color: bool) -> String {
        use ariadne::{Config, IndexType, Label as ALabel, Report, ReportKind, Source};
        let long_line = |s: Span| {
            let lc = line_col(&self.source, s.start);
            self.source
                .lines()
                .nth(lc.line - 1)
                .is_some_and(|l| l.chars().count() > MAX_ECHO)
        };
        if self.items.len() > MAX_RENDERED
            || self.items.iter().any(|d| {
                long_line(d.span)
                    || d.message.chars().count() > MAX_MESSAGE
                    || d.notes.iter().any(|n| long_line(n.span))
            })
        {
            return self.render_plain();
        }
        let name = self.file_name.as_str();
        let clamp = |s: Span| {
            let start = s.start.min(self.source.len());
            start..s.end.clamp(start, self.source.len())
        };
        let mut out = Vec::new();
        for d in &self.items {
            let mut report = Report::build(ReportKind::Error, (name, clamp(d.span)))
                .with_config(
                    Config::default()
                        .with_color(color)
                        .with_index_type(IndexType::Byte),
                )
                .with_message(&d.message)
                .with_label(ALabel::new((name, clamp(d.span))).with_message(&d.label));
            for n in &d.notes {
                report =
                    report.with_label(ALabel::new((name, clamp(n.span))).with_message(&n.message));
            }
            if let Some(h) = &d.hint {
                report = report.with_help(h);
            }
            // Writing into a Vec cannot fail.
            let _ = report
                .finish()
                .write((name, Source::from(self.source.as_str())), &mut out);
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_plain())
    }
}

impl std::error::Error for Diagnostics {}

/// The most diagnostics a rendering shows (the rest are counted).
pub const MAX_RENDERED: usize = 50;
/// The most characters of a source line a rendering echoes.
pub const MAX_ECHO: usize = 200;
/// The most characters of a message, label or hint a rendering prints.
pub const MAX_MESSAGE: usize = 500;

/// `text` cut to at most `max` characters, with `…` marking the cut.
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…", &text[..cut])),
    }
}

/// Levenshtein distance between two strings, in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    // Optimal string alignment: Levenshtein plus the swap of two adjacent characters as one edit
    // (`tua` for `tau` is one typo, not two).
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut before: Vec<usize> = Vec::new();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            let mut d = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
            if i > 0 && j > 0 && ca == b[j - 1] && a[i - 1] == cb {
                d = d.min(before[j - 1] + 1);
            }
            cur[j + 1] = d;
        }
        before = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

/// Candidates close to `name`, nearest first: a case-insensitive match, or an
/// edit distance of at most a third of the name's length (at least 1, at most 3).
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let limit = (name.chars().count() / 3).clamp(1, 3);
    let lower = name.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = if c.to_lowercase() == lower {
                0
            } else {
                edit_distance(&lower, &c.to_lowercase())
            };
            (d <= limit && d < name.chars().count() && c != name).then_some((d, c))
        })
        .collect();
    scored.sort();
    scored.dedup();
    scored.into_iter().map(|(_, c)| c).collect()
}

/// "did you mean `x`?" for the nearest candidate, if any.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    nearest(name, candidates)
        .first()
        .map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("mu", "mu"), 0);
        // A swap of neighbours is one edit.
        assert_eq!(edit_distance("tua", "tau"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("abc", "ca"), 3);
    }

    #[test]
    fn a_transposed_variable_name_gets_a_suggestion() {
        assert_eq!(
            did_you_mean("tua", ["mu", "tau", "y"]),
            Some("did you mean `tau`?".to_string())
        );
    }

    #[test]
    fn nearest_prefers_closest() {
        let c = ["Gaussian", "Gamma", "GaussianARD", "Beta"];
        assert_eq!(nearest("Gausian", c), vec!["Gaussian"]);
        assert_eq!(nearest("gamma", c), vec!["Gamma"]);
        assert!(nearest("Zzzzzz", c).is_empty());
    }

    #[test]
    fn long_lines_and_many_errors_are_clipped() {
        let long = format!("x ~ Gaussian(0, 1) {} y ~ Bad(0)\n", "a".repeat(40_000));
        let at = long.find("Bad").unwrap();
        let items: Vec<Diagnostic> = (0..200)
            .map(|_| {
                Diagnostic::new(Code::UnknownDistribution, Span::new(at, at + 3), "unknown")
                    .label("here")
            })
            .collect();
        let ds = Diagnostics::new("m.occam", &long, items);
        let text = ds.render_plain();
        assert!(text.len() < 50 * 800, "{} bytes", text.len());
        assert!(text.contains("… and 150 more") || text.contains("and 150 more error(s)"));
        let first: Vec<&str> = text.lines().take(6).collect();
        // The echoed window holds the span, and the carets sit under it.
        let echo = first[3];
        let carets = first[4];
        let col = carets.find('^').unwrap();
        assert_eq!(
            &echo[echo
                .char_indices()
                .nth(carets[..col].chars().count())
                .unwrap()
                .0..][..3],
            "Bad"
        );
        assert!(echo.chars().count() < MAX_ECHO + 20);
        assert_eq!(ds.render_fancy(false), text);
    }

    #[test]
    fn plain_rendering_has_caret_under_span() {
        let src = "mu ~ Gausian(0, 1)\n";
        let d = Diagnostic::new(
            Code::UnknownDistribution,
            Span::new(5, 12),
            "unknown distribution `Gausian`",
        )
        .label("not in the catalog")
        .hint("did you mean `Gaussian`?");
        let ds = Diagnostics::new("m.occam", src, vec![d]);
        assert_eq!(
            ds.render_plain(),
            "error: unknown distribution `Gausian`\n --> m.occam:1:6\n  |\n1 | mu ~ Gausian(0, 1)\n  |      ^^^^^^^ not in the catalog\n  = hint: did you mean `Gaussian`?\n"
        );
        let fancy = ds.render_fancy(false);
        assert!(fancy.contains("unknown distribution `Gausian`"), "{fancy}");
        assert!(fancy.contains("m.occam:1:6"), "{fancy}");
    }
}
