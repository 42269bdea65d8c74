//! Each parent enters a node's expression once: Winn's validity condition (2.41) for deterministic
//! nodes, ⟨u_X(f(Y))⟩ = ψ_X(⟨u_{Y_1}⟩, …, ⟨u_{Y_M}⟩), holds under a factorised q only when u_X∘f
//! is multilinear in the parents' statistics, i.e. when no latent variable is reached twice.
//! `b = a * a` breaks it (⟨a·a⟩ ≠ ⟨a⟩⟨a⟩), and so does `b = a + a` as two parents of one sum
//! node: the sum's forward moments (Winn's table under §2.3, ⟨X²⟩ = (Σ⟨Y_i⟩)² + Σ var Y_i) treat
//! the two uses as independent, and the "lower bound" then exceeds the evidence.
//!
//! Two steps:
//! * `collect_terms` (called when a sum is built) rewrites what is exactly linear: identical
//!   references inside one sum become one term with the summed constant coefficient (`a + 2*a`
//!   is `3 * a`), which the sum and product nodes represent exactly.
//! * [`repeated_parents`] finds every other repeat: for each argument of a stochastic variable
//!   and each deterministic variable, it expands deterministic variables through their chains and
//!   reports each latent variable reached more than once, with both uses.
//!
//! What is not a repeat: a Categorical selector (`mu[z]`) is a gate, not a value, and enters the
//! node's natural parameters linearly through its indicator δ(z, k) (Winn (2.52)), however many
//! slots or references it selects in; data inputs and observed variables are constants under q
//! (but see [`repeated_parents`] on observed variables with missing cells); the separate
//! arguments of one stochastic node are separate slots (each fills its own part of φ).

use std::collections::HashMap;

use crate::diag::{Code, Diagnostic};
use crate::ir::{ConstValue, Expr, ExprOp, Model, Node, VarRef};
use crate::span::Span;

/// A scalar real term `r` or `r * c` (as the resolver builds it: the folded constant last).
fn linear_term(e: &Expr) -> Option<(&VarRef, f64)> {
    if e.event.is_some() || e.kind != Some(crate::catalog::ValueKind::Real) {
        return None;
    }
    match &e.op {
        ExprOp::Var(r) => Some((r, 1.0)),
        ExprOp::Product(parts) => match parts.as_slice() {
            // `1 * a`: the factor 1 is folded away.
            [x] => match &x.op {
                ExprOp::Var(r) => Some((r, 1.0)),
                _ => None,
            },
            [x, c] => match (&x.op, &c.op) {
                (ExprOp::Var(r), ExprOp::Const(ConstValue::Scalar(c))) => Some((r, *c)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// Collects identical scalar references among the (non-constant) terms of one sum: `a + a` →
/// `2 * a`, `a + 2*a + b` → `3 * a + b`. Exact, since a sum is linear in each term; the
/// collected term stands where the reference first appears.
pub(crate) fn collect_terms(terms: Vec<Expr>) -> Vec<Expr> {
    // (position in `out`, summed coefficient, count) per distinct reference.
    let mut seen: Vec<(VarRef, usize, f64, usize)> = Vec::new();
    let mut out: Vec<Expr> = Vec::with_capacity(terms.len());
    for t in terms {
        let Some((r, c)) = linear_term(&t) else {
            out.push(t);
            continue;
        };
        if let Some(s) = seen.iter_mut().find(|s| s.0 == *r) {
            s.2 += c;
            s.3 += 1;
            continue;
        }
        seen.push((r.clone(), out.len(), c, 1));
        out.push(t);
    }
    for (_, pos, coef, count) in seen {
        if count < 2 {
            continue;
        }
        let first = &out[pos];
        let var = match &first.op {
            ExprOp::Product(parts) => parts[0].clone(),
            _ => first.clone(),
        };
        out[pos] = if coef == 1.0 {
            var
        } else {
            let span = first.span;
            Expr {
                kind: var.kind,
                plates: var.plates.clone(),
                event: None,
                op: ExprOp::Product(vec![
                    var,
                    Expr {
                        op: ExprOp::Const(ConstValue::Scalar(coef)),
                        kind: None,
                        plates: Vec::new(),
                        event: None,
                        span,
                    },
                ]),
                span,
            }
        };
    }
    out
}

/// One way a latent variable enters an expression.
#[derive(Clone, Copy)]
struct Entry<'m> {
    /// The latent variable.
    var: usize,
    /// The reference in the expression (to the variable itself, or to `via`).
    span: Span,
    /// The deterministic variable it is reached through, if any.
    via: Option<usize>,
    /// The reference, when direct (for its selectors).
    direct: Option<&'m VarRef>,
}

/// Every latent variable that enters one node's expression more than once (Winn (2.41)), as
/// located errors ([`Code::RepeatedParent`]) naming the variable and both uses. `latent(v)` says
/// whether stochastic variable `v` has a q: the resolver passes "not observed"; the lowering,
/// which sees the data, passes "not observed, or observed with missing cells", since a missing
/// cell is latent (`x * x` with `x` observed is a known constant, but not where `x` is missing).
/// Data inputs (`Node::Data`) are never latent; deterministic variables are expanded.
pub fn repeated_parents(model: &Model, latent: &dyn Fn(usize) -> bool) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // Latent variables each deterministic variable reaches, sorted, without repeats.
    let mut reach: HashMap<usize, Vec<usize>> = HashMap::new();
    for &v in &model.topological_order {
        let var = &model.variables[v];
        match &var.node {
            Node::Stochastic { args, .. } => {
                for a in args {
                    let entries = entries(model, &a.value, &reach, latent);
                    report(
                        model,
                        &entries,
                        &format!("the {} of `{}`", a.slot, var.name),
                        &mut out,
                    );
                }
            }
            Node::Deterministic { expr } => {
                let entries = entries(model, expr, &reach, latent);
                report(
                    model,
                    &entries,
                    &format!("the expression of `{}`", var.name),
                    &mut out,
                );
                let mut vars: Vec<usize> = entries.iter().map(|e| e.var).collect();
                vars.sort_unstable();
                vars.dedup();
                reach.insert(v, vars);
            }
            Node::Data => {}
        }
    }
    out
}

/// The latent variables `e` reaches, one entry per reference (and per variable reached through a
/// deterministic reference), in source order. Categorical selectors are not entries.
fn entries<'m>(
    model: &'m Model,
    e: &'m Expr,
    reach: &HashMap<usize, Vec<usize>>,
    latent: &dyn Fn(usize) -> bool,
) -> Vec<Entry<'m>> {
    fn walk<'m>(
        model: &'m Model,
        e: &'m Expr,
        reach: &HashMap<usize, Vec<usize>>,
        latent: &dyn Fn(usize) -> bool,
        out: &mut Vec<Entry<'m>>,
    ) {
        match &e.op {
            ExprOp::Const(_) => {}
            ExprOp::Var(r) => match &model.variables[r.var].node {
                Node::Stochastic { .. } if latent(r.var) => out.push(Entry {
                    var: r.var,
                    span: e.span,
                    via: None,
                    direct: Some(r),
                }),
                Node::Deterministic { .. } => {
                    for &a in reach.get(&r.var).map_or(&[][..], Vec::as_slice) {
                        out.push(Entry {
                            var: a,
                            span: e.span,
                            via: Some(r.var),
                            direct: None,
                        });
                    }
                }
                _ => {}
            },
            op => {
                for x in op.operands() {
                    walk(model, x, reach, latent, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(model, e, reach, latent, &mut out);
    out.sort_by_key(|e| e.span.start);
    out
}

/// One diagnostic per latent variable with two or more entries: at its second use, with the
/// first as a note.
fn report(model: &Model, entries: &[Entry<'_>], place: &str, out: &mut Vec<Diagnostic>) {
    // Variables reported, and pairs of places reported (`b * b` with `b = a * c` reaches both
    // `a` and `c` twice through the same two references: one error).
    let mut done: Vec<usize> = Vec::new();
    let mut places: Vec<(Span, Span)> = Vec::new();
    for (i, first) in entries.iter().enumerate() {
        if done.contains(&first.var) {
            continue;
        }
        let Some(second) = entries[i + 1..].iter().find(|e| e.var == first.var) else {
            continue;
        };
        done.push(first.var);
        if places.contains(&(first.span, second.span)) {
            continue;
        }
        places.push((first.span, second.span));
        let name = &model.variables[first.var].name;
        let through = |e: &Entry<'_>| {
            e.via
                .map(|d| format!(", through deterministic `{}`", model.variables[d].name))
                .unwrap_or_default()
        };
        let (label, hint) = match (first.direct, second.direct, first.via.or(second.via)) {
            (Some(a), Some(b), _) if a.index != b.index => (
                format!("`{name}` again, with other selectors: they can pick the element used before"),
                format!(
                    "the two references to `{name}` can be the same element; select both with one Categorical, or give the second use a variable of its own"
                ),
            ),
            (_, _, Some(d)) => {
                let v = &model.variables[first.var];
                let scalar = v.kind == crate::catalog::ValueKind::Real && v.event_plates.is_empty();
                let example = if scalar {
                    format!(" (a linear chain can be expanded by hand, `{name} + ({name} + 1)` is `2 * {name} + 1`)")
                } else {
                    String::new()
                };
                (
                    format!("`{name}` again{}", through(second)),
                    format!(
                        "`{}` already contains `{name}`: write the expression with `{name}` once{example}, or introduce a separate variable for one of the uses",
                        model.variables[d].name
                    ),
                )
            }
            _ => (
                format!("`{name}` again"),
                format!(
                    "`{name} + {name}` is collected to `2 * {name}`, but a product, dot(), `@` or concat() of `{name}` with itself is not multilinear: introduce a separate variable for one of the uses"
                ),
            ),
        };
        // Only the lowering calls an observed variable latent: where some of its cells are missing.
        let missing = if model.variables[first.var].observed {
            format!(" (`{name}` is observed, but its missing cells are latent)")
        } else {
            String::new()
        };
        out.push(
            Diagnostic::new(
                Code::RepeatedParent,
                second.span,
                format!(
                    "`{name}` enters {place} twice{missing}; Winn (2.41): VMP needs each parent to enter a node's expression once (multilinearly), or q treats the uses as independent and the bound can exceed the evidence"
                ),
            )
            .label(label)
            .note(first.span, format!("first use of `{name}`{}", through(first)))
            .hint(hint),
        );
    }
}
