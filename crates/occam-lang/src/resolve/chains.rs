//! Chains: `z[S] over T ~ MarkovChain(initial = p0, transition = A, lengths = L)` and
//! `x[S] over T ~ GaussianMarkovChain(mean0, precision0, dynamics, noise, lengths = L)`.
//!
//! A chain's `over` plate is its *time* plate: the steps that are joint in q (one q-block per
//! sequence). In the IR the time plate is the chain variable's last plate, so children index it
//! like any variable in `[S, T]` (`y[S, T] ~ Gaussian(mu[z], tau[z])` is a mixture over the chain's
//! states). The states (K, a discrete chain) or the state plate (D, a Gaussian chain) come from
//! the parents' event plates and become the chain's event plate. The parents may not vary over
//! time; `transition` and `dynamics` hold one row per state (the state plate is one of their
//! plates). `lengths` (optional) is a data input over the sequence plates, or a constant count.
//! A Gaussian chain's optional `control = B, inputs = u` (both or neither) add B u_t to the
//! dynamics: B one row per state over an input plate P, u data over the chain's plates and P.

use super::expr::Ctx;
use super::{Resolver, Source};
use crate::ast::{self, ExprKind, VarRhs};
use crate::catalog::{self, DistSpec, SlotShape, ValueKind};
use crate::diag::{Code, Diagnostic};
use crate::ir::{Arg, ConstValue, Expr, ExprOp, Node};

/// Names of the optional lengths argument.
const LENGTHS: &[&str] = &["lengths", "length"];
/// Names of a Gaussian chain's optional control matrix B (rows over the state plate, each over
/// the input plate) and its observed inputs u (data over the chain's plates and the input plate).
const CONTROL: &[&str] = &["control"];
const INPUTS: &[&str] = &["inputs", "input"];

/// Slots that hold one row per state, gathered along the state plate.
fn row_slot(name: &str) -> bool {
    matches!(name, "transition" | "dynamics")
}

impl Resolver<'_, '_> {
    /// At declaration: the `over` plate becomes the last plate (time). False after an error.
    pub(super) fn chain_time(
        &mut self,
        d: &ast::VarDecl,
        spec: &DistSpec,
        time: Option<usize>,
        plates: &mut Vec<usize>,
    ) -> bool {
        let Some(t) = time else {
            self.error(
                Diagnostic::new(
                    Code::EventMismatch,
                    d.name.span,
                    format!("{} needs its time plate", spec.name),
                )
                .label(format!("`{}` has no `over`", d.name.name))
                .hint(format!(
                    "name the plate the chain runs along: `{}[S] over T ~ {}(...)`",
                    d.name.name, spec.name
                )),
            );
            return false;
        };
        if plates.contains(&t) {
            let span = d.over.as_ref().map_or(d.name.span, |o| o.span);
            self.error(
                Diagnostic::new(
                    Code::PlateMismatch,
                    span,
                    format!(
                        "the time plate {} of `{}` is also one of its sequence plates",
                        self.plate_desc(t),
                        d.name.name
                    ),
                )
                .label("time plate listed twice")
                .hint(format!(
                    "list only the sequence plates in brackets: `{}[S] over {} ~ ...`",
                    d.name.name, self.plates[t].name
                )),
            );
            return false;
        }
        plates.push(t);
        true
    }

    /// Resolves a chain's arguments (the variable's plates end with its time plate).
    pub(super) fn chain(
        &mut self,
        v: usize,
        spec: &'static DistSpec,
        dist: &ast::Ident,
        args: &[ast::Arg],
        ctx: Ctx,
    ) -> Option<Node> {
        let named = |a: &ast::Arg, names: &[&str]| {
            a.name
                .as_ref()
                .is_some_and(|n| names.contains(&n.name.as_str()))
        };
        let (lengths, rest): (Vec<&ast::Arg>, Vec<&ast::Arg>) =
            args.iter().partition(|a| named(a, LENGTHS));
        let (control, rest): (Vec<&ast::Arg>, Vec<&ast::Arg>) =
            rest.into_iter().partition(|a| named(a, CONTROL));
        let (inputs, rest): (Vec<&ast::Arg>, Vec<&ast::Arg>) =
            rest.into_iter().partition(|a| named(a, INPUTS));
        let rest: Vec<ast::Arg> = rest.into_iter().cloned().collect();
        let filled = self.assign_slots(spec, dist, &rest)?;
        let seq_plates: Vec<usize> = {
            let p = &self.vars[v].plates;
            p[..p.len() - 1].to_vec()
        };
        let time = *self.vars[v]
            .plates
            .last()
            .expect("a chain has its time plate");
        // The state plate: the event plate of the first parent variable that has one.
        let order: Vec<usize> = (0..spec.slots.len())
            .filter(|&i| row_slot(spec.slots[i].name))
            .chain((0..spec.slots.len()).filter(|&i| !row_slot(spec.slots[i].name)))
            .collect();
        let state = order.iter().find_map(|&i| match &filled[i].value.kind {
            ExprKind::Name { name, .. } => self
                .var_index(&name.name)
                .filter(|&p| self.vars[p].ok)
                .and_then(|p| self.vars[p].event),
            _ => None,
        });
        let Some(q) = state else {
            let what = if spec.value == ValueKind::Categorical {
                "states"
            } else {
                "state plate"
            };
            self.error(
                Diagnostic::new(
                    Code::EventMismatch,
                    dist.span,
                    format!("the {what} of `{}` are unknown", self.vars[v].name),
                )
                .label("no parent names them")
                .hint(if spec.value == ValueKind::Categorical {
                    "give the transitions as a variable over the states: `A[K] ~ Dirichlet(1) over K`".to_string()
                } else {
                    "give the dynamics as rows over the state plate: `A[D] over D ~ GaussianARD(0, 1)` or `data A[D] over D`".to_string()
                }),
            );
            return None;
        };
        if q == time || seq_plates.contains(&q) {
            self.error(
                Diagnostic::new(
                    Code::PlateMismatch,
                    dist.span,
                    format!(
                        "the state plate {} of `{}` is also one of its plates",
                        self.plate_desc(q),
                        self.vars[v].name
                    ),
                )
                .label("states and steps share a plate")
                .hint("use separate plates for the states and the steps"),
            );
            return None;
        }
        self.vars[v].event = Some(q);
        // A table of rows must be square: its rows in the state plate, each row over it.
        for (slot, arg) in spec.slots.iter().zip(&filled) {
            let ExprKind::Name {
                name,
                indices: None,
            } = &arg.value.kind
            else {
                continue;
            };
            let Some(p) = self.var_index(&name.name).filter(|&p| self.vars[p].ok) else {
                continue;
            };
            let (rows, cols) = (&self.vars[p].plates, self.vars[p].event);
            if !row_slot(slot.name) || cols.is_none() || rows.contains(&q) {
                continue;
            }
            let shown: Vec<String> = rows.iter().map(|&r| self.plates[r].name.clone()).collect();
            self.error(
                Diagnostic::new(
                    Code::PlateMismatch,
                    arg.value.span,
                    format!(
                        "{} of {} must be square: `{}` has rows over [{}] and entries over {}",
                        slot.name,
                        spec.name,
                        name.name,
                        shown.join(", "),
                        self.plate_desc(cols.expect("checked")),
                    ),
                )
                .label("not square")
                .note(
                    self.vars[p].name_span,
                    format!("`{}` declared here", name.name),
                )
                .hint(format!(
                    "one row per state, each over the same plate: `{}[{q}] ~ ... over {q}`",
                    name.name,
                    q = self.plates[cols.expect("checked")].name
                )),
            );
            return None;
        }
        let mut out = Vec::with_capacity(spec.slots.len() + 1);
        let mut ok = true;
        // The parameters are read once per sequence: messages name the chain by its sequences
        // (`z[S]`), so a parent or index over the time plate reads as the mismatch it is.
        let per_sequence = if seq_plates.is_empty() {
            self.vars[v].name.clone()
        } else {
            let names: Vec<&str> = seq_plates
                .iter()
                .map(|&p| self.plates[p].name.as_str())
                .collect();
            format!("{}[{}]", self.vars[v].name, names.join(", "))
        };
        for (slot, arg) in spec.slots.iter().zip(&filled) {
            let mut c = Ctx {
                owner: per_sequence.clone(),
                plates: seq_plates.clone(),
                extra: Vec::new(),
            };
            if row_slot(slot.name) || slot.shape == SlotShape::Elementwise {
                c.extra.push(q);
            }
            let Some(e) = self.expr(&arg.value, &c) else {
                ok = false;
                continue;
            };
            if !self.check_slot(v, spec, slot, &e) {
                ok = false;
                continue;
            }
            if row_slot(slot.name) && e.kind.is_some() && !e.plates.contains(&q) {
                self.error(
                    Diagnostic::new(
                        Code::PlateMismatch,
                        e.span,
                        format!(
                            "{} of {} needs one row per state: a variable in plate {}",
                            slot.name,
                            spec.name,
                            self.plate_desc(q)
                        ),
                    )
                    .label(format!("not in plate {}", self.plates[q].name))
                    .hint(format!("declare the rows, e.g. `{}`", slot.expects)),
                );
                ok = false;
                continue;
            }
            out.push(Arg {
                slot: slot.name.to_string(),
                value: e,
            });
        }
        match lengths.as_slice() {
            [] => {}
            [a] => match self.chain_lengths(v, a, &seq_plates, time, &ctx) {
                Some(e) => out.push(Arg {
                    slot: "lengths".into(),
                    value: e,
                }),
                None => ok = false,
            },
            [_, second, ..] => {
                self.error(
                    Diagnostic::new(Code::BadArguments, second.span, "`lengths` is given twice")
                        .label("second value"),
                );
                ok = false;
            }
        }
        if !control.is_empty() || !inputs.is_empty() {
            match self.chain_inputs(v, spec, dist, &control, &inputs, &seq_plates, time, q) {
                Some(extra) => out.extend(extra),
                None => ok = false,
            }
        }
        ok.then(|| Node::Stochastic {
            distribution: spec.name.to_string(),
            args: out,
        })
    }

    /// `lengths = L`: a data input over (some of) the sequence plates, or a count ≤ the time
    /// plate's size.
    fn chain_lengths(
        &mut self,
        v: usize,
        a: &ast::Arg,
        seq_plates: &[usize],
        time: usize,
        ctx: &Ctx,
    ) -> Option<Expr> {
        let c = Ctx {
            owner: ctx.owner.clone(),
            plates: seq_plates.to_vec(),
            extra: Vec::new(),
        };
        let e = self.expr(&a.value, &c)?;
        let steps = self.plates[time].size;
        let bad = match &e.op {
            ExprOp::Const(ConstValue::Scalar(x))
                if *x >= 0.0 && x.fract() == 0.0 && *x <= steps as f64 =>
            {
                None
            }
            ExprOp::Const(_) => Some(format!(
                "a count from 0 to the size of the time plate {}",
                self.plate_desc(time)
            )),
            ExprOp::Var(r)
                if matches!(self.vars[r.var].source, Source::Data)
                    && self.vars[r.var].event.is_none()
                    && !r.is_mixture() =>
            {
                None
            }
            _ => Some("a data input over the sequences (`data L[S]`)".to_string()),
        };
        if let Some(want) = bad {
            self.error(
                Diagnostic::new(
                    Code::BadArguments,
                    e.span,
                    format!(
                        "lengths of {} `{}` must be {want}",
                        self.vars[v].dist.map_or("the chain", |d| d.name),
                        self.vars[v].name
                    ),
                )
                .label("not sequence lengths")
                .hint(format!(
                    "declare the lengths as data, `data L[{}]`, and write `lengths = L`",
                    seq_plates
                        .iter()
                        .map(|&p| self.plates[p].name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            return None;
        }
        Some(e)
    }

    /// Whether variable `v` is declared with a chain on its right-hand side.
    pub(super) fn is_chain_decl(&self, v: usize) -> bool {
        matches!(self.vars[v].source, Source::Decl(d) if matches!(&d.rhs, VarRhs::Random { .. }))
            && self.vars[v].dist.is_some_and(catalog::is_chain)
    }
}
