//! The parser: tokens to [`crate::ast::File`], one statement per line.
//!
//! On a syntax error the rest of the line is skipped and parsing goes on, so
//! one run reports the first error of every broken statement.

use crate::ast::{
    ConstDecl, File, Ident, InitDecl, ObserveDecl, ObserveItem, PlateDecl, PlateItem, QDecl, Stmt,
    VarDecl, VarRhs,
};
use crate::diag::{Code, Diagnostic};
use crate::lex::{lex, Tok, Token};
use crate::span::Span;

/// Words that start statements or modify declarations; they cannot name
/// variables, plates or constants.
pub const KEYWORDS: &[&str] = &[
    "plate", "plates", "from", "data", "observe", "let", "const", "init", "over", "map",
];

/// Parses a model. Returns the statements that parsed and every lexical and
/// syntax error found; the file is usable only if the errors are empty.
pub fn parse(source: &str) -> (File, Vec<Diagnostic>) {
    let (tokens, mut diags) = lex(source);
    let mut p = Parser {
        tokens,
        pos: 0,
        depth: 0,
        tree: 0,
    };
    let mut file = File::default();
    while !p.at(&Tok::Eof) {
        if p.eat(&Tok::Newline) {
            continue;
        }
        match p.statement() {
            Ok(s) => file.statements.push(s),
            Err(d) => {
                diags.push(d);
                p.skip_line();
            }
        }
    }
    diags.sort_by_key(|d| d.span.start);
    (file, diags)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    /// Operators of enclosing chains: the tree is this much deeper than `depth`.
    tree: usize,
}

/// Deepest nesting of parentheses, calls and unary minus the parser accepts (it
/// recurses once per level), so that hostile input cannot overflow the stack.
pub const MAX_DEPTH: usize = 64;

/// Deepest expression tree accepted: nesting levels plus every operator of a chain
/// `a + b + …` (which the parser reads in a loop but which makes the tree one level
/// deeper for the recursive passes after it).
pub const MAX_TREE_DEPTH: usize = 512;

type PResult<T> = Result<T, Diagnostic>;

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, k: usize) -> &Token {
        &self.tokens[(self.pos + k).min(self.tokens.len() - 1)]
    }

    fn at(&self, t: &Tok) -> bool {
        &self.peek().tok == t
    }

    fn at_word(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == w)
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.at(t) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.tokens[self.pos - 1].span.end
        }
    }

    fn skip_line(&mut self) {
        while !self.at(&Tok::Eof) && !self.at(&Tok::Newline) {
            self.bump();
        }
    }

    fn unexpected(&self, what: &str) -> Diagnostic {
        let t = self.peek();
        Diagnostic::new(
            Code::Syntax,
            t.span,
            format!("expected {what}, found {}", t.tok.describe()),
        )
        .label(format!("expected {what}"))
    }

    fn expect(&mut self, t: Tok, hint: &str) -> PResult<Span> {
        if self.at(&t) {
            Ok(self.bump().span)
        } else {
            let mut d = self.unexpected(&t.describe());
            if !hint.is_empty() {
                d = d.hint(hint);
            }
            Err(d)
        }
    }

    /// A name that is not a keyword.
    fn ident(&mut self, what: &str) -> PResult<Ident> {
        match self.peek().tok.clone() {
            Tok::Ident(name) if KEYWORDS.contains(&name.as_str()) => {
                let span = self.peek().span;
                Err(
                    Diagnostic::new(Code::Reserved, span, format!("`{name}` is a reserved word"))
                        .label(format!("expected {what}"))
                        .hint(format!("reserved words: {}", KEYWORDS.join(", "))),
                )
            }
            Tok::Ident(name) => Ok(Ident {
                name,
                span: self.bump().span,
            }),
            _ => Err(self.unexpected(what)),
        }
    }

    fn end_of_statement(&mut self, hint: &str) -> PResult<()> {
        if self.at(&Tok::Newline) || self.at(&Tok::Eof) {
            self.bump();
            Ok(())
        } else {
            let mut d = self.unexpected("end of line");
            if !hint.is_empty() {
                d = d.hint(hint);
            }
            Err(d)
        }
    }

    fn statement(&mut self) -> PResult<Stmt> {
        let start = self.peek().span.start;
        let word = match &self.peek().tok {
            Tok::Ident(w) => w.clone(),
            _ => {
                return Err(self.unexpected("a statement").hint(
                    "statements are `plate ...`, `let ...`, `observe ...`, `init ...`, `q joint(...)`, `x ~ Dist(...)` or `x = expr`",
                ))
            }
        };
        let next_is_name = matches!(self.peek_at(1).tok, Tok::Ident(_));
        // `q` is not reserved: it starts a statement only as `q WORD(`, which no declaration is.
        let q_statement = next_is_name && self.peek_at(2).tok == Tok::LParen;
        match word.as_str() {
            "q" if q_statement => self.q_block(start),
            "plate" | "plates" if next_is_name => self.plates(start),
            "let" | "const" if next_is_name => self.constant(start),
            "observe" | "data" if next_is_name => self.observe(start),
            "init" if next_is_name => self.init(start),
            _ => self.variable(start),
        }
    }

    fn plates(&mut self, start: usize) -> PResult<Stmt> {
        self.bump();
        let mut items = Vec::new();
        loop {
            let name = self.ident("a plate name")?;
            let size = if self.eat(&Tok::Eq) {
                Some(self.expr()?)
            } else {
                None
            };
            items.push(PlateItem { name, size });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let from_data = if self.at_word("from") {
            self.bump();
            if !self.at_word("data") {
                return Err(self
                    .unexpected("`data`")
                    .hint("write `plates N, D from data x`"));
            }
            self.bump();
            Some(self.ident("a data name")?)
        } else {
            None
        };
        self.end_of_statement("write `plate K = 20` or `plates N, D from data x`")?;
        Ok(Stmt::Plates(PlateDecl {
            items,
            from_data,
            span: Span::new(start, self.prev_end_stmt()),
        }))
    }

    /// End of the statement just finished, excluding its newline token.
    fn prev_end_stmt(&self) -> usize {
        let mut i = self.pos;
        while i > 0 {
            i -= 1;
            if !matches!(self.tokens[i].tok, Tok::Newline | Tok::Eof) {
                return self.tokens[i].span.end;
            }
        }
        0
    }

    fn constant(&mut self, start: usize) -> PResult<Stmt> {
        self.bump();
        let name = self.ident("a constant name")?;
        self.expect(Tok::Eq, "write `let a0 = 0.001`")?;
        let value = self.expr()?;
        self.end_of_statement("")?;
        Ok(Stmt::Const(ConstDecl {
            name,
            value,
            span: Span::new(start, self.prev_end_stmt()),
        }))
    }

    fn observe(&mut self, start: usize) -> PResult<Stmt> {
        self.bump();
        let mut items = Vec::new();
        loop {
            let name = self.ident("a variable name")?;
            let plates = if self.at(&Tok::LBracket) {
                Some(self.plate_list()?)
            } else {
                None
            };
            let over = if self.at_word("over") {
                Some(self.over()?)
            } else {
                None
            };
            items.push(ObserveItem { name, plates, over });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.end_of_statement("write `observe x, y` or `data X[N] over C`")?;
        Ok(Stmt::Observe(ObserveDecl {
            items,
            span: Span::new(start, self.prev_end_stmt()),
        }))
    }

    fn init(&mut self, start: usize) -> PResult<Stmt> {
        self.bump();
        let name = self.ident("a variable name")?;
        self.expect(
            Tok::Eq,
            "write `init mu = random(scale = 1)`, `init z = random` or `init tau = 1`",
        )?;
        let value = self.expr()?;
        self.end_of_statement("")?;
        Ok(Stmt::Init(InitDecl {
            name,
            value,
            span: Span::new(start, self.prev_end_stmt()),
        }))
    }

    /// `q joint(a, b, c)`.
    fn q_block(&mut self, start: usize) -> PResult<Stmt> {
        self.bump();
        let hint = "write `q joint(a, b, c)`: the variables share one joint q";
        let how = self.peek().clone();
        if !self.at_word("joint") {
            return Err(Diagnostic::new(
                Code::Syntax,
                how.span,
                format!("unknown q structure {}", how.tok.describe()),
            )
            .label("expected `joint`")
            .hint(hint));
        }
        self.bump();
        let open = self.expect(Tok::LParen, hint)?;
        let mut members = Vec::new();
        while !self.at(&Tok::RParen) {
            members.push(self.ident("a variable name")?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(
            Tok::RParen,
            "separate the names with `,` and close with `)`",
        )
        .map_err(|d| d.note(open, "`(` opened here"))?;
        if members.is_empty() {
            return Err(Diagnostic::new(
                Code::Syntax,
                Span::new(start, self.prev_end()),
                "a q-block without members",
            )
            .label("no variables named")
            .hint(hint));
        }
        self.end_of_statement(hint)?;
        Ok(Stmt::Q(QDecl {
            members,
            span: Span::new(start, self.prev_end_stmt()),
        }))
    }

    /// `[P1, P2]`, starting at `[`.
    fn plate_list(&mut self) -> PResult<Vec<Ident>> {
        self.bump();
        let mut plates = Vec::new();
        loop {
            plates.push(self.ident("a plate name")?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::RBracket, "close the plate list with `]`")?;
        Ok(plates)
    }

    fn over(&mut self) -> PResult<Ident> {
        self.bump();
        self.ident("an event plate name")
    }

    fn variable(&mut self, start: usize) -> PResult<Stmt> {
        let name = self.ident("a variable name")?;
        let plates = if self.at(&Tok::LBracket) {
            self.plate_list()?
        } else {
            Vec::new()
        };
        let mut over = if self.at_word("over") {
            Some(self.over()?)
        } else {
            None
        };
        let rhs = if self.eat(&Tok::Tilde) {
            let dist = match self.ident("a distribution name") {
                Ok(d) => d,
                Err(d) => return Err(d.hint("write `x ~ Gaussian(mean = 0, precision = 1)`")),
            };
            let open = self.expect(
                Tok::LParen,
                &format!("a distribution takes arguments: `{}(...)`", dist.name),
            )?;
            let args = self.args(open)?;
            VarRhs::Random { dist, args }
        } else if self.eat(&Tok::Eq) {
            VarRhs::Deterministic(self.expr()?)
        } else {
            return Err(self.unexpected("`~` or `=`").hint(format!(
                "write `{0} ~ Dist(...)` for a random variable or `{0} = expr` for a deterministic one",
                name.name
            )));
        };
        let mut map = None;
        loop {
            if self.at_word("over") {
                let t = self.peek().span;
                if over.is_some() || !matches!(rhs, VarRhs::Random { .. }) {
                    return Err(Diagnostic::new(Code::Syntax, t, "misplaced `over`")
                        .label("event plate given twice or after an expression")
                        .hint("give the event plate once: `x[N] over Q ~ ...` or `x ~ Dirichlet(1) over K`"));
                }
                over = Some(self.over()?);
            } else if self.at_word("map") {
                if map.is_some() {
                    return Err(self.unexpected("end of line"));
                }
                map = Some(self.bump().span);
            } else {
                break;
            }
        }
        self.end_of_statement("modifiers after a declaration are `over PLATE` and `map`")?;
        Ok(Stmt::Var(VarDecl {
            name,
            plates,
            over,
            rhs,
            map,
            span: Span::new(start, self.prev_end_stmt()),
        }))
    }
}

mod expr;

#[cfg(test)]
mod tests;
