//! Expressions and call arguments: `+` over `*`/`@` over unary minus over atoms (numbers,
//! names, `name[indices]`, calls, parentheses), with the nesting limits of the parent module.

use super::{PResult, Parser, MAX_DEPTH, MAX_TREE_DEPTH};
use crate::ast::{Arg, BinOp, Expr, ExprKind};
use crate::diag::{Code, Diagnostic};
use crate::lex::Tok;
use crate::span::Span;

impl Parser {
    /// Arguments after the `(` at `open`, through the closing `)`.
    pub(super) fn args(&mut self, open: Span) -> PResult<Vec<Arg>> {
        let mut args = Vec::new();
        while !self.at(&Tok::RParen) {
            let start = self.peek().span.start;
            let name = if matches!(self.peek().tok, Tok::Ident(_)) && self.peek_at(1).tok == Tok::Eq
            {
                let n = self.ident("a slot name")?;
                self.bump();
                Some(n)
            } else {
                None
            };
            let value = self.expr()?;
            args.push(Arg {
                name,
                span: Span::new(start, value.span.end),
                value,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(
            Tok::RParen,
            "separate arguments with `,` and close with `)`",
        )
        .map_err(|d| d.note(open, "`(` opened here"))?;
        Ok(args)
    }

    pub(super) fn expr(&mut self) -> PResult<Expr> {
        // Every operator of a chain adds a level to the (left-deep) tree: it counts against
        // the tree-depth limit, since the resolver walks the tree recursively.
        let base = self.tree;
        let mut lhs = self.term()?;
        while self.eat(&Tok::Plus) {
            self.tree += 1;
            let rhs = self.term();
            let rhs = rhs.inspect_err(|_| self.tree = base)?;
            lhs = binary(BinOp::Add, lhs, rhs);
        }
        self.tree = base;
        if self.at(&Tok::Minus) {
            return Err(self
                .unexpected("an operator `+`, `*` or `@`")
                .hint("subtraction is not supported; add a negated constant instead: `a + -1`"));
        }
        Ok(lhs)
    }

    fn term(&mut self) -> PResult<Expr> {
        let base = self.tree;
        let mut lhs = self.unary()?;
        loop {
            let op = match self.peek().tok {
                Tok::Star => BinOp::Mul,
                Tok::At => BinOp::MatMul,
                _ => break,
            };
            self.bump();
            self.tree += 1;
            let rhs = self.unary();
            let rhs = rhs.inspect_err(|_| self.tree = base)?;
            lhs = binary(op, lhs, rhs);
        }
        self.tree = base;
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        if self.depth >= MAX_DEPTH || self.depth + self.tree >= MAX_TREE_DEPTH {
            return Err(Diagnostic::new(
                Code::Syntax,
                self.peek().span,
                "expression nested too deeply",
            )
            .label(format!(
                "more than {MAX_DEPTH} nested parentheses, calls or minus signs, or a tree deeper \
                 than {MAX_TREE_DEPTH} (each chained `+`, `*`, `@` adds a level)"
            ))
            .hint("split it into named deterministic variables"));
        }
        self.depth += 1;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
        if self.at(&Tok::Minus) {
            let start = self.bump().span.start;
            let inner = self.unary()?;
            let span = Span::new(start, inner.span.end);
            return Ok(Expr {
                kind: ExprKind::Neg(Box::new(inner)),
                span,
            });
        }
        self.atom()
    }

    fn atom(&mut self) -> PResult<Expr> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Number(v) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Number(v),
                    span: t.span,
                })
            }
            Tok::LParen => {
                self.bump();
                let mut e = self.expr()?;
                let end = self
                    .expect(Tok::RParen, "close the parenthesis")
                    .map_err(|d| d.note(t.span, "`(` opened here"))?;
                e.span = Span::new(t.span.start, end.end);
                Ok(e)
            }
            Tok::Ident(_) => {
                let name = self.ident("a name")?;
                if self.eat(&Tok::LParen) {
                    let open = self.tokens[self.pos - 1].span;
                    let args = self.args(open)?;
                    Ok(Expr {
                        span: Span::new(name.span.start, self.prev_end()),
                        kind: ExprKind::Call { func: name, args },
                    })
                } else if self.eat(&Tok::LBracket) {
                    let mut indices = Vec::new();
                    loop {
                        indices.push(self.ident("a plate or Categorical variable")?);
                        if !self.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    self.expect(
                        Tok::RBracket,
                        "indices are plate names or Categorical variables, separated by `,`",
                    )?;
                    Ok(Expr {
                        span: Span::new(name.span.start, self.prev_end()),
                        kind: ExprKind::Name {
                            name,
                            indices: Some(indices),
                        },
                    })
                } else {
                    Ok(Expr {
                        span: name.span,
                        kind: ExprKind::Name {
                            name,
                            indices: None,
                        },
                    })
                }
            }
            _ => Err(self.unexpected("an expression").hint(
                "an expression is a number, a name, `mu[lambda]`, `f(...)`, or these joined by `+`, `*`, `@`",
            )),
        }
    }
}

fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr {
        span: lhs.span.to(rhs.span),
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
    }
}
