//! The lexer: source text to tokens with spans.
//!
//! Newlines end statements, except inside `(...)` and `[...]`, where they are
//! dropped so long argument lists can be wrapped. `#` starts a comment that runs
//! to the end of the line.

use crate::diag::{Code, Diagnostic};
use crate::span::Span;

/// The kind of a token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A name: letters (any script, so `μ` and `τ` work), digits and `_`,
    /// not starting with a digit.
    Ident(String),
    /// A numeric literal such as `20`, `0.01` or `1e-3`.
    Number(f64),
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `,`
    Comma,
    /// `=`
    Eq,
    /// `~`
    Tilde,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `@`
    At,
    /// End of a statement: a newline or `;`.
    Newline,
    /// End of input.
    Eof,
}

impl Tok {
    /// How the token is named in "expected ..., found ..." messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Number(_) => "a number".to_string(),
            Tok::LParen => "`(`".to_string(),
            Tok::RParen => "`)`".to_string(),
            Tok::LBracket => "`[`".to_string(),
            Tok::RBracket => "`]`".to_string(),
            Tok::Comma => "`,`".to_string(),
            Tok::Eq => "`=`".to_string(),
            Tok::Tilde => "`~`".to_string(),
            Tok::Plus => "`+`".to_string(),
            Tok::Minus => "`-`".to_string(),
            Tok::Star => "`*`".to_string(),
            Tok::At => "`@`".to_string(),
            Tok::Newline => "end of line".to_string(),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Its bytes in the source.
    pub span: Span,
}

/// Splits `source` into tokens. The result always ends with [`Tok::Eof`];
/// unreadable characters are reported and skipped.
pub fn lex(source: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut tokens = Vec::new();
    let mut diags = Vec::new();
    let mut depth: usize = 0;
    let mut chars = source.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        let single = |tok: Tok| Token {
            tok,
            span: Span::new(start, start + c.len_utf8()),
        };
        match c {
            '#' => {
                while let Some(&(_, c)) = chars.peek() {
                    if c == '\n' {
                        break;
                    }
                    chars.next();
                }
            }
            '\n' | ';' => {
                chars.next();
                // An unclosed bracket would swallow the rest of the file: end
                // it where the next line clearly starts a new statement.
                if c == '\n' && depth > 0 && starts_statement(&source[start + 1..]) {
                    depth = 0;
                }
                if depth == 0 && tokens.last().is_some_and(|t: &Token| t.tok != Tok::Newline) {
                    tokens.push(single(Tok::Newline));
                }
            }
            c if c.is_whitespace() => {
                chars.next();
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut end = start;
                while let Some(&(i, c)) = chars.peek() {
                    if c.is_alphanumeric() || c == '_' {
                        end = i + c.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                tokens.push(Token {
                    tok: Tok::Ident(source[start..end].to_string()),
                    span: Span::new(start, end),
                });
            }
            c if c.is_ascii_digit() || c == '.' => {
                let end = number_end(source, start);
                for _ in source[start..end].chars() {
                    chars.next();
                }
                let text = &source[start..end];
                let span = Span::new(start, end);
                match text.parse::<f64>() {
                    Ok(v) if v.is_finite() => tokens.push(Token {
                        tok: Tok::Number(v),
                        span,
                    }),
                    _ => diags.push(
                        Diagnostic::new(Code::Lex, span, format!("malformed number `{text}`"))
                            .label("not a finite number")
                            .hint("write numbers like `20`, `0.01` or `1e-3`"),
                    ),
                }
            }
            _ => {
                chars.next();
                let tok = match c {
                    '(' => Some(Tok::LParen),
                    ')' => Some(Tok::RParen),
                    '[' => Some(Tok::LBracket),
                    ']' => Some(Tok::RBracket),
                    ',' => Some(Tok::Comma),
                    '=' => Some(Tok::Eq),
                    '~' => Some(Tok::Tilde),
                    '+' => Some(Tok::Plus),
                    '-' => Some(Tok::Minus),
                    '*' => Some(Tok::Star),
                    '@' => Some(Tok::At),
                    _ => None,
                };
                match tok {
                    Some(tok) => {
                        match tok {
                            Tok::LParen | Tok::LBracket => depth += 1,
                            Tok::RParen | Tok::RBracket => depth = depth.saturating_sub(1),
                            _ => {}
                        }
                        tokens.push(single(tok));
                    }
                    None => diags.push(
                        Diagnostic::new(
                            Code::Lex,
                            single(Tok::Eof).span,
                            format!("unexpected character `{}`", c.escape_debug()),
                        )
                        .label("not part of the model language")
                        .hint("names use letters, digits and `_`; comments start with `#`"),
                    ),
                }
            }
        }
    }
    let end = source.len();
    if tokens.last().is_some_and(|t| t.tok != Tok::Newline) {
        tokens.push(Token {
            tok: Tok::Newline,
            span: Span::new(end, end),
        });
    }
    tokens.push(Token {
        tok: Tok::Eof,
        span: Span::new(end, end),
    });
    (tokens, diags)
}

/// Whether `line` (the text after a newline) begins, unindented, with a
/// statement keyword or a random-variable declaration `name[...] over Q ~`.
/// Argument lists never contain these, so a bracket still open there was
/// left unclosed.
fn starts_statement(line: &str) -> bool {
    let word_end = line
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
        .map_or(line.len(), |(i, _)| i);
    let word = &line[..word_end];
    if word.is_empty() || word.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let rest = &line[word_end..];
    if ["plate", "plates", "let", "const", "observe", "init"].contains(&word) {
        return rest.starts_with(' ');
    }
    if word == "q" && rest.trim_start().starts_with("joint") {
        return true;
    }
    let rest = rest.split('\n').next().unwrap_or("");
    let rest = match rest.trim_start().strip_prefix('[') {
        Some(r) => match r.find(']') {
            Some(i) => &r[i + 1..],
            None => return false,
        },
        None => rest,
    };
    let rest = rest.trim_start();
    let rest = match rest.strip_prefix("over ") {
        Some(r) => r
            .trim_start()
            .trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'),
        None => rest,
    };
    rest.trim_start().starts_with('~')
}

/// End of the numeric literal starting at `start`: digits, one `.`, and an
/// exponent `e[+-]digits` only when digits follow it.
fn number_end(source: &str, start: usize) -> usize {
    let b = source.as_bytes();
    let mut i = start;
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    i = digits(i);
    if i < b.len() && b[i] == b'.' {
        i = digits(i + 1);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            i = digits(j);
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        lex(src).0.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn lexes_a_statement() {
        assert_eq!(
            toks("mu[K] ~ Gaussian(0, 1e-3) # prior\n"),
            vec![
                Tok::Ident("mu".into()),
                Tok::LBracket,
                Tok::Ident("K".into()),
                Tok::RBracket,
                Tok::Tilde,
                Tok::Ident("Gaussian".into()),
                Tok::LParen,
                Tok::Number(0.0),
                Tok::Comma,
                Tok::Number(1e-3),
                Tok::RParen,
                Tok::Newline,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn newlines_inside_parentheses_are_dropped() {
        let t = toks("f(\n1,\n2)\n\n\ng");
        assert_eq!(t.iter().filter(|t| **t == Tok::Newline).count(), 2);
    }

    #[test]
    fn bad_characters_are_reported_with_span() {
        let (_, d) = lex("a $ b");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].span, Span::new(2, 3));
        let (_, d) = lex("x = .");
        assert_eq!(d.len(), 1, "{d:?}");
    }

    #[test]
    fn an_unclosed_bracket_ends_before_the_next_declaration() {
        let t = toks("mu ~ Gaussian(0, 1\ntau[K] ~ Gamma(1, 1)\n");
        assert_eq!(t.iter().filter(|t| **t == Tok::Newline).count(), 2);
        // Wrapped named arguments are not statements.
        let t = toks("y ~ Gaussian(\nmean = 0,\nprecision = 1)\n");
        assert_eq!(t.iter().filter(|t| **t == Tok::Newline).count(), 1);
        assert!(starts_statement("W[D] over Q ~ GaussianARD(0, 1)"));
        assert!(starts_statement("plate K = 3"));
        assert!(!starts_statement("  tau ~ Gamma(1, 1)"));
        assert!(!starts_statement("mean = mu,"));
        assert!(!starts_statement("x[N"));
    }

    #[test]
    fn exponent_needs_digits() {
        // `2e` is the number 2 followed by the name `e`.
        assert_eq!(
            toks("2e"),
            vec![
                Tok::Number(2.0),
                Tok::Ident("e".into()),
                Tok::Newline,
                Tok::Eof
            ]
        );
    }
}
