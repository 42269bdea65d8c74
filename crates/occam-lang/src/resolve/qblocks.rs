//! Joint q-blocks: `q joint(a, b, c)` names latent Categorical variables whose q is one joint
//! distribution (a tree-structured q, Winn §5.3–5.6), or latent scalar Gaussian variables read
//! together by one `concat`, whose q is one full-covariance Gaussian per element (the engine's
//! Gaussian q-block; its structure is checked when the model is built). Runs after
//! observations, since an observed variable has no q.
//!
//! Checked here, each at the name in the statement: the name is a variable; it is a latent,
//! non-MAP Categorical (a chain is a q-block of its own); it is in one block only; its mixture
//! indices are in its block (a member's factor is a table over its indices and itself). A variable
//! outside the block that reads two or more members couples them through a factor the block must
//! hold: an observed Categorical (evidence, such as a symptom of two diseases) is added to the
//! block's `evidence`; anything else is an error.

use std::collections::HashMap;

use super::{Resolver, Source};
use crate::ast::{self, Stmt};
use crate::catalog;
use crate::diag::{did_you_mean, Code, Diagnostic};
use crate::ir::{self, Expr, ExprOp, Node};
use crate::span::Span;

const HINT: &str = "a q-block keeps Categorical variables joint: `q joint(a, b, c)`";

impl Resolver<'_, '_> {
    pub(super) fn q_blocks(&mut self, file: &ast::File) -> Vec<ir::QBlock> {
        let mut blocks = Vec::new();
        // Each member's block (index into `blocks`) and where it was named.
        let mut named: HashMap<usize, Span> = HashMap::new();
        for stmt in &file.statements {
            let Stmt::Q(q) = stmt else { continue };
            let mut members = Vec::new();
            let mut ok = true;
            for id in &q.members {
                match self.q_member(id, &named) {
                    Some(v) => {
                        named.insert(v, id.span);
                        members.push((v, id.span));
                    }
                    None => ok = false,
                }
            }
            if ok {
                if let Some(b) = self.q_structure(q, &members, &named) {
                    blocks.push(b);
                }
            }
        }
        blocks
    }

    /// The variable `id` names, if it can be a member (else reports why).
    fn q_member(&mut self, id: &ast::Ident, named: &HashMap<usize, Span>) -> Option<usize> {
        let Some(v) = self.var_index(&id.name) else {
            let names: Vec<String> = self.vars.iter().map(|v| v.name.clone()).collect();
            let hint = did_you_mean(&id.name, names.iter().map(String::as_str))
                .unwrap_or_else(|| HINT.to_string());
            self.error(
                Diagnostic::new(
                    Code::UnknownName,
                    id.span,
                    format!("unknown variable `{}`", id.name),
                )
                .label("not a declared variable")
                .hint(hint),
            );
            return None;
        };
        let e = &self.vars[v];
        if !e.ok {
            return None;
        }
        let err = |msg: String, label: &str, hint: &str| {
            Diagnostic::new(Code::Misuse, id.span, msg)
                .label(label)
                .note(e.name_span, "declared here")
                .hint(hint)
        };
        let d = match e.dist {
            Some(d) if catalog::is_chain(d) => Some(err(
                format!(
                    "`{}` is a {}: a chain is a q-block of its own",
                    e.name, d.name
                ),
                "a chain",
                "leave it out; its steps are already joint in q",
            )),
            Some(d) if !["Categorical", "Gaussian", "GaussianARD"].contains(&d.name) => Some(err(
                format!(
                    "`{}` is {}: only Categorical, Gaussian or GaussianARD variables can \
                         share a q-block",
                    e.name, d.name
                ),
                "not a Categorical or Gaussian latent variable",
                "a q-block is a tree-structured q over discrete variables (Winn §5.3–5.6), \
                     a joint Gaussian over scalar Gaussians read together by one `concat`, or \
                     `q joint(s, x)` over a mixture index and the GaussianARD vectors it gates",
            )),
            None => Some(err(
                format!(
                    "{} is not a random variable: only Categorical variables can share a q-block",
                    self.var_noun(v)
                ),
                "not a discrete latent variable",
                HINT,
            )),
            Some(_) if e.observed => Some(err(
                format!("`{}` is observed: it has no q to share", e.name),
                "observed",
                "leave it out; an observed variable that reads two members is added to the \
                 block as evidence by itself",
            )),
            Some(_) if matches!(e.source, Source::Decl(d) if d.map.is_some()) => Some(err(
                format!(
                    "`{}` is a point estimate (`map`): it has no q to share",
                    e.name
                ),
                "map",
                "drop `map`, or leave it out of the block",
            )),
            Some(_) => None,
        };
        if let Some(d) = d {
            self.error(d);
            return None;
        }
        if let Some(&first) = named.get(&v) {
            self.error(
                Diagnostic::new(
                    Code::Duplicate,
                    id.span,
                    format!("`{}` is in two q-blocks", id.name),
                )
                .label("named again")
                .note(first, "first named here")
                .hint(
                    "a variable belongs to one q-block; merge the blocks into one `q joint(...)`",
                ),
            );
            return None;
        }
        Some(v)
    }

    /// The block of `members` once its structure is checked: every member's mixture indices are
    /// members, and every variable outside that reads two or more members is observed evidence.
    fn q_structure(
        &mut self,
        q: &ast::QDecl,
        members: &[(usize, Span)],
        named: &HashMap<usize, Span>,
    ) -> Option<ir::QBlock> {
        if members
            .iter()
            .any(|&(m, _)| self.vars[m].dist.is_some_and(|d| d.name == "GaussianARD"))
        {
            return self.gated_structure(q, members);
        }
        let inside = |v: usize| members.iter().any(|&(m, _)| m == v);
        let gaussian = |v: usize| self.vars[v].dist.is_some_and(|d| d.name == "Gaussian");
        let count = members.iter().filter(|&&(m, _)| gaussian(m)).count();
        if count == members.len() {
            // A Gaussian q-block: its members are the parts of one `concat` and nothing else
            // reads them, which the engine checks when the model is built.
            return Some(ir::QBlock {
                members: members.iter().map(|&(m, _)| m).collect(),
                evidence: Vec::new(),
                span: q.span,
                kind: ir::QKind::Joint,
            });
        }
        if count > 0 {
            self.error(
                Diagnostic::new(
                    Code::Misuse,
                    q.span,
                    "a q-block holds Categorical variables or Gaussian ones, not both",
                )
                .label("the q-block")
                .hint("split it into one block of each kind"),
            );
            return None;
        }
        let mut ok = true;
        for &(m, span) in members {
            let outside: Vec<usize> = self
                .indices(m)
                .into_iter()
                .filter(|&i| !inside(i))
                .collect();
            if let Some(&i) = outside.first() {
                let (name, index) = (self.vars[m].name.clone(), self.vars[i].name.clone());
                self.error(
                    Diagnostic::new(
                        Code::Misuse,
                        span,
                        format!("`{name}` is indexed by `{index}`, which is not in its q-block"),
                    )
                    .label(format!("depends on `{index}`"))
                    .note(self.vars[i].name_span, format!("`{index}` declared here"))
                    .hint(format!(
                        "add `{index}` to the block: a member's mixture indices are members too"
                    )),
                );
                ok = false;
            }
        }
        let mut evidence = Vec::new();
        for w in 0..self.vars.len() {
            if inside(w) || !self.vars[w].ok {
                continue;
            }
            let mut read: Vec<usize> = self.vars[w]
                .deps
                .iter()
                .map(|&(p, _)| p)
                .filter(|&p| inside(p))
                .collect();
            read.sort_unstable();
            read.dedup();
            if read.len() < 2 {
                continue;
            }
            let e = &self.vars[w];
            let categorical = e.dist.is_some_and(|d| d.name == "Categorical");
            if categorical
                && e.observed
                && !named.contains_key(&w)
                && self.indices(w).iter().all(|&i| inside(i))
            {
                evidence.push(w);
                continue;
            }
            let names: Vec<String> = read
                .iter()
                .map(|&p| format!("`{}`", self.vars[p].name))
                .collect();
            let hint = if categorical && !e.observed {
                format!("add `{}` to the block", e.name)
            } else {
                "a variable outside a q-block may read one of its members; split the block so \
                 that its readers see one member each"
                    .to_string()
            };
            self.error(
                Diagnostic::new(
                    Code::Misuse,
                    q.span,
                    format!(
                        "{} reads {} members of this q-block ({})",
                        self.var_noun(w),
                        read.len(),
                        names.join(", ")
                    ),
                )
                .label("the q-block")
                .note(e.name_span, format!("`{}` declared here", e.name))
                .hint(hint),
            );
            ok = false;
        }
        ok.then(|| ir::QBlock {
            members: members.iter().map(|&(m, _)| m).collect(),
            evidence,
            span: q.span,
            kind: ir::QKind::Joint,
        })
    }

    /// The Categorical variables that index variable `v`'s arguments (its mixture indices).
    fn indices(&self, v: usize) -> Vec<usize> {
        let mut out = Vec::new();
        if let Some(Node::Stochastic { args, .. }) = &self.vars[v].node {
            for a in args {
                index_vars(&a.value, &mut out);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

fn index_vars(e: &Expr, out: &mut Vec<usize>) {
    e.visit(|x| {
        if let ExprOp::Var(r) = &x.op {
            out.extend(r.index.iter().filter_map(|i| i.by.as_ref().map(|c| c.var)));
        }
    });
}
